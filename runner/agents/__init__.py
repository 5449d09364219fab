"""Agent targets: what evalrun talks to in a live run. One module per kind, found by this registry.

A kind is a module in this package (not starting with `_`) that defines
  KIND     its name, the value of `type:` in evalrun.yaml;
  Options  a pydantic model of its settings, with `type: Literal[KIND]` (titles, descriptions and
           examples on every field: they become the editor's hover help in config.schema.json);
  create(name, options, env) -> Agent   a fresh agent for one conversation.
Adding a kind is adding a module. Modules import nothing heavy at the top: the config loads them all.
"""
from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import Annotated, Any, Union

from pydantic import Field

from ._base import Agent, AgentEnv, AgentError, AgentStop, TurnContext, parse_reply
from ._names import AgentNotFound, agent_for, agent_name_for, check_agent_names, check_agent_override

__all__ = ["Agent", "AgentEnv", "AgentError", "AgentNotFound", "AgentStop", "TurnContext", "AgentDefinition", "KINDS",
           "agent_for", "agent_name_for", "check_agent_names", "check_agent_override", "create_agent", "kind_module",
           "parse_reply"]


def _discover() -> dict[str, ModuleType]:
    found: dict[str, ModuleType] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        kind = getattr(module, "KIND", None)
        if kind is not None:
            found[kind] = module
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
