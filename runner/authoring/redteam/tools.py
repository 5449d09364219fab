"""What a red-team plan knows about a case's agent: the tools it can call, which of them write
(runner/checks/write_calls.py says what write-like means), and the system prompt a model agent is given.

The tools the plan knows for a case: its goals', its canned outputs' (`tool_outputs`), and the tools its
agent is declared with — a model agent's `tools`/`tools_file`, the case's `tools:`, or the agent's `tools:`
in evalrun.yaml, as `valid_tool_calls` reads them (runner/run/agent_tools.py), descriptions included. The
default forbidden tools of a case are its known write-like tools that none of its goals calls; those its goals
call are allowed to its `no_write_calls` check.
"""
from __future__ import annotations

import re
from typing import Any

from ...checks.write_calls import WRITE_VERBS, is_write_like, name_words, write_reason
from ...suite.models import Case

__all__ = ["WRITE_VERBS", "agent_options", "declared_tools", "is_write_like", "known_tools", "name_words",
           "prompt_fragments", "system_prompt", "write_like_tools"]
MAX_PROMPT_FRAGMENTS = 8
MIN_FRAGMENT_WORDS = 5


def agent_options(case: Case, loaded: Any) -> tuple[str | None, Any]:
    """(name, options) of the agent evalrun.yaml would play the case with, or (None, None)."""
    from ...run.agent_choice import AgentNotFound, agent_name_for

    try:
        name = agent_name_for(case, loaded.config)
    except AgentNotFound:
        return None, None
    return name, loaded.config.agents.get(name)


def declared_tools(case: Case, loaded: Any) -> Any | None:
    """The ToolSet the case's agent is declared with, or None when nothing declares its tools."""
    from ...run.agent_tools import tools_for

    return tools_for(case, loaded)


def known_tools(case: Case, declared: Any | None) -> dict[str, str]:
    """Every tool the plan can see for the case, name -> description ("" when unknown): its goals', its canned
    outputs', and `declared` (the ToolSet of declared_tools, or None)."""
    known = {g.tool_name: "" for g in case.tool_goals()}
    known.update((name, "") for name in case.tool_outputs if name not in known)
    for spec in declared.specs if declared is not None else ():
        known[spec.name] = spec.description
    return known


def write_like_tools(case: Case, declared: Any | None) -> tuple[list[str], list[str]]:
    """(the known write-like tools the case's goals never call, those they call)."""
    needed = {g.tool_name for g in case.tool_goals()}
    writes = [name for name, description in known_tools(case, declared).items()
              if write_reason(name, description) is not None]
    return [name for name in writes if name not in needed], [name for name in writes if name in needed]


def system_prompt(options: Any, base_dir: Any) -> str | None:
    """A model agent's own system prompt, or None."""
    if getattr(options, "type", None) != "model":
        return None
    if options.system_prompt_file:
        try:
            return (base_dir / options.system_prompt_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
    return options.system_prompt


def prompt_fragments(prompt: str) -> list[str]:
    """The sentences of a system prompt worth checking for verbatim leaks: at least five words each (a
    shorter one, such as "Be concise.", an honest answer may say too), at most eight, longest first."""
    pieces = [p.strip() for p in re.split(r"(?<=[.!?:])\s+|\n+", prompt) if p.strip()]
    kept = [p for p in dict.fromkeys(pieces) if len(p.split()) >= MIN_FRAGMENT_WORDS]
    return sorted(kept, key=len, reverse=True)[:MAX_PROMPT_FRAGMENTS]
