"""Read a YAML or JSON file into plain data plus the line and column of every key and value.

PyYAML's loaders follow YAML 1.1, whose implicit types surprise people who are not programmers:
`2025-01-01` becomes a date, `no` becomes False, `01234` becomes 668 (octal), and a repeated key
silently keeps the last value. This reader composes the node tree with libyaml (fast, safe) and
builds values itself with the rules a suite writer expects:

- only `true`/`false` are booleans; `yes/no/on/off/y/n` stay strings;
- dates stay strings; numbers with a leading zero (`01234`) stay strings;
- `null`, `~` and an empty value are null; decimal integers and floats are numbers;
- a duplicate key is an error that names both places;
- explicit tags other than the core ones (`!!str`, `!!int`, ...) are errors, so no object is built.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import yaml

from ..jsontext import may_hold_surrogates, replace_lone_surrogates, without_lone_surrogates
from .diagnostics import Diagnostic, Position
from .files import SUITE_SIZE_LIMIT, InputFileError, not_utf8, read_bytes

Path_ = tuple  # a location inside the document: keys and list indexes

_PLAIN = "tag:evalrun:plain"
_CORE = "tag:yaml.org,2002:"
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$")
_FLOAT = re.compile(r"^[-+]?(?:(?:0|[1-9][0-9]*)\.[0-9]*|\.[0-9]+|(?:0|[1-9][0-9]*)(?:\.[0-9]*)?[eE][-+]?[0-9]+)$")
_MAY_RESOLVE = frozenset("~nNtTfF+-.0123456789")  # first characters of null, booleans and numbers
_SPECIAL_FLOATS = {".inf": math.inf, "+.inf": math.inf, "-.inf": -math.inf, ".nan": math.nan}
_MAX_NODES = 200_000  # guards against alias bombs ("billion laughs")
_MAX_DEPTH = 100  # guards against deep nesting: libyaml slows down quadratically and its composer recurses in C
_INDENT = re.compile(r"^ *", re.MULTILINE)
_COMPACT = re.compile(r"^ *((?:[-?:][ \t]+)+)", re.MULTILINE)  # `- - x`, `? - x`: nesting on one line

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Marks every plain (unquoted) scalar so that `_build` resolves it with the rules above."""

    def resolve(self, kind, value, implicit):  # noqa: D401 - PyYAML hook
        if kind is yaml.ScalarNode and implicit[0]:
            return _PLAIN
        return super().resolve(kind, value, implicit)


@dataclass
class Document:
    """A file's data and where each part of it was written (1-based line and column)."""

    path: str
    data: Any = None
    value_positions: dict[Path_, Position] = field(default_factory=dict)
    key_positions: dict[Path_, Position] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    pending_positions: Optional[str] = None  # JSON text whose positions are computed on first need
    fingerprint: Optional[bytes] = None  # of the bytes read (`fingerprint`), to know them again unparsed

    def position(self, location: Path_, *, key: bool = False) -> Position:
        """The best-known position for `location`: its key or its value, else the nearest parent's."""
        if self.pending_positions is not None:
            if not location and not key:
                return (1, 1)  # a JSON file's top level: no need to compose the file to know that
            self._compute_positions()
        location = tuple(location)
        while True:
            table = (self.key_positions, self.value_positions) if key else (self.value_positions, self.key_positions)
            for positions in table:
                if location in positions:
                    return positions[location]
            if not location:
                return (1, 1)
            location = location[:-1]

    def _compute_positions(self) -> None:
        text, self.pending_positions = self.pending_positions, None
        if may_hold_surrogates(text):
            text = _yaml_surrogate_escapes(text)
        scratch = Document(self.path)
        _parse_yaml(text, scratch)  # the data is already known; only the positions are kept
        self.value_positions, self.key_positions = scratch.value_positions, scratch.key_positions

    def error(self, location: Path_, message: str, code: str, *, key: bool = False, severity: str = "error") -> None:
        line, column = self.position(location, key=key)
        self.diagnostics.append(Diagnostic(self.path, line, column, severity, message, code))  # type: ignore[arg-type]


def read_document(path: Path, display_path: str | None = None, *, limit: int = SUITE_SIZE_LIMIT,
                  what: str = "suites and configs", raw: Optional[bytes] = None) -> Document:
    """Parse `path` (`raw`: its bytes, already read with `read_bytes` and the same limit); problems become
    diagnostics on the returned document (never an exception). Special files (FIFOs, devices) and files
    above `limit` bytes are refused without being read."""
    doc = Document(display_path or str(path))
    if raw is None:
        try:
            raw = read_bytes(path, limit, what)
        except InputFileError as exc:
            doc.error((), f"cannot read file: {exc}", "io")
            return doc
    doc.fingerprint = fingerprint(raw)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, column, message = not_utf8(raw, exc)
        doc.diagnostics.append(Diagnostic(doc.path, line, column, "error", message, "encoding"))
        return doc
    del raw
    if path.suffix.lower() == ".json":
        _parse_json(text, doc)
    else:
        _parse_yaml(text, doc)
    return doc


def fingerprint(raw: bytes) -> bytes:
    """A file's content in 16 bytes: the same bytes read again give the same fingerprint, others do not."""
    return hashlib.blake2b(raw, digest_size=16).digest()


def _parse_json(text: str, doc: Document) -> None:
    # The json module reads the data (fast, with the familiar syntax messages). Positions come from
    # composing the same text as YAML, of which JSON is a subset, but only when a message needs one:
    # most files are valid and never pay for it. Tabs are JSON whitespace but not YAML indentation;
    # swapping them for spaces keeps every column.
    problem = json_limits(text, depth=False)  # the depth is checked on the parsed data, below
    if problem is not None:
        doc.diagnostics.append(Diagnostic(doc.path, *problem))
        return
    try:
        data = json.loads(text, object_pairs_hook=_object_without_duplicates)
    except json.JSONDecodeError as exc:
        doc.diagnostics.append(Diagnostic(doc.path, exc.lineno, exc.colno, "error", f"invalid JSON: {exc.msg}", "json-syntax"))
        return
    except RecursionError:
        doc.diagnostics.append(Diagnostic(doc.path, *too_deep_problem(text)))
        return
    except ValueError:  # an integer longer than Python converts (4,300 digits)
        line, column = _first_outside_strings(text, _LONG_DIGITS) or (1, 1)
        doc.diagnostics.append(Diagnostic(doc.path, line, column, "error", _LONG_NUMBER, "number-too-long"))
        return
    except _DuplicateKey as duplicate:
        yaml_text = text.replace("\t", " ")
        if may_hold_surrogates(yaml_text):
            yaml_text = _yaml_surrogate_escapes(yaml_text)
        _parse_yaml(yaml_text, doc)  # reports the duplicate at both of its lines
        if any(d.code == "yaml-syntax" for d in doc.diagnostics):  # JSON that libyaml cannot place
            doc.diagnostics = [d for d in doc.diagnostics if d.code != "yaml-syntax"]
            doc.error((), f"duplicate key '{without_lone_surrogates(str(duplicate))}'", "duplicate-key")
        return
    problem = too_deep_json(data, text)
    if problem is not None:
        doc.diagnostics.append(Diagnostic(doc.path, *problem))
        return
    if may_hold_surrogates(text):  # an escaped lone surrogate could be neither printed nor written to a report
        data = replace_lone_surrogates(data)
    doc.data = data
    doc.pending_positions = text.replace("\t", " ")


class _DuplicateKey(Exception):
    pass


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_JSON_SCALAR = re.compile(r"[-0-9][-+0-9.eE]*|true|false|null")
_JSON_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|([\[{])|[\]}]', re.DOTALL)
_LONG_DIGITS = re.compile(r"[0-9]{4301,}")
_LONG_NUMBER = ("a number longer than 4,300 digits cannot be read as a number (Python's limit); "
                "quote it to keep it as text")


def json_limits(text: str, *, max_values: Optional[int] = _MAX_NODES,
                depth: bool = True) -> Optional[tuple[int, int, str, str, str]]:
    """(line, column, severity, message, code) when JSON text goes past the limits YAML files have
    (_MAX_DEPTH levels, _MAX_NODES values), found before the text is parsed; else None. `depth=False`
    leaves the depth to `too_deep_json`, on the parsed data (one pass over the text instead of two).

    Regular expressions do the counting in C, and only files that could pass a limit pay for it: a
    file with few brackets cannot be deep, a short one cannot hold many values."""
    opens = text.count("[") + text.count("{")
    count = max_values is not None and len(text) > 2 * max_values
    if (opens <= _MAX_DEPTH or not depth) and not count:
        return None
    stripped, strings = _JSON_STRING.subn("", text)
    opens = stripped.count("[") + stripped.count("{")
    if opens > _MAX_DEPTH:
        depth = max_depth = 0
        for bracket in re.finditer(r"[\[\]{}]", stripped):
            depth += 1 if bracket.group() in "[{" else -1
            if depth > _MAX_DEPTH:
                max_depth = depth
                break
        if max_depth:
            line, column = _deep_position(text)
            return line, column, "error", f"the file is nested more than {_MAX_DEPTH} levels deep", "too-deep"
    if count:
        # every value is a container, a string that is not a key (a key is followed by ':') or a scalar
        values = opens + strings - stripped.count(":") + sum(1 for _ in _JSON_SCALAR.finditer(stripped))
        if values > max_values:
            return 1, 1, "error", f"the file holds more than {max_values:,} values, above evalrun's limit", "too-large"
    return None


def too_deep_json(data: Any, text: str, *, outer: int = 1) -> Optional[tuple[int, int, str, str, str]]:
    """The depth limit of `json_limits`, checked on data json.loads made of `text`: (line, column, severity,
    message, code) when its containers nest more than _MAX_DEPTH levels, else None. Walking the parsed
    containers costs a fraction of a second pass over the text, and only text with enough brackets pays.
    `outer`: the level of `data` itself (0 when it is a list made of JSON Lines, not written in the text)."""
    if text.count("[") + text.count("{") <= _MAX_DEPTH or not isinstance(data, (dict, list)):
        return None
    stack = [(data, outer)]
    while stack:
        value, level = stack.pop()
        children = value.values() if isinstance(value, dict) else value
        for child in children:
            if isinstance(child, (dict, list)):
                if level >= _MAX_DEPTH:
                    return too_deep_problem(text)
                stack.append((child, level + 1))
    return None


def too_deep_problem(text: str) -> tuple[int, int, str, str, str]:
    line, column = _deep_position(text)
    return line, column, "error", f"the file is nested more than {_MAX_DEPTH} levels deep", "too-deep"


def _deep_position(text: str) -> Position:
    depth = 0
    for match in _JSON_BRACKET.finditer(text):
        if match.group().startswith('"'):
            continue
        depth += 1 if match.group(1) else -1
        if depth > _MAX_DEPTH:
            return _line_column(text, match.start())
    return (1, 1)


def _first_outside_strings(text: str, pattern: re.Pattern) -> Optional[Position]:
    combined = re.compile(f'"(?:[^"\\\\]|\\\\.)*"|({pattern.pattern})', re.DOTALL)
    for match in combined.finditer(text):
        if match.group(1):
            return _line_column(text, match.start())
    return None


def _line_column(text: str, offset: int) -> Position:
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


# A surrogate escape in JSON text, not itself escaped (`\\ud800` is a backslash and text): a high
# surrogate with the low one that may follow it, or a lone low one.
_JSON_SURROGATE = re.compile(r"(?<!\\)((?:\\\\)*)\\u(d[89ab][0-9a-f]{2})(?:\\u(d[c-f][0-9a-f]{2}))?"
                             r"|(?<!\\)((?:\\\\)*)\\u(d[c-f][0-9a-f]{2})", re.IGNORECASE)


def _yaml_surrogate_escapes(text: str) -> str:
    """JSON text whose surrogate escapes libyaml accepts, for computing positions: a pair becomes one
    `\\U` escape of the character it encodes, a lone surrogate `\\ufffd` (as `replace_lone_surrogates`
    makes it in the data), so keys read by both parsers stay equal. Columns after a pair on its line
    move two to the left."""
    def replace(match: re.Match) -> str:
        if match.group(2) is None:  # a lone low surrogate
            return match.group(4) + "\\ufffd"
        if match.group(3) is None:  # a lone high surrogate
            return match.group(1) + "\\ufffd"
        high, low = int(match.group(2), 16), int(match.group(3), 16)
        return match.group(1) + f"\\U{0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00):08x}"

    return _JSON_SURROGATE.sub(replace, text)


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        raise _DuplicateKey(next(k for k, _ in pairs if k in seen or seen.add(k)))
    return obj


def _parse_yaml(text: str, doc: Document) -> None:
    try:
        _compose_yaml(text, doc)
    except _TooLarge:
        doc.data = None
        doc.error((), f"the file expands to more than {_MAX_NODES} values (too many aliases?)", "too-large")
    except RecursionError:
        doc.data = None
        doc.error((), "the file is nested too deeply (or an alias refers to itself)", "too-deep")


def _past_limits(text: str) -> Optional[tuple[Position, str, str]]:
    """(position, message, code) where the text first goes deeper than _MAX_DEPTH or holds more than
    _MAX_NODES values, else None.

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
    check_depth = flow + 2 * (indent + compact + 1) > _MAX_DEPTH
    check_count = len(text) > 2 * _MAX_NODES
    if not (check_depth or check_count):
        return None
    depth = values = 0
    open_collections: list[Optional[bool]] = []  # a sequence: None; a mapping: True while waiting for a key
    try:
        for event in yaml.parse(text, Loader=_BaseLoader):
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
                if values > _MAX_NODES:
                    return (_mark(event), f"the file holds more than {_MAX_NODES:,} values, above evalrun's limit",
                            "too-large")
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth > _MAX_DEPTH:
                    return _mark(event), f"the file is nested more than {_MAX_DEPTH} levels deep", "too-deep"
                open_collections.append(True if isinstance(event, yaml.MappingStartEvent) else None)
    except yaml.YAMLError:
        return None  # composing reports it with its position
    return None


def _mark(event) -> Position:
    return (event.start_mark.line + 1, event.start_mark.column + 1)


def _compose_yaml(text: str, doc: Document) -> None:
    past = _past_limits(text)
    if past is not None:
        (line, column), message, code = past
        doc.diagnostics.append(Diagnostic(doc.path, line, column, "error", message, code))
        return
    try:
        nodes = list(yaml.compose_all(text, Loader=_Loader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "syntax error"
        if _at_a_tab(text, line, column):  # libyaml's words ("cannot start any token") do not say what to change
            doc.diagnostics.append(Diagnostic(doc.path, line, column, "error", "tabs cannot indent YAML: use spaces",
                                              "yaml-syntax"))
            return
        context = f" ({exc.context})" if exc.context and exc.problem else ""
        hint = _indentation_hint(text, line) if problem in _INDENTATION_PROBLEMS else ""
        doc.diagnostics.append(Diagnostic(doc.path, line, column, "error", f"YAML syntax error: {problem}{context}{hint}",
                                          "yaml-syntax"))
        return
    except yaml.YAMLError as exc:
        doc.diagnostics.append(Diagnostic(doc.path, 1, 1, "error", f"YAML error: {exc}", "yaml-syntax"))
        return
    nodes = [n for n in nodes if n is not None]
    if not nodes:  # an empty file: data stays None; what that means is the caller's to say
        return
    if len(nodes) > 1:
        second = nodes[1].start_mark
        doc.diagnostics.append(Diagnostic(doc.path, second.line + 1, second.column + 1, "error",
                                          "a suite file holds one YAML document; remove the '---' separator or split the file",
                                          "multiple-documents"))
    if may_hold_surrogates(text):  # only libyaml's pure-Python fallback lets a surrogate escape through
        _replace_lone_surrogates(nodes[0])
    builder = _Builder(doc)
    doc.data = builder.build(nodes[0], ())


# libyaml's words for what is most often a line indented one step too far or not far enough
_INDENTATION_PROBLEMS = {"did not find expected key", "mapping values are not allowed in this context",
                         "mapping values are not allowed here", "did not find expected '-' indicator",
                         "could not find expected ':'"}


def _at_a_tab(text: str, line: int, column: int) -> bool:
    """Whether the YAML error points at a tab: where a token or the indentation was expected (a tab
    inside a value never stops the scanner), so the tab is what to change. The scanner points at the
    tab itself, for libyaml and for PyYAML's pure-Python scanner alike."""
    start = 0
    for _ in range(line - 1):
        start = text.find("\n", start) + 1
        if start == 0:
            return False
    return text[start + column - 1:start + column] == "\t"


def _indentation_hint(text: str, line: int) -> str:
    """'; check the indentation: ...' comparing the error's line with the nearest non-blank line above."""
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return ""
    here = lines[line - 1]
    above = next(((n, lines[n - 1]) for n in range(line - 1, 0, -1)
                  if lines[n - 1].strip() and not lines[n - 1].lstrip().startswith("#")), None)
    if above is None or not here.strip():
        return ""
    def indent(s: str) -> int:
        return len(s) - len(s.lstrip(" "))
    n, text_above = above
    if indent(here) == indent(text_above):
        return (f"; check the indentation of line {line} and line {n} above it (both start at column "
                f"{indent(here) + 1}): a key that belongs under line {n} must be indented further")
    return (f"; check the indentation: line {line} starts at column {indent(here) + 1}, line {n} above it at "
            f"column {indent(text_above) + 1} (keys of one mapping start in the same column, and what belongs "
            "under a key is indented further)")


def _replace_lone_surrogates(root: yaml.Node) -> None:
    """Replace lone surrogates in every scalar of the node tree (keys too) before values are built, so
    that data, positions and messages all hold the same printable text."""
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:  # aliases share nodes
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            node.value = without_lone_surrogates(node.value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.extend((key, value))


class _Builder:
    def __init__(self, doc: Document):
        self.doc = doc
        self.visited = 0

    def build(self, node: yaml.Node, location: Path_) -> Any:
        self.visited += 1
        if self.visited > _MAX_NODES:
            raise _TooLarge
        positions = self.doc.value_positions
        if location not in positions:  # merged mappings (`<<`) keep the explicit value's position
            positions[location] = _pos(node)
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, location)
        if isinstance(node, yaml.SequenceNode):
            self._check_tag(node, "seq", location)
            return [self.build(item, location + (i,)) for i, item in enumerate(node.value)]
        self._check_tag(node, "map", location)
        return self._mapping(node, location)

    def _mapping(self, node: yaml.MappingNode, location: Path_) -> dict[str, Any]:
        result: dict[str, Any] = {}
        first_seen: dict[str, Position] = {}
        merged: list[yaml.Node] = []
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag == _PLAIN and key_node.value == "<<":
                merged.append(value_node)
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                line, column = _pos(key_node)
                self.doc.diagnostics.append(Diagnostic(self.doc.path, line, column, "error",
                                                       "a key must be plain text, not a list or mapping", "complex-key"))
                continue
            key = key_node.value
            here = location + (key,)
            position = _pos(key_node)
            if key in first_seen:
                line, column = position
                first_line = first_seen[key][0]
                self.doc.diagnostics.append(Diagnostic(
                    self.doc.path, line, column, "error",
                    f"duplicate key '{key}' (first defined at line {first_line}); keep one of them",
                    "duplicate-key"))
                continue
            first_seen[key] = position
            self.doc.key_positions[here] = position
            result[key] = self.build(value_node, here)
        for source in merged:  # YAML merge keys (`<<: *defaults`): explicit keys win
            for item in source.value if isinstance(source, yaml.SequenceNode) else [source]:
                if not isinstance(item, yaml.MappingNode):
                    line, column = _pos(item)
                    self.doc.diagnostics.append(Diagnostic(self.doc.path, line, column, "error",
                                                           "'<<' must merge a mapping or a list of mappings", "bad-merge"))
                    continue
                for key, value in self._mapping(item, location).items():
                    result.setdefault(key, value)
        return result

    def _scalar(self, node: yaml.ScalarNode, location: Path_) -> Any:
        try:
            return self._resolve_scalar(node, location)
        except ValueError:  # an integer longer than Python converts (4,300 digits)
            self.doc.error(location, _LONG_NUMBER, "number-too-long")
            return node.value

    def _resolve_scalar(self, node: yaml.ScalarNode, location: Path_) -> Any:
        text = node.value
        if node.tag == _PLAIN:
            return _plain_scalar(text)
        kind = node.tag[len(_CORE):] if node.tag.startswith(_CORE) else None
        if kind == "str":
            return text
        if kind == "null" and _NULL.match(text):
            return None
        if kind == "bool" and text in _BOOL:
            return _BOOL[text]
        if kind in ("int", "float"):
            value = _plain_scalar(text)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return float(value) if kind == "float" else value
        self.doc.error(location, f"unsupported or invalid tag {node.tag!r} on value {text!r}; "
                                 "remove the tag or quote the value", "bad-tag")
        return text

    def _check_tag(self, node: yaml.Node, kind: str, location: Path_) -> None:
        if node.tag not in (_CORE + kind, None):
            self.doc.error(location, f"unsupported tag {node.tag!r}; remove it", "bad-tag")


class _TooLarge(Exception):
    pass


def reads_as_text(text: str) -> bool:
    """Whether `text`, written unquoted, reads back as this very text (not a number, boolean or null)."""
    try:
        return _plain_scalar(text) == text
    except ValueError:  # an integer too long to convert: not text either
        return False


def _plain_scalar(text: str) -> Any:
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


def _pos(node: yaml.Node) -> Position:
    return (node.start_mark.line + 1, node.start_mark.column + 1)
