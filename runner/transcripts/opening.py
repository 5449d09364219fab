"""Whether a recording is the conversation a case describes: it must open with the case's starting sentence.

A case that replays a recording says, in `starting_sentence`, what the user said first. A recording whose first
user message says something else is another conversation (a copied case whose path was not changed, a sentence
edited after the recording was made): every verdict on it would be about that other conversation, and a pass
would be false. So the two are compared, forgivingly: Unicode compatibility forms, case, runs of whitespace,
typographic quotes and the sentence's closing punctuation do not count; the message may go on after the
sentence (at a word boundary). A recording with no user message at all, or none with text (a trace export
of the agent's side), contradicts nothing and passes.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Any

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u201c": '"', "\u201d": '"',
                         "\u201e": '"', "\u00ab": '"', "\u00bb": '"', "\u2013": "-", "\u2014": "-"})
_CLOSING = ".!?\u2026;:,"
_SHOWN = 80


def normalized(text: str) -> str:
    """`text` as the comparison sees it: NFKC, case folded, quotes and dashes plain, whitespace single."""
    folded = unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold()
    return " ".join(folded.split())


def first_user_text(messages: list[dict]) -> str | None:
    """The text of the recording's first user message (its text parts joined), or None when it has none."""
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "user":
            return _text(message.get("content"))
    return None


def opening_problem(sentence: str | None, messages: list[dict]) -> str | None:
    """Why `messages` is not the conversation of a case that starts with `sentence`, or None when it may be."""
    if not sentence or not sentence.strip():
        return None
    said = first_user_text(messages)
    if said is None or not said.strip():  # no user message, or no text in it: nothing contradicts the case
        return None
    expected = normalized(sentence).rstrip(_CLOSING + " ")
    actual = normalized(said)
    if actual.startswith(expected) and (len(actual) == len(expected) or not _word(actual[len(expected)])
                                        or not _word(expected[-1:] or " ")):
        return None
    return (f"the recording is not this case's conversation: its first user message is {_quoted(said)}, but the "
            f"case's starting_sentence is {_quoted(sentence)}; point `transcript:` at this case's recording, or "
            "make starting_sentence what the user said first (a replayed case may also leave it out)")


def _word(character: str) -> bool:
    return character.isalnum() or character == "_"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return " ".join(part.get("text", "") for part in content
                        if isinstance(part, dict) and isinstance(part.get("text"), str))
    return ""


def _quoted(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return repr(text if len(text) <= _SHOWN else text[:_SHOWN] + "...")
