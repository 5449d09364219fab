"""Checks: criteria beyond goals (trajectory modes, response similarity, text assertions, budgets).

Each module of this package that exports `FAMILIES` (a tuple of `CheckFamily`) adds checks: the
registry is built by reading them, and the suite schema's list of check types is generated from the
registry. Adding a check is adding one module.
"""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from .base import CheckContext, CheckFamily, CheckOptions, Verdict

_FRAMEWORK_MODULES = {"base", "quick", "run", "select"}  # this package's own machinery, not check families

__all__ = ["CheckContext", "CheckFamily", "CheckOptions", "Verdict", "registry", "families", "family_of"]


@lru_cache(maxsize=1)
def families() -> tuple[CheckFamily, ...]:
    """Every check family, in module-name order, then in each module's own order."""
    found: list[CheckFamily] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name in _FRAMEWORK_MODULES or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.extend(getattr(module, "FAMILIES", ()))
    return tuple(found)


@lru_cache(maxsize=1)
def registry() -> dict[str, CheckFamily]:
    """Check type (name or alias) -> its family. A name given twice is a bug in the package."""
    table: dict[str, CheckFamily] = {}
    for family in families():
        for name in family.types:
            if name in table:
                raise RuntimeError(f"check type {name!r} is defined twice")
            table[name] = family
    return table


def family_of(check_type: str) -> CheckFamily:
    return registry()[check_type]
