"""`type: agentflow` (alias `10xgraph`) — an Agentflow / 10xGraph graph, run in-process through its own `ainvoke`.

    agents:
      weather:
        type: agentflow
        graph: weather_agent.graph:app     # a compiled graph, or a function returning one (called once)

Without `graph`, the project's `10xgraph.json` / `agentflow.json` (searched from evalrun.yaml's folder up, as
the `10xgraph` CLI does) names it in its `"agent"` entry. Each conversation is one Agentflow thread, played as
Agentflow's own AgentEvaluator plays an eval case: thread id `eval_<run>_<case>` unless the case's
`session_input.config` (runtime context `config`) sets one, `user_id` from the case (default `test_user`); each
turn sends the user messages so far and the graph's earlier final answers, and Agentflow's TrajectoryCollector
records the turn (_agentflow_lib.py attaches it, also to a graph compiled at import time).

The turn's new messages become evalrun's conversation: the model's tool calls (their arguments as the tool
received them, which is what Agentflow scores: declared parameters only), the tool results, the final answer. A
call the collector did not record (the tool raised, was missing or is not a local tool) is kept with its result
marked as failed (`error: true`), so that Agentflow's criteria leave it out as Agentflow does and every other
check sees it failed. The graph's node visits (with `__start__`, as Agentflow records them) are kept as the
conversation's state, `{"agentflow": {"node_visits": [...]}}`, which `agentflow_node_order` reads. A graph that
raises ends the case in error.

Agentflow needs Python >= 3.12: `pip install 'evalrun[agentflow]'`; it is imported when such an agent starts.
"""
from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from runner.transcripts.state import ReportedState

from ._base import Agent, AgentEnv, AgentError, TurnContext, tools_field
from ._entrypoint import exception_summary, load_object

KIND = "agentflow"
ALIASES = ("10xgraph",)
PROJECT_FILES = ("10xgraph.json", "agentflow.json", ".agentflow.json", "agentflow.config.json")
STATE_SOURCE = "the Agentflow graph's node visits"
DEFAULT_USER_ID = "test_user"  # Agentflow's SessionInput default


class AgentflowAgentOptions(BaseModel):
    model_config = ConfigDict(
        extra="forbid", title="Agentflow / 10xGraph graph",
        json_schema_extra={"description": "An Agentflow (10xGraph) graph run in-process through its own ainvoke, one "
                                          "thread per conversation, its TrajectoryCollector attached. Needs Python "
                                          ">= 3.12 and `pip install 'evalrun[agentflow]'`.",
                           "examples": [{"type": "agentflow", "graph": "weather_agent.graph:app"}]})

    type: Literal["agentflow", "10xgraph"] = Field(
        title="Kind", description="`agentflow` (or `10xgraph`): run an Agentflow graph in-process.",
        examples=["agentflow"])
    tools: list[dict[str, Any]] | None = tools_field()
    graph: str | None = Field(
        None, pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$", title="Graph",
        description="`package.module:attribute`, importable from the folder of evalrun.yaml: a compiled graph, or a "
        "function with no arguments returning one (called once). Default: the `agent` entry of the project's "
        "10xgraph.json or agentflow.json.", examples=["weather_agent.graph:app"])
    user_id: str | None = Field(None, title="User id",
                                   description="Default: the case's `user_id` (session_input), else test_user.",
                                   examples=["test_user"])
    config: dict[str, Any] = Field(default_factory=dict, title="Run config",
                                   description="Added to every run's config (the case's session_input.config wins).",
                                   examples=[{"recursion_limit": 10}])


_graphs: dict[tuple[str, str], Any] = {}
_RUN_ID = uuid.uuid4().hex[:8]


def project_entry(base_dir: Path) -> tuple[str, Path]:
    """(module:attr, its folder) from the nearest 10xgraph.json / agentflow.json; AgentError when there is none."""
    for folder in [base_dir.resolve(), *base_dir.resolve().parents]:
        for name in PROJECT_FILES:
            path = folder / name
            if not path.is_file():
                continue
            try:
                agent = json.loads(path.read_text(encoding="utf-8")).get("agent")
            except (OSError, ValueError, AttributeError) as exc:
                raise AgentError(f"{path}: cannot be read as a JSON object ({exc})") from None
            if not isinstance(agent, str) or ":" not in agent:
                raise AgentError(f"{path}: its \"agent\" entry must be \"module.path:attribute\", got {agent!r}")
            module, _, attribute = agent.rpartition(":")
            return f"{module}:{attribute}", folder
    raise AgentError(f"type: agentflow needs `graph: module:attribute`, or a project file ({', '.join(PROJECT_FILES)}) "
                     f"with an \"agent\" entry in {base_dir.resolve()} or a folder above it")


def load_graph(options: AgentflowAgentOptions, base_dir: Path) -> Any:
    from ._agentflow_lib import is_compiled_graph, library

    library()  # the clear error on Python < 3.12 or without the library, before importing the user's module
    entry, folder = (options.graph, base_dir) if options.graph else project_entry(base_dir)
    key = (entry, str(folder.resolve()))
    if key in _graphs:
        return _graphs[key]
    graph = load_object(entry, folder)
    if not is_compiled_graph(graph) and callable(graph) and not hasattr(graph, "compile"):
        try:
            graph = graph()
        except Exception as exc:
            raise AgentError(f"{entry}() raised {exception_summary(exc)}") from None
    if not is_compiled_graph(graph):
        what = "a StateGraph that is not compiled: name `graph.compile()`'s result" if hasattr(graph, "compile") \
            else f"a {type(graph).__name__}"
        raise AgentError(f"graph '{entry}' is {what}, not a compiled Agentflow graph")
    _graphs[key] = graph
    return graph


class AgentflowAgent(Agent):
    kind = KIND

    def __init__(self, name: str, options: AgentflowAgentOptions, env: AgentEnv):
        self.name, self.options, self.env = name, options, env
        self.graph: Any = None
        self.lib: Any = None
        self.run_config: dict[str, Any] = {}
        self.sent: list[Any] = []  # what Agentflow's evaluator sends each turn: the user turns and final answers
        self.seen: set[Any] = set()  # message ids already in the conversation
        self.visits: list[list[str]] = []

    async def start(self, case) -> None:
        from ._agentflow_lib import install, library

        self.lib = await asyncio.to_thread(library)  # seconds to import: not on the event loop
        self.graph = await asyncio.to_thread(load_graph, self.options, self.env.base_dir)
        install(self.lib, self.graph)
        context = dict(case.runtime_context or {})
        given = found if isinstance(found := context.get("config"), dict) else {}
        self.run_config = {"thread_id": f"eval_{_RUN_ID}_{case.id}_{uuid.uuid4().hex[:6]}", **self.options.config,
                           **given}
        self.run_config["user_id"] = self.options.user_id or context.get("user_id") or DEFAULT_USER_ID

    async def turn(self, messages: list[dict], ctx: TurnContext) -> list[dict]:
        from ._agentflow_lib import collecting

        assert self.graph is not None, "start() was not called"
        collector = self.lib.TrajectoryCollector(capture_all_events=False)
        self.sent.append(self.lib.Message.text_message(_new_user_text(messages), role="user"))
        self.seen.update(m.message_id for m in self.sent)
        try:
            with collecting(collector):
                result = await self.graph.ainvoke({"messages": list(self.sent)}, config=dict(self.run_config))
        except Exception as exc:
            self.visits.append(list(collector.node_visits))
            raise AgentError(f"the Agentflow graph raised {exception_summary(exc)} (turn {len(self.sent)})") from None
        self.visits.append(list(collector.node_visits))
        produced = [m for m in (result or {}).get("messages") or () if getattr(m, "message_id", None) not in self.seen]
        self.seen.update(m.message_id for m in produced)
        new = turn_messages(produced, collector)
        final = collector.final_response or ""
        if final:
            self.sent.append(self.lib.Message.text_message(final, role="assistant"))
            last_text = next((m.get("content") for m in reversed(new) if m["role"] == "assistant"
                              and not m.get("tool_calls")), None)
            if last_text != final:  # the collector's final answer is what Agentflow scores: the conversation ends on it
                new.append({"role": "assistant", "content": final})
        return new

    def kept_state(self) -> ReportedState | None:
        if not self.visits:
            return None
        return ReportedState(value={"agentflow": {"node_visits": [v for turn in self.visits for v in turn],
                                                  "node_visits_by_turn": self.visits}}, source=STATE_SOURCE)

    async def final_state(self, ctx: TurnContext) -> ReportedState:
        return self.kept_state() or ReportedState.none(f"agent '{self.name}' (agentflow) ran no turn")


def turn_messages(produced: list[Any], collector: Any) -> list[dict]:
    """The graph's new messages as OpenAI chat messages, tool-call arguments as the collector recorded them."""
    recorded = {call.call_id: call.args for call in collector.tool_calls if call.call_id}
    # parallel calls of one message are recorded as they complete, which is the order Agentflow scores
    order = {call.call_id: n for n, call in enumerate(collector.tool_calls) if call.call_id}
    out: list[dict] = []
    for message in produced:
        role = getattr(message, "role", "")
        if role == "assistant":
            calls = [_call(c, recorded) for c in getattr(message, "tools_calls", None) or ()]
            calls.sort(key=lambda c: order.get(c["id"], len(order)))  # stable; unrecorded ones last, in their order
            text = message.text() or None
            if calls or text:
                out.append({"role": "assistant", "content": text, **({"tool_calls": calls} if calls else {})})
        elif role == "tool":
            for block in message.content if isinstance(message.content, list) else ():
                if getattr(block, "type", "") != "tool_result":
                    continue
                output = block.output if isinstance(block.output, str) else json.dumps(block.output, default=str)
                entry = {"role": "tool", "tool_call_id": block.call_id, "content": output}
                if block.is_error or block.call_id not in recorded:
                    entry["error"] = True
                out.append(entry)
    return out


def _call(call: Any, recorded: dict[str, dict]) -> dict:
    data = call if isinstance(call, dict) else getattr(call, "model_dump", dict)()
    function = data.get("function") or {}
    call_id = data.get("id") or ""
    arguments = json.dumps(recorded[call_id], default=str) if call_id in recorded else function.get("arguments") or "{}"
    return {"id": call_id, "type": "function", "function": {"name": function.get("name") or data.get("name") or "",
                                                            "arguments": arguments}}


def _new_user_text(messages: list[dict]) -> str:
    texts: list[str] = []
    for message in reversed(messages):
        if message.get("role") != "user":
            break
        content = message.get("content")
        if isinstance(content, list):
            content = "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
        texts.append(content or "")
    return "\n".join(reversed(texts))


Options = AgentflowAgentOptions  # the registry reads each kind's Options


def create(name: str, options: AgentflowAgentOptions, env: AgentEnv) -> AgentflowAgent:
    return AgentflowAgent(name, options, env)
