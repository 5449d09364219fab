"""The state of the world after a conversation, as the agent (or a recording) reported it.

A case's `final_state:` is compared with it (runner/checks/final_state.py). Where it comes from is the
agent kind's business (runner/run/agents): a python agent's `state(context)`, an http agent's
`state_url`, a command agent's `state_file`, a model agent's played tools, a transcript's `state`
entry. A conversation whose agent reported nothing carries the reason in `missing`, so that the check
can say why it is unscored instead of passing on nothing.
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class ReportedState(BaseModel):
    value: Any = None  # the state itself (JSON data); None with `missing` set when there is none
    source: str = ""  # where it came from, in a report's words: "state() of agents.bank", "GET http://..."
    missing: str | None = None  # why no state was reported

    @property
    def reported(self) -> bool:
        return self.missing is None

    @classmethod
    def none(cls, why: str) -> ReportedState:
        return cls(missing=why)
