"""The report formats evalrun writes, by name: each module declares its own `FORMAT` (a ReportFormat)
next to its code, and this registry is built from them (one source of truth for `--format`, its help
and the default file names). A format's module is imported only when it is used."""
from __future__ import annotations

import importlib

from .base import ReportFormat

__all__ = ["ReportFormat", "file_name", "get", "names"]

_MODULES = {"json": "json_report", "junit": "junit", "md": "markdown", "html": "html"}  # name -> module under runner.report
# name -> its default file name, for the command's help: building the parser must not import every format's
# module (8 ms of each start of `evalrun`); `get` checks that the module declares the same name
_FILE_NAMES = {"json": "report.json", "junit": "junit.xml", "md": "summary.md", "html": "report.html"}


def names() -> tuple[str, ...]:
    return tuple(_MODULES)


def file_name(name: str) -> str:
    """The default file name of format `name` in a run folder, without importing the format."""
    return _FILE_NAMES[name]


def get(name: str) -> ReportFormat:
    if name not in _MODULES:
        raise KeyError(f"unknown report format '{name}' (known: {', '.join(_MODULES)})")
    fmt = importlib.import_module(f".{_MODULES[name]}", __package__).FORMAT
    assert fmt.name == name, f"runner.report.{_MODULES[name]} declares format '{fmt.name}', registered as '{name}'"
    assert fmt.file_name == _FILE_NAMES[name], \
        f"runner.report.{_MODULES[name]} writes '{fmt.file_name}', registered as '{_FILE_NAMES[name]}'"
    return fmt
