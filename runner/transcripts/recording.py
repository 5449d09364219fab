"""What reading a transcript gives, whatever its format: the recording, or the reason it cannot be read."""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel

from .state import ReportedState

__all__ = ["ConversationRef", "Recording", "TranscriptError"]


class ConversationRef(NamedTuple):
    """One conversation of a file that holds many (a trace file, a live run's conversations.jsonl), as a run hands
    it to the reader: a pair, never text to split again (a file named `FILE#KEY` beside FILE must not stand in for
    the conversation, nor a Path fold a key's `//`). Shown as FILE#KEY."""

    file: Path
    key: str

    def __str__(self) -> str:
        return f"{self.file}#{self.key}"


class TranscriptError(Exception):
    """A transcript could not be read; the message says exactly why."""


class Recording(BaseModel):
    """A transcript file's content: the normalised messages and how the conversation ended, if it says.
    `problems` name the parts of the recording that could not be read (a trace's unreadable spans):
    a case is never passed on what remains. `conversation_id` is set when the file held several. `state` is
    the world after the conversation, as the object form's `state` entry saved it (what a live run's agent
    reported); a trace carries none."""

    messages: list[dict]
    termination_reason: str | None = None
    state: ReportedState | None = None
    problems: list[str] = []
    conversation_id: str | None = None
    trace_ids: list[str] = []
