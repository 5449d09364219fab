"""`evalrun quick`: the referenceless profile of checks (watsonx's quick-eval), not a second runner.

A quick run plays each case as written (its scripted turns, story and canned tool outputs) and scores
the conversation with these checks only: the calls are valid against the agent's tools, and a judge
rates the answers' helpfulness and their groundedness in the tool results. Goals and the case's own
checks are not scored, so a case needs only a starting sentence or a story. Without a judge the judged
checks are unscored and so is the case: a quick run never passes on nothing checked.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..suite.models import Case

QUICK_CHECKS: tuple[dict[str, Any], ...] = (
    {"type": "valid_tool_calls"},
    {"type": "helpfulness"},
    {"type": "groundedness"},
)


def referenceless(case: Case) -> Case:
    """The case as a quick run scores it: no goals, no order, the quick checks instead of its own."""
    return case.model_copy(update={"goal_details": [], "goals": {}, "checks": [dict(c) for c in QUICK_CHECKS],
                                   "forbid_extra_calls": False, "termination": None})
