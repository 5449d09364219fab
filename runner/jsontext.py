"""Text read from JSON (and YAML) files, made safe to write out again.

The json module accepts an escaped lone surrogate (`"\\ud800"`) and returns a str holding it. Such a
str cannot be encoded as UTF-8, so it only fails much later: when the report is written or a
diagnostic quoting it is printed. Readers therefore replace lone surrogates with U+FFFD as soon as
the data is read. Only text that contains a surrogate escape can hold one (a UTF-8 file cannot
contain a surrogate itself), so `may_hold_surrogates` lets a reader skip the walk for normal files.
"""
from __future__ import annotations

import re
from typing import Any

__all__ = ["json_kind", "may_hold_surrogates", "replace_lone_surrogates", "without_lone_surrogates"]

# JSON writes a surrogate as \uD800-\uDFFF; YAML double-quoted scalars also as \U0000D800-\U0000DFFF.
_SURROGATE_ESCAPE = re.compile(r"\\(?:u|U0000)[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def may_hold_surrogates(text: str) -> bool:
    """False when data parsed from `text` cannot contain a surrogate (no surrogate escape in it)."""
    return _SURROGATE_ESCAPE.search(text) is not None


def without_lone_surrogates(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD; a high-low pair becomes the character it encodes."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def replace_lone_surrogates(data: Any) -> Any:
    """`data` (parsed JSON: dicts, lists, scalars) with lone surrogates replaced in every string, keys included.

    Lists and dicts are changed in place and returned; a str is returned fixed. The walk uses an
    explicit stack, so deeply nested data cannot exhaust the recursion limit. If two keys of one
    object become equal, the first one is kept.
    """
    if isinstance(data, str):
        return without_lone_surrogates(data)
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
                    node.setdefault(without_lone_surrogates(key) if isinstance(key, str) else key, value)
                items = list(node.items())
            slots = items
        else:
            slots = list(enumerate(node))
        for slot, value in slots:
            if isinstance(value, str):
                fixed = without_lone_surrogates(value)
                if fixed is not value:
                    node[slot] = fixed
            elif isinstance(value, (list, dict)):
                stack.append(value)
    return data


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
