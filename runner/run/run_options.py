"""The options the interpreter (runner.run.execute) plays a run's cases with."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DEFAULT_CONCURRENCY = 8


@dataclass
class RunOptions:
    replay_dir: Path | None = None
    concurrency: int = DEFAULT_CONCURRENCY
    agent: str | None = None  # --agent: play every live case with this agent
    conversations_dir: Path | None = None  # rescore: a saved run's conversations stand in for live play
    profile: str | None = None  # --profile: evalrun.yaml's `profiles:` entry that selects the checks to run
    quick: bool = False  # evalrun quick: the referenceless checks instead of the case's goals and checks
    eval_config: Path | None = None  # --eval-config: the ADK/Agentflow eval config for every eval set
