"""Which of the other tools' eval files a parsed JSON document is, by its content alone.

Kept apart from adk.py (which builds evalrun cases from them, with ADK's own pydantic models) so that every
JSON suite a run reads can be asked the question without importing those models: almost no file is one.
"""
from __future__ import annotations

from typing import Any

CONFIG_FILE_NAMES = ("test_config.json", "eval_config.json")  # ADK's convention, then Agentflow's
EVALSET = "ADK eval set"
AGENTFLOW = "Agentflow eval set"
OLD_TURNS = "ADK old-format test file"
OLD_SESSIONS = "ADK old-format eval set"
_AGENTFLOW_KEYS = ("expected_tool_trajectory", "expected_final_response", "expected_intermediate_responses",
                   "expected_node_order")


def shape_of(data: Any) -> str | None:
    """Which eval file `data` is, by its content; None when it is none of them."""
    if isinstance(data, dict):
        if "eval_set_id" in data or "eval_cases" in data:
            return AGENTFLOW if _uses_agentflow_keys(data) else EVALSET
        return None
    items = [item for item in data if isinstance(item, dict)] if isinstance(data, list) else []
    if any("query" in item for item in items):  # a turn that lacks it is then the schema's to report
        return OLD_TURNS
    if any("data" in item and "name" in item for item in items):
        return OLD_SESSIONS
    return None


def _uses_agentflow_keys(data: dict) -> bool:
    for case in data.get("eval_cases") or ():
        for invocation in (case.get("conversation") or ()) if isinstance(case, dict) else ():
            if isinstance(invocation, dict) and (any(k in invocation for k in _AGENTFLOW_KEYS)
                                                 or isinstance((invocation.get("user_content") or {}).get("content"),
                                                               (list, str))):
                return True
    return False
