"""The report formats evalrun writes, by name: each module declares its own `FORMAT` next to its code,
and this registry is built from them (one source of truth for `--format`, its help and file names)."""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, TextIO

# Built-in formats: name -> module under runner.report. Imported only when a format is used.
_MODULES = {"junit": "junit", "md": "markdown", "html": "html"}


@dataclass(frozen=True)
class ReportFormat:
    name: str
    description: str
    file_name: str  # the default file name inside a run folder
    write: Callable[[dict[str, Any], TextIO], None]  # (the report as plain data, a text stream)


def names() -> tuple[str, ...]:
    return tuple(_MODULES)


def get(name: str) -> ReportFormat:
    if name not in _MODULES:
        raise KeyError(f"unknown report format '{name}' (known: {', '.join(_MODULES)})")
    fmt = importlib.import_module(f".{_MODULES[name]}", __package__).FORMAT
    assert fmt.name == name, f"runner.report.{_MODULES[name]} declares format '{fmt.name}', registered as '{name}'"
    return fmt
