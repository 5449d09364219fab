"""How deep and how large a file evalrun reads may be, and where its text first goes past that.

Suites, configs and transcripts share these limits. They are checked on the text (JSON), on libyaml's
event stream (YAML) or on the data json.loads made, before any value is built, so a hostile
`[[[[...`, an alias bomb or a file of a million values costs no more than the limit.
"""
from __future__ import annotations

import re
from typing import Any

import yaml

from .diagnostics import Position, Severity

MAX_NODES = 200_000  # guards against alias bombs ("billion laughs")
MAX_DEPTH = 100  # guards against deep nesting: libyaml slows down quadratically and its composer recurses in C
LONG_NUMBER = ("a number longer than 4,300 digits cannot be read as a number (Python's limit); "
               "quote it to keep it as text")

_INDENT = re.compile(r"^ *", re.MULTILINE)
_COMPACT = re.compile(r"^ *((?:[-?:][ \t]+)+)", re.MULTILINE)  # `- - x`, `? - x`: nesting on one line
_EVENTS = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser when present: fast, no recursion

_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_JSON_SCALAR = re.compile(r"[-0-9][-+0-9.eE]*|true|false|null")
_JSON_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|([\[{])|[\]}]', re.DOTALL)
_LONG_DIGITS = re.compile(r"[0-9]{4301,}")


def json_limits(text: str, *, max_values: int | None = MAX_NODES,
                depth: bool = True) -> tuple[int, int, Severity, str, str] | None:
    """(line, column, severity, message, code) when JSON text goes past the limits YAML files have
    (MAX_DEPTH levels, MAX_NODES values), found before the text is parsed; else None. `depth=False`
    leaves the depth to `too_deep_json`, on the parsed data (one pass over the text instead of two).

    Regular expressions do the counting in C, and only files that could pass a limit pay for it: a
    file with few brackets cannot be deep, a short one cannot hold many values."""
    opens = text.count("[") + text.count("{")
    count = max_values is not None and len(text) > 2 * max_values
    if (opens <= MAX_DEPTH or not depth) and not count:
        return None
    stripped, strings = _JSON_STRING.subn("", text)
    opens = stripped.count("[") + stripped.count("{")
    if opens > MAX_DEPTH:
        level = max_depth = 0
        for bracket in re.finditer(r"[\[\]{}]", stripped):
            level += 1 if bracket.group() in "[{" else -1
            if level > MAX_DEPTH:
                max_depth = level
                break
        if max_depth:
            line, column = _deep_position(text)
            return line, column, "error", f"the file is nested more than {MAX_DEPTH} levels deep", "too-deep"
    if count and max_values is not None:  # count implies max_values; said again for the type checker
        # every value is a container, a string that is not a key (a key is followed by ':') or a scalar
        values = opens + strings - stripped.count(":") + sum(1 for _ in _JSON_SCALAR.finditer(stripped))
        if values > max_values:
            return 1, 1, "error", f"the file holds more than {max_values:,} values, above evalrun's limit", "too-large"
    return None


def too_deep_json(data: Any, text: str, *, outer: int = 1) -> tuple[int, int, Severity, str, str] | None:
    """The depth limit of `json_limits`, checked on data json.loads made of `text`: (line, column, severity,
    message, code) when its containers nest more than MAX_DEPTH levels, else None. Walking the parsed
    containers costs a fraction of a second pass over the text, and only text with enough brackets pays.
    `outer`: the level of `data` itself (0 when it is a list made of JSON Lines, not written in the text)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH or not isinstance(data, (dict, list)):
        return None
    stack = [(data, outer)]
    while stack:
        value, level = stack.pop()
        children = value.values() if isinstance(value, dict) else value
        for child in children:
            if isinstance(child, (dict, list)):
                if level >= MAX_DEPTH:
                    return too_deep_problem(text)
                stack.append((child, level + 1))
    return None


def too_deep_problem(text: str) -> tuple[int, int, Severity, str, str]:
    line, column = _deep_position(text)
    return line, column, "error", f"the file is nested more than {MAX_DEPTH} levels deep", "too-deep"


def long_number_position(text: str) -> Position:
    """Where JSON text first writes a number longer than Python converts (outside strings)."""
    return _first_outside_strings(text, _LONG_DIGITS) or (1, 1)


def _deep_position(text: str) -> Position:
    depth = 0
    for match in _JSON_BRACKET.finditer(text):
        if match.group().startswith('"'):
            continue
        depth += 1 if match.group(1) else -1
        if depth > MAX_DEPTH:
            return _line_column(text, match.start())
    return (1, 1)


def _first_outside_strings(text: str, pattern: re.Pattern) -> Position | None:
    combined = re.compile(f'"(?:[^"\\\\]|\\\\.)*"|({pattern.pattern})', re.DOTALL)
    for match in combined.finditer(text):
        if match.group(1):
            return _line_column(text, match.start())
    return None


def _line_column(text: str, offset: int) -> Position:
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def yaml_past_limits(text: str) -> tuple[Position, str, str] | None:
    """(position, message, code) where YAML text first goes deeper than MAX_DEPTH or holds more than
    MAX_NODES values, else None.

    Checked on the event stream (which libyaml produces without recursion and without building the
    node tree) before composing, and stopped as soon as a limit is passed, so a hostile `[[[[...` or
    a file of a million values costs no more than the limit. Most files skip the scan: their nesting
    is below a cheap upper bound, since every flow level opens a bracket and every block level is
    indented further or opened by an indicator at the start of a line (a block sequence may also sit
    at its parent key's indentation, hence the factor 2); and every value takes at least two
    characters. Aliases are counted once here; the builder counts their expansions.
    """
    flow = text.count("[") + text.count("{")
    indent = max(map(len, _INDENT.findall(text)), default=0)
    compact = max(map(len, _COMPACT.findall(text)), default=0)
    check_depth = flow + 2 * (indent + compact + 1) > MAX_DEPTH
    check_count = len(text) > 2 * MAX_NODES
    if not (check_depth or check_count):
        return None
    depth = values = 0
    open_collections: list[bool | None] = []  # a sequence: None; a mapping: True while waiting for a key
    try:
        for event in yaml.parse(text, Loader=_EVENTS):
            if isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
                open_collections.pop()
                continue
            if not isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                continue
            is_key = bool(open_collections) and open_collections[-1] is True
            if open_collections and open_collections[-1] is not None:
                open_collections[-1] = not open_collections[-1]
            if not is_key:
                values += 1
                if values > MAX_NODES:
                    return (_mark(event), f"the file holds more than {MAX_NODES:,} values, above evalrun's limit",
                            "too-large")
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    return _mark(event), f"the file is nested more than {MAX_DEPTH} levels deep", "too-deep"
                open_collections.append(True if isinstance(event, yaml.MappingStartEvent) else None)
    except yaml.YAMLError:
        return None  # composing reports it with its position
    return None


def _mark(event) -> Position:
    return (event.start_mark.line + 1, event.start_mark.column + 1)
