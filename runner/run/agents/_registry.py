"""The agent kinds: evalrun's own are the modules of this package (each has KIND, maybe ALIASES, Options and
create()); installed packages add kinds through `evalrun.agents` entry points (runner.util.extensions), looked for only
when an `agents:` entry names a kind that is not evalrun's own (reading their metadata costs 20-60 ms)."""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING, Annotated, Any, Union

from pydantic import Field, WrapValidator

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


@lru_cache(maxsize=1)
def _plugin_kinds() -> dict[str, Any]:
    from ...util.extensions import load

    return {plugin.name: plugin.obj for plugin in load("agents", KINDS, _plugin_checked)}


def agent_kinds() -> tuple[str, ...]:
    """Every agent kind: evalrun's, then the installed plugins' (whose modules are imported)."""
    return KINDS + tuple(_plugin_kinds())


def _plugin_checked(name: str, obj: Any) -> Any:
    """A plugin's kind: an object (a module, usually) with KIND (the entry point's name), Options (a pydantic
    model whose `type` is that name) and create(name, definition, env)."""
    from ...util.extensions import PluginProblem

    missing = [attr for attr in ("KIND", "Options", "create") if not hasattr(obj, attr)]
    if missing:
        raise PluginProblem(f"it has no {', '.join(missing)} (an agent kind is a module with KIND, Options and "
                            "create(name, definition, env), as runner/run/agents/*.py)")
    if name != obj.KIND:
        raise PluginProblem(f"its KIND is '{obj.KIND}', not '{name}': name the entry point as the kind")
    if not callable(getattr(obj.Options, "model_validate", None)) or not callable(obj.create):
        raise PluginProblem("its Options must be a pydantic model and its create a function")
    return obj


def _plugin_definition(value: Any, handler: Any) -> Any:
    """An `agents:` entry of a plugin's kind is read by that kind's Options; every other by evalrun's own."""
    kind = value.get("type") if isinstance(value, dict) else None
    if isinstance(kind, str) and kind not in _KIND_MODULES and kind in _plugin_kinds():
        return _plugin_kinds()[kind].Options.model_validate(value)
    return handler(value)


# The `agents:` entries of evalrun.yaml: `type` says which kind's options apply.
if TYPE_CHECKING:  # one kind's Options model, evalrun's or a plugin's: which is known at run time only
    AgentDefinition = Any
else:
    AgentDefinition = Annotated[Union[tuple(m.Options for m in _KIND_MODULES.values())],  # noqa: UP007 - built at run time: no `|` spelling
                                Field(discriminator="type"), WrapValidator(_plugin_definition)]


def kind_module(kind: str) -> ModuleType:
    return _KIND_MODULES[kind] if kind in _KIND_MODULES else _plugin_kinds()[kind]


def create_agent(name: str, definition: Any, env: AgentEnv) -> Agent:
    """A fresh agent (for one conversation) from its evalrun.yaml definition."""
    return kind_module(definition.type).create(name, definition, env)


def _reset() -> None:
    """Forget the plugins found (tests that install one in-process)."""
    _plugin_kinds.cache_clear()
