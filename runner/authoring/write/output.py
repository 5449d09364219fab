"""Where drafts go, and writing them so that a failure leaves nothing half-done.

`-o` names a folder (one suite file per draft), a new suite file (one case, or several under `cases:`),
or an existing suite file (the drafts become new cases of it: append.py). Each draft's conversation is
saved beside its suite as transcripts/<case id>.json. Ids never collide: not with each other, not with
the cases of the file they join, not with a file already there.

Everything is written to temporary files first and renamed into place at the end; the written suite is
then read back with the suite loader, and if it does not load as it should, every file is put back as
it was.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ...transcripts.recording import Recording
from ...util.atomic import open_atomically
from ...util.secrets import redact, redact_data
from ..record.draft import DraftCase
from ..record.draft_text import suite_text
from .append import AppendError, append_cases

SUITE_SUFFIXES = (".yaml", ".yml")
TRANSCRIPTS = "transcripts"


class OutputError(Exception):
    """The drafts cannot be written where asked; nothing was written. `exit_code`: 4 when the target is
    wrong (a usage error), 3 when the disk refused (the files could not be written)."""

    def __init__(self, message: str, exit_code: int = 4):
        super().__init__(message)
        self.exit_code = exit_code


@dataclass
class Planned:
    """One conversation to write: its draft and its recording."""

    draft: DraftCase
    recording: Recording
    link_transcript: bool = True  # the draft names its transcript (`transcript:`): a run replays it
    transcript_path: Path | None = None


@dataclass
class Written:
    suites: list[Path] = field(default_factory=list)
    transcripts: list[Path] = field(default_factory=list)
    appended_to: Path | None = None


def suite_ids(loaded, target: Path) -> set[str]:
    """The ids of the cases already around `target`: under the folder of evalrun.yaml when the target is
    inside it (a run of that folder collects them all), else under the target's own folder. A draft
    taking one of them would make that run stop on a duplicate id."""
    from ...session.collect import collect

    folder = target if is_folder_target(target) else target.parent
    folder = Path(os.path.abspath(folder))
    if loaded.path is not None and Path(os.path.abspath(loaded.path)).parent in (folder, *folder.parents):
        folder = Path(os.path.abspath(loaded.path)).parent
    if not folder.is_dir():
        return set()
    return {case.id for case in collect([folder], config=loaded).cases}


def is_folder_target(target: Path) -> bool:
    """A folder: one that exists, or a path that does not name a .yaml/.yml file."""
    return target.is_dir() or target.suffix.lower() not in SUITE_SUFFIXES


def safe_id(text: str) -> str:
    """A case id that is also a safe file name: letters, digits, `-`, `_` and `.` (not leading)."""
    cleaned = re.sub(r"[^\w.-]+", "-", text, flags=re.ASCII).strip("-.") or "chat"
    return cleaned[:80]


def write_drafts(planned: Sequence[Planned], target: Path, intro: Sequence[str],
                 taken_ids: Iterable[str] = ()) -> Written:
    """Write the drafts (and their transcripts) to `target`; OutputError says why nothing was written.
    `taken_ids`: the ids of the cases a run beside the drafts would collect too (see `suite_ids`)."""
    taken = set(taken_ids)
    if not planned:
        raise OutputError("there is no draft to write")
    intro = [redact(line) for line in intro]
    for item in planned:  # these files are committed: every secret masked before anything is rendered
        item.recording = redacted_recording(item.recording)
        redact_fields(item.draft)
    if is_folder_target(target):
        if target.exists() and not target.is_dir():
            raise OutputError(f"{target} exists and is not a folder")
        jobs = _folder_jobs(planned, target, intro, taken)
        appended = None
    elif target.exists():
        jobs, appended = _append_jobs(planned, target, taken)
    else:
        if target.parent.exists() and not target.parent.is_dir():
            raise OutputError(f"{target.parent} is not a folder")
        _give_ids(planned, taken=taken, folder=target.parent, own_files=False)
        jobs = [_Job(target, suite_text([p.draft for p in planned], intro), suite=True,
                     ids=[p.draft.id for p in planned])]
        appended = None
    for item in planned:
        assert item.transcript_path is not None
        jobs.append(_Job(item.transcript_path, _transcript_text(item.recording)))
    _commit(jobs)
    written = Written(appended_to=appended)
    for job in jobs:
        (written.suites if job.suite else written.transcripts).append(job.path)
    return written


def redacted_recording(recording: Recording) -> Recording:
    """The recording with every secret of this process masked (in any form: an argument's JSON text too)."""
    return recording.model_copy(update={"messages": redact_data(recording.messages),
                                        "problems": redact_data(recording.problems)})


def redact_fields(draft: DraftCase) -> None:
    """Mask every secret in the draft's fields, in place (its callers keep the object)."""
    for name, value in list(vars(draft).items()):
        setattr(draft, name, redact_data(value))


# --------------------------------------------------------------------------------------- planning

@dataclass
class _Job:
    path: Path
    text: str
    new: bool = True  # a file that did not exist (removed again if the write is undone)
    before: bytes | None = None  # the bytes of a file this job replaces
    suite: bool = False
    ids: list[str] = field(default_factory=list)  # the new cases this suite file holds
    kept: dict = field(default_factory=dict)  # the cases a file held before: they must load exactly as they did


def _folder_jobs(planned: Sequence[Planned], folder: Path, intro: Sequence[str], taken: set[str]) -> list[_Job]:
    _give_ids(planned, taken=taken, folder=folder, own_files=True)
    jobs = []
    for item in planned:
        jobs.append(_Job(folder / f"{item.draft.id}.yaml", suite_text([item.draft], intro), suite=True,
                         ids=[item.draft.id]))
    return jobs


def _append_jobs(planned: Sequence[Planned], suite: Path, taken: set[str]) -> tuple[list[_Job], Path]:
    from ...suite.load import load_file

    if suite.suffix.lower() not in SUITE_SUFFIXES or not suite.is_file():
        raise OutputError(f"{suite} is not a YAML suite file to add cases to")
    cases, diagnostics, _is_suite = load_file(suite)
    errors = [d for d in diagnostics if d.severity == "error"]
    if errors:
        raise OutputError(f"{suite} has problems; fix them before adding cases to it:\n"
                          + "\n".join(str(d) for d in errors[:5]))
    original = suite.read_bytes()
    _give_ids(planned, taken=taken | {c.id for c in cases}, folder=suite.parent, own_files=False)
    try:
        text = append_cases(original.decode("utf-8-sig"), [p.draft for p in planned], stem=suite.stem)
    except AppendError as exc:
        raise OutputError(f"{suite}: {exc}") from None
    if original.startswith(b"\xef\xbb\xbf"):
        text = "\ufeff" + text
    kept = {c.id: _comparable(c) for c in cases}
    return [_Job(suite, text, new=False, before=original, suite=True, ids=[p.draft.id for p in planned],
                 kept=kept)], suite


def _comparable(case) -> dict:
    return case.model_dump(exclude={"source"})


def _give_ids(planned: Sequence[Planned], *, taken: set[str], folder: Path, own_files: bool) -> None:
    """Each draft an id that no other case, suite file or transcript file already has."""
    used = {name.casefold() for name in taken}
    for item in planned:
        base = safe_id(item.draft.id)
        candidate, n = base, 1
        while (candidate.casefold() in used or (folder / TRANSCRIPTS / f"{candidate}.json").exists()
               or (own_files and any((folder / f"{candidate}{s}").exists() for s in SUITE_SUFFIXES))):
            n += 1
            candidate = f"{base}-{n}"
        used.add(candidate.casefold())
        item.draft.id = candidate
        item.transcript_path = folder / TRANSCRIPTS / f"{candidate}.json"
        item.draft.transcript = f"{TRANSCRIPTS}/{candidate}.json" if item.link_transcript else None


def _transcript_text(recording: Recording) -> str:
    data: dict[str, object] = {"messages": recording.messages}
    if recording.termination_reason is not None:
        data["termination_reason"] = recording.termination_reason
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------------------------- writing

def _commit(jobs: list[_Job]) -> None:
    """Write every job's file, then read the suites back; on any failure undo all of it."""
    done: list[_Job] = []
    try:
        for job in jobs:
            if job.new and os.path.lexists(job.path):
                raise OutputError(f"{job.path} appeared while the drafts were being written")
            with open_atomically(job.path) as stream:
                stream.write(job.text)
            done.append(job)
        for job in jobs:
            if job.suite:
                _check_written(job)
    except BaseException as exc:
        _undo(done)
        if isinstance(exc, OSError):
            from ...results.folder import describe_os_error

            raise OutputError(f"cannot write the drafts: {describe_os_error(exc)}", 3) from None
        raise


def _check_written(job: _Job) -> None:
    """The suite as written loads, holds the new cases, and its earlier cases are exactly what they were."""
    from ...suite.load import load_file

    cases, diagnostics, _ = load_file(job.path)
    errors = [str(d) for d in diagnostics if d.severity == "error"]
    loaded = {c.id: c for c in cases}
    errors += [f"case '{i}' is missing" for i in [*job.ids, *job.kept] if i not in loaded]
    errors += [f"case '{i}' changed" for i, before in job.kept.items() if i in loaded and _comparable(loaded[i]) != before]
    if errors:
        raise OutputError("the written suite did not read back as intended (please report this):\n" + "\n".join(errors[:5]), 3)


def _undo(done: list[_Job]) -> None:
    for job in reversed(done):
        try:
            if job.before is not None:
                with open_atomically(job.path, "wb") as stream:
                    stream.write(job.before)
            else:
                job.path.unlink(missing_ok=True)
        except OSError:
            pass  # undoing is best effort; the error that caused it is what the person needs to read
