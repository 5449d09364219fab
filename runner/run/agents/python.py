"""`type: python` — a Python function called once per user turn.

    def respond(messages: list[dict], context) -> str | list[dict] | dict

`messages` is the conversation so far (OpenAI chat messages, a copy the function may change);
`context` has `case_id`, `turn` and `runtime_context`. The function returns this turn's new messages
(or a plain string: one assistant message). It may be `async def`; a plain function runs in a thread
of its own so that a slow one does not hold up the other cases.
"""
from __future__ import annotations

import asyncio
import contextvars
import copy
import importlib
import inspect
import sys
import threading
import traceback
from pathlib import Path
from typing import Any, Callable, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from ._base import Agent, AgentEnv, AgentError, AgentStop, TurnContext, excerpt, parse_reply
from ._base import tools_field

KIND = "python"


class PythonAgentOptions(BaseModel):
    model_config = ConfigDict(
        extra="forbid", title="Python agent",
        json_schema_extra={"description": "A Python function called once per user turn with the conversation so far "
                                          "and a context; it returns the turn's new messages or a string.",
                           "examples": [{"type": "python", "entrypoint": "agents.hr:respond"}]})

    type: Literal["python"] = Field(
        title="Kind", description="`python`: call a Python function.", examples=["python"])
    tools: Optional[list[dict[str, Any]]] = tools_field()
    entrypoint: str = Field(
        pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$", title="Entry point",
        description="`package.module:function`, importable from the folder of evalrun.yaml (or installed). "
        "The function takes (messages, context) and may be sync or async.",
        examples=["agents.hr:respond", "my_agent:Agent.respond"])


def load_entrypoint(entrypoint: str, base_dir: Path) -> Callable[..., Any]:
    """The function an entry point names; AgentError saying which part failed and why."""
    module_name, _, attribute = entrypoint.partition(":")
    folder = str(Path(base_dir).resolve())
    if folder not in sys.path:
        sys.path.insert(0, folder)  # "importable relative to the config file's folder"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or module_name
        raise AgentError(f"entrypoint '{entrypoint}': cannot import module '{module_name}' (no module named "
                         f"'{missing}', searched from {folder} and the installed packages)") from None
    except BaseException as exc:  # a module that fails while importing: show where
        raise AgentError(f"entrypoint '{entrypoint}': importing module '{module_name}' failed: "
                         f"{_exception_summary(exc)}") from None
    target: Any = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            known = sorted(n for n in dir(target) if not n.startswith("_") and callable(getattr(target, n, None)))
            hint = f" (it has: {', '.join(known[:10])})" if known else ""
            raise AgentError(f"entrypoint '{entrypoint}': '{module_name}' has no attribute '{attribute}'{hint}")
        target = getattr(target, part)
    if not callable(target):
        raise AgentError(f"entrypoint '{entrypoint}': '{attribute}' is a {type(target).__name__}, not a function")
    return target


class PythonAgent(Agent):
    kind = KIND

    def __init__(self, name: str, options: PythonAgentOptions, env: AgentEnv):
        self.name = name
        self.options = options
        self.env = env
        self.function: Callable[..., Any] | None = None

    async def start(self, case) -> None:
        self.function = load_entrypoint(self.options.entrypoint, self.env.base_dir)

    async def turn(self, messages: list[dict], ctx: TurnContext) -> list[dict]:
        assert self.function is not None, "start() was not called"
        function = self.function
        messages = copy.deepcopy(messages)  # the function may change its argument; our record stays intact
        try:
            if inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(getattr(function, "__call__", None)):
                result = await function(messages, ctx)
            else:
                result = await _in_daemon_thread(function, messages, ctx)
                if inspect.isawaitable(result):
                    result = await result
        except (AgentError, AgentStop):
            raise
        except Exception as exc:
            raise AgentError(f"{self.options.entrypoint} raised {_exception_summary(exc)}") from None
        reply = parse_reply(result, f"{self.options.entrypoint} returned")
        if reply.stop:
            raise AgentStop("agent_stop", reply.messages)
        return reply.messages


async def _in_daemon_thread(function: Callable[..., Any], *args: Any) -> Any:
    """Run a blocking agent function in its own daemon thread. Not asyncio.to_thread: a function that
    never returns would keep the default executor, and so the end of the run, waiting forever; after a
    timeout this thread is simply abandoned. The context is copied, so calls it makes are recorded."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future = loop.create_future()
    context = contextvars.copy_context()

    def settle(outcome: Any, failed: bool) -> None:
        if not future.done():
            future.set_exception(outcome) if failed else future.set_result(outcome)

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


def _exception_summary(exc: BaseException) -> str:
    """`ValueError: message (at file.py:12 in respond)`: the innermost frame is where to look."""
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()
    summary = " ".join(line.strip() for line in text) if text else type(exc).__name__
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1]
        summary += f" (at {Path(last.filename).name}:{last.lineno} in {last.name})"
    return excerpt(summary, 400)  # the message may hold text the agent wrote


Options = PythonAgentOptions  # the registry reads each kind's Options


def create(name: str, options: PythonAgentOptions, env: AgentEnv) -> PythonAgent:
    return PythonAgent(name, options, env)
