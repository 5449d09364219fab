"""The user side of a live conversation: the case's scripted messages, then (optionally) an LLM user.

The first user message is `starting_sentence`, then `user_prompts` in order. When they run out and a
simulator is configured and the case has a `story`, an LLM plays the user: the template
`user_simulator.j2` (the story and the rules) is the system prompt, and the conversation is shown from
the user's side — the agent's words as the other party's messages, never inside the template, so
nothing the agent writes is rendered or can pose as instructions. Tool calls are invisible to the user.

The LLM's plain-text reply is the user's next message; `{"done": true}` (a reply that starts with that
JSON object) ends the conversation (`user_stop`), and `{"message": "...", "done": false}` is read too. The
signal is that boolean field at the start of the reply, never a word in the text (a user talking about the
WEEKEND does not end anything) nor an object quoted later in it. A message the user already sent ends it
as `repeating`.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Protocol

from runner.llm.settings import SimulatorSettings
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
    message: str | None = None  # the next user message, or
    stop: str | None = None  # the termination reason when the user ends the conversation


class User(Protocol):
    default_max_turns: int | None  # the cap on user messages when the case sets no max_user_turns

    async def next_message(self, messages: list[dict]) -> UserMove: ...

    def ending_without_asking(self) -> str | None:
        """How the conversation would end if asked now without calling a model (`script_end` when the
        script is over and nothing follows it), else None."""
        ...


class ScriptedUser:
    """starting_sentence, then user_prompts, then `script_end`."""

    default_max_turns: int | None = None

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

    def ending_without_asking(self) -> str | None:
        return "script_end" if self.exhausted else None


class SimulatedUser:
    """The scripted messages first; then an LLM writes each next message from the case's story."""

    def __init__(self, case: Case, client: Any, prompts: Any, *, max_turns: int, params: dict | None = None):
        self.scripted = ScriptedUser(case)
        self.story = case.story or ""
        self.client = client
        self.prompts = prompts
        self.default_max_turns: int | None = max_turns
        self.params = params or {}  # sampling parameters beyond the client's settings

    def ending_without_asking(self) -> str | None:
        return None

    async def next_message(self, messages: list[dict]) -> UserMove:
        if not self.scripted.exhausted:
            return await self.scripted.next_message(messages)
        from runner.llm.prompts import PromptError

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
    from runner.transcripts.read import content_text

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
    """(message, done) from the simulator's reply; UserError when it holds no message.

    Plain text is the user's next message (done: false), as ADK and watsonx take it. A reply that starts
    with a JSON object is read as {"message": ..., "done": ...}: only that leading object can end the
    conversation. An object later in the reply (the agent's own words quoted back, say `{"done": true}`)
    is part of the text, never the user's decision."""
    from runner.llm.replies import leading_object, without_fence

    text = (content or "").strip()
    reply = leading_object(text)
    if reply is None:
        if not text:
            raise UserError("the simulated user's reply is empty")
        if without_fence(text).startswith("{"):
            raise UserError(f"the simulated user's reply starts a JSON object it does not finish: {_short(text)}")
        return text, False
    done = reply.get("done", False)
    if not isinstance(done, bool):
        raise UserError(f"the simulated user's 'done' must be true or false, got {_short(json.dumps(done))}")
    message = reply.get("message")
    if done:
        return (message if isinstance(message, str) else ""), True
    if not isinstance(message, str) or not message.strip():
        raise UserError(f"the simulated user's reply is a JSON object with no 'message' text: "
                        f"{_short(json.dumps(reply))}")
    return message.strip(), False


USER_REPLY_SHAPE = 'your next message to the assistant as plain text, or {"done": true} alone to end the conversation'


async def complete_text(client: Any, messages: list[dict], params: dict) -> str:
    """The text of the simulator's answer, once it holds a usable reply (an unusable one is asked again,
    then fails; it is never cached); UserError when the call fails."""
    from runner.llm.errors import LLMError

    def usable(completion: Any) -> None:
        if completion.finish_reason == "length":  # half a message is not the user's; the client names the cut
            raise LLMError("the simulated user's reply was cut")
        try:
            parse_user_reply(completion.content or "")
        except UserError as exc:
            raise LLMError(exc.reason) from None

    try:
        completion = await client.acomplete(messages, accept=usable, expect=USER_REPLY_SHAPE, **params)
    except LLMError as exc:
        reason = exc.reason
        raise UserError(reason if reason.startswith("the simulated user") else
                        f"the simulated user's model failed: {reason}") from None
    return completion.content or ""


_SPACE = re.compile(r"\s+")


def _same(a: str | None, b: Any) -> bool:
    return isinstance(b, str) and _SPACE.sub(" ", a or "").strip().casefold() == _SPACE.sub(" ", b).strip().casefold()


def _short(text: str, limit: int = 160) -> str:
    from runner.run.agents._base import excerpt

    return excerpt(text, limit)


# ----------------------------------------------------------------------------- settings and wiring

def build_user(case: Case, *, simulator: SimulatorSettings | None = None, client: Any = None,
               prompts: Any = None) -> ScriptedUser | SimulatedUser:
    """The user for a case: an LLM user after the script when a simulator is configured and the case
    has a story; otherwise the script alone. `client` defaults to the run's LLM client for the
    simulator, `prompts` to the built-in templates."""
    if simulator is None or not case.story:
        return ScriptedUser(case)
    if client is None:
        from runner.llm.client import LLMClient

        client = LLMClient(simulator, role="simulator")
    if prompts is None:
        from runner.llm.prompts import PromptLibrary

        prompts = PromptLibrary()
    return SimulatedUser(case, client, prompts, max_turns=simulator.max_user_turns)


def user_for(case: Case, loaded: Any) -> ScriptedUser | SimulatedUser:
    """The user for a case in a run with this LoadedConfig: its `simulator` and `prompts_dir`."""
    config = loaded.config
    if config.simulator is None or not case.story:
        return ScriptedUser(case)
    from runner.llm.prompts import PromptLibrary

    return build_user(case, simulator=config.simulator, prompts=PromptLibrary(loaded.resolve(config.prompts_dir)))
