"""Cases and agents for the agents/conversation tests, built the way the loader builds them."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from runner.config.model import Config
from runner.run.agents._base import AgentEnv
from runner.run.agents._registry import create_agent
from runner.run.conversation import Conversation, converse
from runner.run.simulate import ScriptedUser
from runner.suite.models import Case


def make_case(**fields: Any) -> Case:
    fields.setdefault("id", "c1")
    fields.setdefault("source", {"path": "suites/c1.yaml", "line": 3, "column": 5})
    return Case.model_validate(fields)


def make_agent(definition: dict, base_dir: Path = Path("."), **env: Any):
    config = Config.model_validate({"agents": {"target": definition}})
    return create_agent("target", config.agents["target"], AgentEnv(base_dir=base_dir, **env))


def talk(case: Case, agent, user=None, **options: Any) -> Conversation:
    return asyncio.run(converse(case, agent, user or ScriptedUser(case), **options))
