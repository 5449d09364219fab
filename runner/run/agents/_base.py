"""The interface every agent target implements, and the reply shapes they all share.

One `Agent` object plays one conversation: `start` once, `turn` once per user message, `close`
once (always, also after an error or a cancellation). `turn` receives the whole conversation so far
as OpenAI chat messages and returns only this turn's NEW messages: assistant messages (with
`tool_calls` when it used tools), `tool` results, and the final assistant text.
"""
from __future__ import annotations

import asyncio
import copy
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.suite.models import Case
from runner.transcripts.state import ReportedState
from runner.util.deepjson import TooDeep, loads_keeping_deep_arguments
from runner.util.jsontext import deeper_than
from runner.util.secrets import clip

MAX_NESTING = 100  # lists and objects in a message may nest this deep (as in suite and transcript files)


def tools_field() -> Any:
    """The `tools:` option every agent kind but `model` takes (a model agent's tools are what it is sent)."""
    from pydantic import Field

    return Field(None, title="Tools",
                 description="The tools this agent was given, as OpenAI-style definitions (`{type: function, function: "
                 "{name, description, parameters}}`). The `valid_tool_calls` check validates the agent's calls against "
                 "them; a case's own `tools:` come first.",
                 examples=[[{"type": "function", "function": {"name": "get_weather", "parameters": {
                     "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]])


class AgentError(Exception):
    """The agent failed this turn (raised, crashed, timed out, unreachable, answered nonsense).

    `reason` is a short message fit for a report; it never contains a secret. `messages` are the
    messages the agent produced this turn before failing (kept with the conversation)."""

    def __init__(self, reason: str, *, messages: list[dict] | None = None):
        super().__init__(reason)
        self.reason = reason
        self.messages = messages or []


class AgentStop(Exception):
    """The agent ended the conversation itself (an http/command reply with `"stop": true`, or a
    model target that reached `max_tool_rounds`): not an error, the conversation is scored as it is."""

    def __init__(self, reason: str, messages: list[dict]):
        super().__init__(reason)
        self.reason = reason
        self.messages = messages


def being_cancelled() -> bool:
    """Whether the running task was asked to stop. A CancelledError that code under test raised by
    itself is its own error, not a stop; before Python 3.11 the two cannot be told apart, and a stop
    is assumed."""
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    return task is None or cancelling is None or cancelling() > 0


@dataclass(frozen=True)
class TurnContext:
    """What an agent knows about the turn besides the messages."""

    case_id: str
    turn: int  # 1 for the first user message
    runtime_context: dict = field(default_factory=dict)
    # One id per conversation: an agent that keeps state (a database, say) keeps one per conversation with it,
    # since the same case may run several times at once (--repeat N).
    conversation_id: str = ""
    canaries: tuple = ()  # the case's `canaries`: secrets planted in the agent's context, which no reply may contain

    def __post_init__(self) -> None:
        object.__setattr__(self, "canaries", tuple(self.canaries))  # from JSON (isolate: process) it is a list

    def to_json(self) -> dict:
        data = {"case_id": self.case_id, "turn": self.turn, "runtime_context": copy.deepcopy(self.runtime_context),
                "conversation_id": self.conversation_id}
        if self.canaries:  # only when planted: servers that check their body see no new field otherwise
            data["canaries"] = list(self.canaries)
        return data


@dataclass
class AgentEnv:
    """What building an agent may need from the run. `base_dir` is the config file's folder (relative
    paths in agent options are resolved from it); `llm_client(settings, role)` returns the shared LLM
    layer's client for a model target (None: the default client of runner.llm)."""

    base_dir: Path = field(default_factory=Path.cwd)
    llm_client: Callable[[Any, str], Any] | None = None


class Agent:
    """Base class of the agent kinds. Subclasses override `turn`, and `start`/`close` when they hold
    a resource (a process, an HTTP connection pool)."""

    kind: str = ""
    name: str = ""
    replays = False  # True: the conversation is read from a recording, not driven turn by turn
    reply_state: ReportedState | None = None  # the last `state` one of its replies carried

    async def final_state(self, ctx: TurnContext) -> ReportedState:
        """The state of the world after the conversation, asked once after the last turn when the case has a
        `final_state:` (`ctx.turn` is the number of user turns played). Kinds with a way of their own to report
        it override this; the default is the `state` of the agent's last reply that carried one. AgentError
        when the agent's own way of reporting it fails (the case's error); a ReportedState with `missing`
        when it reports none (the case is then unscored)."""
        if self.reply_state is not None:
            return self.reply_state
        return ReportedState.none(f"agent '{self.name}' ({self.kind}) reported no state: {self.how_to_report_state()}")

    def how_to_report_state(self) -> str:
        """How an agent of this kind reports its state, for the explanation of a case without one."""
        return "its replies carried no `state`"

    def keep_reply_state(self, reply: Reply, where: str) -> None:
        if reply.has_state:
            self.reply_state = ReportedState(value=reply.state, source=f"the `state` of {where}")

    async def start(self, case: Case) -> None:
        """Called once before the first turn, with the case the conversation is for."""

    async def turn(self, messages: list[dict], ctx: TurnContext) -> list[dict]:
        raise NotImplementedError

    async def close(self) -> None:
        """Called once after the conversation, whatever happened; must not raise."""

    def kill(self) -> None:
        """Called (synchronously) when the conversation is cancelled: stop at once."""

    def stderr_tail(self) -> list[str]:
        """The last lines the agent wrote to stderr (command targets), kept with the case."""
        return []

    def kept_state(self) -> ReportedState | None:
        """The state the agent's kind keeps anyway (an ADK session's), recorded with every conversation as
        `state` even when nobody asked for it and even after an error: cheap, synchronous, never failing.
        None when the kind keeps none (its state is only asked for, with `final_state`)."""
        return None


# ----------------------------------------------------------------------------- replies

@dataclass
class Reply:
    messages: list[dict]
    stop: bool = False
    has_state: bool = False  # the reply carried `state`: the world as the agent sees it now
    state: Any = None


_ROLES = ("assistant", "tool")


def parse_reply(value: Any, where: str) -> Reply:
    """An agent's answer in any accepted shape -> this turn's new messages.

    Accepted: a plain string (one assistant message); a list of messages; an object with `messages`
    (and optionally `"stop": true`, the agent ends the conversation, and `state`, the state of its world
    that a case's `final_state:` is compared with); an OpenAI chat completion (its
    first choice's message); a single message object. Anything else is an AgentError naming `where`."""
    if isinstance(value, str):
        return Reply([{"role": "assistant", "content": value}])
    if isinstance(value, list):
        return Reply(check_messages(value, where))
    if isinstance(value, dict):
        stop = value.get("stop", False)
        if not isinstance(stop, bool):
            raise AgentError(f"{where}: 'stop' must be true or false, got {excerpt(json_text(stop))}")
        if "messages" in value:
            if not isinstance(value["messages"], list):
                raise AgentError(f"{where}: 'messages' must be a list, got {excerpt(json_text(value['messages']))}")
            reply = Reply(check_messages(value["messages"], where), stop=stop)
            if "state" in value:
                reply.has_state, reply.state = True, check_state(value["state"], f"{where}: `state`")
            return reply
        if "choices" in value:
            return Reply([_completion_message(value, where)], stop=stop)
        if "error" in value and "role" not in value:
            raise AgentError(f"{where}: the agent reported an error: {excerpt(json_text(value['error']))}")
        if "role" in value:
            return Reply(check_messages([value], where))
    raise AgentError(f"{where}: expected a string, a list of messages, {{\"messages\": [...]}} or a chat "
                     f"completion, got {excerpt(json_text(value))}")


def _completion_message(body: dict, where: str) -> dict:
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict) \
            or not isinstance(choices[0].get("message"), dict):
        raise AgentError(f"{where}: a chat completion without choices[0].message: {excerpt(json_text(body))}")
    message = choices[0]["message"]
    # keep what a transcript holds; providers add fields (refusal, audio, annotations) we do not record
    kept = {k: message[k] for k in ("role", "content", "tool_calls", "name") if message.get(k) is not None}
    kept.setdefault("role", "assistant")
    kept.setdefault("content", None)
    return check_messages([kept], where)[0]


def check_messages(messages: list, where: str) -> list[dict]:
    """Each new message must be an assistant or tool message a transcript can hold. Tool-call arguments
    given as an object nested more than MAX_NESTING levels deep are kept as their JSON text, which the
    scorer reports as arguments that cannot be read; any other part nested that deep is an error."""
    checked = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise AgentError(f"{where}: message {i} is not an object: {excerpt(json_text(message))}")
        message = _deep_arguments_as_text(message)
        if deeper_than(_without_arguments(message), MAX_NESTING + 1):  # +1: the message object itself
            raise AgentError(f"{where}: message {i} is nested more than {MAX_NESTING} levels deep")
        odd = _not_json_data(message)
        if odd is not None:
            raise AgentError(f"{where}: message {i}: {odd}; a message holds only JSON data: text, numbers, "
                             "true/false, null, lists and objects")
        role = message.get("role")
        if role not in _ROLES:
            raise AgentError(f"{where}: message {i} has role {excerpt(json_text(role))}; an agent's messages are "
                             "'assistant' or 'tool' (the user's come from the suite)")
        content = message.get("content")
        if content is not None and not isinstance(content, (str, list)):
            raise AgentError(f"{where}: message {i}: 'content' must be text, got {excerpt(json_text(content))}")
        calls = message.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            raise AgentError(f"{where}: message {i}: 'tool_calls' must be a list, got {excerpt(json_text(calls))}")
        checked.append(copy.deepcopy(message))
    return checked


def check_state(value: Any, where: str) -> Any:
    """A reported state as the conversation keeps it: JSON data nested at most MAX_NESTING levels; anything
    else is an AgentError naming where it came from."""
    if deeper_than(value, MAX_NESTING):
        raise AgentError(f"{where} is nested more than {MAX_NESTING} levels deep")
    odd = _not_json_data({"state": value})
    if odd is not None:
        raise AgentError(f"{where}: {odd}; a state holds only JSON data: text, numbers, true/false, null, lists "
                         "and objects")
    return json.loads(json.dumps(value))  # a copy, with tuples as lists


def _deep_arguments_as_text(message: dict) -> dict:
    """`message` with each tool call's `arguments` that nests too deep written as JSON text (a copy of
    the parts it changes; the caller's objects stay as they were)."""
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return message
    changed = list(calls)
    for j, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(function.get("arguments"), (dict, list)) \
                and deeper_than(function["arguments"], MAX_NESTING):
            changed[j] = {**call, "function": {**function, "arguments": deep_json_text(function["arguments"])}}
    return message if changed == calls else {**message, "tool_calls": changed}


_SCALARS = (str, int, float, bool, type(None))


def _not_json_data(message: dict) -> str | None:
    """Where `message` holds a value JSON cannot (a Python object, a key that is not text), or None."""
    stack: list[tuple[Any, str]] = [(message, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict):
            for key, child in value.items():
                if not isinstance(key, str):
                    return f"`{path or '(message)'}` has a key that is not text ({excerpt(repr(key), 80)})"
                stack.append((child, f"{path}.{key}" if path else key))
        elif isinstance(value, (list, tuple)):
            stack.extend((child, f"{path}[{n}]") for n, child in enumerate(value))
        elif not isinstance(value, _SCALARS):
            return f"`{excerpt(path, 80)}` is not JSON data (a Python {type(value).__name__})"
    return None


def _without_arguments(message: dict) -> dict:
    """`message` with its tool calls' arguments left out (they have a depth limit of their own)."""
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return message
    bare = [{**call, "function": {**call["function"], "arguments": None}}
            if isinstance(call, dict) and isinstance(call.get("function"), dict) else call for call in calls]
    return {**message, "tool_calls": bare}


class _Token(str):
    """Punctuation on deep_json_text's stack, told apart from the strings it writes as values."""


def deep_json_text(value: Any) -> str:
    """Compact JSON text of a value nested to any depth (json.dumps recurses and gives up near 1,000
    levels). Keys are written as text; values JSON cannot hold are written as their str()."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Token):
            out.append(item)
        elif isinstance(item, dict):
            parts: list[Any] = [_Token("{")]
            for n, (key, child) in enumerate(item.items()):
                parts += [_Token(("," if n else "") + json.dumps(str(key)) + ":"), child]
            stack.extend(reversed([*parts, _Token("}")]))
        elif isinstance(item, (list, tuple)):
            parts = [_Token("[")]
            for n, child in enumerate(item):
                parts += [_Token(","), child] if n else [child]
            stack.extend(reversed([*parts, _Token("]")]))
        else:
            out.append(json.dumps(item, default=str))
    return "".join(out)


# ----------------------------------------------------------------------------- text helpers

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def excerpt(text: str, limit: int = 200) -> str:
    """Agent-written text as it may appear in an error: control characters and lone surrogates made
    visible, cut short."""
    text = text.replace("\r\n", "\n")
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}",
                        text).replace("\n", "\\n")
    return clip(text, limit)


def reply_json(text: str) -> Any:
    """An agent's reply as JSON: json.loads, except that tool arguments nested deeper than it reads are
    kept as their JSON text (runner.util.deepjson), to be reported as arguments that cannot be read.
    ValueError for text that is not JSON; TooDeep (a ValueError) for text that nests too deep elsewhere."""
    try:
        return json.loads(text)
    except RecursionError:
        return loads_keeping_deep_arguments(text, MAX_NESTING)


def unreadable_reply(exc: ValueError) -> str:
    """Why reply_json refused a reply, in an error's words."""
    if isinstance(exc, TooDeep):
        return f"nested more than {MAX_NESTING} levels deep outside any tool call's arguments"
    return "not JSON"


def json_text(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)
