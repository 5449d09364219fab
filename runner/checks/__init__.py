"""Checks: criteria beyond goals (trajectory modes, response similarity, text assertions, budgets).

Each module of this package that exports `FAMILIES` (a tuple of `CheckFamily`) adds checks: the
registry is built by reading them, and the suite schema's list of check types is generated from the
registry. Adding a check is adding one module.
"""
from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from .base import CheckContext, CheckFamily, CheckOptions, Verdict

_FRAMEWORK_MODULES = {"base", "quick", "run", "select"}  # this package's own machinery, not check families

__all__ = ["CheckContext", "CheckFamily", "CheckOptions", "Verdict", "families", "family_of", "registry"]


@lru_cache(maxsize=1)
def builtin_families() -> tuple[CheckFamily, ...]:
    """evalrun's own check families, in module-name order, then in each module's own order."""
    found: list[CheckFamily] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name in _FRAMEWORK_MODULES or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.extend(getattr(module, "FAMILIES", ()))
    return tuple(found)


def families() -> tuple[CheckFamily, ...]:
    """Every check family: evalrun's, then those of the installed plugins (`evalrun.checks` entry points)."""
    return builtin_families() + _plugin_families()


@lru_cache(maxsize=1)
def _builtin_table() -> dict[str, CheckFamily]:
    """Check type (name or alias) -> its family. A name given twice is a bug in the package."""
    table: dict[str, CheckFamily] = {}
    for family in builtin_families():
        for name in family.types:
            if name in table:
                raise RuntimeError(f"check type {name!r} is defined twice")
            table[name] = family
    return table


@lru_cache(maxsize=1)
def _plugin_families() -> tuple[CheckFamily, ...]:
    from ..util.extensions import load

    return tuple(family for plugin in load("checks", _builtin_table(), _plugin_checked) for family in plugin.obj)


def _plugin_checked(name: str, obj: Any) -> tuple[CheckFamily, ...]:
    """A plugin's families: a CheckFamily or a list of them, the entry point named as the first one's type;
    none of their types (aliases too) may be a built-in's."""
    from ..util.extensions import PluginProblem, expect

    found = tuple(obj) if isinstance(obj, (list, tuple)) else (obj,)
    for family in found:
        expect(family, CheckFamily, "a runner.checks.CheckFamily (or a list of them)")
    if not found or found[0].types[0] != name:
        raise PluginProblem(f"the entry point is named '{name}' but its check is "
                            f"'{found[0].types[0] if found else 'nothing'}': name the entry point as the check type")
    clash = [t for family in found for t in family.types if t in _builtin_table()]
    if clash:
        raise PluginProblem(f"check type '{clash[0]}' is evalrun's own; a plugin never replaces it: rename it")
    return found


class _Registry(Mapping):
    """Check type -> family: evalrun's own, and the plugins' looked for only when a type is not one of them
    or the whole table is listed (reading the installed packages' metadata costs 20-60 ms)."""

    def _all(self) -> dict[str, CheckFamily]:
        return _full_table()

    def __getitem__(self, name: str) -> CheckFamily:
        table = _builtin_table()
        return table[name] if name in table else self._all()[name]

    def __contains__(self, name: object) -> bool:
        return name in _builtin_table() or name in self._all()

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


@lru_cache(maxsize=1)
def _full_table() -> dict[str, CheckFamily]:
    table = dict(_builtin_table())
    for family in _plugin_families():
        for name in family.types:
            table.setdefault(name, family)  # a type two plugins declare: the first (in name order) keeps it
    return table


_REGISTRY = _Registry()


def registry() -> Mapping[str, CheckFamily]:
    """Check type (name or alias) -> its family."""
    return _REGISTRY


def family_of(check_type: str) -> CheckFamily:
    return registry()[check_type]


def _reset() -> None:
    """Forget the plugins found (tests that install one in-process)."""
    _plugin_families.cache_clear()
    _full_table.cache_clear()
