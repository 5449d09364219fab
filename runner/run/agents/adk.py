"""`type: adk` — a Google ADK agent, run in-process through ADK's own runner.

    agents:
      support:
        type: adk
        entrypoint: support_agent.agent:root_agent   # an agent, an App, or a function that returns one

Each conversation gets its own in-memory ADK session (ADK's InMemoryRunner), created from the case's
session input: `app_name`, `user_id` and the initial `state` (see `session_input`); the agent's options
can name the app and user and give a starting state instead. Each user turn is
one `run_async` call with that turn's message; the events it yields become OpenAI chat messages, so
scoring and every report read them as any other agent's:

- a model event's function calls → an assistant message with `tool_calls` (its text, if any, as content);
- function responses → `tool` messages (a bare `{"result": "text"}` as its text, anything else as JSON);
- text → an assistant message.

Assistant messages carry the ADK agent that wrote them in `name`, so a hand-over to a sub-agent shows
as its `transfer_to_agent` call followed by messages named after the sub-agent. The session's state
after the last turn is kept with the conversation (`state` in the saved transcript); it is the agent's
final state, which a case's `final_state:` (or ADK's `final_session_state`) is compared with. ADK reports a
failing tool or model as an error event: the case's error. ADK's own warnings and errors logged during
the conversation are kept with the case (like a command agent's stderr), not printed over the console.

google-adk (`pip install 'evalrun[adk]'`) is imported when such an agent starts, never before.
"""
from __future__ import annotations

import asyncio
import contextlib
import contextvars
import copy
import json
import logging
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from runner.transcripts.state import ReportedState

from ._base import Agent, AgentEnv, AgentError, TurnContext, excerpt, tools_field
from ._entrypoint import exception_summary, load_object

KIND = "adk"
STATE_SOURCE = "the ADK session's state"
DEFAULT_USER_ID = "test_user_id"  # what ADK's own evaluation uses when an eval case has no session_input
INSTALL_HINT = "pip install 'evalrun[adk]'"


class AdkAgentOptions(BaseModel):
    model_config = ConfigDict(
        extra="forbid", title="Google ADK agent",
        json_schema_extra={"description": "A Google ADK agent run in-process through ADK's runner, one in-memory "
                                          "session per conversation. Needs `pip install 'evalrun[adk]'`.",
                           "examples": [{"type": "adk", "entrypoint": "support_agent.agent:root_agent"}]})

    type: Literal["adk"] = Field(
        title="Kind", description="`adk`: run a Google ADK agent in-process.", examples=["adk"])
    tools: list[dict[str, Any]] | None = tools_field()
    entrypoint: str = Field(
        pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$", title="Entry point",
        description="`package.module:attribute`, importable from the folder of evalrun.yaml (or installed): an ADK "
        "agent (such as `root_agent`), an ADK App, or a function with no arguments returning one (called for "
        "every conversation: use it for agents holding connections, such as MCP toolsets).",
        examples=["support_agent.agent:root_agent", "support_agent.agent:make_agent"])
    app_name: str | None = Field(
        None, title="App name",
        description="The ADK app name of the sessions. Default: the case's `session_input.app_name`, else the App's "
        "name, else the root agent's name.", examples=["support_agent"])
    user_id: str | None = Field(
        None, title="User id",
        description=f"The ADK user id of the sessions. Default: the case's `session_input.user_id`, else "
        f"`{DEFAULT_USER_ID}` (as ADK's own evaluation).", examples=["test_user"])
    state: dict[str, Any] = Field(
        default_factory=dict, title="Initial state",
        description="Session state every conversation starts with; the case's `session_input.state` is laid over "
        "it, key by key.", examples=[{"user:tier": "gold"}])


SESSION_KEYS = ("app_name", "user_id", "session_id", "state")


def session_input(case) -> dict:
    """The ADK session a case starts from: its `session_input` (an ADK eval case's: app name, user id,
    state), else the keys `app_name`, `user_id` and `state` of its runtime context."""
    given = getattr(case, "session_input", None)
    if given is not None:
        source = given.model_dump() if hasattr(given, "model_dump") else dict(given)
    else:
        source = dict(case.runtime_context)
    return {key: source[key] for key in SESSION_KEYS if source.get(key) is not None}


def load_adk_object(entrypoint: str, base_dir: Path) -> Any:
    """The object an entry point names (an agent, an App, a factory); AgentError saying which part failed."""
    def missing_package(name: str) -> str | None:
        return f"needs google-adk, which is not installed ({INSTALL_HINT})" if name.startswith("google") else None

    return load_object(entrypoint, base_dir, missing_package=missing_package)


ADK_LOGGER = "google_adk"  # the root of every google.adk logger
LOG_LINES_KEPT = 20
_log_lines: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("evalrun_adk_log", default=None)


class _KeepLog(logging.Handler):
    """ADK's warnings and errors, kept with the conversation that caused them (the context says which)."""

    def emit(self, record: logging.LogRecord) -> None:
        lines = _log_lines.get()
        if lines is None:  # not during one of our conversations: where Python would have put it
            if logging.lastResort is not None:
                logging.lastResort.handle(record)
            return
        line = f"{record.levelname} {record.name.removeprefix(ADK_LOGGER + '.')}: {record.getMessage()}"
        if record.exc_info and record.exc_info[1] is not None:
            line += f" — {exception_summary(record.exc_info[1])}"
        lines.append(excerpt(line, 400))
        del lines[:-LOG_LINES_KEPT]


def _keep_adk_log() -> None:
    logger = logging.getLogger(ADK_LOGGER)
    if not any(isinstance(h, _KeepLog) for h in logger.handlers):
        logger.addHandler(_KeepLog(logging.WARNING))


class AdkAgent(Agent):
    kind = KIND

    def __init__(self, name: str, options: AdkAgentOptions, env: AgentEnv):
        self.name = name
        self.options = options
        self.env = env
        self.runner: Any = None
        self.session: Any = None
        self.owns_root = False  # made by a factory for this conversation: closing the runner may close its toolsets
        self.state: dict | None = None
        self.log: list[str] = []

    async def start(self, case) -> None:
        token = _log_lines.set(self.log)
        try:
            await self._start(case)
        finally:
            _log_lines.reset(token)

    async def _start(self, case) -> None:
        _keep_adk_log()
        # ADK's LiteLlm wrapper imports the litellm evalrun uses: the same policy as runner.llm.litellm_path
        # (litellm's bundled price list, not a download from GitHub when it is imported)
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        adk = await asyncio.to_thread(_import_adk)  # google.adk takes seconds to import: not on the event loop
        root = await asyncio.to_thread(load_adk_object, self.options.entrypoint, self.env.base_dir)
        if not isinstance(root, (adk.App, adk.BaseNode)) and callable(root):
            try:
                root = root()
            except Exception as exc:
                raise AgentError(f"{self.options.entrypoint}() raised {exception_summary(exc)}") from None
            self.owns_root = True
        given = session_input(case)
        app_name = self.options.app_name or given.get("app_name") or _default_app_name(root, adk)
        if isinstance(root, adk.App):
            self.runner = adk.InMemoryRunner(app=root, app_name=app_name)
        elif isinstance(root, adk.BaseAgent):
            self.runner = adk.InMemoryRunner(agent=root, app_name=app_name)
        elif isinstance(root, adk.BaseNode):
            self.runner = adk.InMemoryRunner(node=root, app_name=app_name)
        else:
            raise AgentError(f"entrypoint '{self.options.entrypoint}' is a {type(root).__name__}, not an ADK agent, "
                             "App, or function returning one")
        state = {**copy.deepcopy(self.options.state), **copy.deepcopy(given.get("state") or {})}
        if case.canaries:  # planted where an ADK agent reads its context: `{canaries}` in an instruction
            state["canaries"] = list(case.canaries)
        self.session = await self.runner.session_service.create_session(
            app_name=self.runner.app_name, user_id=self.options.user_id or given.get("user_id") or DEFAULT_USER_ID,
            state=state, session_id=given.get("session_id"))
        self.state = _plain(self.session.state)

    async def turn(self, messages: list[dict], ctx: TurnContext) -> list[dict]:
        assert self.runner is not None, "start() was not called"
        from google.genai import types

        text = _new_user_text(messages)
        message = types.Content(role="user", parts=[types.Part(text=text)])
        new: list[dict] = []
        token = _log_lines.set(self.log)
        events = self.runner.run_async(user_id=self.session.user_id, session_id=self.session.id, new_message=message)
        try:
            async with contextlib.aclosing(events):  # closed at once when an error event ends the turn
                async for event in events:
                    new.extend(event_messages(event))
        except AgentError as exc:
            exc.messages = new + exc.messages
            raise
        except Exception as exc:
            raise AgentError(f"the ADK agent raised {exception_summary(exc)}", messages=new) from None
        finally:
            await self._keep_state()
            _log_lines.reset(token)
        return new

    async def _keep_state(self) -> None:
        try:
            session = await self.runner.session_service.get_session(
                app_name=self.runner.app_name, user_id=self.session.user_id, session_id=self.session.id)
        except Exception:  # the state is a record of the conversation, not a reason to fail it
            return
        if session is not None:
            self.state = _plain(session.state)

    def kept_state(self) -> ReportedState | None:
        return None if self.state is None else ReportedState(value=self.state, source=STATE_SOURCE)

    async def final_state(self, ctx: TurnContext) -> ReportedState:
        await self._keep_state()
        if self.state is None:
            return ReportedState.none(f"agent '{self.name}' (adk) has no session")
        return ReportedState(value=self.state, source=STATE_SOURCE)

    def stderr_tail(self) -> list[str]:
        return list(self.log)

    async def close(self) -> None:
        # A shared agent object is closed by nobody: closing the runner closes the agent's toolsets,
        # which other conversations may be using at the same moment.
        if self.runner is not None and self.owns_root:
            await self.runner.close()


def event_messages(event: Any) -> list[dict]:
    """One ADK event as OpenAI chat messages (see the module's docstring); AgentError for an error event."""
    if getattr(event, "partial", False):
        return []  # a streamed chunk: the whole message follows in a final event
    parts = list(event.content.parts or []) if event.content is not None else []
    if getattr(event, "error_code", None) or (getattr(event, "error_message", None) and not parts):
        said = ": ".join(excerpt(str(v)) for v in (event.error_code, event.error_message) if v)
        raise AgentError(f"the ADK agent '{event.author}' reported an error: {said}")
    texts = [p.text for p in parts if p.text and not p.thought]
    calls = [p.function_call for p in parts if p.function_call is not None]
    responses = [p.function_response for p in parts if p.function_response is not None]
    messages: list[dict] = []
    if calls or (texts and event.author != "user"):
        message: dict = {"role": "assistant", "content": "\n".join(texts) or None, "name": event.author}
        if calls:
            message["tool_calls"] = [{"id": call.id or f"adk_{event.id}_{n}", "type": "function",
                                      "function": {"name": call.name, "arguments": _json(call.args or {})}}
                                     for n, call in enumerate(calls)]
        messages.append(message)
    for n, response in enumerate(responses):
        messages.append({"role": "tool", "tool_call_id": response.id or f"adk_{event.id}_{n}", "name": response.name,
                         "content": _tool_text(response.response)})
    return messages


def _tool_text(response: Any) -> str:
    """ADK wraps a tool's plain return value as {"result": value}: a text result is shown as the text."""
    if isinstance(response, dict) and set(response) == {"result"} and isinstance(response["result"], str):
        return response["result"]
    return _json(response)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _plain(state: Any) -> dict:
    """The session state as JSON data (what the saved transcript can hold)."""
    return json.loads(_json(dict(state or {})))


def _new_user_text(messages: list[dict]) -> str:
    """The user's message(s) since the agent last spoke: ADK's session holds everything before."""
    texts: list[str] = []
    for message in reversed(messages):
        if message.get("role") != "user":
            break
        content = message.get("content")
        if isinstance(content, list):  # OpenAI content parts
            content = "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
        texts.append(content or "")
    return "\n".join(reversed(texts))


def _default_app_name(root: Any, adk: Any) -> str:
    return root.name if isinstance(root, adk.App) else getattr(root, "name", None) or "evalrun"


class _Adk:
    """The few google.adk names this module uses, imported once."""

    def __init__(self) -> None:
        from google.adk.agents import BaseAgent
        from google.adk.apps import App
        from google.adk.runners import InMemoryRunner
        from google.adk.workflow import BaseNode

        self.BaseAgent, self.App, self.InMemoryRunner, self.BaseNode = BaseAgent, App, InMemoryRunner, BaseNode


_adk: _Adk | None = None


def _import_adk() -> _Adk:
    global _adk
    if _adk is None:
        try:
            _adk = _Adk()
        except ImportError as exc:
            raise AgentError(f"type: adk needs google-adk, which cannot be imported ({exc}); {INSTALL_HINT}") from None
    return _adk


Options = AdkAgentOptions  # the registry reads each kind's Options


def create(name: str, options: AdkAgentOptions, env: AgentEnv) -> AdkAgent:
    return AdkAgent(name, options, env)
