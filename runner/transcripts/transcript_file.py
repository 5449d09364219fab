"""A transcript file -> the conversations it holds (`Recording`: normalised messages, how it ended, the state).

Which kind of file it is (a live run's conversations.jsonl, else the transcript format that claims its JSON:
runner.transcripts.formats), its JSON read within the limits suites are held to (size, nesting: arguments nested too
deep are kept as text), `FILE#ID` for a file of many. What the messages mean is runner.transcripts.read's.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..util.deepjson import loads_keeping_deep_arguments
from ..util.jsontext import may_hold_surrogates, replace_lone_surrogates
from .formats.messages import message_recording
from .read import MAX_ARGUMENT_NESTING, parse_failure_reason
from .recording import ConversationRef, Recording, TranscriptError

__all__ = ["read_conversations", "read_recording", "read_transcript"]


def read_transcript(path: str | Path | ConversationRef) -> list[dict]:
    """Read a transcript file (a JSON list of messages, or an object with `messages`)."""
    return read_recording(path).messages


def read_recording(path: str | Path | ConversationRef) -> Recording:
    """Read a transcript file: a JSON list of messages, an object with `messages`, JSON Lines (one
    message per line, `.jsonl`), or OpenTelemetry traces (OTLP/JSON: one `resourceSpans` document, or one
    per line as the collector's file exporter writes), UTF-8 with or without a BOM. The object form may
    say how the conversation ended, in `termination_reason` (for example user_stop, agent_stop,
    max_steps), which `termination:` in a suite can require, and the state of the world after it, in
    `state` (what a case's `final_state:` is compared with). A trace file may hold many conversations:
    `FILE#ID` names one (its conversation id, or a trace id), as does a ConversationRef. Special files (FIFOs,
    devices) and files above TRANSCRIPT_SIZE_LIMIT are refused without being read."""
    selection: str | None
    if isinstance(path, ConversationRef):
        path, selection = path
    else:
        from ..util.files import split_selection

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


def read_conversations(path: str | Path) -> list[tuple[str | None, Recording]]:
    """Every conversation in a transcript file, as (conversation id, recording): a trace file's
    conversations in the order they started, each with its id; any other transcript as one conversation
    with id None; a live run's conversations.jsonl as its conversations by key. An unreadable file raises
    TranscriptError."""
    path = Path(path)
    if _may_be_saved(path, None):
        from .saved_conversations import NotSaved, index_of

        try:
            index = index_of(path)
        except NotSaved as exc:
            raise TranscriptError(f"{path}: {exc}") from None
        except OSError as exc:
            raise TranscriptError(f"cannot read transcript file {path}: {exc.strerror or exc}") from None
        if index.unreadable:
            raise TranscriptError(f"{path}: line {index.unreadable[0]} does not start with its conversation's key "
                                  "(each line of a saved conversations file is {\"conversation\": KEY, \"messages\": "
                                  "...}; a run killed while saving leaves its last line cut): name the conversations "
                                  "to read as FILE#KEY")
        return [(key, _saved_recording(path, key)) for key in index.lines]
    from .formats import conversations

    return conversations(_read_json(path), path)


def _may_be_saved(path: Path, selection: str | None) -> bool:
    """A live run's conversations.jsonl (runner.transcripts.saved_conversations), told by its first bytes;
    looked at only for a `.jsonl` file or a `FILE#KEY`, so reading any other transcript opens it once."""
    if selection is None and path.suffix.lower() != ".jsonl":
        return False
    from .saved_conversations import looks_saved

    return looks_saved(path)


def _saved_recording(path: Path, key: str | None) -> Recording:
    """The conversation saved under `key` in a conversations.jsonl (the file's only one for None). Its line,
    not the file, is held to the transcript size limit: a run of 10,000 cases saves them all in one file."""
    from ..util.files import TRANSCRIPT_SIZE_LIMIT, InputFileError, check_regular
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
    recording = message_recording(_json_of_text(text, where, lines=False), where)
    recording.conversation_id = key
    return recording


def _read_json(path: Path) -> Any:
    from ..util.files import TRANSCRIPT_SIZE_LIMIT, InputFileError, read_bytes

    if not os.path.lexists(path):
        raise TranscriptError(f"transcript file not found: {path}")
    try:
        text = read_bytes(path, TRANSCRIPT_SIZE_LIMIT, "transcripts").decode("utf-8-sig")
    except (InputFileError, UnicodeDecodeError) as e:
        raise TranscriptError(f"cannot read transcript file {path}: {e}") from None
    return _json_of_text(text, path, lines=None)


def _json_of_text(text: str, path: Path | str, *, lines: bool | None) -> Any:
    """A transcript's text as JSON, its depth limited as suites are. `lines`: JSON Lines or not; None to tell
    from the file's name and content. `path` names it in errors."""
    from ..util.read_limits import too_deep_json, too_deep_problem

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


def _parse_transcript_json(text: str, path: Path | str, lines: bool | None = None) -> tuple[Any, bool]:
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
            raise TranscriptError(f"{path}: cannot read the JSON: {parse_failure_reason(e)}") from None
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
            raise TranscriptError(f"{path}: line {number}: cannot read the JSON: {parse_failure_reason(e)}") from None
    return messages, True


class _TooDeep(Exception):
    """JSON nested deeper than the parser recurses; the depth limit's message says where."""
