"""Text read from JSON (and YAML) files, made safe to write out again.

The json module accepts an escaped lone surrogate (`"\\ud800"`) and returns a str holding it. Such a
str cannot be encoded as UTF-8, so it only fails much later: when the report is written or a
diagnostic quoting it is printed. Readers therefore replace lone surrogates with U+FFFD as soon as
the data is read. Only text that contains a surrogate escape can hold one (a UTF-8 file cannot
contain a surrogate itself), so `may_hold_surrogates` lets a reader skip the walk for normal files.
Text an agent wrote keeps the bad code point instead, made visible as the six characters `\\ud800`
(`visible=True`), so a report shows what the agent sent.
"""
from __future__ import annotations

import re
from typing import Any

__all__ = ["deeper_than", "json_kind", "may_hold_surrogates", "replace_lone_surrogates", "show_lone_surrogates",
           "without_lone_surrogates"]

# JSON writes a surrogate as \uD800-\uDFFF; YAML double-quoted scalars also as \U0000D800-\U0000DFFF.
_SURROGATE_ESCAPE = re.compile(r"\\(?:u|U0000)[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_PAIR_OR_SURROGATE = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")


def may_hold_surrogates(text: str) -> bool:
    """False when data parsed from `text` cannot contain a surrogate (no surrogate escape in it)."""
    return _SURROGATE_ESCAPE.search(text) is not None


def without_lone_surrogates(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD; a high-low pair becomes the character it encodes."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def show_lone_surrogates(text: str) -> str:
    """`text` with each lone surrogate written as visible text (`\\ud800`); a high-low pair becomes the
    character it encodes."""
    if _SURROGATE.search(text) is None:
        return text

    def one(match: re.Match) -> str:
        found = match.group()
        if len(found) == 2:
            return chr(0x10000 + ((ord(found[0]) - 0xD800) << 10) + (ord(found[1]) - 0xDC00))
        return f"\\u{ord(found):04x}"

    return _PAIR_OR_SURROGATE.sub(one, text)


def replace_lone_surrogates(data: Any, *, visible: bool = False) -> Any:
    """`data` (parsed JSON: dicts, lists, scalars) with lone surrogates replaced in every string, keys included:
    by U+FFFD, or with `visible` written out as `\\ud800`.

    Lists and dicts are changed in place and returned; a str is returned fixed. The walk uses an
    explicit stack, so deeply nested data cannot exhaust the recursion limit. If two keys of one
    object become equal, the first one is kept.
    """
    fix = show_lone_surrogates if visible else without_lone_surrogates
    if isinstance(data, str):
        return fix(data)
    stack = [data] if isinstance(data, (list, dict)) else []
    seen: set[int] = set()  # a container shared by several parents (YAML aliases) is fixed once
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            items = list(node.items())
            if any(isinstance(k, str) and _SURROGATE.search(k) for k, _ in items):
                node.clear()
                for key, value in items:
                    node.setdefault(fix(key) if isinstance(key, str) else key, value)
                items = list(node.items())
            slots = items
        else:
            slots = list(enumerate(node))
        for slot, value in slots:
            if isinstance(value, str):
                fixed = fix(value)
                if fixed is not value:
                    node[slot] = fixed
            elif isinstance(value, (list, dict)):
                stack.append(value)
    return data


def deeper_than(data: Any, limit: int) -> bool:
    """Whether lists and dicts in `data` nest more than `limit` levels deep (a scalar is level 0), found
    with an explicit stack: the check itself cannot exhaust the recursion limit."""
    stack = [(data, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (list, tuple, dict)):
            if depth >= limit:
                return True
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return False


def json_kind(value: Any) -> str:
    """The JSON Schema type name of a parsed value: null, boolean, integer, number, string, array,
    object (or the Python type's name for anything else). Callers word it for their readers."""
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: bool is an int subclass
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


_PHRASES = {"null": "null", "boolean": "a boolean", "integer": "a number", "number": "a number", "string": "a string",
            "array": "a list", "object": "an object"}


def json_kind_phrase(value: Any) -> str:
    """`json_kind` as a message to a reader says it: "a number", "a list", "an object"."""
    kind = json_kind(value)
    return _PHRASES.get(kind, kind)
