"""Recorded conversations -> `Trajectory`, the only thing the scorer reads.

Three recording formats are accepted and first normalized to OpenAI-style messages:
OpenAI chat messages, watsonx Orchestrate runs (`type: text | tool_call | tool_response`
with JSON strings in `content`) and tau2-bench simulations (tool calls without the
`function` wrapper, tool results carrying the call id in `id` and an `error` flag).
Normalization maps message i to message i, so indices in a trajectory also point into
the recorded file.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel

from ..deepjson import loads_keeping_deep_arguments
from ..jsontext import deeper_than, json_kind, may_hold_surrogates, replace_lone_surrogates
from .recording import Recording, TranscriptError
from .state import ReportedState

__all__ = [
    "AssistantText",
    "ToolCall",
    "Trajectory",
    "TranscriptError",
    "build_trajectory",
    "content_text",
    "normalize_messages",
    "read_transcript",
]

DEFAULT_TOOL_ERROR_PATTERN = r"^\s*Error\b"
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


# --------------------------------------------------------------------------- reading
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
            content = _json_keeping_deep_arguments(content)
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


def read_transcript(path: str | Path) -> list[dict]:
    """Read a transcript file (a JSON list of messages, or an object with `messages`)."""
    return read_recording(path).messages


def read_recording(path: str | Path) -> Recording:
    """Read a transcript file: a JSON list of messages, an object with `messages`, JSON Lines (one
    message per line, `.jsonl`), or OpenTelemetry traces (OTLP/JSON: one `resourceSpans` document, or one
    per line as the collector's file exporter writes), UTF-8 with or without a BOM. The object form may
    say how the conversation ended, in `termination_reason` (for example user_stop, agent_stop,
    max_steps), which `termination:` in a suite can require, and the state of the world after it, in
    `state` (what a case's `final_state:` is compared with). A trace file may hold many conversations:
    `FILE#ID` names one (its conversation id, or a trace id). Special files (FIFOs, devices) and files
    above TRANSCRIPT_SIZE_LIMIT are refused without being read."""
    from ..suite.files import split_selection

    path, selection = split_selection(path)  # as written: a key may hold '/', which a Path would fold
    if _may_be_saved(path, selection):
        return _saved_recording(path, selection)
    found = read_conversations(path)
    if found and found[0][0] is not None:  # a trace file
        from .otlp import select_recording

        return select_recording(found, selection, path)
    if selection is not None:
        raise TranscriptError(f"{path}: '#{selection}' names a conversation, but this transcript is not a trace file "
                              "and holds one conversation only")
    return found[0][1]


def read_conversations(path: str | Path) -> list[tuple[Optional[str], Recording]]:
    """Every conversation in a transcript file, as (conversation id, recording): a trace file's
    conversations in the order they started, each with its id; any other transcript as one conversation
    with id None; a live run's conversations.jsonl as its conversations by key. An unreadable file raises
    TranscriptError."""
    path = Path(path)
    if _may_be_saved(path, None):
        from .saved_conversations import index_of

        try:
            index = index_of(path)
        except OSError as exc:
            raise TranscriptError(f"cannot read transcript file {path}: {exc.strerror or exc}") from None
        if index.unreadable:
            raise TranscriptError(f"{path}: line {index.unreadable[0]} does not start with its conversation's key "
                                  "(each line of a saved conversations file is {\"conversation\": KEY, \"messages\": ...})")
        return [(key, _saved_recording(path, key)) for key in index.lines]
    data = _read_json(path)
    from .otlp import is_otlp, trace_recordings

    if is_otlp(data):
        return trace_recordings(data, path)
    return [(None, _message_recording(data, path))]


def _may_be_saved(path: Path, selection: Optional[str]) -> bool:
    """A live run's conversations.jsonl (runner.transcripts.saved_conversations), told by its first bytes;
    looked at only for a `.jsonl` file or a `FILE#KEY`, so reading any other transcript opens it once."""
    if selection is None and path.suffix.lower() != ".jsonl":
        return False
    from .saved_conversations import looks_saved

    return looks_saved(path)


def _saved_recording(path: Path, key: Optional[str]) -> Recording:
    """The conversation saved under `key` in a conversations.jsonl (the file's only one for None). Its line,
    not the file, is held to the transcript size limit: a run of 10,000 cases saves them all in one file."""
    from ..suite.files import TRANSCRIPT_SIZE_LIMIT, InputFileError, check_regular
    from .saved_conversations import NotSaved, saved_line

    try:
        check_regular(path, 1 << 62, "transcripts")  # a FIFO or a device is refused before it is opened
        line, key = saved_line(path, key, TRANSCRIPT_SIZE_LIMIT)
        text = line.decode("utf-8-sig")
    except NotSaved as exc:
        raise TranscriptError(f"{path}: {exc}") from None
    except (InputFileError, UnicodeDecodeError) as exc:
        raise TranscriptError(f"cannot read transcript file {path}: {exc}") from None
    except OSError as exc:
        raise TranscriptError(f"cannot read transcript file {path}: {exc.strerror or exc}") from None
    where = f"{path}#{key}"
    recording = _message_recording(_json_of_text(text, where, lines=False), where)
    recording.conversation_id = key
    return recording


def _read_json(path: Path) -> Any:
    from ..suite.files import TRANSCRIPT_SIZE_LIMIT, InputFileError, read_bytes

    if not os.path.lexists(path):
        raise TranscriptError(f"transcript file not found: {path}")
    try:
        text = read_bytes(path, TRANSCRIPT_SIZE_LIMIT, "transcripts").decode("utf-8-sig")
    except (InputFileError, UnicodeDecodeError) as e:
        raise TranscriptError(f"cannot read transcript file {path}: {e}") from None
    return _json_of_text(text, path, lines=None)


def _json_of_text(text: str, path: "Path | str", *, lines: Optional[bool]) -> Any:
    """A transcript's text as JSON, its depth limited as suites are. `lines`: JSON Lines or not; None to tell
    from the file's name and content. `path` names it in errors."""
    from ..suite.reader import too_deep_json, too_deep_problem

    if not text.strip():
        raise TranscriptError(f"{path}: the transcript has no messages (the file is empty)")
    try:
        data, lines = _parse_transcript_json(text, path, lines)
        # the depth limit on the parsed data: no second pass over the text (JSON Lines: the list holding
        # the lines is not in the text)
        problem = too_deep_json(data, text, outer=0 if lines else 1)
    except _TooDeep:
        problem = too_deep_problem(text)
    if problem is not None:
        line, column, _, message, _ = problem
        data = _deep_arguments_only(text)
        if data is None:
            raise TranscriptError(f"{path}: line {line}:{column}: {message}")
    if may_hold_surrogates(text):  # an escaped lone surrogate could not be written to the report: show it
        data = replace_lone_surrogates(data, visible=True)
    return data


def _message_recording(data: Any, path: Path) -> Recording:
    termination = None
    state = ReportedState.none(f"the transcript {path} has no `state` entry (a live run saves the state its agent "
                               "reported there; a hand-written transcript can add `\"state\": {...}`)")
    problems: list[str] = []
    if isinstance(data, dict):
        if "state" in data:
            state = ReportedState(value=data["state"], source=f"the `state` saved in {path}")
        if "messages" not in data:
            raise TranscriptError(f"{path}: JSON object has no 'messages' key")
        if isinstance(data.get("problems"), list):  # a saved replay of a trace that could not be read whole
            problems = [str(p) for p in data["problems"]]
        termination = data.get("termination_reason")
        if termination is not None and not isinstance(termination, str):
            raise TranscriptError(f"{path}: 'termination_reason' must be text, got {_json_type(termination)}")
        data = data["messages"]
        if not isinstance(data, list):
            raise TranscriptError(
                f"{path}: 'messages' must be a list, got {_json_type(data)}")
    elif not isinstance(data, list):
        raise TranscriptError(f"{path}: expected a JSON list of messages or an object "
                              f"with a 'messages' list, got {_json_type(data)}")
    if not data:
        raise TranscriptError(f"{path}: the transcript has no messages")
    try:
        return Recording(messages=normalize_messages(data), termination_reason=termination, state=state,
                         problems=problems)
    except TranscriptError as e:
        raise TranscriptError(f"{path}: {e}") from None


def _json_keeping_deep_arguments(text: str) -> Any:
    """json.loads, except that tool arguments nested too deep for it are kept as their JSON text."""
    try:
        return json.loads(text)
    except RecursionError:
        return loads_keeping_deep_arguments(text, MAX_ARGUMENT_NESTING)


def _deep_arguments_only(text: str) -> Any:
    """A recording that nests past the file limit only inside tool arguments, read with those arguments
    kept as their JSON text (one document or JSON Lines); None when something else nests that deep."""
    try:
        return loads_keeping_deep_arguments(text, MAX_ARGUMENT_NESTING)
    except ValueError:
        pass
    try:
        return [loads_keeping_deep_arguments(line, MAX_ARGUMENT_NESTING) for line in text.splitlines() if line.strip()]
    except ValueError:
        return None


def _parse_transcript_json(text: str, path: "Path | str", lines: Optional[bool] = None) -> tuple[Any, bool]:
    """One JSON document, or JSON Lines: a `.jsonl` file, or text whose second line starts a new value
    (`lines` False: one document only); with whether it was JSON Lines. _TooDeep when it nests deeper than
    the parser recurses."""
    if lines is False or (lines is None and Path(path).suffix.lower() != ".jsonl"):
        try:
            return json.loads(text), False
        except json.JSONDecodeError as e:
            if e.msg != "Extra data" or not text.lstrip().startswith("{") or lines is False:
                raise TranscriptError(f"{path}: invalid JSON at line {e.lineno}:{e.colno}: {e.msg}") from None
        except RecursionError:
            raise _TooDeep() from None
        except ValueError as e:
            raise TranscriptError(f"{path}: cannot read the JSON: {_short_reason(e)}") from None
    messages = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            messages.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise TranscriptError(f"{path}: invalid JSON Lines at line {number}:{e.colno}: {e.msg} "
                                  "(each line must hold one message)") from None
        except RecursionError:
            raise _TooDeep() from None
        except ValueError as e:
            raise TranscriptError(f"{path}: line {number}: cannot read the JSON: {_short_reason(e)}") from None
    return messages, True


class _TooDeep(Exception):
    """JSON nested deeper than the parser recurses; the depth limit's message says where."""


def _short_reason(exc: Exception) -> str:
    if isinstance(exc, RecursionError):
        return "it is nested too deeply"
    text = str(exc)
    return "a number is longer than 4,300 digits" if "digits" in text else text.split(";")[0]


# ------------------------------------------------------------------------- building

def _json_type(value: Any) -> str:
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
            return None, f"arguments cannot be read: {_short_reason(e)}"
        if may_hold_surrogates(raw):  # agent text: the bad code point stays visible
            value = replace_lone_surrogates(value, visible=True)
    if deeper_than(value, MAX_ARGUMENT_NESTING):
        return too_deep
    if not isinstance(value, dict):
        return None, f"arguments are a JSON {_json_type(value)}, not an object"
    return value, None


def _is_error_result(msg: dict, pattern: re.Pattern) -> bool:
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
    return pattern.search(content_text(content)) is not None


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
    try:
        pattern = re.compile(tool_error_pattern)
    except re.error as e:
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
