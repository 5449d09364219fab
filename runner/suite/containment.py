"""Which files a suite may make evalrun read: transcripts and --replay files stay inside the suite roots.

A suite is written by someone else (a teammate, a generator, an agent): `transcript: /etc/passwd`
must not be opened, and a case id such as `../../secrets` must not pick the file read from a
--replay folder. The roots are the folders named on the command line, the config file's folder and
the config's `allowed_paths` (`runner.config.load.suite_roots`); symlinks are resolved first, so a link
that points outside is outside.
"""
from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..util.files import display_path, real_path, split_selection

if TYPE_CHECKING:
    from ..transcripts.recording import ConversationRef

__all__ = ["inside", "outside_message", "recordings_for", "replay_files", "replay_problem", "resolve_transcript",
           "transcript_location", "within"]


def within(path: Path, roots: Sequence[Path]) -> bool:
    """True when `path` (symlinks resolved) lies under one of `roots` (already resolved)."""
    return inside(real_path(path), roots)


def inside(resolved: Path, roots: Sequence[Path]) -> bool:
    """True when `resolved` (a real path) lies under one of `roots` (real paths too)."""
    return any(resolved == root or root in resolved.parents for root in roots)


def transcript_location(suite_path: str | Path, transcript: str) -> Path:
    """Where a suite's `transcript:` points: relative to the suite file's folder."""
    return Path(suite_path).parent / transcript


def outside_message(transcript: str, roots: Sequence[Path]) -> str:
    where = ", ".join(display_path(r) or "." for r in roots) or "none"
    return (f"transcript '{transcript}' is outside the suite folders ({where}); evalrun reads transcripts only "
            "from there: move the file, or add its folder to `allowed_paths` in evalrun.yaml")


def resolve_transcript(case: Any, *, roots: Sequence[Path], replay_dir: Path | None = None,
                       roots_resolved: bool = False) -> Path | ConversationRef:
    """The file to read for `case` (a `Case`): `replay_dir/<id>.json` (or watsonx's `<id>.messages.json`)
    when a --replay folder is given, else the case's own `transcript:`. Raises TranscriptError with the
    reason when there is none or it lies outside the roots (the replay folder is the root of its files).
    `roots_resolved`: the roots are already real paths (a run resolves them once, not once per case).
    For watsonx's repeated runs (`<id>.runN.messages.json`) use `replay_files`."""
    from ..transcripts.read import TranscriptError

    if replay_dir is not None:
        found = replay_files(replay_dir, case.id)
        if not found:
            looked = _no_line(replay_dir, case.id) if replay_dir.is_file() else \
                f"looked for {case.id}.json and {case.id}.messages.json"
            raise TranscriptError(f"no recorded conversation for case '{case.id}' in {display_path(replay_dir)} "
                                  f"({looked})")
        return found[0][1]
    if not case.transcript:
        raise TranscriptError("nothing to score: the case has no `transcript:` and no --replay folder was given")
    # joined as text, not as a Path, which would fold the `//` of a `FILE#ID`'s id
    file, selection = split_selection(os.path.join(os.path.dirname(os.fspath(case.source.path)), case.transcript))
    # the file a `FILE#ID` names is what must lie inside: `link.jsonl#ID` resolves no link as written
    if not within(file, roots if roots_resolved else [real_path(r) for r in roots]):
        raise TranscriptError(outside_message(case.transcript, roots))
    if selection is None:
        return file
    from ..transcripts.recording import ConversationRef

    return ConversationRef(file, selection)


def recordings_for(case: Any, *, roots: Sequence[Path], replay_dir: Path | None = None,
                   roots_resolved: bool = False) -> list[tuple[int | None, Path | ConversationRef]]:
    """Every recording to score `case` on, as (run number, path): all of watsonx's repeated runs when
    the --replay folder holds them, else the one file `resolve_transcript` picks. Never empty: raises
    TranscriptError with the reason instead."""
    if replay_dir is not None:
        found = replay_files(replay_dir, case.id)
        if found:
            return found
    return [(None, resolve_transcript(case, roots=roots, replay_dir=replay_dir, roots_resolved=roots_resolved))]


def replay_files(replay_dir: Path, case_id: str) -> list[tuple[int | None, Path | ConversationRef]]:
    """The recordings of `case_id` in a --replay folder as (run number, path), run None for a single run:
    `<id>.json`, else watsonx's `<id>.messages.json`, else its repeated runs `<id>.runN.messages.json`
    in run order; an id with `/` looks in a sub-folder. An id that would leave the folder (`..`, a leading
    `/`) raises TranscriptError. A live run's conversations.jsonl given as the folder: the line saved
    under the id."""
    from ..transcripts.read import TranscriptError

    if replay_dir.is_file():
        return [(None, ref)] if (ref := saved_ref(replay_dir, case_id)) is not None else []

    # An id may name a sub-folder (`data_no_summary/data_simple`, as a suites folder is laid out), but
    # never climb out of the folder or start at the root.
    parts = case_id.split("/")
    if any(part in ("", ".", "..") for part in parts) or "\\" in case_id or "\0" in case_id:
        raise TranscriptError(f"case id '{case_id}' cannot name a file in the --replay folder "
                              "(an empty, '.' or '..' part, a backslash or a leading '/'); give the case a plain `id`")
    root = real_path(replay_dir)
    folder, stem = replay_dir.joinpath(*parts[:-1]), parts[-1]
    for name in (f"{stem}.json", f"{stem}.messages.json"):
        candidate = folder / name
        if candidate.exists() or candidate.is_symlink():
            return [(None, _inside_replay(candidate, root, case_id))]
    runs = []
    pattern = re.compile(re.escape(stem) + r"\.run([0-9]{1,6})\.messages\.json")
    try:
        names = [entry.name for entry in folder.iterdir()]
    except OSError:
        names = []
    for name in names:
        match = pattern.fullmatch(name)
        if match:
            runs.append((int(match.group(1)), _inside_replay(folder / name, root, case_id)))
    return sorted(runs, key=lambda run: run[0] or 0)  # every run found here has its number


def replay_problem(replay: Path) -> tuple[str, str] | None:
    """What is wrong with --replay's path, as (message, code), or None: it names a folder of recordings or a live
    run's conversations.jsonl; the old idioms (a run's conversations/ folder, the run folder itself) get the path
    that works now."""
    from ..transcripts.saved_conversations import FILE_NAME, looks_saved

    if replay.is_dir():
        if (replay / FILE_NAME).is_file() and (replay / "report.json").is_file():
            return (f"'{replay}' is a run folder: its live conversations are in {replay / FILE_NAME} "
                    f"(--replay {replay / FILE_NAME}), or rescore it: evalrun rescore {replay}", "run-folder")
        return None
    if not replay.is_file():
        saved = replay.with_name(FILE_NAME)
        hint = f"; a run saves its live conversations in {saved} now (--replay {saved})" \
            if replay.name == "conversations" and saved.is_file() else ""
        return f"no such folder: '{replay}'{hint}", "not-found"
    if not looks_saved(replay):
        return (f"'{replay}' is a file, not a folder of recordings nor a run's conversations.jsonl (give its "
                "folder)", "not-a-folder")
    return None


def saved_ref(saved: Path, key: str) -> ConversationRef | None:
    """The conversation a live run's conversations.jsonl saved under `key`, or None when it holds none.
    TranscriptError when the file is too large to index."""
    from ..transcripts.recording import ConversationRef, TranscriptError
    from ..transcripts.saved_conversations import NotSaved, holds

    try:
        return ConversationRef(saved, key) if holds(saved, key) else None
    except NotSaved as exc:
        raise TranscriptError(f"{display_path(saved)}: {exc}") from None


def _no_line(saved: Path, case_id: str) -> str:
    from ..transcripts.saved_conversations import keys_like

    repeats = keys_like(saved, case_id)
    if repeats:  # a --repeat run saved '<id> repeat N'
        return (f"no line saved under that key; it holds {', '.join(repr(k) for k in repeats)}: a run with --repeat "
                "is scored again with `evalrun rescore RUN_DIR`")
    return "no line saved under that key"


def _inside_replay(path: Path, root: Path, case_id: str) -> Path:
    from ..transcripts.read import TranscriptError

    if not within(path, [root]):
        raise TranscriptError(f"the recording of case '{case_id}' ({display_path(path)}) is a link to a file "
                              "outside the --replay folder; evalrun does not follow it")
    return path
