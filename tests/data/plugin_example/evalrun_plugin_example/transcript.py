"""A `{"dialogue": [{"speaker": "human" | "bot", "text": ...}]}` recording, read as chat messages."""
from typing import Any

from runner.transcripts.formats import TranscriptFormat

_ROLES = {"human": "user", "bot": "assistant"}


def sniff(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("dialogue"), list)


def normalize(data: Any) -> list:
    return [{"role": _ROLES[turn["speaker"]], "content": turn["text"]} for turn in data["dialogue"]]


FORMAT = TranscriptFormat("dialogue", "a dialogue of human and bot turns", sniff, normalize,
                          markers=(b'"dialogue"',))
