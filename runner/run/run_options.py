"""The options the interpreter (runner.run.execute) plays a run's cases with."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

DEFAULT_CONCURRENCY = 8


@dataclass
class RunOptions:
    replay_dir: Optional[Path] = None
    concurrency: int = DEFAULT_CONCURRENCY
    agent: Optional[str] = None  # --agent: play every live case with this agent
    conversations_dir: Optional[Path] = None  # rescore: a saved run's conversations stand in for live play
    profile: Optional[str] = None  # --profile: evalrun.yaml's `profiles:` entry that selects the checks to run
    quick: bool = False  # evalrun quick: the referenceless checks instead of the case's goals and checks
    eval_config: Optional[Path] = None  # --eval-config: the ADK/Agentflow eval config for every eval set
