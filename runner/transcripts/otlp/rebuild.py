"""Spans -> conversations as OpenAI-style messages.

A conversation is the traces that share a conversation id (`gen_ai.conversation.id` or a dialect's
session id), else one trace. Traces are taken in the order they started; within a trace the spans are
walked as a tree, parents before children, siblings by (start, end, file position), so equal or
millisecond-rounded start times cannot put a tool's result before its call.

Every model call sees the whole history again, so messages are taken as deltas: assistant messages
are each model call's output; user messages are the top-level agent's input, or the user messages a
model call saw beyond those already taken; tool results are joined to their call by id (or by name,
in order, when the span has no id), whichever span recorded them. A tool call seen in a model's output,
in later models' inputs and in its `execute_tool` span is one call.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .dialects import is_adk_context, view_span
from .spans import Problem, Span
from .tree import span_tree, walk_order
from .views import Call, Message, SpanView

__all__ = ["Conversation", "rebuild_conversations"]


@dataclass
class Conversation:
    id: str
    trace_ids: list[str]
    messages: list[dict]
    problems: list[Problem]
    start: tuple[int, int] = (0, 0)  # (start time, file position) of its first trace


@dataclass
class _Call:
    id: str | None
    name: str
    arguments: Any
    result: Any = None
    has_result: bool = False


@dataclass
class _Entry:
    role: str
    text: str | None = None
    calls: list[_Call] = field(default_factory=list)
    agent: str | None = None


def rebuild_conversations(spans: list[Span]) -> list[Conversation]:
    by_trace: dict[str, list[Span]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    views = {(s.trace_id, s.span_id): view_span(s) for s in spans}
    groups: dict[str, list[tuple[tuple[int, int], str]]] = {}
    unnamed: list[tuple[tuple[int, int], str]] = []
    for trace_id, trace_spans in by_trace.items():
        roots, children, _ = span_tree(trace_spans)
        conversation_id = _conversation_id(roots, children, views)
        start = (min(s.start for s in trace_spans), min(s.position for s in trace_spans))  # equal clocks: file order
        if conversation_id is None:
            unnamed.append((start, trace_id))
        else:
            groups.setdefault(conversation_id, []).append((start, trace_id))
    for group in _stitch(sorted(unnamed), by_trace, views):
        groups[group[0][1]] = group
    out = []
    for conversation_id, traces in groups.items():
        builder = _Builder(views)
        for _, trace_id in sorted(traces):
            roots, children, looped = span_tree(by_trace[trace_id])
            builder.children = children
            builder.problems += [span.problem("parentSpanId", "the span's parents form a loop; it is placed by its "
                                                              "start time, outside the tree") for span in looped]
            for root in roots:
                builder.walk(root, agent_depth=0, in_tool=False)
        out.append(Conversation(id=conversation_id, trace_ids=[t for _, t in sorted(traces)],
                                messages=builder.messages(), problems=builder.problems,
                                start=min(start for start, _ in traces)))
    return sorted(out, key=lambda c: (c.start, c.id))


def _stitch(traces: list[tuple[tuple[int, int], str]], by_trace: dict[str, list[Span]],
            views: dict) -> list[list[tuple[tuple[int, int], str]]]:
    """Traces without a conversation id, grouped into conversations. A bare client instrumentation makes
    each model call a trace of its own; a call whose history begins with everything an earlier call saw
    and said continues that earlier call's conversation."""
    groups: list[list[tuple[tuple[int, int], str]]] = []
    ends: dict[tuple, list[int]] = {}  # what a group's last model call saw and said -> the groups ending so
    end_of: dict[int, tuple] = {}
    for start, trace_id in traces:
        chats = [views[(s.trace_id, s.span_id)] for s in walk_order(by_trace[trace_id])]
        chats = [v for v in chats if v.kind == "chat" and (v.inputs or v.outputs)]
        joined = None
        if chats:
            history = _signature(chats[0].inputs or [])
            for size in range(len(history) - 1, 0, -1):  # the longest earlier ending it continues
                found = ends.get(tuple(history[:size]))
                if found:
                    joined = found[-1]  # the latest such group: conversations may share an opening
                    break
        if joined is None:
            groups.append([(start, trace_id)])
            joined = len(groups) - 1
        else:
            groups[joined].append((start, trace_id))
        if chats:
            last = chats[-1]
            if joined in end_of:
                ends[end_of[joined]].remove(joined)
            end_of[joined] = tuple(_signature((last.inputs or []) + (last.outputs or [])[:1]))
            ends.setdefault(end_of[joined], []).append(joined)
    return groups


def _signature(messages: list[Message]) -> list[tuple]:
    return [("result" if m.results else m.role, m.text or "", tuple(c.id or c.name for c in m.calls),
             tuple(r.id or "" for r in m.results)) for m in messages]


def _conversation_id(roots: list[Span], children: dict[str, list[Span]], views: dict) -> str | None:
    """The id on the highest span that has one (a delegated sub-agent may carry an id of its own)."""
    level = roots
    seen = 0
    while level and seen < 100_000:
        for span in level:
            found = views[(span.trace_id, span.span_id)].conversation_id
            if found:
                return found
        seen += len(level)
        level = [child for span in level for child in children.get(span.span_id, [])]
    return None


class _Builder:
    def __init__(self, views: dict[tuple[str, str], SpanView]) -> None:
        self.views = views
        self.children: dict[str, list[Span]] = {}
        self.entries: list[_Entry] = []
        self.calls: list[_Call] = []
        self.problems: list[Problem] = []
        self.system: str | None = None
        self.users_seen = 0  # user messages taken so far: a model call's history beyond them is new
        self.agent_marks: dict[str, int] = {}  # an open agent span -> where its messages begin
        self.agent: str | None = None  # the agent that has the conversation
        self.trace_agents: set[str] = set()  # traces in which an agent span was already entered
        self.agent_returns: dict[str, str | None] = {}  # a nested agent span -> the agent it returns to
        self.results_taken: set[tuple] = set()
        self.trace_users: dict[str, list[str]] = {}  # user messages taken from agent spans, per trace

    def walk(self, span: Span, *, agent_depth: int, in_tool: bool) -> None:
        stack: list[tuple[Span, int, bool, bool]] = [(span, agent_depth, in_tool, False)]
        # an explicit stack: a hostile file may nest spans far deeper than Python's recursion limit
        while stack:
            node, depth, tool, leaving = stack.pop()
            view = self.views[(node.trace_id, node.span_id)]
            if leaving:
                self._leave(node, view)
                continue
            self.problems.extend(view.problems)
            depth = self._enter(node, view, depth, tool)
            stack.append((node, depth, tool, True))
            inside_tool = tool or view.kind == "tool"
            for child in reversed(self.children.get(node.span_id, [])):
                stack.append((child, depth, inside_tool, False))

    def _enter(self, span: Span, view: SpanView, depth: int, in_tool: bool) -> int:
        if view.system and self.system is None:
            self.system = view.system
        if view.kind == "agent":
            if depth > 0:  # a sub-agent inside another agent's span gives the conversation back when done
                self.agent_returns[span.span_id] = self.agent
            self._hand_over(span, view, in_tool)
            self.agent_marks[span.span_id] = len(self.entries)
            if depth == 0 and not in_tool:
                self._agent_users(span, view)
            return depth + 1
        if view.kind == "chat":
            if view.inputs is None and view.outputs is None:
                if not self._has_chat_ancestor_content(span):
                    self.problems.append(span.problem("gen_ai.input.messages", _NO_CONTENT))
                return depth
            self._chat(view, top_level=depth <= 1 and not in_tool)
        elif view.kind == "tool" and view.tool is not None:
            self._tool(view)
        return depth

    def _agent_users(self, span: Span, view: SpanView) -> None:
        """The user's messages an agent span was called with: some frameworks give the turn's message
        alone, others the whole history (then the messages beyond those already taken are the new ones)."""
        users = [m.text for m in view.inputs or [] if m.role == "user" and m.text and not m.results
                 and not is_adk_context(m.text)]
        if len(users) > self.users_seen:
            new = users[self.users_seen:]
        else:  # the turn's message alone; a second agent span of the same turn repeats it
            taken = self.trace_users.get(span.trace_id, [])
            new = [text for text in users if text not in taken]
        for text in new:
            self._user(text)
            self.trace_users.setdefault(span.trace_id, []).append(text)

    def _hand_over(self, span: Span, view: SpanView, in_tool: bool) -> None:
        """A second agent taking over within a trace is a transfer. Frameworks that hand over with a tool
        call (ADK's transfer_to_agent, a delegating tool around the sub-agent) already recorded one; for
        the others a `transfer_to_agent` call naming the agent is written, as ADK would have."""
        name = view.agent_name
        first_in_trace = span.trace_id not in self.trace_agents
        self.trace_agents.add(span.trace_id)
        previous, self.agent = self.agent, name or self.agent
        if not name or name == previous or previous is None or first_in_trace or in_tool:
            return
        last = self.calls[-1] if self.calls else None
        if last is not None and "transfer" in last.name.lower() and name in json.dumps(last.arguments, default=str):
            return
        transfer = _Call(None, "transfer_to_agent", {"agent_name": name}, has_result=True)
        self.calls.append(transfer)
        self.entries.append(_Entry("assistant", calls=[transfer], agent=previous))

    def _leave(self, span: Span, view: SpanView) -> None:
        if view.kind != "agent":
            return
        start = self.agent_marks.pop(span.span_id, len(self.entries))
        answered = any(e.role == "assistant" for e in self.entries[start:])
        if not answered:  # an agent span whose model calls recorded nothing: its own answer is the turn's
            for message in view.outputs or []:
                self._assistant(message, view.agent_name)
        if span.span_id in self.agent_returns:
            self.agent = self.agent_returns.pop(span.span_id)

    def _has_chat_ancestor_content(self, span: Span) -> bool:
        # ADK's legacy `call_llm` holds the content; its child `generate_content` span holds none
        parent = self.views.get((span.trace_id, span.parent_id or ""))
        return parent is not None and parent.kind == "chat" and bool(parent.inputs or parent.outputs)

    # ------------------------------------------------------------------ what each kind of span adds

    def _chat(self, view: SpanView, *, top_level: bool) -> None:
        inputs = view.inputs or []
        asked: dict[str, Call] = {}  # the history's own calls, to tell apart results of calls sharing an id
        for message in inputs:
            if message.role == "system" and message.text and self.system is None:
                self.system = message.text
            for call in message.calls:
                if call.id:
                    asked[call.id] = call
            for result in message.results:
                asker = asked.get(result.id or "")
                self._answer(result.id, result.name or (asker.name if asker else None), result.content,
                             asker.arguments if asker else None)
        if top_level:
            users = [m for m in inputs if m.role == "user" and m.text and not is_adk_context(m.text)]
            for message in users[self.users_seen:]:
                self._user(message.text or "")  # `users` keeps only messages with text
        for message in (view.outputs or [])[:1]:  # one choice: the one the conversation went on with
            self._assistant(message, view.agent_name or self.agent)

    def _tool(self, view: SpanView) -> None:
        run = view.tool
        assert run is not None  # called for tool spans only
        call = self._find(run.id, run.name, unanswered=True)
        if call is None:  # a run no recorded model output asked for (content capture off): a call of its own
            call = _Call(run.id, run.name, run.arguments)
            self.calls.append(call)
            self.entries.append(_Entry("assistant", calls=[call], agent=view.agent_name or self.agent))
        if call.arguments is None and run.arguments is not None:
            call.arguments = run.arguments
        if run.has_result and not call.has_result:
            call.result, call.has_result = run.result, True

    def _user(self, text: str) -> None:
        self.entries.append(_Entry("user", text=text))
        self.users_seen += 1

    def _assistant(self, message: Message, agent: str | None) -> None:
        entry = _Entry("assistant", text=message.text, agent=agent)
        for call in message.calls:
            record = _Call(call.id, call.name, call.arguments)
            self.calls.append(record)
            entry.calls.append(record)
        for result in message.results:
            self._answer(result.id, result.name, result.content)
        if entry.text or entry.calls:
            self.entries.append(entry)

    def _answer(self, call_id: str | None, name: str | None, content: Any, arguments: Any = None) -> None:
        """A result seen in a model's history. Every later model call sees it again: a result already
        taken is not given to another open call that happens to share its id."""
        seen = (call_id, name, _canonical(content))
        if seen in self.results_taken:
            return
        call = self._find(call_id, name, unanswered=True, arguments=arguments)
        if call is not None and not call.has_result:
            call.result, call.has_result = content, True
            self.results_taken.add(seen)

    def _find(self, call_id: str | None, name: str | None, *, unanswered: bool,
              arguments: Any = None) -> _Call | None:
        """The latest call with this id (and name and arguments, when known); without an id, the first open
        call of that name. Ids repeat across agents and turns, so an open call is preferred to an answered one."""
        if call_id:
            same = [c for c in self.calls if c.id == call_id and (not name or c.name == name)
                    and (arguments is None or c.arguments is None
                         or _canonical(c.arguments, parse=True) == _canonical(arguments, parse=True))]
            open_ = [c for c in same if not c.has_result]
            if unanswered:
                return open_[-1] if open_ else None
            return (open_ or same)[-1] if open_ or same else None
        if name:
            return next((c for c in self.calls if c.name == name and not c.has_result), None)
        return None

    # ------------------------------------------------------------------ the result

    def messages(self) -> list[dict]:
        out: list[dict] = []
        if self.system and any(e.role != "system" for e in self.entries):
            out.append({"role": "system", "content": self.system})
        for entry in self.entries:
            if entry.role == "user":
                out.append({"role": "user", "content": entry.text})
                continue
            message: dict[str, Any] = {"role": "assistant", "content": entry.text}
            if entry.agent:
                message["name"] = entry.agent
            if entry.calls:
                message["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": _arguments(c.arguments)}}
                    for c in entry.calls]
            out.append(message)
            for call in entry.calls:
                if call.has_result:
                    out.append({"role": "tool", "tool_call_id": call.id, "name": call.name,
                                "content": _content(call.result)})
        return out


_NO_CONTENT = ("the model call recorded no messages: content capture is off where the trace was made (set "
               "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY, or the dialect's switch: "
               "TRACELOOP_TRACE_CONTENT=true, no OPENINFERENCE_HIDE_* variables), or the content went to log events "
               "that are not in this file (export the logs signal to the same file)")


def _canonical(value: Any, *, parse: bool = False) -> str:
    """One text for equal values: arguments recorded as an object in one span and a JSON string in another."""
    if parse and isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _arguments(value: Any) -> Any:
    if value is None:
        return "{}"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _content(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
