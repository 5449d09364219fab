"""Turns: a conversation written turn by turn, as Google ADK writes its eval sets (part of the suite
language; runner/suite/models.py re-exports these names). Each turn is one user message with the tool
calls and the answer expected before the next one; `session_input`, `rubrics` come from ADK too.
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from .arguments import ArgSpec, _Strict


class ExpectedCall(_Strict):
    """A tool call expected at some point: in a turn's `calls`, or in a `trajectory` check's `expected`."""

    model_config = ConfigDict(
        extra="forbid", title="Expected call",
        json_schema_extra={"description": "A tool call the trajectory expects. Without `args` it matches any "
                           "call of the tool.",
                           "examples": [{"tool_name": "get_timeoff_schedule",
                                         "args": {"start_date": "2025-01-01"}, "arg_matching": {"start_date": "fuzzy"}}]})

    tool_name: str = Field(min_length=1, title="Tool name", description="The tool that must be called.",
                           examples=["get_timeoff_schedule"])
    args: dict[str, Any] | None = Field(
        None, title="Expected arguments",
        description="The arguments the call must carry, compared as a tool goal's are. Left out: any arguments.",
        examples=[{"username": "nwaters"}])
    arg_matching: dict[str, ArgSpec] = Field(
        default_factory=dict, title="Argument matching",
        description="Argument name (or dot path) to comparison mode, as in a tool goal.",
        examples=[{"start_date": "fuzzy"}])
    extra_args: Literal["allow", "forbid"] | None = Field(
        None, title="Extra arguments", description="allow (default: the case's `extra_args`) or forbid.",
        examples=["forbid"])


class IntermediateResponse(_Strict):
    """Text an agent is expected to say before the turn's final answer (ADK's intermediate_responses)."""

    model_config = ConfigDict(
        extra="forbid", title="Intermediate response",
        json_schema_extra={"description": "Text an agent (or sub-agent) says on the way to the final answer; kept "
                           "from ADK files for judges that read it, never scored on its own.",
                           "examples": [{"author": "keyword_finding_agent", "text": "Let me find keywords."}]})

    author: str = Field(title="Author", description="The agent that says it.", examples=["keyword_finding_agent"])
    text: str = Field(title="Text", description="What it says.", examples=["Let me find keywords."])


class Rubric(_Strict):
    """One property a judge checks with yes or no (ADK's rubrics)."""

    model_config = ConfigDict(
        extra="forbid", title="Rubric",
        json_schema_extra={"description": "A property a judge checks (ADK's rubric: rubric_id, rubric_content."
                           "text_property, type). Read by rubric_based_final_response_quality_v1 (type "
                           "FINAL_RESPONSE_QUALITY or none) and rubric_based_tool_use_quality_v1 (TOOL_USE_QUALITY).",
                           "examples": [{"id": "cites_source", "text": "The answer names where the figure comes from.",
                                         "type": "FINAL_RESPONSE_QUALITY"}]})

    id: str = Field(min_length=1, title="Rubric id", description="Unique within the case.", examples=["cites_source"])
    text: str = Field(min_length=1, title="Property", description="What must hold, in plain words.",
                      examples=["The answer names where the figure comes from."])
    type: str | None = Field(None, title="Rubric type",
                                description="FINAL_RESPONSE_QUALITY or TOOL_USE_QUALITY (ADK's types).",
                                examples=["FINAL_RESPONSE_QUALITY"])
    description: str | None = Field(None, title="Description", description="Kept as written.",
                                       examples=["Citations matter to this team."])


class Turn(_Strict):
    """One user turn and what the agent should do until its final answer (an ADK invocation)."""

    model_config = ConfigDict(
        extra="forbid", title="Turn",
        json_schema_extra={"description": "One user message and what the agent should do in answer: the calls of "
                           "that turn and its final answer. Turns are played in order; a recording is split into turns "
                           "at each user message, and turn N is compared with the Nth.",
                           "examples": [{"user": "What's the weather in Paris?",
                                         "calls": [{"tool_name": "get_weather", "args": {"city": "Paris"}}],
                                         "response": "It is sunny in Paris."}]})

    id: str | None = Field(None, min_length=1, title="Turn id",
                              description="A name for the turn in reports (ADK's invocation_id).", examples=["inv_001"])
    user: str = Field(min_length=1, title="User message", description="What the user says in this turn.",
                      examples=["What's the weather in Paris?"])
    calls: list[ExpectedCall] | None = Field(
        None, title="Expected calls",
        description="The tool calls expected in this turn, in order; `[]`: none. Left out: not checked. The turn "
        "criteria (tool_trajectory_avg_score) compare them as ADK does: the whole argument object must equal "
        "`args`, unless `arg_matching` relaxes an argument (fuzzy, optional, one_of, regex...) or `extra_args: allow`.",
        examples=[[{"tool_name": "get_weather", "args": {"city": "Paris"}}]])
    response: str | None = Field(
        None, title="Expected answer",
        description="The turn's expected final answer (response_match_score, final_response_match_v2). Left out: "
        "not checked; \"\" is an empty answer (as ADK's missing final_response, it scores 0 on ROUGE).",
        examples=["It is sunny in Paris."])
    intermediate_responses: list[IntermediateResponse] | None = Field(
        None, title="Intermediate responses", description="ADK's expected intermediate responses, kept for judges.",
        examples=[[{"author": "root_agent", "text": "Let me check."}]])
    rubrics: list[Rubric] | None = Field(
        None, title="Rubrics", description="Rubrics that apply to this turn only (ADK's invocation rubrics).",
        examples=[[{"id": "polite", "text": "The answer is polite."}]])
    checks: list[dict[str, Any]] = Field(
        default_factory=list, title="Turn checks",
        description="Checks run on this turn alone: its messages, its calls, its final answer; `trajectory` and "
        "`response_match` default to the turn's `calls` and `response`. A failing one fails the case.",
        examples=[[{"type": "contains", "value": "Paris"}]])


class SessionInput(_Strict):
    """ADK's session_input: the session the agent starts from."""

    model_config = ConfigDict(
        extra="forbid", title="Session input",
        json_schema_extra={"description": "The agent's session at the start (ADK's session_input): app name, user "
                           "id and initial state. The state is also the case's runtime_context unless it has one.",
                           "examples": [{"app_name": "weather_agent", "user_id": "test_user", "state": {"unit": "F"}}]})

    app_name: str = Field(title="App name", description="ADK's app name; an agent of that name in evalrun.yaml "
                          "plays the case when it names none.", examples=["weather_agent"])
    user_id: str = Field(title="User id", description="The user the session belongs to.", examples=["test_user"])
    session_id: str | None = Field(None, title="Session id", description="A fixed session id, when one is wanted.",
                                      examples=["session-1"])
    state: dict[str, Any] = Field(default_factory=dict, title="Initial state",
                                  description="The session state the agent starts with.", examples=[{"unit": "F"}])


# ADK's criteria when an eval set has no config (google.adk.evaluation.eval_config._DEFAULT_EVAL_CONFIG).
ADK_DEFAULT_CRITERIA: dict[str, float] = {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}


def default_turn_checks(turns: list[Turn]) -> list[dict[str, Any]]:
    """The checks of a case with turns that names none: ADK's defaults, for the expectations its turns state."""
    states = {"tool_trajectory_avg_score": any(t.calls is not None for t in turns),
              "response_match_score": any(t.response is not None for t in turns)}
    return [{"type": name, "threshold": threshold} for name, threshold in ADK_DEFAULT_CRITERIA.items() if states[name]]
