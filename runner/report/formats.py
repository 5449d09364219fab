"""The report formats evalrun writes, by name: each module of runner.report that declares `FORMAT` (a
ReportFormat) next to its code adds one, and installed packages add theirs through `evalrun.formats` entry points
(runner.util.extensions). A format's module is imported only when it is used.

Building the command's parser names every format and the file it writes: importing every format module for that
costs 8 ms of each start of `evalrun`, and reading the plugins' metadata 20-60 ms. So evalrun's own formats are
listed in INDEX, which `discover()` rebuilds from the modules (tests/report/test_report_registry.py holds them equal:
`python -m runner.report.formats` prints it), and the plugins are looked for only when a name is not evalrun's."""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from typing import Any

from .base import ReportFormat

__all__ = ["INDEX", "ReportFormat", "builtin_names", "discover", "file_name", "get", "names"]

# (name, module under runner.report, default file name), in the order the help lists them; = discover()'s set
INDEX: tuple[tuple[str, str, str], ...] = (
    ("json", "json_report", "report.json"),
    ("junit", "junit", "junit.xml"),
    ("md", "markdown", "summary.md"),
    ("html", "html", "report.html"),
)
_MODULE = {name: module for name, module, _ in INDEX}
_FILE = {name: file for name, _, file in INDEX}


def discover() -> tuple[tuple[str, str, str], ...]:
    """INDEX as the modules say it, by name: every module of this package with a FORMAT (imports them all)."""
    found = []
    for info in pkgutil.iter_modules(importlib.import_module(__package__).__path__):
        if info.name.startswith("_") or info.name == "formats":
            continue
        fmt = getattr(importlib.import_module(f"{__package__}.{info.name}"), "FORMAT", None)
        if isinstance(fmt, ReportFormat):
            found.append((fmt.name, info.name, fmt.file_name))
    return tuple(sorted(found))


def builtin_names() -> tuple[str, ...]:
    return tuple(_MODULE)


def names() -> tuple[str, ...]:
    """Every format: evalrun's, then the plugins' (by the names their metadata declares, nothing imported)."""
    from ..util.extensions import names as plugin_names

    return builtin_names() + tuple(n for n in plugin_names("formats") if n not in _MODULE)


def file_name(name: str) -> str:
    """The default file name of format `name` in a run folder (evalrun's own: without importing the format)."""
    return _FILE[name] if name in _FILE else get(name).file_name


def get(name: str) -> ReportFormat:
    if name in _MODULE:
        fmt = importlib.import_module(f".{_MODULE[name]}", __package__).FORMAT
        assert fmt.name == name, f"runner.report.{_MODULE[name]} declares format '{fmt.name}', indexed as '{name}'"
        return fmt
    plugins = _plugins()
    if name not in plugins:
        raise KeyError(f"unknown report format '{name}' (known: {', '.join(builtin_names() + tuple(plugins))})")
    return plugins[name]


@lru_cache(maxsize=1)
def _plugins() -> dict[str, ReportFormat]:
    from ..util.extensions import load

    return {plugin.name: plugin.obj for plugin in load("formats", _MODULE, _plugin_checked)}


def _plugin_checked(name: str, obj: Any) -> ReportFormat:
    from ..util.extensions import PluginProblem, expect

    fmt = expect(obj, ReportFormat, "a runner.report.base.ReportFormat")
    if fmt.name != name:
        raise PluginProblem(f"its format is named '{fmt.name}', not '{name}': name the entry point as the format")
    if not callable(fmt.write):
        raise PluginProblem("its write must be a function (report data, text stream)")
    return fmt


def _reset() -> None:
    """Forget the plugins found (tests that install one in-process)."""
    _plugins.cache_clear()


if __name__ == "__main__":
    print("INDEX: tuple[tuple[str, str, str], ...] = (")
    for entry in discover():
        print(f"    {entry!r},")
    print(")")
