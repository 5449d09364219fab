"""Which tools the agent of a case was given, for `valid_tool_calls`.

A model agent is sent its own `tools:` (or `tools_file`): those are its tools, whatever the case says.
Every other agent is a black box to evalrun, so the case says (`tools:` on the case or as its file's
default), else the agent's `tools:` in evalrun.yaml. A recording with no agent to name uses the case's.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from runner.suite.models import Case
from runner.suite.tool_specs import ToolSet, read_tools

from .agent_choice import AgentNotFound, agent_name_for

if TYPE_CHECKING:
    from runner.config.load import LoadedConfig


def tools_for(case: Case, loaded: LoadedConfig, override: str | None = None) -> ToolSet | None:
    """The case's agent's tools, or None when nothing declares any."""
    try:
        name = agent_name_for(case, loaded.config, override)
    except AgentNotFound:
        name = None  # a recording scored without an agent
    definition = loaded.config.agents.get(name) if name is not None else None
    if name is not None and definition is not None and definition.type == "model":
        return _model_tools(name, definition, loaded)
    if case.tools is not None:
        return read_tools(case.tools, f"case '{case.id}'")
    agent_tools = getattr(definition, "tools", None)
    if agent_tools is not None:
        return read_tools(agent_tools, f"agent '{name}' (evalrun.yaml)")
    return None


class ToolsOfAgents:
    """`tools_for` over a run's cases, each agent's tools read (and their schemas checked) once: they depend on
    the case only when the case declares its own `tools:` for an agent that is not a model."""

    def __init__(self, loaded: LoadedConfig, override: str | None = None):
        self.loaded = loaded
        self.override = override
        self._by_agent: dict[str | None, ToolSet | None] = {}

    def __call__(self, case: Case) -> ToolSet | None:
        try:
            name: str | None = agent_name_for(case, self.loaded.config, self.override)
        except AgentNotFound:
            name = None
        definition = self.loaded.config.agents.get(name) if name is not None else None
        if case.tools is not None and not (definition is not None and definition.type == "model"):
            return tools_for(case, self.loaded, self.override)
        if name not in self._by_agent:
            self._by_agent[name] = tools_for(case, self.loaded, self.override)
        return self._by_agent[name]


def _model_tools(name: str, definition, loaded: LoadedConfig) -> ToolSet:
    source = f"model agent '{name}'"
    if definition.tools_file is None:
        return read_tools(list(definition.tools), source)
    path = loaded.base_dir / definition.tools_file
    try:
        definitions = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return ToolSet(specs=[], source=source, problems=[((), f"tools_file {definition.tools_file}: cannot read it: "
                                                               f"{getattr(exc, 'strerror', None) or exc}")])
    return read_tools(definitions, f"{source} ({definition.tools_file})")
