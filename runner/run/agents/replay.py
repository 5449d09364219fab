"""`type: replay` — no live agent: the conversation is a recording, scored as it is.

With `dir`, the recording of case X is `<dir>/X.json` (like `--replay DIR`); without it, the case's
own `transcript:`. Cases with a `transcript:` are replayed whatever agent they name; this kind lets
`agents:` declare a name (a watsonx dataset's agent, say) whose cases are all read from a folder.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from runner.suite.models import Case

from ._base import Agent, AgentEnv, AgentError, TurnContext, tools_field

KIND = "replay"


class ReplayAgentOptions(BaseModel):
    model_config = ConfigDict(
        extra="forbid", title="Replayed agent",
        json_schema_extra={"description": "Recorded conversations instead of a live agent.",
                           "examples": [{"type": "replay", "dir": "recordings/2025-06-01"}]})

    type: Literal["replay"] = Field(title="Kind", description="`replay`: score recordings.", examples=["replay"])
    tools: list[dict[str, Any]] | None = tools_field()
    dir: str | None = Field(
        None, title="Recordings folder",
        description="A folder (relative to evalrun.yaml) holding `<case id>.json` for each case. Default: each "
        "case's own `transcript:`.", examples=["recordings"])


class ReplayAgent(Agent):
    kind = KIND
    replays = True

    def __init__(self, name: str, options: ReplayAgentOptions, env: AgentEnv):
        self.name = name
        self.options = options
        self.base_dir = Path(env.base_dir)

    def transcript_path(self, case: Case) -> Path | str:
        if self.options.dir is not None:
            return self.base_dir / self.options.dir / f"{case.id}.json"
        if case.transcript:  # as text: a Path would fold the `//` of a `FILE#ID`'s id
            return os.path.join(os.path.dirname(os.fspath(case.source.path)), case.transcript)
        raise AgentError(f"agent '{self.name}' replays recordings, but the case has no `transcript:` and the agent "
                         "no `dir`")

    async def turn(self, messages: list[dict], ctx: TurnContext) -> list[dict]:
        raise AgentError(f"agent '{self.name}' replays recordings; it cannot answer live turns")


Options = ReplayAgentOptions  # the registry reads each kind's Options


def create(name: str, options: ReplayAgentOptions, env: AgentEnv) -> ReplayAgent:
    return ReplayAgent(name, options, env)
