"""What a transcript format declares: how to tell its files (`sniff`) and how to read them (`normalize`)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..recording import Recording

# a file's conversations, each with its id (None for a file of one conversation)
Conversations = list[tuple[str | None, Recording]]


@dataclass(frozen=True)
class TranscriptFormat:
    """A kind of transcript file. `sniff(data)`: whether decoded JSON (one document, or the list of a JSON Lines
    file's lines) is of this format, cheaply and without raising. `normalize(data)`: its messages as OpenAI-style
    chat messages (or in any form runner.transcripts.read normalizes), which evalrun then checks message by
    message. `markers`: byte strings one of which any file of the format holds (`b'"messages"'`), so that a
    suites folder passes over a recording without parsing it; empty when the format cannot say (the file is
    parsed). A format whose files hold many conversations, or more than messages, gives `conversations`."""

    name: str
    description: str
    sniff: Callable[[Any], bool]
    normalize: Callable[[Any], list]
    markers: tuple[bytes, ...] = ()
    conversations: Callable[[Any, Path], Conversations] | None = None
