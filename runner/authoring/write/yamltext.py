"""YAML text for values that evalrun's suite reader reads back exactly as they were.

PyYAML's emitter follows YAML 1.1 when it decides whether a string may be written plain, and evalrun's
reader (runner/suite/reader.py) resolves plain scalars by its own rules: `1e5` is a number to it but
text to PyYAML. So every string the reader would not read back as that same string is quoted here;
the rest is PyYAML's emitter, which already escapes what cannot be written raw.
"""
from __future__ import annotations

from typing import Any

import yaml

from ...suite.reader import _plain_scalar

_FLOW_WIDTH = 88  # a flow value longer than this is written as a block


class _Dumper(yaml.SafeDumper):
    """Plain scalars resolve as evalrun's reader resolves them, so the emitter quotes exactly the strings
    that reader would take for something else; nothing is ever an alias."""

    def resolve(self, kind, value, implicit):
        if kind is yaml.ScalarNode:
            if not implicit[0]:
                return _STR
            if value == "<<":
                return "tag:yaml.org,2002:merge"
            return _TAGS.get(type(_plain_scalar(value)), _STR)
        return super().resolve(kind, value, implicit)

    def ignore_aliases(self, data: Any) -> bool:
        return True


_STR = "tag:yaml.org,2002:str"
_TAGS = {type(None): "tag:yaml.org,2002:null", bool: "tag:yaml.org,2002:bool", int: "tag:yaml.org,2002:int",
         float: "tag:yaml.org,2002:float"}


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # Line breaks other than \n and characters that are not printable are written as escapes: the only
    # form in which every YAML reader keeps them as they were.
    escaped = (isinstance(dumper, _KeyDumper) and "\n" in value) or any(ch in "\x85\u2028\u2029\r" or (not ch.isprintable() and ch not in "\n\t") for ch in value)
    return dumper.represent_scalar(_STR, value, style='"' if escaped else None)


class _KeyDumper(_Dumper):
    """For keys, which must fit on one line: a multi-line string is written with `\\n` escapes."""


_Dumper.add_representer(str, _represent_str)
_KeyDumper.add_representer(str, _represent_str)


def _document(text: str) -> str:
    """PyYAML's text of one value without the document-end marker it adds after a lone scalar."""
    return text[:-len("...\n")] if text.endswith("\n...\n") else text


def flow(value: Any) -> str:
    """`value` on one line in flow style (`{a: 1, b: [x, y]}`), or with line breaks if a string needs them."""
    text = yaml.dump(value, Dumper=_Dumper, default_flow_style=True, allow_unicode=True, sort_keys=False,
                     width=1_000_000, explicit_end=False)
    return _document(text).rstrip("\n")


def key(name: str) -> str:
    """A mapping key on one line."""
    return _document(yaml.dump(name, Dumper=_KeyDumper, default_flow_style=True, allow_unicode=True,
                               width=1_000_000)).rstrip("\n")


def block(value: Any, indent: int) -> str:
    """`value` in block style, every line indented by `indent` spaces, ending with a newline."""
    text = yaml.dump(value, Dumper=_Dumper, default_flow_style=False, allow_unicode=True, sort_keys=False,
                     width=_FLOW_WIDTH, indent=2)
    text = _document(text)
    pad = " " * indent
    return "".join(pad + line if line.strip() else line for line in text.splitlines(keepends=True))


def entry(name: str, value: Any, indent: int, comment: str = "") -> str:
    """One `key: value` line (or a key and its indented block) at `indent`, with an end-of-line comment."""
    pad = " " * indent
    note = f"  # {one_line(comment)}" if comment else ""
    one = flow(value)
    if "\n" not in one and len(pad) + len(name) + len(one) + 2 <= _FLOW_WIDTH + 12:
        return f"{pad}{key(name)}: {one}{note}\n"
    if isinstance(value, (dict, list)) and value:
        return f"{pad}{key(name)}:{note}\n" + block(value, indent + 2)
    # a long or multi-line string: PyYAML folds it safely when it is the only thing on its lines
    folded = block(value, indent + 2)
    return f"{pad}{key(name)}:{note}\n{folded}"


def one_line(text: str) -> str:
    """A comment's text: one line, nothing that could end the comment or start a new line."""
    shown = "".join(ch if ch.isprintable() else f"\\u{ord(ch):04x}" for ch in str(text).replace("\n", " "))
    return " ".join(shown.split())
