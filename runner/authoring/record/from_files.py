"""`evalrun record --from FILE…`: recorded conversations -> draft suites (and the conversations saved beside them).

Every file evalrun reads as a transcript is accepted (runner/transcripts/); a file may hold several
conversations, and each becomes one draft. A conversation the agent said nothing in and made no
usable call in is skipped with the reason; a file that cannot be read stops everything before
anything is written.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ...transcripts.read import TranscriptError, build_trajectory
from ...transcripts.recording import ConversationRef, Recording
from ...transcripts.transcript_file import read_conversations, read_recording
from ...util.files import split_selection
from ..write.output import OutputError, Planned, Written, redacted_recording, safe_id, write_drafts
from .draft import DraftCase, NothingToCheck, draft_case


class RecordError(Exception):
    """Nothing could be drafted or written; the message says why (nothing was written). `exit_code` as
    OutputError's: 4 for bad input or a wrong target, 3 when the disk refused."""

    def __init__(self, message: str, exit_code: int = 4):
        super().__init__(message)
        self.exit_code = exit_code


@dataclass
class Source:
    """One conversation of an input file: where it came from, and the id its draft starts from."""

    label: str  # for people: "chat.json", or "traces.jsonl#<conversation>"
    stem: str
    recording: Recording


@dataclass
class RecordOutcome:
    written: Written
    drafts: list[DraftCase]
    skipped: list[str] = field(default_factory=list)  # conversations without a draft, with the reason


def read_sources(paths: Sequence[Path | str]) -> list[Source]:
    """Every conversation of every file; RecordError naming the file that cannot be read."""
    sources: list[Source] = []
    for given in paths:
        path, selection = split_selection(given)  # FILE#ID: that one conversation (a report's transcript_path)
        try:
            conversations = read_conversations(path) if selection is None else \
                [(selection, read_recording(ConversationRef(path, selection)))]
        except TranscriptError as exc:
            raise RecordError(str(exc)) from None
        if selection is not None:
            sources.append(Source(label=f"{path}#{selection}", stem=f"{path.stem}-{selection}",
                                  recording=conversations[0][1]))
            continue
        many = len(conversations) > 1
        for n, (name, recording) in enumerate(conversations, start=1):
            suffix = f"#{name or n}" if many else ""
            sources.append(Source(label=f"{path}{suffix}", stem=path.stem + (f"-{name or n}" if many else ""),
                                  recording=recording))
    return sources


def record_from(paths: Sequence[Path], target: Path, *, agent: str | None = None,
                annotate=None, taken_ids: Iterable[str] = ()) -> RecordOutcome:
    """Draft every conversation of `paths` and write the drafts to `target` (see output.py)."""
    sources = read_sources(paths)
    planned: list[Planned] = []
    skipped: list[str] = []
    for source in sources:
        source.recording = redacted_recording(source.recording)  # before the judge (--annotate) reads it too
        try:
            draft = draft_case(build_trajectory(source.recording.messages, normalized=True), safe_id(source.stem))
        except NothingToCheck as exc:
            skipped.append(f"{source.label}: no draft: {exc}")
            continue
        draft.description = f"Recorded conversation from {source.label}"
        for problem in getattr(source.recording, "problems", [])[:5]:  # parts of a trace that could not be read
            draft.header.append(f"check: part of the recording could not be read: {problem}")
        draft.agent = agent
        if annotate is not None:
            annotate(draft, source.recording)
        planned.append(Planned(draft, source.recording))
    if not planned:
        raise RecordError("no conversation could be drafted:\n" + "\n".join(skipped))
    intro = [f"Drafts written by `evalrun record` from {', '.join(str(p) for p in paths)}.",
             "Read the lines marked `check:`; each case replays its recorded conversation (transcript:)."]
    try:
        written = write_drafts(planned, target, intro, taken_ids)
    except OutputError as exc:
        raise RecordError(str(exc), exc.exit_code) from None
    return RecordOutcome(written, [p.draft for p in planned], skipped)
