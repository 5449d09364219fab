"""What one collected file turned out to be (its cases, its problems, or why it is not a suite), kept small.

A run holds one outcome per collected file at once, 100,000 of them in a run of 50,000 recorded cases,
and the read pool's processes send them back: slots, and `compact` once an outcome is complete.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..util.diagnostics import Diagnostic
from .models import Case, SourceRef


@dataclass(frozen=True)
class CaseOutline:
    """A case whose file has errors, so it is not built: what the checks across cases read (its id, its
    agent, where it is), so a duplicate id or an undeclared agent is reported with the file's other errors."""

    id: str
    agent: str | None
    source: SourceRef


@dataclass(slots=True)  # one per collected file: 100,000 of them at once in a run of 50,000 recorded cases
class FileOutcome:
    """What one collected file turned out to be."""

    cases: list[Case] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    is_suite: bool = True
    passed_over: str | None = None  # why a file found in a folder is not taken as a suite (None: it is one, or a recording)
    transcripts: list[str] = field(default_factory=list)  # the files its cases name as transcripts, resolved
    named_ids: set[str] = field(default_factory=set)  # ids written in the file (the others come from its name)
    display: str = ""  # the path as messages show it
    unbuilt: list[CaseOutline] = field(default_factory=list)  # its cases with an id written, when it has errors
    conversation: bool = False  # a recorded conversation, only parsed: its outcome is known once suites name theirs
    fingerprint: bytes | None = None  # an evalrun suite with no error: of the bytes its cases were built from


CONVERSATION = FileOutcome(is_suite=False, conversation=True)  # shared: the outcome is never changed, only replaced


def compact(outcome: FileOutcome, name: Path | str) -> FileOutcome:
    """The outcome in less memory: a run holds 100,000 outcomes at once (and the read pool's readers send
    them back), most with no diagnostic, no outline, one id and one or no transcript. Its collections are
    only read from here on: empty ones become the one empty tuple, short ones tuples (a set of one id
    takes 216 bytes, a tuple 48, and a search of a few is as quick)."""
    if not outcome.diagnostics:
        outcome.diagnostics = ()  # type: ignore[assignment]
    if not outcome.unbuilt:
        outcome.unbuilt = ()  # type: ignore[assignment]
    outcome.transcripts = tuple(outcome.transcripts)  # type: ignore[assignment]
    if len(outcome.named_ids) <= 8:
        outcome.named_ids = tuple(outcome.named_ids)  # type: ignore[assignment]
    if outcome.display == name:  # as messages show it: most often as it was found, one string for both
        outcome.display = name
    return outcome
