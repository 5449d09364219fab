"""Agentflow's (10xGraph's) criteria as evalrun checks, scored as Agentflow's own `AgentEvaluator` scores them.

An Agentflow eval config's criterion becomes one of these checks (runner/suite/formats/agentflow/): each
compares the case as a whole (calls pooled over its turns, the last turn's answer), not turn by turn as ADK's
criteria do. scoring.py holds the rules (pure functions), actuals.py what is read of the conversation,
deterministic.py and judged.py the checks, options.py their options.
"""
from __future__ import annotations

from ..base import CheckFamily
from .deterministic import (
                            run_contains_keywords,
                            run_no_criteria,
                            run_node_order,
                            run_rouge_match,
                            run_tool_name_match,
                            run_trajectory,
)
from .judged import run_judge
from .options import (
                            AgentflowJudgeOptions,
                            AgentflowKeywordsOptions,
                            AgentflowNoCriteriaOptions,
                            AgentflowNodeOrderOptions,
                            AgentflowRougeOptions,
                            AgentflowToolNameOptions,
                            AgentflowTrajectoryOptions,
)

FAMILIES = (
    CheckFamily(types=("agentflow_trajectory",), default_threshold=0.8, options=AgentflowTrajectoryOptions,
                description="Agentflow's trajectory: expected calls pooled over the turns, partial credit.",
                run=run_trajectory),
    CheckFamily(types=("agentflow_tool_name_match",), default_threshold=0.8, options=AgentflowToolNameOptions,
                description="Agentflow's tool_name_match: the share of expected tool names called.",
                run=run_tool_name_match),
    CheckFamily(types=("agentflow_node_order",), default_threshold=0.8, options=AgentflowNodeOrderOptions,
                description="Agentflow's node_order: the graph's node visits against the expected ones.",
                run=run_node_order),
    CheckFamily(types=("agentflow_rouge_match",), default_threshold=0.8, options=AgentflowRougeOptions,
                description="Agentflow's rouge_match: ROUGE-1 F1 on word sets of the last answer.",
                run=run_rouge_match),
    CheckFamily(types=("agentflow_contains_keywords",), default_threshold=0.8, options=AgentflowKeywordsOptions,
                description="Agentflow's contains_keywords: the share of keywords in the last answer.",
                run=run_contains_keywords),
    CheckFamily(types=("agentflow_judge",), default_threshold=0.8, needs_model=True, options=AgentflowJudgeOptions,
                description="Agentflow's judged criteria, through evalrun's judge (mean of the samples' scores).",
                run=run_judge),
    CheckFamily(types=("agentflow_no_criteria",), options=AgentflowNoCriteriaOptions,
                description="An Agentflow eval config with no criterion: unscored, never passed.",
                run=run_no_criteria),
)
