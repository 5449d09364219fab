"""`type: python` — a Python function called once per user turn.

    def respond(messages: list[dict], context) -> str | list[dict] | dict

`messages` is the conversation so far (OpenAI chat messages, a copy the function may change);
`context` has `case_id`, `turn`, `runtime_context` and `conversation_id`. The function returns this
turn's new messages (or a plain string: one assistant message). It may be `async def`.

The state of the agent's world after the conversation, which a case's `final_state:` is compared
with, comes from a function `state(context)` beside the entry point (`module.state` for
`module:respond`, `Class.state` for `module:Class.respond`), called once after the last turn when the
case asks for it; without one, from the `state` of the last reply that carried one
(`{"messages": [...], "state": {...}}`).

`isolate` says where it runs. `none` (the default): in evalrun's own process, a plain function in a
thread of its own so that a slow one does not hold up the other cases, an `async def` one on an event loop
of its own in a thread of its own, one per conversation (runner.run.agents._agent_loop), so that a blocking
call, a stopped loop or cancelled tasks stay its own: the case timeout and a stop still act at once, and an
agent that does not answer in time is abandoned. Whatever it raises — SystemExit, KeyboardInterrupt, any
BaseException — is that case's error; but `os._exit` or a crash of the interpreter takes the whole run down. `process`: in a
worker process of its own for each case (runner.run.agents._worker), the module imported once per
worker; a worker that dies is that case's error, naming its exit code or signal, and the other cases
go on. Messages, context and replies then travel as JSON.
"""
from __future__ import annotations

import asyncio
import contextvars
import copy
import inspect
import json
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from runner.transcripts.state import ReportedState

from ._agent_loop import AgentLoop, AgentLoopEnded, on_callers_loop
from ._base import (
    Agent,
    AgentEnv,
    AgentError,
    AgentStop,
    TurnContext,
    being_cancelled,
    check_state,
    excerpt,
    parse_reply,
    reply_json,
    tools_field,
)
from ._entrypoint import exception_summary, load_object
from ._process import ProcessChannel

KIND = "python"
WORKER_REPLY_LIMIT = 64 * 1024 * 1024  # one reply of an isolated agent may be this long (as JSON)
WORKER_STDERR_LINES = 50  # what an isolated agent prints: its last lines are kept with the case


class PythonAgentOptions(BaseModel):
    model_config = ConfigDict(
        extra="forbid", title="Python agent",
        json_schema_extra={"description": "A Python function called once per user turn with the conversation so far "
                                          "and a context; it returns the turn's new messages or a string.",
                           "examples": [{"type": "python", "entrypoint": "agents.hr:respond"}]})

    type: Literal["python"] = Field(
        title="Kind", description="`python`: call a Python function.", examples=["python"])
    tools: list[dict[str, Any]] | None = tools_field()
    entrypoint: str = Field(
        pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$", title="Entry point",
        description="`package.module:function`, importable from the folder of evalrun.yaml (or installed). "
        "The function takes (messages, context) and may be sync or async.",
        examples=["agents.hr:respond", "my_agent:Agent.respond"])
    isolate: Literal["none", "process"] = Field(
        "none", title="Isolation",
        description="`none`: the function runs inside evalrun (fast; anything it raises is the case's error, but "
        "`os._exit` or a crash of the interpreter ends the run). `process`: it runs in a worker process of its own "
        "per case, the module imported once per worker; a worker that exits or is killed is that case's error and "
        "the run goes on. Messages, context and the reply then travel as JSON.", examples=["process"])


def load_entrypoint(entrypoint: str, base_dir: Path) -> Callable[..., Any]:
    """The function an entry point names; AgentError saying which part failed and why."""
    target = load_object(entrypoint, base_dir)
    if not callable(target):
        attribute = entrypoint.partition(":")[2]
        raise AgentError(f"entrypoint '{entrypoint}': '{attribute}' is a {type(target).__name__}, not a function")
    return target


def state_entrypoint(entrypoint: str) -> str:
    """Where the state function of an entry point lives: `module:state` beside `module:respond`,
    `module:Class.state` beside `module:Class.respond`."""
    module_name, _, attribute = entrypoint.partition(":")
    return f"{module_name}:{'.'.join([*attribute.split('.')[:-1], 'state'])}"


def find_state_function(entrypoint: str) -> Callable[..., Any] | None:
    """The `state(context)` function beside an entry point already loaded (load_entrypoint), or None."""
    module_name, _, attribute = entrypoint.partition(":")
    target: Any = sys.modules.get(module_name)
    for part in attribute.split(".")[:-1]:
        target = getattr(target, part, None)
    found = getattr(target, "state", None)
    return found if callable(found) else None


class PythonAgent(Agent):
    kind = KIND

    def __init__(self, name: str, options: PythonAgentOptions, env: AgentEnv):
        self.name = name
        self.options = options
        self.env = env
        self.function: Callable[..., Any] | None = None
        self.state_function: Callable[..., Any] | None = None
        self.worker: ProcessChannel | None = None
        self.worker_has_state = False
        self.loop: AgentLoop | None = None  # an async agent's own event loop (runner.run.agents._agent_loop)

    async def start(self, case) -> None:
        if self.options.isolate == "process":
            await self._start_worker()
        else:
            self.function = load_entrypoint(self.options.entrypoint, self.env.base_dir)
            self.state_function = find_state_function(self.options.entrypoint)

    async def turn(self, messages: list[dict], ctx: TurnContext) -> list[dict]:
        if self.worker is not None:
            result = await self._worker_turn(messages, ctx)
        else:
            result = await self._call(self.function, (copy.deepcopy(messages), ctx))  # it may change its argument
        reply = parse_reply(result, f"{self.options.entrypoint} returned")
        self.keep_reply_state(reply, f"what {self.options.entrypoint} returned on turn {ctx.turn}")
        if reply.stop:
            raise AgentStop("agent_stop", reply.messages)
        return reply.messages

    async def final_state(self, ctx: TurnContext) -> ReportedState:
        name = f"{state_entrypoint(self.options.entrypoint)}(context)"
        if self.worker is not None:
            if not self.worker_has_state:
                return await super().final_state(ctx)
            value = await self._worker_state(ctx)
        elif self.state_function is not None:
            value = await self._call(self.state_function, (ctx,), what=name)
        else:
            return await super().final_state(ctx)
        if value is None:
            return ReportedState.none(f"{name} returned None")
        return ReportedState(value=check_state(value, f"the state {name} returned"), source=name)

    def how_to_report_state(self) -> str:
        return (f"there is no function `{state_entrypoint(self.options.entrypoint)}` beside its entry point, and its "
                "replies carried no `state`")

    async def _call(self, function: Callable[..., Any] | None, args: tuple, what: str | None = None) -> Any:
        assert function is not None, "start() was not called"
        what = what or self.options.entrypoint
        try:
            callers_loop = on_callers_loop.get()  # aevaluate: the caller's loop, promised to its agents
            if inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
                getattr(function, "__call__", None)  # noqa: B004 - the method, not callability
            ):
                if callers_loop:
                    return await function(*args)
                result, failed = await self._own_loop().call(lambda: function(*args))
            else:
                result, failed = await _in_daemon_thread(function, *args)
                if not failed and inspect.isawaitable(result):  # a plain function that returned a coroutine
                    if callers_loop:
                        return await result
                    awaited = result
                    result, failed = await self._own_loop().call(lambda: _awaited(awaited))
            if failed:
                if isinstance(result, AgentLoopEnded):
                    raise AgentError(f"{what}: {result}") from None
                raise result  # here, not in the helper: a StopIteration must not cross a coroutine's edge
            return result
        except (AgentError, AgentStop):
            raise
        except asyncio.CancelledError as exc:
            if being_cancelled():
                raise
            raise AgentError(f"{what} raised {exception_summary(exc)}") from None
        except BaseException as exc:  # SystemExit, KeyboardInterrupt, GeneratorExit...: the agent's, never the run's
            raise AgentError(f"{what} raised {exception_summary(exc)}") from None

    def _own_loop(self) -> AgentLoop:
        """The event loop this conversation's async agent runs on: its own, never evalrun's."""
        if self.loop is None:
            self.loop = AgentLoop(self.options.entrypoint)
        return self.loop

    # ------------------------------------------------------------------ isolate: process

    async def _start_worker(self) -> None:
        entrypoint = self.options.entrypoint
        self.worker = ProcessChannel(f"the worker process of {entrypoint}", stderr_lines=WORKER_STDERR_LINES,
                                     max_line_bytes=WORKER_REPLY_LIMIT, secrets=[])
        package_root = str(Path(__file__).resolve().parents[3])  # the folder that holds `runner`
        argv = [sys.executable, "-c", WORKER_BOOT, package_root, entrypoint, str(Path(self.env.base_dir).resolve())]
        try:
            await self.worker.start(argv, str(self.env.base_dir), dict(os.environ))
        except OSError as exc:
            raise AgentError(f"cannot start a worker process for {entrypoint}: "
                             f"{exc.strerror or type(exc).__name__}") from None
        answer = await self._worker_answer(None, f"loading {entrypoint}", "while loading the agent")
        if "failed" in answer:
            raise AgentError(str(answer["failed"]))
        self.worker_has_state = bool(answer.get("has_state"))

    async def _worker_turn(self, messages: list[dict], ctx: TurnContext) -> Any:
        assert self.worker is not None
        request = json.dumps({"messages": messages, "context": ctx.to_json()}) + "\n"
        what = f"turn {ctx.turn}"
        await self.worker.send(request.encode("ascii"), None, what)
        answer = await self._worker_answer(None, what, f"before answering {what}")
        if "raised" in answer:
            raise AgentError(f"{self.options.entrypoint} raised {answer['raised']}")
        if "unsendable" in answer:
            raise AgentError(f"{self.options.entrypoint} returned a value that cannot be sent from its worker "
                             f"process as JSON: {answer['unsendable']}")
        return answer["reply"]

    async def _worker_state(self, ctx: TurnContext) -> Any:
        assert self.worker is not None
        name = f"{state_entrypoint(self.options.entrypoint)}(context)"
        await self.worker.send((json.dumps({"state": True, "context": ctx.to_json()}) + "\n").encode("ascii"), None,
                               "the final state")
        answer = await self._worker_answer(None, "the final state", "before reporting the final state")
        if "raised" in answer:
            raise AgentError(f"{name} raised {answer['raised']}")
        if "unsendable" in answer:
            raise AgentError(f"{name} returned a value that cannot be sent from its worker process as JSON: "
                             f"{answer['unsendable']}")
        return answer.get("reply")

    async def _worker_answer(self, timeout_s: float | None, what: str, gone: str) -> dict:
        assert self.worker is not None
        line = await self.worker.receive(timeout_s, what, gone=gone)
        try:
            answer = reply_json(line.decode("ascii"))
        except ValueError:  # UnicodeDecodeError included: the worker writes ASCII
            answer = None
        if not isinstance(answer, dict) or not answer.keys() & {"ready", "failed", "reply", "raised", "unsendable"}:
            raise AgentError(self.worker.with_stderr(f"the worker process of {self.options.entrypoint} answered "
                                                     f"{what} with something that is not its protocol: "
                                                     f"{excerpt(line.decode('utf-8', 'replace').strip())}"))
        return answer

    def stderr_tail(self) -> list[str]:
        return self.worker.stderr_tail() if self.worker is not None else []

    async def close(self) -> None:
        loop, self.loop = self.loop, None  # the next conversation of this agent gets a loop of its own
        if loop is not None:
            await loop.close()
        if self.worker is not None:
            await self.worker.close()

    def kill(self) -> None:
        loop, self.loop = self.loop, None
        if loop is not None:
            loop.stop()  # abandoned: an agent blocked in a call is never waited for
        if self.worker is not None:
            self.worker.kill()


# The worker's first code: make this evalrun's `runner` importable (and only for that import), then serve.
WORKER_BOOT = ("import sys; root = sys.argv[1]; sys.path.insert(0, root)\n"
               "from runner.run.agents._worker import serve\n"
               "sys.path.remove(root); sys.path[:] = [p for p in sys.path if p != '']\n"
               "serve(sys.argv[2], sys.argv[3])")


async def _in_daemon_thread(function: Callable[..., Any], *args: Any) -> tuple[Any, bool]:
    """Run a blocking agent function in its own daemon thread: (its result, False) or (what it raised,
    True). Not asyncio.to_thread: a function that never returns would keep the default executor, and so
    the end of the run, waiting forever; after a timeout this thread is simply abandoned. The context is
    copied, so calls it makes are recorded."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future = loop.create_future()
    context = contextvars.copy_context()

    def settle(outcome: Any, failed: bool) -> None:
        if not future.done():
            future.set_result((outcome, failed))  # not set_exception: it refuses StopIteration

    def work() -> None:
        try:
            outcome, failed = context.run(function, *args), False
        except BaseException as exc:  # handed to the awaiting task, which decides
            outcome, failed = exc, True
        try:
            loop.call_soon_threadsafe(settle, outcome, failed)
        except RuntimeError:  # the loop is gone: the run ended without waiting for us
            pass

    threading.Thread(target=work, name="evalrun-python-agent", daemon=True).start()
    return await future


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


Options = PythonAgentOptions  # the registry reads each kind's Options


def create(name: str, options: PythonAgentOptions, env: AgentEnv) -> PythonAgent:
    return PythonAgent(name, options, env)
