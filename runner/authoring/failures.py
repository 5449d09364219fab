"""`run --save-failures FILE`: the cases that failed or ended in error, written as one suite to rerun alone.

Each case is copied as its file has it (ids, tags, goals and every other key unchanged; the shared keys of
a multi-case file applied, so it stands alone), with a comment saying why it did not pass. A `transcript:`
is rewritten relative to FILE, so the copy reads the same recording wherever FILE is; a recording outside
FILE's folder (where a run would not read it: runner/suite/containment.py) is copied beside FILE first,
into <FILE's name>.transcripts/ — for a `FILE#ID` of a file of many, that one conversation.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterable, Optional

from ..atomic import open_atomically, write_text_atomically
from ..results.models import CaseResult
from ..suite.files import split_selection
from .draft_text import list_item
from .output import safe_id
from .yamltext import entry, one_line

SAVED = ("failed", "error")
_MAX_REASONS = 3


def save_failures(results: Iterable[CaseResult], target: Path, command: str) -> list[str]:
    """Write the failed and errored cases of `results` to `target`; the ids written (none: nothing written).
    OSError when the file cannot be written."""
    from ..suite.load import case_entries

    chosen: dict[str, CaseResult] = {}
    for result in results:
        if result.status in SAVED and result.id not in chosen:  # under --repeat, the first run that did not pass
            chosen[result.id] = result
    if not chosen:
        return []
    files: dict[str, dict[tuple[int, int], dict]] = {}
    items: list[str] = []
    saved: list[str] = []
    for case_id, result in chosen.items():
        path, line, column = _source(result.source)
        if path not in files:
            files[path] = {position: case for case, position in case_entries(Path(path))}
        case = files[path].get((line, column))
        if case is None:  # the file changed since the run: say so rather than guess
            items.append(f"  # {one_line(f'{case_id}: not saved, {path} changed after the run')}\n")
            continue
        case = {"id": case_id, **{k: v for k, v in case.items() if k not in ("id", "$schema", "cases")}}
        if isinstance(case.get("transcript"), str):
            # joined as text: a Path would fold the `//` of a FILE#ID's id (runner.suite.containment)
            recording, key = split_selection(os.path.join(os.path.dirname(path), case["transcript"]))
            case["transcript"] = _transcript_for(recording, key, target, case_id)
        reasons = ([f"error: {result.error}"] if result.error else []) + [f"failed: {f}" for f in result.failures]
        comment = "".join(f"# {one_line(reason)}\n" for reason in reasons[:_MAX_REASONS])
        if len(reasons) > _MAX_REASONS:
            comment += f"# ... and {len(reasons) - _MAX_REASONS} more\n"
        body = comment + f"# from {one_line(result.source)}\n" + "".join(entry(k, v, 0) for k, v in case.items())
        items.append(list_item(body, indent=2))
        saved.append(case_id)
    if not saved:
        return []
    head = (f"# The cases that did not pass in `{one_line(command)}`, saved by --save-failures.\n"
            f"# Rerun them alone: evalrun run {one_line(str(target))}\n")
    write_text_atomically(target, head + "cases:\n" + "\n".join(items))
    return saved


def _transcript_for(recording: Path, key: Optional[str], target: Path, case_id: str) -> str:
    """The case's `transcript:` as FILE will have it: the recording's path relative to FILE's folder (`#ID`
    kept), or that of a copy beside FILE when the recording is outside that folder."""
    relative = _relative(recording, target.parent)
    if not relative.startswith("../"):
        return relative if key is None else f"{relative}#{key}"
    suffix = ".json" if key is not None else recording.suffix
    copy = target.parent / f"{target.stem}.transcripts" / f"{safe_id(case_id)}{suffix}"
    # a missing or unreadable recording stays missing: the copy's case ends in error as the original did
    if key is None:
        data = recording.read_bytes() if recording.is_file() else None
    else:
        data = _one_conversation(recording, key)
    if data is not None:
        with open_atomically(copy, "wb") as stream:
            stream.write(data)
    return _relative(copy, target.parent)


def _one_conversation(recording: Path, key: str) -> Optional[bytes]:
    """The conversation `key` of a file of many, as a transcript of its own: a saved conversation's line without
    its key; a trace's conversation as the messages read from it."""
    from ..transcripts.read import TranscriptError
    from ..transcripts.recording import ConversationRef
    from ..transcripts.saved_conversations import KEY, looks_saved
    from ..transcripts.transcript_file import read_recording

    try:
        read = read_recording(ConversationRef(recording, key))
    except TranscriptError:
        return None
    if looks_saved(recording):
        from ..suite.files import TRANSCRIPT_SIZE_LIMIT
        from ..transcripts.saved_conversations import saved_line

        data = json.loads(saved_line(recording, key, TRANSCRIPT_SIZE_LIMIT)[0])
        data.pop(KEY, None)
    else:
        data = {"messages": read.messages, "termination_reason": read.termination_reason}
        if read.problems:
            data["problems"] = read.problems
    return json.dumps(data).encode("ascii")  # escapes: a lone surrogate an agent wrote survives the copy


def _source(source: str) -> tuple[str, int, int]:
    path, line, column = source.rsplit(":", 2)
    return path, int(line), int(column)


def _relative(path: Path, folder: Path) -> str:
    try:
        return Path(os.path.relpath(os.path.abspath(path), os.path.abspath(folder))).as_posix()
    except ValueError:  # another drive (Windows): only an absolute path reaches it
        return str(Path(path).resolve())
