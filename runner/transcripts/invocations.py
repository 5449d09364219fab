"""A conversation cut into invocations, as Google ADK cuts it: each user message opens one, and it holds
everything the agent did until the next user message (its tool calls, its sub-agents' calls, its answer).

The final answer of an invocation is ADK's `final_response`: the text of the last assistant message that
makes no tool call and says something (a message that calls a tool is never an answer, even if it has text).
Messages before the first user message (a system prompt, a greeting) belong to no invocation.
"""
from __future__ import annotations

from dataclasses import dataclass

from .read import AssistantText, ToolCall, Trajectory, content_text


@dataclass(frozen=True)
class Invocation:
    number: int  # from 1: "turn 2"
    user_text: str
    first: int  # index of its user message in the trajectory's messages
    end: int  # one past its last message
    tool_calls: tuple[ToolCall, ...]
    final_text: str | None  # None: the agent said nothing that counts as an answer

    @property
    def answer(self) -> str:
        """The final answer as ADK's evaluators read it: empty text when there is none."""
        return self.final_text or ""


def split_invocations(trajectory: Trajectory) -> list[Invocation]:
    messages = trajectory.messages
    starts = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    found = []
    for number, first in enumerate(starts, start=1):
        end = starts[number] if number < len(starts) else len(messages)
        calls = tuple(c for c in trajectory.tool_calls if first < c.message_index < end)
        found.append(Invocation(number=number, user_text=content_text(messages[first].get("content")), first=first,
                                end=end, tool_calls=calls, final_text=_final_text(messages[first + 1:end])))
    return found


def _final_text(messages: list[dict]) -> str | None:
    for message in reversed(messages):
        if message.get("role") == "assistant" and not message.get("tool_calls"):
            text = content_text(message.get("content"))
            if text:
                return text
    return None


def invocation_trajectory(trajectory: Trajectory, invocation: Invocation) -> Trajectory:
    """The part of `trajectory` one invocation covers, for checks that read a single turn. Calls and texts
    keep their message numbers in the whole conversation, so explanations point into the recording."""
    texts = [t for t in trajectory.texts if invocation.first < t.message_index < invocation.end]
    if texts:
        last = texts[-1]
        texts = [*texts[:-1], AssistantText(message_index=last.message_index, position=last.position,
                                            text=last.text, is_final=True)]
    return Trajectory(messages=trajectory.messages[invocation.first:invocation.end],
                      tool_calls=list(invocation.tool_calls), texts=texts, user_turns=1,
                      termination_reason=trajectory.termination_reason)
