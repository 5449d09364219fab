"""Recorded conversations -> `Trajectory`, the only thing the scorer reads.

Three recording formats are accepted and first normalized to OpenAI-style messages:
OpenAI chat messages, watsonx Orchestrate runs (`type: text | tool_call | tool_response`
with JSON strings in `content`) and tau2-bench simulations (tool calls without the
`function` wrapper, tool results carrying the call id in `id` and an `error` flag).
Normalization maps message i to message i, so indices in a trajectory also point into
the recorded file. Reading a transcript file into messages is runner.transcripts.transcript_file's.
"""
from __future__ import annotations

import json
from typing import Any, Optional

from pydantic import BaseModel

from ..deepjson import loads_keeping_deep_arguments
from ..jsontext import deeper_than, json_kind, may_hold_surrogates, replace_lone_surrogates
from .recording import TranscriptError
from .state import ReportedState

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
MAX_ARGUMENT_NESTING = 100  # deeper arguments are kept as written but not read (as suite files, which nest no deeper)

# "developer" is OpenAI's newer name for the system role.
_ROLE_ALIASES = {"system": "system", "developer": "system", "user": "user",
                 "assistant": "assistant", "tool": "tool", "function": "tool"}


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
    termination_reason: Optional[str] = None  # how the conversation ended, when the recording says
    state: Optional[ReportedState] = None  # the world after the conversation (None: nobody asked for it)

    @property
    def final_text(self) -> str | None:
        """Text of the last assistant message that said something, if any."""
        return self.texts[-1].text if self.texts else None


# --------------------------------------------------------------------------- normalising
#
# Messages are numbered from 1 in every message a person reads ("message 1" is the first).

# Content blocks evalrun knows. Text kinds give the message its text; media kinds are kept in the
# recording but say nothing a goal can match; reasoning kinds are the model's private notes and are
# skipped on purpose. Tool blocks (Anthropic's tool_use / tool_result) become calls and results.
_TEXT_BLOCKS = frozenset({"text", "input_text", "output_text", "refusal"})
_MEDIA_BLOCKS = frozenset({"image", "image_url", "input_image", "input_audio", "audio", "file", "input_file", "document"})
_REASONING_BLOCKS = frozenset({"thinking", "redacted_thinking", "reasoning"})
_TOOL_BLOCKS = frozenset({"tool_use", "tool_result"})


def content_text(content: Any) -> str:
    """Plain text of a message content: strings as-is, text parts joined by newlines."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type") in _TEXT_BLOCKS:
                parts.append(str(part.get("text") or part.get("refusal") or ""))
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False, default=str)


def _check_blocks(blocks: list, n: int, allowed: frozenset, where: str = "") -> None:
    """Every block is of a kind evalrun knows: an unknown one is never dropped in silence."""
    for j, block in enumerate(blocks, start=1):
        if isinstance(block, str):
            continue
        kind = block.get("type") if isinstance(block, dict) else None
        if not isinstance(block, dict) or not isinstance(kind, str):
            raise TranscriptError(f"message {n}: content block {j}{where} is not an object with a `type`")
        if kind not in allowed:
            known = sorted(allowed - _TOOL_BLOCKS) + sorted(allowed & _TOOL_BLOCKS)
            raise TranscriptError(
                f"message {n}: content block {j}{where} has type '{kind}', which evalrun does not know; it will not "
                f"leave it out silently (known: {', '.join(known)})")


def _watsonx_payload(msg: dict, n: int) -> dict:
    content = msg.get("content")
    if isinstance(content, str):
        try:
            content = json_keeping_deep_arguments(content)
        except json.JSONDecodeError as e:
            raise TranscriptError(
                f"message {n}: {msg['type']} content is not valid JSON: "
                f"{e.msg} (line {e.lineno} column {e.colno})") from None
        except ValueError as e:
            raise TranscriptError(f"message {n}: {msg['type']} content cannot be read: {e}") from None
    if not isinstance(content, dict):
        raise TranscriptError(f"message {n}: {msg['type']} content is not a JSON object")
    return content


def _normalize_call(call: Any, n: int, j: int) -> dict:
    if not isinstance(call, dict):
        raise TranscriptError(f"message {n}: tool call {j} is not an object")
    # OpenAI nests name/arguments under "function"; tau2 puts them at the top level.
    fn = call.get("function") if isinstance(call.get("function"), dict) else call
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        raise TranscriptError(f"message {n}: tool call {j} has no name")
    return {"id": call.get("id"), "type": "function",
            "function": {"name": name, "arguments": fn.get("arguments")}}


def _normalize_one(msg: Any, n: int) -> list[dict]:
    """The normalised message(s) for recorded message number `n` (from 1). One, except for an
    Anthropic user message holding tool_result blocks: each result becomes a tool message."""
    if not isinstance(msg, dict):
        raise TranscriptError(f"message {n} is not an object (got {type(msg).__name__})")
    kind = msg.get("type")
    if kind == "tool_call":  # watsonx: one call per message, role "assistant"
        p = _watsonx_payload(msg, n)
        call = _normalize_call({"id": p.get("id"), "name": p.get("name"),
                                "arguments": p.get("args", p.get("arguments"))}, n, 1)
        return [{"role": "assistant", "content": None, "tool_calls": [call]}]
    if kind == "tool_response":  # watsonx: role is "assistant" too, despite being a result
        p = _watsonx_payload(msg, n)
        out = {"role": "tool", "tool_call_id": p.get("tool_call_id"), "content": p.get("content")}
        if p.get("name") is not None:
            out["name"] = p["name"]
        if p.get("error"):
            out["error"] = True
        return [out]

    if "role" not in msg:
        raise TranscriptError(f"message {n} has no role")
    role = _ROLE_ALIASES.get(msg["role"]) if isinstance(msg["role"], str) else None
    if role is None:
        raise TranscriptError(f"message {n} has unknown role {msg['role']!r}")
    content = msg.get("content")
    blocks = content if isinstance(content, list) else None

    if role == "assistant":
        if blocks is not None:
            _check_blocks(blocks, n, _TEXT_BLOCKS | _MEDIA_BLOCKS | _REASONING_BLOCKS | {"tool_use"})
        out = {"role": "assistant", "content": content_text(content) if blocks is not None else content}
        calls = msg.get("tool_calls") or []
        if not isinstance(calls, list):
            raise TranscriptError(f"message {n}: tool_calls is not a list")
        if isinstance(msg.get("function_call"), dict):  # legacy single-call form
            calls = calls + [msg["function_call"]]
        normalized = [_normalize_call(c, n, j) for j, c in enumerate(calls, start=1)]
        for block in blocks or []:  # Anthropic: the input is already an object
            if isinstance(block, dict) and block.get("type") == "tool_use":
                normalized.append(_normalize_call({"id": block.get("id"), "name": block.get("name"),
                                                   "arguments": block.get("input")}, n, len(normalized) + 1))
        if normalized:
            out["tool_calls"] = normalized
        return [out]
    if role == "tool":
        # tau2 puts the call id in "id"; the legacy "function" role has none at all.
        call_id = msg["tool_call_id"] if "tool_call_id" in msg else msg.get("id")
        if blocks is not None:
            _check_blocks(blocks, n, _TEXT_BLOCKS | _MEDIA_BLOCKS)
        out = {"role": "tool", "tool_call_id": call_id, "content": content}
        if msg.get("name") is not None:
            out["name"] = msg["name"]
        if msg.get("error"):
            out["error"] = True
        return [out]
    if blocks is None:
        return [{"role": role, "content": content}]
    _check_blocks(blocks, n, _TEXT_BLOCKS | _MEDIA_BLOCKS | (_TOOL_BLOCKS - {"tool_use"} if role == "user" else frozenset()))
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    if not results:
        return [{"role": role, "content": content}]
    out = [_anthropic_result(block, n) for block in results]
    rest = [b for b in blocks if not (isinstance(b, dict) and b.get("type") == "tool_result")]
    if rest:  # text the user wrote after the results
        out.append({"role": role, "content": rest})
    return out


def _anthropic_result(block: dict, n: int) -> dict:
    content = block.get("content")
    if isinstance(content, list):
        _check_blocks(content, n, _TEXT_BLOCKS | _MEDIA_BLOCKS, where=" of a tool_result")
        content = content_text(content)
    out = {"role": "tool", "tool_call_id": block.get("tool_use_id"), "content": content}
    if block.get("is_error"):
        out["error"] = True
    return out


def normalize_messages(raw: list[dict]) -> list[dict]:
    """Any supported recording format -> OpenAI-style messages: one for one, except that an
    Anthropic user message of tool_result blocks becomes one tool message per result.

    Raises TranscriptError naming the offending message by its number (from 1).
    """
    if not isinstance(raw, list):
        raise TranscriptError(f"messages must be a list, got {type(raw).__name__}")
    out: list[dict] = []
    for n, message in enumerate(raw, start=1):
        out.extend(_normalize_one(message, n))
    return out


def json_keeping_deep_arguments(text: str) -> Any:
    """json.loads, except that tool arguments nested too deep for it are kept as their JSON text."""
    try:
        return json.loads(text)
    except RecursionError:
        return loads_keeping_deep_arguments(text, MAX_ARGUMENT_NESTING)


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


def _is_error_result(msg: dict, pattern: "regex.Pattern") -> bool:
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
                     termination_reason: Optional[str] = None, *, normalized: bool = False) -> Trajectory:
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
