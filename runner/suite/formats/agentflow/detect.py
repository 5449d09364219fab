"""Whether an eval config is Agentflow's own (10xscale-agentflow >= 0.8, 10xgraph), by its keys alone.

Agentflow's config names its criteria `trajectory`, `tool_name_match`, `node_order`, ... (a closed set; a
criterion set to null is off). A config keyed by ADK's names (`tool_trajectory_avg_score`, ...: Google ADK's,
and Agentflow's own up to 0.6, as the Agentflow plan's example) keeps ADK's meaning. A config naming no
criterion is Agentflow's when its other keys are (`parallel`, `timeout`, `reporter`, ...), or when the eval set
it applies to is Agentflow's.
"""
from __future__ import annotations

from typing import Any

# Agentflow's CriteriaConfig fields, in the order its evaluator runs them (qa/evaluation/config/eval_config.py)
CRITERIA = ("tool_name_match", "trajectory", "node_order", "response_match", "rouge_match", "contains_keywords",
            "llm_judge", "rubric_based", "factual_accuracy", "hallucination", "safety", "simulation_goals")
JUDGED = ("response_match", "llm_judge", "rubric_based", "factual_accuracy", "hallucination", "safety",
          "simulation_goals")
# EvalConfig's other fields: accepted, and (as in Agentflow's AgentEvaluator) not read
TOP_LEVEL = ("criteria", "user_simulator_config", "parallel", "max_concurrency", "timeout", "verbose", "mock_mode",
             "reporter")
_ONLY_AGENTFLOW = set(TOP_LEVEL) - {"criteria", "user_simulator_config"}
# The names a config uses for the same criterion in ADK and in Agentflow <= 0.6, and their name since 0.8
LEGACY_NAMES = {"tool_trajectory_avg_score": "trajectory", "response_match_score": "rouge_match",
                "final_response_match_v2": "llm_judge", "rubric_based_final_response_quality_v1": "rubric_based",
                "hallucinations_v1": "hallucination", "safety_v1": "safety"}


def is_agentflow_config(data: Any, *, agentflow_eval_set: bool = False) -> bool:
    """Whether `data` (a parsed eval config) is Agentflow's. `agentflow_eval_set`: the eval set it applies to is
    Agentflow's, which decides for a config that names no criterion."""
    if not isinstance(data, dict):
        return False
    criteria = data.get("criteria")
    if isinstance(criteria, dict) and criteria:
        if any(name in CRITERIA for name in criteria):
            return True
        return not any(isinstance(name, str) and (name in LEGACY_NAMES or name.endswith(("_v1", "_score")))
                       for name in criteria) and bool(_ONLY_AGENTFLOW & set(data))
    if _ONLY_AGENTFLOW & set(data):
        return True
    simulator = data.get("user_simulator_config")
    if isinstance(simulator, dict) and "max_invocations" in simulator:
        return True
    return agentflow_eval_set and isinstance(criteria, dict)
