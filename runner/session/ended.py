"""RunEnded: a step that ends the run before there is anything to play (invalid suites or options, no case
left, the executor unavailable, a folder that cannot be written) raises it with the outcome to report. It is
caught once, at the session's boundary (runner.session.run, aevaluate, the pytest plugin's project), so no
front end inspects what a step returned to learn whether the run goes on."""
from __future__ import annotations

from typing import Any


class RunEnded(Exception):
    def __init__(self, outcome: Any):  # runner.session.request.RunOutcome: its exit code, diagnostics and notes
        super().__init__(f"the run ended before it started: exit {outcome.exit_code}")
        self.outcome = outcome
