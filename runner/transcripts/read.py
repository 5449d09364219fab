"""Recorded conversations -> `Trajectory`, the only thing the scorer reads.

Recorded messages are first normalized to OpenAI-style messages (runner.transcripts.normalize), then tool calls
are paired with their results. Reading a transcript file into messages is runner.transcripts.transcript_file's.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..util.jsontext import deeper_than, json_kind, may_hold_surrogates, replace_lone_surrogates
from .normalize import MAX_ARGUMENT_NESTING, content_text, normalize_messages
from .recording import TranscriptError
from .state import ReportedState

if TYPE_CHECKING:
    import regex

__all__ = [
    "AssistantText",
    "ToolCall",
    "Trajectory",
    "TranscriptError",
    "build_trajectory",
    "content_text",
    "normalize_messages",
]

DEFAULT_TOOL_ERROR_PATTERN = r"^\s*Error\b"
# tool_error_pattern is the project's, but the text it searches is a tool's result: a pattern that backtracks
# badly on it must not hang the run. A result the search gives up on counts as an error (never as a success).
ERROR_PATTERN_TIMEOUT_S = 1.0


class ToolCall(BaseModel):
    index: int
    message_index: int
    position: tuple[int, int]
    id: str | None
    name: str
    arguments: dict | None
    raw_arguments: Any
    arguments_error: str | None
    result: Any = None
    result_message_index: int | None = None
    answered: bool = False
    is_error: bool = False


class AssistantText(BaseModel):
    message_index: int
    position: tuple[int, int]
    text: str
    is_final: bool


class Trajectory(BaseModel):
    messages: list[dict]
    tool_calls: list[ToolCall]
    texts: list[AssistantText]
    user_turns: int
    termination_reason: str | None = None  # how the conversation ended, when the recording says
    state: ReportedState | None = None  # the world after the conversation (None: nobody asked for it)

    @property
    def final_text(self) -> str | None:
        """Text of the last assistant message that said something, if any."""
        return self.texts[-1].text if self.texts else None


def parse_failure_reason(exc: Exception) -> str:
    if isinstance(exc, RecursionError):
        return "it is nested too deeply"
    text = str(exc)
    return "a number is longer than 4,300 digits" if "digits" in text else text.split(";")[0]


# ------------------------------------------------------------------------- building

def json_type_word(value: Any) -> str:
    """JSON's kind of value in a transcript's words: a list, an object, a number (integer or not)."""
    kind = json_kind(value)
    return {"integer": "number", "array": "list"}.get(kind, kind)


def _parse_arguments(raw: Any) -> tuple[dict | None, str | None]:
    """(arguments, error). Missing or blank arguments mean a call without arguments. Arguments nested
    deeper than MAX_ARGUMENT_NESTING cannot be read: the call keeps them as written (`raw_arguments`)."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, None
    value = raw
    too_deep = (None, f"arguments are nested more than {MAX_ARGUMENT_NESTING} levels deep; evalrun keeps them as "
                      "written but does not read them")
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as e:
            return None, (f"arguments are not valid JSON: "
                          f"{e.msg} (line {e.lineno} column {e.colno})")
        except RecursionError:
            return too_deep
        except ValueError as e:  # a number longer than Python reads
            return None, f"arguments cannot be read: {parse_failure_reason(e)}"
        if may_hold_surrogates(raw):  # agent text: the bad code point stays visible
            value = replace_lone_surrogates(value, visible=True)
    if deeper_than(value, MAX_ARGUMENT_NESTING):
        return too_deep
    if not isinstance(value, dict):
        return None, f"arguments are a JSON {json_type_word(value)}, not an object"
    return value, None


def _is_error_result(msg: dict, pattern: regex.Pattern) -> bool:
    if msg.get("error"):
        return True
    content = msg.get("content")
    obj = content
    if isinstance(content, str) and content.lstrip().startswith("{"):
        try:
            obj = json.loads(content)
        except json.JSONDecodeError:
            obj = None
    if isinstance(obj, dict) and obj.get("error"):
        return True
    try:
        return pattern.search(content_text(content), timeout=ERROR_PATTERN_TIMEOUT_S) is not None
    except TimeoutError:  # a result built to make the pattern backtrack: it is not counted as a success
        return True


def _pick_call(open_calls: list[ToolCall], call_id: Any) -> ToolCall | None:
    """The call a result answers, taken out of `open_calls` (the unanswered calls, in call order):
    an unanswered call with its id, else the nearest preceding unanswered call (ids go missing or get
    reused in real logs).

    "Nearest" is by message: the latest assistant message that still has unanswered calls. Within
    that message results come back in call order, so the first of its unanswered calls is taken.
    """
    candidates = open_calls
    if call_id:
        same = [c for c in open_calls if c.id == str(call_id)]
        if same:
            candidates = same
    if not candidates:
        return None
    latest = candidates[-1].message_index
    chosen = next(c for c in candidates if c.message_index == latest)
    open_calls.remove(chosen)
    return chosen


def build_trajectory(messages: list[dict], tool_error_pattern: str = DEFAULT_TOOL_ERROR_PATTERN,
                     termination_reason: str | None = None, *, normalized: bool = False) -> Trajectory:
    """Pair tool calls with their results and collect the assistant's texts.

    Accepts raw messages in any supported format (normalizing is idempotent). `normalized=True`
    skips normalizing, for messages that already went through `normalize_messages` (as those of
    `read_recording` did).
    """
    import regex  # the pattern runs on tool results, which the agent's world wrote: it runs with a time limit

    try:
        pattern = regex.compile(tool_error_pattern)
    except regex.error as e:
        raise ValueError(f"invalid tool_error_pattern {tool_error_pattern!r}: {e}") from None
    if not normalized:
        messages = normalize_messages(messages)
    calls: list[ToolCall] = []
    open_calls: list[ToolCall] = []
    texts: list[AssistantText] = []
    user_turns = 0

    for mi, msg in enumerate(messages):
        role = msg["role"]
        if role == "user":
            user_turns += 1
        elif role == "assistant":
            text = content_text(msg.get("content")).strip()
            if text:
                texts.append(AssistantText(message_index=mi, position=(mi, 0),
                                           text=text, is_final=False))
            for j, call in enumerate(msg.get("tool_calls") or []):
                raw = call["function"]["arguments"]
                args, err = _parse_arguments(raw)
                calls.append(ToolCall(
                    index=len(calls), message_index=mi, position=(mi, 1 + j),
                    id=None if call.get("id") is None else str(call["id"]),
                    name=call["function"]["name"], arguments=args,
                    raw_arguments=raw, arguments_error=err))
                open_calls.append(calls[-1])
        elif role == "tool":
            call = _pick_call(open_calls, msg.get("tool_call_id"))
            if call is None:
                continue  # a result nobody asked for: kept in messages, not scored
            call.result = msg.get("content")
            call.result_message_index = mi
            call.answered = True
            call.is_error = _is_error_result(msg, pattern)

    if texts:
        texts[-1].is_final = True
    return Trajectory(messages=messages, tool_calls=calls, texts=texts,
                      user_turns=user_turns, termination_reason=termination_reason)
