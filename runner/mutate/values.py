"""Plausible wrong values, by type: a date a day off, a number off by one, by 10 % or of the other sign, an
id with one character changed. Each function gives (operator, the new value) pairs, or none; OPERATORS says
each operator in words."""
from __future__ import annotations

import random
import re
from datetime import date, datetime, timedelta
from typing import Any

_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(.*)$")
_DATE_FORMATS = ("%B %d, %Y", "%b %d, %Y", "%d %B %Y", "%Y/%m/%d", "%m/%d/%Y", "%Y%m%d")
_ID = re.compile(r"^(?=.*\d)[A-Za-z0-9_.:/-]{3,}$|^[A-Z0-9]{4,}$")
_SPOKEN_DATE = re.compile(r"\b(January|February|March|April|May|June|July|August|September|October|November|"
                          r"December) (\d{1,2})\b")
OPERATORS = {
    "date_shift": "date moved by a day", "number_plus_one": "number changed by one",
    "number_10_percent": "number changed by 10 %", "number_sign": "number's sign changed",
    "id_character": "one character of an id changed", "other_value": "replaced by another value of the conversation",
    "boolean_flip": "boolean flipped", "drop_item": "list item dropped", "drop_key": "key dropped",
}
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w])")


def as_date(text: str) -> tuple[date, str] | None:
    """The date a text writes, and the format to write another in (ISO keeps its tail, a time)."""
    match = _ISO.match(text)
    if match:
        try:
            return date(int(match[1]), int(match[2]), int(match[3])), "iso" + match[4]
        except ValueError:
            return None
    for form in _DATE_FORMATS:
        try:
            return datetime.strptime(text, form).date(), form
        except ValueError:
            continue
    return None


def written(day: date, form: str) -> str:
    if form.startswith("iso"):
        return day.isoformat() + form[3:]
    return day.strftime(form)


def wrong_dates(text: str) -> list[tuple[str, str]]:
    found = as_date(text)
    if found is None:
        return []
    day, form = found
    return [("date_shift", written(day + timedelta(days=1), form))]


def wrong_numbers(value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return []
    out: list[tuple[str, Any]] = [("number_plus_one", value + 1)]
    if value:
        tenth = value * 1.1 if isinstance(value, float) else round(value * 1.1) or value + 2
        if tenth != value + 1:
            out.append(("number_10_percent", tenth))
        out.append(("number_sign", -value))
    return out


def wrong_id(text: str, rng: random.Random) -> list[tuple[str, str]]:
    """An id or code (letters and digits, at least one digit, no spaces) with one character changed."""
    if not _ID.match(text) or as_date(text) is not None:
        return []
    positions = [i for i, ch in enumerate(text) if ch.isalnum()]
    at = positions[rng.randrange(len(positions))]
    ch = text[at]
    pool = "0123456789" if ch.isdigit() else ("ABCDEFGHJKLMNPQRSTUVWXYZ" if ch.isupper() else "abcdefghjkmnpqrstuvwxyz")
    other = pool[(pool.index(ch) + 1 + rng.randrange(len(pool) - 1)) % len(pool)] if ch in pool else pool[0]
    return [("id_character", text[:at] + other + text[at + 1:])]


def wrong_in_text(text: str) -> tuple[str, str] | None:
    """A text with its first date (spoken or ISO) or number changed: (what, new text), or None."""
    spoken = _SPOKEN_DATE.search(text)
    if spoken:
        day = int(spoken[2])
        changed = f"{spoken[1]} {day + 1 if day < 28 else day - 1}"
        return f"date {spoken[0]!r} changed to {changed!r}", text[:spoken.start()] + changed + text[spoken.end():]
    iso = re.search(r"\b\d{4}-\d{2}-\d{2}\b", text)
    if iso:
        moved = wrong_dates(iso[0])
        if moved:
            return f"date {iso[0]} changed to {moved[0][1]}", text[:iso.start()] + moved[0][1] + text[iso.end():]
    number = _NUMBER.search(text)
    if number:
        old = number[1]
        new = str(int(old) + 1) if old.isdigit() else str(round(float(old) + 1, 6))
        return f"number {old} changed to {new}", text[:number.start()] + new + text[number.end():]
    return None
