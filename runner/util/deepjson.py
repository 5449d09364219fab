"""JSON whose tool-call arguments nest deeper than anything should, read without losing the rest.

Python's json module recurses, and gives up (RecursionError) near 1,000 levels. An agent's reply or a
recorded message whose tool arguments nest 100,000 levels deep is still a reply: its text, its other
calls, even that call's name are readable. `loads_keeping_deep_arguments` reads such text with an
explicit stack; the value of an `arguments`, `args` or `input` key (the names OpenAI, watsonx and
Anthropic give tool arguments) that goes deeper than the limit is kept as its JSON text, exactly as
written, for the scorer to report as arguments it cannot read. Anything else that deep is still a
ValueError: there is no call to keep it for.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from json.decoder import scanstring  # type: ignore[attr-defined]  # public at run time, absent from typeshed
from typing import Any

__all__ = ["ARGUMENT_KEYS", "TooDeep", "loads_keeping_deep_arguments"]

ARGUMENT_KEYS = frozenset({"arguments", "args", "input"})
_SPACE = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?")
_LITERALS = (("true", True), ("false", False), ("null", None), ("NaN", float("nan")), ("Infinity", float("inf")),
             ("-Infinity", float("-inf")))
_BRACKET_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


class TooDeep(ValueError):
    """The text nests too deep outside any tool call's arguments."""


@dataclass
class _Open:
    """A list or object being read. `root`: it is the value of an arguments key; `inside`: it lies
    within such a value."""

    value: Any
    start: int
    root: bool
    inside: bool
    key: str | None = None


def loads_keeping_deep_arguments(text: str, max_depth: int) -> Any:
    """`json.loads(text)`, except that tool arguments reaching past `max_depth` levels (counted from the
    top of the document) become their JSON text. ValueError for text that is not JSON, or that nests
    too deep elsewhere."""
    stack: list[_Open] = []
    at = _skip(text, 0)
    while True:
        char = text[at:at + 1]
        if char in ("{", "["):
            parent = stack[-1] if stack else None
            inside = parent is not None and (parent.root or parent.inside)
            root = not inside and parent is not None and isinstance(parent.value, dict) and parent.key in ARGUMENT_KEYS
            if len(stack) >= max_depth:
                cut = next((i for i, o in enumerate(stack) if o.root), len(stack) if root else None)
                if cut is None:
                    raise TooDeep(f"nested more than {max_depth} levels deep at character {at}")
                start = stack[cut].start if cut < len(stack) else at
                del stack[cut:]
                end = _matching_bracket(text, start)
                value, at = text[start:end], end
            else:
                stack.append(_Open({} if char == "{" else [], at, root, inside))
                at = _skip(text, at + 1)
                if not text.startswith("}" if char == "{" else "]", at):
                    if char == "{":
                        at = _key(stack[-1], text, at)
                    continue
                value, at = stack.pop().value, at + 1
        else:
            value, at = _scalar(text, at)
        # place the value, then close whatever the text closes after it
        while True:
            at = _skip(text, at)
            if not stack:
                if at != len(text):
                    raise ValueError(f"extra data at character {at}")
                return value
            top = stack[-1]
            if isinstance(top.value, dict):
                top.value[top.key] = value
            else:
                top.value.append(value)
            if text.startswith(",", at):
                at = _skip(text, at + 1)
                if isinstance(top.value, dict):
                    at = _key(top, text, at)
                break
            closer = "}" if isinstance(top.value, dict) else "]"
            if not text.startswith(closer, at):
                raise ValueError(f"expected ',' or '{closer}' at character {at}")
            value, at = stack.pop().value, at + 1


def _skip(text: str, at: int) -> int:
    return _SPACE.match(text, at).end()  # type: ignore[union-attr]  # _SPACE (a starred class) always matches


def _key(container: _Open, text: str, at: int) -> int:
    """Read `"key":` at `at` into the object being read; the position of its value."""
    if not text.startswith('"', at):
        raise ValueError(f"expected a key in double quotes at character {at}")
    container.key, at = scanstring(text, at + 1)
    at = _skip(text, at)
    if not text.startswith(":", at):
        raise ValueError(f"expected ':' at character {at}")
    return _skip(text, at + 1)


def _scalar(text: str, at: int) -> tuple[Any, int]:
    if text.startswith('"', at):
        return scanstring(text, at + 1)
    number = _NUMBER.match(text, at)
    if number:
        found = number.group()
        return (float(found) if number.group(1) or number.group(2) else int(found)), number.end()
    for word, value in _LITERALS:
        if text.startswith(word, at):
            return value, at + len(word)
    raise ValueError(f"expected a value at character {at}")


def _matching_bracket(text: str, start: int) -> int:
    """The position just after the bracket that closes the one at `start` (strings skipped whole)."""
    depth = 0
    for match in _BRACKET_OR_STRING.finditer(text, start):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
        elif token in ("]", "}"):
            depth -= 1
            if depth == 0:
                return match.end()
    raise ValueError("a list or object that never closes")
