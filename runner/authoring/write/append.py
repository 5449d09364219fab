"""Drafts added as new cases of an existing suite file, keeping what was there.

A file with `cases:` gets the drafts as new items at the end of that list: the file's bytes are kept
and the new text is inserted after its last case. A single-case file becomes a file with `cases:`: its
case becomes the first item, every line of it (comments included) kept as it was, only indented to sit
under `cases:`; the comments and markers above its first key stay at the top. A case that had no `id`
is given the id it had (the file name), so its results keep their name.

The caller reads the written file back and undoes the write if a case it held loads differently.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

import yaml

from ..record.draft import DraftCase
from ..record.draft_text import case_text, list_item
from .yamltext import entry


class AppendError(Exception):
    """The file's shape does not allow adding cases without rewriting what is there."""


_PREAMBLE = re.compile(r"^(?:\s*(?:#.*)?|---\s*(?:#.*)?|%.*)$")  # blank, comment, `---` or a directive


def append_cases(text: str, drafts: Sequence[DraftCase], stem: str) -> str:
    """`text` (a suite file) with `drafts` added as new cases."""
    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise AppendError(f"cannot read it as one YAML document: {str(exc).splitlines()[0]}") from None
    if not isinstance(root, yaml.MappingNode) or root.flow_style:
        raise AppendError("cases can only be added to a suite written as a block mapping (`key: value` lines)")
    keys = {k.value: v for k, v in root.value if isinstance(k, yaml.ScalarNode)}
    if "cases" in keys:
        return _add_to_list(text, keys["cases"], drafts)
    if "$schema" in keys:
        raise AppendError("a single-case file with a `$schema` key cannot take more cases as it is; move the schema "
                          "to a `# yaml-language-server: $schema=...` comment, or add `cases:` yourself")
    return _make_list(text, drafts, None if "id" in keys else stem)


def _new_items(drafts: Sequence[DraftCase], indent: int) -> str:
    return "".join("\n" + list_item(case_text(draft), indent) for draft in drafts)


def _add_to_list(text: str, cases: yaml.Node, drafts: Sequence[DraftCase]) -> str:
    if not isinstance(cases, yaml.SequenceNode) or cases.flow_style or not cases.value:
        raise AppendError("`cases:` is not a list written one item per `- ` line; cases cannot be added to it")
    indent = cases.start_mark.column
    last = cases.value[-1]
    # Insert after the last line that belongs to the last case: comments and blank lines after it belong
    # to what follows (or to nothing), so they stay where they are.
    lines = text.splitlines(keepends=True)
    end_line = last.end_mark.line if last.end_mark.column > 0 else last.end_mark.line - 1
    end_line = min(end_line, len(lines) - 1)
    while end_line > last.start_mark.line and _PREAMBLE.match(lines[end_line].rstrip("\r\n")):
        end_line -= 1
    offset = sum(len(line) for line in lines[:end_line + 1])
    before = text[:offset]
    if not before.endswith("\n"):
        before += "\n"
    return before + _new_items(drafts, indent) + text[offset:]


def _make_list(text: str, drafts: Sequence[DraftCase], missing_id: str | None) -> str:
    lines = text.splitlines(keepends=True)
    first = next((i for i, line in enumerate(lines) if not _PREAMBLE.match(line.rstrip("\r\n"))), None)
    if first is None:
        raise AppendError("the file holds no case")
    if any(line.rstrip() == "..." or line.startswith("---") for line in lines[first:]):
        raise AppendError("the file holds more than its case (a `---` or `...` marker); cases cannot be added to it")
    body = []
    if missing_id is not None:
        body.append("  - " + entry("id", missing_id, 0))
    for i, line in enumerate(lines[first:]):
        if not line.strip("\r\n"):
            body.append(line)
        elif i == 0 and missing_id is None:
            body.append("  - " + line)
        else:
            body.append("    " + line)
    if body and not body[-1].endswith("\n"):
        body[-1] += "\n"
    return "".join(lines[:first]) + "cases:\n" + "".join(body) + _new_items(drafts, 2)
