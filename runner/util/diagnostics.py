"""Diagnostics in the shape compilers print: `path:line:col: error: message`.

YAML syntax, schema and semantic problems all become `Diagnostic`s, so a user sees every problem of a
file at once, sorted by position, in one format.
"""
from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from .secrets import clip, redact

Severity = Literal["error", "warning"]


@dataclass(frozen=True, order=True)
class Diagnostic:
    path: str
    line: int
    column: int
    severity: Severity = field(compare=False)
    message: str = field(compare=False)
    code: str = field(default="", compare=False)  # a short stable name for tools: "unknown-key", "yaml-syntax", ...

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.severity}: {self.message}"

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line, "column": self.column, "severity": self.severity,
                "code": self.code, "message": self.message}


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """` (did you mean 'x'?)` when a close choice exists, else ''."""
    options = [c for c in choices if isinstance(c, str)]
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in options}
        if word.lower() in lowered:
            close = [lowered[word.lower()]]
    return f" (did you mean '{close[0]}'?)" if close else ""


def sort_diagnostics(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Sorted by file and position; exact duplicates (same place, same message) dropped."""
    seen: set[tuple] = set()
    unique: list[Diagnostic] = []
    for d in sorted(diagnostics, key=lambda d: (d.path, d.line, d.column, d.severity != "error", d.message)):
        key = (d.path, d.line, d.column, d.message)
        if key not in seen:
            seen.add(key)
            unique.append(d)
    return unique


def has_errors(diagnostics: Iterable[Diagnostic]) -> bool:
    return any(d.severity == "error" for d in diagnostics)


def quote(value: object, limit: int = 60) -> str:
    """A value as it appears in a message: strings quoted, long values cut."""
    text = repr(redact(value)) if isinstance(value, str) else _json_text(value)
    return clip(text, limit, "...")


def _json_text(value: object) -> str:
    import json

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def format_path(path: Iterable[object]) -> str:
    """goal_details[1].args.username — how a location inside a file is named in messages."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + str(part)
    return text or "the file"


Position = tuple[int, int]
