"""`run --save-failures FILE`: the cases that failed or ended in error, written as one suite to rerun alone.

Each case is copied as its file has it (ids, tags, goals and every other key unchanged; the shared keys of
a multi-case file applied, so it stands alone), with a comment saying why it did not pass. A `transcript:`
is rewritten relative to FILE, so the copy reads the same recording wherever FILE is; a recording outside
FILE's folder (where a run would not read it: runner/suite/containment.py) is copied beside FILE first,
into <FILE's name>.transcripts/ — for a `FILE#ID` of a file of many, that one conversation. Each case's copy
has a name of its own (its file-safe id and a hash of the exact id): two ids with the same file-safe form
never share a copy, which would score one case on the other's conversation.

FILE is written only when it does not exist or is a file --save-failures wrote (its first line says so): a
suite written by hand is never overwritten.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from ...results.models import CaseResult
from ...util.atomic import open_atomically, write_text_atomically
from ...util.files import split_selection
from ..record.draft_text import list_item
from .output import safe_id
from .yamltext import entry, one_line

SAVED = ("failed", "error")
_MAX_REASONS = 3
_HEADER = "# The cases that did not pass in `"
_HEADER_END = "`, saved by --save-failures."
_ID_PART = 60  # characters of the file-safe id in a copy's name; the hash that follows tells ids apart


class NotOurs(Exception):
    """FILE exists and is not a file --save-failures wrote: it is not overwritten. The message says so."""


def target_problem(target: Path) -> str | None:
    """Why --save-failures must not write `target` (a suite written by hand, a folder, a device), or None.
    Asked before the run, so no run is wasted, and again just before writing."""
    if not os.path.lexists(target):
        return None
    if not os.path.isfile(target):
        kind = "a folder" if os.path.isdir(target) else "not a regular file"
        return f"{target} is {kind}; give the path of a .yaml file to write"
    if _written_by_us(target):
        return None
    return (f"{target} exists and was not written by --save-failures (its first line is not the header "
            "--save-failures writes), so it is not overwritten: choose another FILE, or delete this one first")


def _written_by_us(path: Path) -> bool:
    try:
        with open(path, "rb") as stream:
            first = stream.read(64 << 10).split(b"\n", 1)[0].decode("utf-8").rstrip("\r")
    except (OSError, UnicodeDecodeError):
        return False
    return first.startswith(_HEADER) and first.endswith(_HEADER_END)


def save_failures(results: Iterable[CaseResult], target: Path, command: str, rerun: str | None = None) -> list[str]:
    """Write the failed and errored cases of `results` to `target`; the ids written (none: nothing written).
    `rerun`: the command that reruns the file (default `evalrun run <target>`). OSError when the file cannot
    be written; NotOurs when it is a file --save-failures did not write."""
    from ...suite.load import case_entries

    copies = _CopyNames()
    chosen: dict[str, CaseResult] = {}
    for result in results:
        if result.status in SAVED and result.id not in chosen:  # under --repeat, the first run that did not pass
            chosen[result.id] = result
    if not chosen:
        return []
    problem = target_problem(target)  # asked before the run too; a suite may have appeared there since
    if problem is not None:
        raise NotOurs(problem)
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
            case["transcript"] = _transcript_for(recording, key, target, copies.name(case_id))
        reasons = ([f"error: {result.error}"] if result.error else []) + [f"failed: {f}" for f in result.failures]
        comment = "".join(f"# {one_line(reason)}\n" for reason in reasons[:_MAX_REASONS])
        if len(reasons) > _MAX_REASONS:
            comment += f"# ... and {len(reasons) - _MAX_REASONS} more\n"
        body = comment + f"# from {one_line(result.source)}\n" + "".join(entry(k, v, 0) for k, v in case.items())
        items.append(list_item(body, indent=2))
        saved.append(case_id)
    if not saved:
        return []
    head = (f"{_HEADER}{one_line(command)}{_HEADER_END}\n"
            f"# Rerun them alone: {one_line(rerun or f'evalrun run {target}')}\n")
    write_text_atomically(target, head + "cases:\n" + "\n".join(items))
    return saved


class _CopyNames:
    """The name of each case's copy of its recording: its file-safe id (cut) and a hash of the exact id, so
    `refund order` and `refund-order`, or two ids alike in their first 80 characters, get copies of their own;
    the same id always gets the same name. Names are compared without regard to case (a file system may
    not tell `A` from `a`); a clash left after the short hash takes the whole hash, then a number."""

    def __init__(self) -> None:
        self.taken: dict[str, str] = {}

    def name(self, case_id: str) -> str:
        digest = hashlib.sha256(case_id.encode("utf-8", "surrogatepass")).hexdigest()
        stem = safe_id(case_id)[:_ID_PART]
        candidates = [f"{stem}-{digest[:10]}", f"{stem}-{digest}"]
        candidates += (f"{stem}-{digest}-{n}" for n in range(2, len(self.taken) + 3))
        for name in candidates:
            if self.taken.setdefault(name.lower(), case_id) == case_id:
                return name
        raise AssertionError("unreachable: more names were tried than there are cases")


def _transcript_for(recording: Path, key: str | None, target: Path, copy_name: str) -> str:
    """The case's `transcript:` as FILE will have it: the recording's path relative to FILE's folder (`#ID`
    kept), or that of a copy beside FILE (named `copy_name`) when the recording is outside that folder."""
    relative = _relative(recording, target.parent)
    if not relative.startswith("../"):
        return relative if key is None else f"{relative}#{key}"
    suffix = ".json" if key is not None else recording.suffix
    copy = target.parent / f"{target.stem}.transcripts" / f"{copy_name}{suffix}"
    # a missing or unreadable recording stays missing: the copy's case ends in error as the original did
    if key is None:
        data = recording.read_bytes() if recording.is_file() else None
    else:
        data = _one_conversation(recording, key)
    if data is not None:
        with open_atomically(copy, "wb") as stream:
            stream.write(data)
    return _relative(copy, target.parent)


def _one_conversation(recording: Path, key: str) -> bytes | None:
    """The conversation `key` of a file of many, as a transcript of its own: a saved conversation's line without
    its key; a trace's conversation as the messages read from it."""
    from ...transcripts.read import TranscriptError
    from ...transcripts.recording import ConversationRef
    from ...transcripts.saved_conversations import KEY, looks_saved
    from ...transcripts.transcript_file import read_recording

    try:
        read = read_recording(ConversationRef(recording, key))
    except TranscriptError:
        return None
    if looks_saved(recording):
        from ...transcripts.saved_conversations import saved_line
        from ...util.files import TRANSCRIPT_SIZE_LIMIT

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
