"""What an unquoted YAML value means in a suite: the rules a suite writer expects, not YAML 1.1's.

Only `true`/`false` are booleans (`yes/no/on/off/y/n` stay text); dates and numbers with a leading
zero (`01234`) stay text; `null`, `~` and an empty value are null; decimal integers and floats are
numbers. A value with a core tag (`!!int 3`) must fit its tag.
"""
from __future__ import annotations

import math
import re
from typing import Any

_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$")
_FLOAT = re.compile(r"^[-+]?(?:(?:0|[1-9][0-9]*)\.[0-9]*|\.[0-9]+|(?:0|[1-9][0-9]*)(?:\.[0-9]*)?[eE][-+]?[0-9]+)$")
_MAY_RESOLVE = frozenset("~nNtTfF+-.0123456789")  # first characters of null, booleans and numbers
_SPECIAL_FLOATS = {".inf": math.inf, "+.inf": math.inf, "-.inf": -math.inf, ".nan": math.nan}


def plain_scalar(text: str) -> Any:
    """The value of `text` written unquoted. ValueError: an integer longer than Python converts."""
    if text and text[0] not in _MAY_RESOLVE:  # most values are words: no pattern can match them
        return text
    if _NULL.match(text):
        return None
    if text in _BOOL:
        return _BOOL[text]
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        return float(text)
    if text.lower() in _SPECIAL_FLOATS:
        return _SPECIAL_FLOATS[text.lower()]
    return text


def tagged_scalar(kind: str | None, text: str) -> tuple[bool, Any]:
    """(True, value) when `text` fits the core tag `kind` (`str`, `null`, `bool`, `int`, `float`), else
    (False, None): an unknown tag, or text the tag cannot read. ValueError as `plain_scalar`."""
    if kind == "str":
        return True, text
    if kind == "null" and _NULL.match(text):
        return True, None
    if kind == "bool" and text in _BOOL:
        return True, _BOOL[text]
    if kind in ("int", "float"):
        value = plain_scalar(text)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return True, float(value) if kind == "float" else value
    return False, None
