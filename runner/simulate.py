"""The user side of a live conversation: the case's scripted messages, then (optionally) an LLM user.

The first user message is `starting_sentence`, then `user_prompts` in order. When they run out and a
simulator is configured and the case has a `story`, an LLM plays the user: the template
`user_simulator.j2` (the story and the rules) is the system prompt, and the conversation is shown from
the user's side — the agent's words as the other party's messages, never inside the template, so
nothing the agent writes is rendered or can pose as instructions. Tool calls are invisible to the user.

The LLM answers with a JSON object `{"message": "...", "done": false}`; `"done": true` ends the
conversation (`user_stop`). The signal is that boolean field, never a word in the text: a user talking
about the WEEKEND does not end anything. A message the user already sent ends it as `repeating`.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Optional, Protocol

from pydantic import BaseModel, ConfigDict, Field

from runner.suite.models import Case

SIMULATOR_PROMPT = "user_simulator.j2"
FIRST_MESSAGE_CUE = "(The conversation has not started yet: write your first message to the agent.)"


class UserError(Exception):
    """The simulated user could not produce a message; `reason` is fit for a report."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class UserMove:
    message: Optional[str] = None  # the next user message, or
    stop: Optional[str] = None  # the termination reason when the user ends the conversation


class User(Protocol):
    default_max_turns: Optional[int]  # the cap on user messages when the case sets no max_user_turns

    async def next_message(self, messages: list[dict]) -> UserMove: ...

    def ending_without_asking(self) -> Optional[str]:
        """How the conversation would end if asked now without calling a model (`script_end` when the
        script is over and nothing follows it), else None."""
        ...


class ScriptedUser:
    """starting_sentence, then user_prompts, then `script_end`."""

    default_max_turns: Optional[int] = None

    def __init__(self, case: Case):
        self.script = ([case.starting_sentence] if case.starting_sentence else []) + list(case.user_prompts)
        self.sent = 0

    @property
    def exhausted(self) -> bool:
        return self.sent >= len(self.script)

    async def next_message(self, messages: list[dict]) -> UserMove:
        if self.exhausted:
            return UserMove(stop="script_end")
        self.sent += 1
        return UserMove(message=self.script[self.sent - 1])

    def ending_without_asking(self) -> Optional[str]:
        return "script_end" if self.exhausted else None


class SimulatedUser:
    """The scripted messages first; then an LLM writes each next message from the case's story."""

    def __init__(self, case: Case, client: Any, prompts: Any, *, max_turns: int, params: Optional[dict] = None):
        self.scripted = ScriptedUser(case)
        self.story = case.story or ""
        self.client = client
        self.prompts = prompts
        self.default_max_turns = max_turns
        self.params = params or {}

    def ending_without_asking(self) -> Optional[str]:
        return None

    async def next_message(self, messages: list[dict]) -> UserMove:
        if not self.scripted.exhausted:
            return await self.scripted.next_message(messages)
        from runner.prompts import PromptError

        try:
            system = self.prompts.render(SIMULATOR_PROMPT, story=self.story)
        except PromptError as exc:
            raise UserError(f"simulator prompt: {exc}") from None
        request = [{"role": "system", "content": system}, *user_side_view(messages)]
        if len(request) == 1:
            request.append({"role": "user", "content": FIRST_MESSAGE_CUE})
        content = await complete_text(self.client, request, self.params)
        message, done = parse_user_reply(content)
        if done:
            return UserMove(stop="user_stop")
        if any(_same(message, m.get("content")) for m in messages if m.get("role") == "user"):
            return UserMove(stop="repeating")
        return UserMove(message=message)


def user_side_view(messages: list[dict]) -> list[dict]:
    """The conversation as the simulated user sees it: its own messages are the model's (`assistant`),
    the agent's visible text is the other party's (`user`); tool calls and results are not seen."""
    from runner.trajectory import content_text

    view = []
    for message in messages:
        role = message.get("role")
        if role == "user":
            view.append({"role": "assistant", "content": content_text(message.get("content"))})
        elif role == "assistant":
            text = content_text(message.get("content")).strip()
            if text:
                view.append({"role": "user", "content": text})
    return view


def parse_user_reply(content: str) -> tuple[str, bool]:
    """(message, done) from the simulator's JSON answer; UserError when it is not one."""
    from runner.llm import LLMError, parse_json_object

    try:
        reply = parse_json_object(content)
    except LLMError:
        raise UserError(f"the simulated user did not answer with a JSON object: {_short(content)}") from None
    done = reply.get("done", False)
    if not isinstance(done, bool):
        raise UserError(f"the simulated user's 'done' must be true or false, got {_short(json.dumps(done))}")
    message = reply.get("message")
    if done:
        return (message if isinstance(message, str) else ""), True
    if not isinstance(message, str) or not message.strip():
        raise UserError(f"the simulated user's reply has no 'message' text: {_short(json.dumps(reply))}")
    return message.strip(), False


async def complete_text(client: Any, messages: list[dict], params: dict) -> str:
    """The text of the LLM layer's answer; UserError when the call fails."""
    from runner.llm import LLMError

    try:
        message = await client.acomplete(messages, **params)
    except LLMError as exc:
        raise UserError(f"the simulated user's model failed: {exc.reason}") from None
    content = assistant_content(message)
    if not isinstance(content, str):
        raise UserError("the simulated user's model answered without text")
    return content


def assistant_content(result: Any) -> Any:
    message = result[0] if isinstance(result, tuple) else getattr(result, "message", result)
    return message.get("content") if isinstance(message, dict) else getattr(message, "content", None)


_SPACE = re.compile(r"\s+")


def _same(a: Optional[str], b: Any) -> bool:
    return isinstance(b, str) and _SPACE.sub(" ", a or "").strip().casefold() == _SPACE.sub(" ", b).strip().casefold()


def _short(text: str, limit: int = 160) -> str:
    from runner.agents._base import excerpt

    return excerpt(text, limit)


# ----------------------------------------------------------------------------- settings and wiring

class SimulatorSettings(BaseModel):
    """The `simulator` section of evalrun.yaml: the model that plays the user once the script is over."""

    model_config = ConfigDict(
        extra="forbid", title="Simulated user",
        json_schema_extra={"description": "The model that writes the user's messages once a case's scripted ones "
                                          "run out (only for cases with a `story`).",
                           "examples": [{"model": "openai/gpt-4o-mini", "api_key_env": "OPENAI_API_KEY"}]})

    model: str = Field(
        title="Model", description="Any litellm model string: provider/model.",
        examples=["openai/gpt-4o-mini", "ollama/llama3.1"])
    api_base: Optional[str] = Field(
        None, title="API base URL", description="The server to call, for local or self-hosted OpenAI-compatible servers.",
        examples=["http://localhost:8000/v1"])
    api_key_env: Optional[str] = Field(
        None, title="API key variable",
        description="Name of the environment variable that holds the API key (the key itself never goes in the file).",
        examples=["OPENAI_API_KEY"])
    temperature: float = Field(
        0.0, ge=0, title="Temperature", description="Sampling temperature; 0 keeps conversations repeatable.",
        examples=[0.0])
    timeout_s: float = Field(
        30, gt=0, title="Timeout (seconds)", description="How long one request may take before it counts as failed.",
        examples=[30])
    max_retries: int = Field(
        2, ge=0, title="Retries",
        description="Retries after a rate limit, a server error, a timeout or a connection error (with back-off).",
        examples=[2])
    cache: bool = Field(
        True, title="Cache replies",
        description="Keep the simulator's replies on disk so that a re-run replays the same user.", examples=[True])
    extra: dict[str, Any] = Field(
        default_factory=dict, title="Extra parameters",
        description="Passed as they are to the model call (for example max_tokens).", examples=[{"max_tokens": 200}])
    max_user_turns: int = Field(
        10, ge=1, title="Maximum user turns",
        description="The most user messages in a simulated conversation, for cases that set no max_user_turns.",
        examples=[10])


def build_user(case: Case, *, simulator: Optional[SimulatorSettings] = None, client: Any = None,
               prompts: Any = None) -> "ScriptedUser | SimulatedUser":
    """The user for a case: an LLM user after the script when a simulator is configured (and its
    `client` given) and the case has a story; otherwise the script alone."""
    if simulator is not None and client is not None and case.story:
        if prompts is None:
            from runner.prompts import PromptLibrary

            prompts = PromptLibrary()
        return SimulatedUser(case, client, prompts, max_turns=simulator.max_user_turns)
    return ScriptedUser(case)
