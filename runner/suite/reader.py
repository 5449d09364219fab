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

Beside it: scalars (the value rules), read_limits (how deep and large a file may be), yaml_errors
(libyaml's syntax errors in plain words), surrogates (lone surrogates made printable).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..util.diagnostics import Diagnostic, Position
from ..util.files import SUITE_SIZE_LIMIT, InputFileError, not_utf8, read_bytes
from ..util.jsontext import may_hold_surrogates, replace_lone_surrogates, without_lone_surrogates
from ..util.read_limits import (
    LONG_NUMBER,
    MAX_NODES,
    json_limits,
    long_number_position,
    too_deep_json,
    too_deep_problem,
    yaml_past_limits,
)
from .scalars import plain_scalar as _plain_scalar, tagged_scalar
from .surrogates import replace_lone_surrogates_in_nodes, yaml_surrogate_escapes
from .yaml_errors import syntax_error

Path_ = tuple  # a location inside the document: keys and list indexes

_PLAIN = "tag:evalrun:plain"
_CORE = "tag:yaml.org,2002:"

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Marks every plain (unquoted) scalar so that `_build` resolves it with the rules above."""

    def resolve(self, kind, value, implicit):
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

    pending_positions: str | None = None  # JSON text whose positions are computed on first need
    fingerprint: bytes | None = None  # of the bytes read (`fingerprint`), to know them again unparsed

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
        assert text is not None  # called only while positions are pending
        if may_hold_surrogates(text):
            text = yaml_surrogate_escapes(text)
        scratch = Document(self.path)
        _parse_yaml(text, scratch)  # the data is already known; only the positions are kept
        self.value_positions, self.key_positions = scratch.value_positions, scratch.key_positions

    def error(self, location: Path_, message: str, code: str, *, key: bool = False, severity: str = "error") -> None:
        line, column = self.position(location, key=key)
        self.diagnostics.append(Diagnostic(self.path, line, column, severity, message, code))  # type: ignore[arg-type]


def read_document(path: Path, display_path: str | None = None, *, limit: int = SUITE_SIZE_LIMIT,
                  what: str = "suites and configs", raw: bytes | None = None) -> Document:
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
        line, column = long_number_position(text)
        doc.diagnostics.append(Diagnostic(doc.path, line, column, "error", LONG_NUMBER, "number-too-long"))
        return
    except _DuplicateKey as duplicate:
        yaml_text = text.replace("\t", " ")
        if may_hold_surrogates(yaml_text):
            yaml_text = yaml_surrogate_escapes(yaml_text)
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


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        raise _DuplicateKey(next(k for k, _ in pairs if k in seen or seen.add(k)))  # type: ignore[func-returns-value]  # add's None: go on
    return obj


def _parse_yaml(text: str, doc: Document) -> None:
    try:
        _compose_yaml(text, doc)
    except _TooLarge:
        doc.data = None
        doc.error((), f"the file expands to more than {MAX_NODES} values (too many aliases?)", "too-large")
    except RecursionError:
        doc.data = None
        doc.error((), "the file is nested too deeply (or an alias refers to itself)", "too-deep")


def _compose_yaml(text: str, doc: Document) -> None:
    past = yaml_past_limits(text)
    if past is not None:
        (line, column), message, code = past
        doc.diagnostics.append(Diagnostic(doc.path, line, column, "error", message, code))
        return
    try:
        nodes = list(yaml.compose_all(text, Loader=_Loader))
    except yaml.MarkedYAMLError as exc:
        line, column, message = syntax_error(text, exc)
        doc.diagnostics.append(Diagnostic(doc.path, line, column, "error", message, "yaml-syntax"))
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
        replace_lone_surrogates_in_nodes(nodes[0])
    builder = _Builder(doc)
    doc.data = builder.build(nodes[0], ())


class _Builder:
    def __init__(self, doc: Document):
        self.doc = doc
        self.visited = 0

    def build(self, node: yaml.Node, location: Path_) -> Any:
        self.visited += 1
        if self.visited > MAX_NODES:
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
        return self._mapping(node, location)  # type: ignore[arg-type]  # the composer makes no other node kind

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
            self.doc.error(location, LONG_NUMBER, "number-too-long")
            return node.value

    def _resolve_scalar(self, node: yaml.ScalarNode, location: Path_) -> Any:
        text = node.value
        if node.tag == _PLAIN:
            return _plain_scalar(text)
        kind = node.tag[len(_CORE):] if node.tag.startswith(_CORE) else None
        fits, value = tagged_scalar(kind, text)
        if fits:
            return value
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


def _pos(node: yaml.Node) -> Position:
    return (node.start_mark.line + 1, node.start_mark.column + 1)
