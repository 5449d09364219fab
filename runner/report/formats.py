"""The report formats evalrun writes, by name: each module declares its own `FORMAT` (a ReportFormat)
next to its code, and this registry is built from them (one source of truth for `--format`, its help
and the default file names). A format's module is imported only when it is used."""
from __future__ import annotations

import importlib

from .base import ReportFormat

__all__ = ["ReportFormat", "get", "names"]

_MODULES = {"json": "json_report", "junit": "junit", "md": "markdown", "html": "html"}  # name -> module under runner.report


def names() -> tuple[str, ...]:
    return tuple(_MODULES)


def get(name: str) -> ReportFormat:
    if name not in _MODULES:
        raise KeyError(f"unknown report format '{name}' (known: {', '.join(_MODULES)})")
    fmt = importlib.import_module(f".{_MODULES[name]}", __package__).FORMAT
    assert fmt.name == name, f"runner.report.{_MODULES[name]} declares format '{fmt.name}', registered as '{name}'"
    return fmt
