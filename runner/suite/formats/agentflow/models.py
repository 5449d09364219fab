"""Agentflow's eval config (10xscale-agentflow >= 0.8, 10xgraph) as pydantic models: the Agentflow branch of
schemas/adk-eval-config.schema.json, which editors read for `eval_config.json` (config.py reads the file itself
and says more: positions, did-you-mean, Agentflow's lax values)."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .detect import CRITERIA


class AgentflowRubricModel(BaseModel):
    model_config = ConfigDict(extra="ignore", title="Agentflow rubric",
                              json_schema_extra={"description": "One rubric of rubric_based."})

    rubric_id: str = Field(title="Rubric id", description="Its name.", examples=["polite"])
    content: str = Field(title="Content", description="What must hold.", examples=["The answer is polite."])
    weight: float = Field(1.0, title="Weight", description="Not used (by Agentflow either).")


class AgentflowCriterion(BaseModel):
    model_config = ConfigDict(extra="allow", title="Agentflow criterion",
                              json_schema_extra={"description": "A criterion's options (Agentflow's CriterionConfig); "
                                                 "null instead turns the criterion off."})

    threshold: float = Field(0.8, ge=0, le=1, title="Threshold", description="Passed when the score reaches it (>=).",
                             examples=[0.8])
    match_type: Literal["EXACT", "IN_ORDER", "ANY_ORDER"] = Field(
        "EXACT", title="Match type", description="trajectory, node_order: EXACT (positions of the common prefix), "
        "IN_ORDER (greedy), ANY_ORDER (first unused match).", examples=["IN_ORDER"])
    check_args: bool = Field(False, title="Check arguments",
                             description="trajectory: compare the arguments an expected call lists.")
    enabled: bool = Field(True, title="Enabled", description="false: the criterion is off.")
    keywords: list[str] = Field(default_factory=list, title="Keywords", description="contains_keywords.",
                                examples=[["Paris"]])
    judge_model: str = Field("gemini-2.5-flash", title="Judge model",
                             description="Judged criteria: a model name other than the default is served with "
                             "evalrun.yaml's judge settings.", examples=["gpt-4o-mini"])
    num_samples: int = Field(3, ge=1, le=15, title="Samples", description="Judged criteria: verdicts averaged.")
    rubrics: list[AgentflowRubricModel] = Field(default_factory=list, title="Rubrics", description="rubric_based.")
    api_style: Literal["responses", "chat"] = Field("responses", title="API style",
                                                   description="Agentflow's OpenAI judge call; not used by evalrun.")


def _criteria_model() -> type[BaseModel]:
    from pydantic import create_model

    fields: dict[str, Any] = {name: (AgentflowCriterion | None, Field(None, title=name)) for name in CRITERIA}
    return create_model("AgentflowCriteria", __config__=ConfigDict(
        extra="forbid", title="Agentflow criteria",
        json_schema_extra={"description": "Each criterion's options, or null (off)."}), **fields)


AgentflowCriteria = _criteria_model()


class AgentflowEvalConfig(BaseModel):
    model_config = ConfigDict(extra="allow", title="Agentflow eval config",
                              json_schema_extra={"description": "Agentflow's EvalConfig, as EvalConfig.to_file writes "
                                                 "it; the criteria are scored as Agentflow's evaluator does."})

    criteria: AgentflowCriteria = Field(default_factory=AgentflowCriteria, title="Criteria",  # type: ignore[valid-type]
                                        description="The criteria: {} checks nothing.")
    user_simulator_config: dict[str, Any] | None = Field(None, title="User simulator", description="Not read.")
    parallel: bool = Field(False, title="Parallel", description="Not read (as by Agentflow's evaluator).")
    max_concurrency: int = Field(4, title="Maximum concurrency", description="Not read.")
    timeout: float = Field(300.0, title="Timeout", description="Not read.")
    verbose: bool = Field(False, title="Verbose", description="Not read.")
    mock_mode: bool = Field(False, title="Mock mode", description="Not read.")
    reporter: dict[str, Any] | None = Field(None, title="Reporter", description="Not read.")
