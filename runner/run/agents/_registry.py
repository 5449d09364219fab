"""The agent kinds, found as the modules of this package: each has KIND (and maybe ALIASES), Options and create()."""
from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import Annotated, Any, Union

from pydantic import Field

from ._base import Agent, AgentEnv

_PACKAGE = __name__.rpartition(".")[0]


def _discover() -> dict[str, ModuleType]:
    found: dict[str, ModuleType] = {}
    for info in sorted(pkgutil.iter_modules(importlib.import_module(_PACKAGE).__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{_PACKAGE}.{info.name}")
        kind = getattr(module, "KIND", None)
        if kind is not None:
            found[kind] = module
            for alias in getattr(module, "ALIASES", ()):  # another name for the same kind (`10xgraph`)
                found[alias] = module
    return found


_KIND_MODULES = _discover()
KINDS: tuple[str, ...] = tuple(_KIND_MODULES)

# The `agents:` entries of evalrun.yaml: `type` says which kind's options apply.
AgentDefinition = Annotated[Union[tuple(m.Options for m in _KIND_MODULES.values())],  # type: ignore[misc]
                            Field(discriminator="type")]


def kind_module(kind: str) -> ModuleType:
    return _KIND_MODULES[kind]


def create_agent(name: str, definition: Any, env: AgentEnv) -> Agent:
    """A fresh agent (for one conversation) from its evalrun.yaml definition."""
    return _KIND_MODULES[definition.type].create(name, definition, env)
