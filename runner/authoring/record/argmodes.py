"""How a draft compares each argument of a recorded call, chosen by rule, with the reason a person reads.

The rules, first that applies:
1. a value the user typed (a word or number of their messages) is strict: it must come back as it was;
2. a date the user wrote in another form ("March 3" for 2025-03-03) is fuzzy, which compares dates across formats;
3. a timestamp (a date with a time of day) is ignored: a rerun happens at another time;
4. an id, uuid or token (by its name or its shape) is ignored: a rerun gets new ones;
5. long free text (a note, a message body) is fuzzy: the agent words it anew each time;
6. anything else is strict, with a comment when the agent chose the value itself (a person should check it).

Objects are walked into (`address.zip` gets its own rule); lists and other values are judged whole.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ...score.dates import find_dates, parse_date
from ...score.keywords import missing_keywords

_UUID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z0-9_\-+/=.]{16,}")
_HEX = re.compile(r"[0-9a-fA-F]{16,}")
_TIMESTAMP = re.compile(r"\d{4}-\d{1,2}-\d{1,2}[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2})?")
_ID_NAME = re.compile(r"(?:^|[_\-.])(?:id|ids|uuid|guid|token|nonce|session|request|trace|etag|hash|key)$"
                      r"|(?<=[a-z])(?:Id|Ids|ID|Uuid|UUID|Token|Key)$|^(?:id|uuid|guid|token|nonce)$", re.IGNORECASE)
_TIME_NAME = re.compile(r"(?:^|[_\-.])(?:timestamp|ts|time|datetime|created|updated|modified)(?:_at)?$"
                        r"|(?:_at|At)$", re.IGNORECASE)
_LONG_TEXT_WORDS = 8
_LONG_TEXT_CHARS = 60


@dataclass(frozen=True)
class ArgChoice:
    """The mode of one argument (a dot path) and why; `note` is the comment a person should read, if any."""

    path: str
    value: Any
    mode: str  # strict, fuzzy or ignore
    note: str = ""
    fixed: bool = False  # compared whole and strict whatever anyone says (a name with a dot reads as a path)


@dataclass(frozen=True)
class Evidence:
    """What the argument values are compared with: the user's words and the earlier results' texts."""

    user_text: str
    results: tuple[tuple[str, str], ...] = ()  # (tool name, result as text) of the calls before this one

    def typed(self, value: Any) -> bool:
        """Did the user type this value (a whole word or number of their messages)?"""
        if isinstance(value, bool) or value is None:
            return False
        if isinstance(value, (int, float)):
            return not missing_keywords(self.user_text, [_number_text(value)])
        if not isinstance(value, str) or not value.strip():
            return False
        needle = re.escape(value.strip().casefold())
        return re.search(rf"(?<!\w){needle}(?!\w)", self.user_text.casefold()) is not None

    def user_dates(self) -> set:
        return {day for _, _, day in find_dates(self.user_text)}

    def source(self, value: Any) -> str | None:
        """The tool whose earlier result holds the value, if one does."""
        text = value if isinstance(value, str) else _number_text(value) if _is_number(value) else None
        if not text:
            return None
        for tool, result in reversed(self.results):
            if text.casefold() in result.casefold():
                return tool
        return None


def choose_modes(args: dict, evidence: Evidence) -> list[ArgChoice]:
    """One choice per leaf of `args`, in the arguments' order."""
    return list(_walk(args, "", evidence))


def _walk(value: dict, prefix: str, evidence: Evidence) -> Iterator[ArgChoice]:
    for key, item in value.items():
        path = f"{prefix}{key}"
        if "." in key or not key:
            # A dot inside a name would read as a path in arg_matching: compare it strict, as a whole.
            yield ArgChoice(path, item, "strict", _strict_note(item, evidence), fixed=True)
        elif isinstance(item, dict) and item:
            yield from _walk(item, path + ".", evidence)
        else:
            yield _choose(path, key, item, evidence)


def _choose(path: str, key: str, value: Any, evidence: Evidence) -> ArgChoice:
    if evidence.typed(value):
        return ArgChoice(path, value, "strict")
    if isinstance(value, str):
        text = value.strip()
        if _TIMESTAMP.fullmatch(text) or (_TIME_NAME.search(key) and text.isdigit() and len(text) >= 9):
            return ArgChoice(path, value, "ignore", "ignored: a timestamp; a rerun happens at another time")
        day = parse_date(text)
        if day is not None and day in evidence.user_dates():
            return ArgChoice(path, value, "fuzzy", "fuzzy: the user wrote this date in another form")
        if _looks_like_id(key, text):
            return ArgChoice(path, value, "ignore", _id_note(value, evidence))
        if len(text) >= _LONG_TEXT_CHARS or len(text.split()) >= _LONG_TEXT_WORDS:
            return ArgChoice(path, value, "fuzzy", "fuzzy: free text the agent wrote; it must mean the same")
    elif _is_number(value) and (_ID_NAME.search(key) or _TIME_NAME.search(key)):
        what = "a time" if _TIME_NAME.search(key) else "an id"
        return ArgChoice(path, value, "ignore", f"ignored: looks like {what} by its name"
                         + _from(value, evidence) + "; make it strict to require this value")
    return ArgChoice(path, value, "strict", _strict_note(value, evidence))


def _looks_like_id(key: str, text: str) -> bool:
    if " " in text:
        return False
    if _UUID.fullmatch(text) or _HEX.fullmatch(text):
        return True
    if _ID_NAME.search(key):
        return True
    return bool(_TOKEN.fullmatch(text)) and any(c.isdigit() for c in text) and any(c.isalpha() for c in text)


def _id_note(value: Any, evidence: Evidence) -> str:
    return "ignored: looks like an id or token" + _from(value, evidence) + "; make it strict to require this value"


def _from(value: Any, evidence: Evidence) -> str:
    tool = evidence.source(value)
    return f" (from {tool}'s result)" if tool else " (the agent made it up)"


def _strict_note(value: Any, evidence: Evidence) -> str:
    if value is None or isinstance(value, bool) or evidence.typed(value):
        return ""
    tool = evidence.source(value)
    if tool:
        return f"check: strict, from {tool}'s result"
    return "check: strict, the agent chose this value (the user did not type it)"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _number_text(value: Any) -> str:
    """A number as a keyword finds it: integers as digits, other numbers without a trailing `.0`."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)
