"""Agent targets: what evalrun talks to in a live run. One module per kind, found by this registry.

A kind is a module in this package (not starting with `_`) that defines
  KIND     its name, the value of `type:` in evalrun.yaml;
  Options  a pydantic model of its settings, with `type: Literal[KIND]` (titles, descriptions and
           examples on every field: they become the editor's hover help in config.schema.json);
  create(name, options, env) -> Agent   a fresh agent for one conversation.
Adding a kind is adding a module. Modules import nothing heavy at the top: the config loads them all.
Which agent plays a case is runner.run.agent_choice's concern (it reads the config; this package does not).
"""
from __future__ import annotations

from ._base import Agent, AgentEnv, AgentError, AgentStop, TurnContext, parse_reply
from ._registry import KINDS, AgentDefinition, create_agent, kind_module

__all__ = [
           "KINDS",
           "Agent",
           "AgentDefinition",
           "AgentEnv",
           "AgentError",
           "AgentStop",
           "TurnContext",
           "create_agent",
           "kind_module",
           "parse_reply",
]
