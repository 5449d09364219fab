"""The options of the Agentflow checks: what an Agentflow eval config's criterion becomes in a case's `checks:`.

Each check carries its expectations as the eval config and the eval set give them, already pooled over the
case's turns (`expected` calls, nodes; `reference` = the last expected answer). Left out, they are read from
the case's `turns` (their `calls` and `response`), so a hand-written evalrun case can use them too.
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..base import CheckOptions
from ..judged import JudgedOptions

MatchType = Literal["EXACT", "IN_ORDER", "ANY_ORDER"]
JUDGED_CRITERIA = ("response_match", "llm_judge", "rubric_based", "factual_accuracy", "hallucination", "safety",
                   "simulation_goals")
_THRESHOLD = Field(None, ge=0, le=1, title="Threshold",
                   description="Passed when the score reaches it (>=). Default 0.8, as Agentflow's CriterionConfig.",
                   examples=[0.8])


def _config(kind: str, says: str, example: dict) -> ConfigDict:
    return ConfigDict(extra="forbid", title=f"Check: {kind}",
                      json_schema_extra={"description": says, "examples": [example]})


class AgentflowCall(BaseModel):
    model_config = ConfigDict(extra="forbid", title="Agentflow expected call",
                              json_schema_extra={"description": "A tool call as Agentflow's eval set lists it.",
                                                 "examples": [{"name": "get_weather", "args": {"city": "Paris"}}]})

    name: str = Field(min_length=1, title="Tool name", description="The tool's name.", examples=["get_weather"])
    args: dict[str, Any] = Field(
        default_factory=dict, title="Arguments",
        description="Compared only with check_args, as plain equality of the whole object; {} means any arguments.",
        examples=[{"city": "Paris"}])


class AgentflowTrajectoryOptions(CheckOptions):
    model_config = _config("agentflow_trajectory", "Agentflow's `trajectory` criterion (tool_trajectory_avg_score): "
                           "the case's expected calls, pooled over its turns, against all its calls.",
                           {"type": "agentflow_trajectory", "match_type": "IN_ORDER", "threshold": 0.8})

    type: Literal["agentflow_trajectory"] = Field(title="Check type", description="agentflow_trajectory.",
                                                  examples=["agentflow_trajectory"])
    threshold: float | None = _THRESHOLD
    expected: list[AgentflowCall] | None = Field(
        None, title="Expected calls", description="Default: the `calls` of the case's turns, one list.",
        examples=[[{"name": "get_weather", "args": {"city": "Paris"}}]])
    match_type: MatchType = Field("EXACT", title="Match type",
                                  description="EXACT (positions of the common prefix), IN_ORDER (greedy "
                                  "subsequence) or ANY_ORDER (first unused match).", examples=["IN_ORDER"])
    check_args: bool = Field(False, title="Check arguments",
                             description="Compare the arguments of expected calls that list some (default: names "
                             "only, as Agentflow).", examples=[True])


class AgentflowToolNameOptions(CheckOptions):
    model_config = _config("agentflow_tool_name_match", "Agentflow's `tool_name_match` (tool_name_match_score): the "
                           "share of expected tool names called (as a multiset); none expected: 1 without calls, "
                           "0.5 with.", {"type": "agentflow_tool_name_match", "expected": ["get_weather"]})

    type: Literal["agentflow_tool_name_match"] = Field(title="Check type", description="agentflow_tool_name_match.",
                                                       examples=["agentflow_tool_name_match"])
    threshold: float | None = _THRESHOLD
    expected: list[str] | None = Field(None, title="Expected tool names",
                                          description="Default: the names of the case's turns' calls.",
                                          examples=[["get_weather"]])


class AgentflowNodeOrderOptions(CheckOptions):
    model_config = _config("agentflow_node_order", "Agentflow's `node_order` (node_order_score): the graph's node "
                           "visits against the expected ones. Only an Agentflow agent records node visits (or a "
                           "transcript's state.agentflow.node_visits): without them the check is unscored.",
                           {"type": "agentflow_node_order", "expected": ["MAIN", "TOOL", "MAIN"]})

    type: Literal["agentflow_node_order"] = Field(title="Check type", description="agentflow_node_order.",
                                                  examples=["agentflow_node_order"])
    threshold: float | None = _THRESHOLD
    expected: list[str] = Field(default_factory=list, title="Expected node visits",
                                description="The eval set's expected_node_order, pooled over the turns.",
                                examples=[["MAIN", "MAIN"]])
    match_type: MatchType = Field("EXACT", title="Match type", description="EXACT, IN_ORDER or ANY_ORDER.",
                                  examples=["IN_ORDER"])


class AgentflowRougeOptions(CheckOptions):
    model_config = _config("agentflow_rouge_match", "Agentflow's `rouge_match`: ROUGE-1 F1 on the sets of lower-cased "
                           "word tokens of the last answer and the last expected answer, no stemming.",
                           {"type": "agentflow_rouge_match", "reference": "It is sunny in Paris.", "threshold": 0.5})

    type: Literal["agentflow_rouge_match"] = Field(title="Check type", description="agentflow_rouge_match.",
                                                   examples=["agentflow_rouge_match"])
    threshold: float | None = _THRESHOLD
    reference: str | None = Field(
        None, title="Expected answer", description="\"\": none expected (an empty answer scores 1, any other 0.5, as "
        "Agentflow). Default: the last `response` of the case's turns.", examples=["It is sunny in Paris."])


class AgentflowKeywordsOptions(CheckOptions):
    model_config = _config("agentflow_contains_keywords", "Agentflow's `contains_keywords`: the share of keywords "
                           "found in the last answer (case-insensitive substrings).",
                           {"type": "agentflow_contains_keywords", "keywords": ["Paris", "sunny"]})

    type: Literal["agentflow_contains_keywords"] = Field(title="Check type", description="agentflow_contains_keywords.",
                                                         examples=["agentflow_contains_keywords"])
    threshold: float | None = _THRESHOLD
    keywords: list[str] = Field(default_factory=list, title="Keywords",
                                description="None listed: Agentflow scores 1.", examples=[["Paris", "sunny"]])


class AgentflowRubric(BaseModel):
    model_config = ConfigDict(extra="forbid", title="Agentflow rubric",
                              json_schema_extra={"description": "Agentflow's rubric: an id and what must hold.",
                                                 "examples": [{"rubric_id": "polite", "content": "Polite answer."}]})

    rubric_id: str = Field(title="Rubric id", description="Its name.", examples=["polite"])
    content: str = Field(title="Content", description="What must hold.", examples=["The answer is polite."])
    weight: float = Field(1.0, title="Weight", description="Kept; Agentflow does not use it either.", examples=[1.0])


class AgentflowJudgeOptions(JudgedOptions):
    model_config = _config("agentflow_judge", "Agentflow's judged criteria (response_match, llm_judge, rubric_based, "
                           "factual_accuracy, hallucination, safety, simulation_goals) through evalrun's judge: the "
                           "mean score (0-1) of `samples` verdicts against the threshold.",
                           {"type": "agentflow_judge", "criterion": "llm_judge", "samples": 3, "threshold": 0.8})

    type: Literal["agentflow_judge"] = Field(title="Check type", description="agentflow_judge.",
                                             examples=["agentflow_judge"])
    threshold: float | None = _THRESHOLD
    criterion: Literal["response_match", "llm_judge", "rubric_based", "factual_accuracy", "hallucination", "safety",
                       "simulation_goals"] = Field(title="Agentflow criterion", description="Which judge to ask.",
                                                   examples=["llm_judge"])
    reference: str | None = Field(None, title="Expected answer",
                                     description="\"\": none. Default: the last `response` of the case's turns.",
                                     examples=["It is sunny in Paris."])
    rubrics: list[AgentflowRubric] = Field(default_factory=list, title="Rubrics",
                                           description="rubric_based: the rubrics, judged together (one score).",
                                           examples=[[{"rubric_id": "polite", "content": "The answer is polite."}]])
    reference_facts: str | None = Field(None, title="Reference facts",
                                           description="factual_accuracy without an expected answer: the eval case's "
                                           "metadata.reference_facts.", examples=["Paris is in France."])
    context: str | None = Field(None, title="Context",
                                   description="hallucination: the eval case's metadata.context, shown besides the "
                                   "tool results.", examples=["The forecast for Paris is sunny."])


class AgentflowNoCriteriaOptions(CheckOptions):
    model_config = _config("agentflow_no_criteria", "An Agentflow eval config with no criterion: Agentflow passes "
                           "every case; evalrun reports it unscored (nothing is checked).",
                           {"type": "agentflow_no_criteria"})

    type: Literal["agentflow_no_criteria"] = Field(title="Check type", description="agentflow_no_criteria.",
                                                   examples=["agentflow_no_criteria"])
    config: str | None = Field(None, title="Eval config", description="The config file, for the message.",
                                  examples=["evals/eval_config.json"])
