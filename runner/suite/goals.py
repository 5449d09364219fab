"""The goals of a case: a tool the agent must call, something it must say, or a watsonx goal evalrun
reads but cannot score yet. Part of the suite language (runner/suite/models.py, whose `goal_details`
holds them, keeps these names importable); every field's title, description and example become the
schema's hover help.
"""
from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import ConfigDict, Field

from .arguments import ArgSpec, _Strict
from .effects import StateEffect

GoalType = Literal["tool_call", "text"]
# watsonx goal types evalrun reads but cannot score yet: such a goal is reported `unscored`, never achieved.
UnscoredGoalType = Literal["interaction", "assert_llm"]


class ToolCallGoal(_Strict):
    """A tool the agent must call, with the arguments it must pass."""

    model_config = ConfigDict(
        extra="forbid", title="Tool call goal",
        json_schema_extra={
            "description": "A goal achieved by a tool call with this tool name whose arguments match.",
            "examples": [{"type": "tool_call", "name": "get_assignment_id", "tool_name": "get_assignment_id_hr_agent",
                          "args": {"username": "nwaters"}}],
        },
    )

    type: Literal["tool_call"] = Field(
        title="Goal type", description="`tool_call`: achieved by a matching tool call.", examples=["tool_call"])
    name: str = Field(
        min_length=1, title="Goal name",
        description="Unique name of the goal within the case; `goals` refers to it.", examples=["get_assignment_id"])
    description: str | None = Field(
        None, title="Description", description="What this goal checks, for people reading the report.",
        examples=["Looks up the employee's assignment id"])
    tool_name: str = Field(
        min_length=1, title="Tool name", description="The name of the tool the agent must call.",
        examples=["get_assignment_id_hr_agent"])
    args: dict[str, Any] = Field(
        default_factory=dict, title="Expected arguments",
        description="The arguments the call must carry. Nested objects and lists are allowed. `{IGNORE: null}` "
        "skips all arguments; the value \"<IGNORE>\" skips one.",
        examples=[{"username": "nwaters", "address": {"zip": "10001"}}])
    arg_matching: dict[str, ArgSpec] = Field(
        default_factory=dict, title="Argument matching",
        description="Argument name (or dot path such as `address.zip`) to comparison mode. A parent's mode "
        "covers its children unless a child has its own. Unlisted arguments are compared strict.",
        examples=[{"start_date": "fuzzy", "note": "ignore", "address.zip": {"regex": "^\\d{5}$"}}])
    extra_args: Literal["allow", "forbid"] | None = Field(
        None, title="Extra arguments",
        description="allow (default): the call may carry arguments not listed in `args`. forbid: it may not.",
        examples=["forbid"])
    output: Any = Field(
        None, title="Canned output",
        description="The tool result the runner returns when it plays the tools itself.",
        examples=[{"assignment_id": "15778303"}])
    effects: list[StateEffect] = Field(
        default_factory=list, title="Effects on the state",
        description="Model agents: what this call does to the state the played tools keep, applied when the "
        "call gets this goal's `output`. `final_state:` is compared with that state after the conversation.",
        examples=[[{"append": "transfers", "arg": "*"}]])
    summary: str | None = Field(
        None, title="Summary",
        description="watsonx Orchestrate `record`: a summary of the goal, kept for reports.",
        examples=["Looks up the assignment id of nwaters"])


class TextGoal(_Strict):
    """Something the agent must say."""

    model_config = ConfigDict(
        extra="forbid", title="Text goal",
        json_schema_extra={
            "description": "A goal achieved by an assistant message that matches `response` semantically "
            "and contains every keyword.",
            "examples": [{"type": "text", "name": "summarize", "response": "Your time off is on 2025-01-05.",
                          "keywords": ["2025-01-05"]}],
        },
    )

    type: Literal["text"] = Field(
        title="Goal type", description="`text`: achieved by an assistant message.", examples=["text"])
    name: str = Field(
        min_length=1, title="Goal name",
        description="Unique name of the goal within the case; `goals` refers to it.", examples=["summarize"])
    description: str | None = Field(
        None, title="Description", description="What this goal checks, for people reading the report.",
        examples=["Tells the user their time-off dates"])
    response: str | None = Field(
        None, title="Reference answer",
        description="What the agent should say, matched semantically (the fuzzy cascade).",
        examples=["Your time off is on 2025-01-05."])
    keywords: list[str] = Field(
        default_factory=list, title="Keywords",
        description="Words that must all appear (case-insensitive) in the same assistant message.",
        examples=[["2025-01-05"]])
    scope: Literal["any", "final"] = Field(
        "any", title="Scope",
        description="any (default): any assistant message may achieve the goal. final: only the last one.",
        examples=["final"])
    summary: str | None = Field(
        None, title="Summary", description="watsonx Orchestrate `record`: a summary of the goal, kept for reports.",
        examples=["Tells the user their time-off dates"])


class UnscoredGoal(_Strict):
    """A goal of a watsonx type evalrun reads but cannot score yet (`interaction`, `assert_llm`). It takes
    the keys watsonx goals carry, kept as written."""

    model_config = ConfigDict(
        extra="forbid", title="Goal evalrun cannot score yet",
        json_schema_extra={
            "description": "A watsonx Orchestrate goal of type `interaction` or `assert_llm`: accepted and "
            "reported as `unscored` with the reason, never achieved; a case with one ends `unscored`.",
            "examples": [{"type": "interaction", "name": "greets_the_user"}],
        },
    )

    type: UnscoredGoalType = Field(
        title="Goal type", description="interaction or assert_llm: kept, reported unscored.",
        examples=["interaction"])
    name: str = Field(
        min_length=1, title="Goal name",
        description="Unique name of the goal within the case; `goals` refers to it.", examples=["greets_the_user"])
    description: str | None = Field(
        None, title="Description", description="What this goal checks, for people reading the report.",
        examples=["Greets the user by name"])
    tool_name: str | None = Field(None, title="Tool name", description="Kept as written.", examples=["transfer"])
    args: dict[str, Any] | None = Field(None, title="Arguments", description="Kept as written.", examples=[{}])
    arg_matching: dict[str, Any] | None = Field(
        None, title="Argument matching", description="Kept as written.", examples=[{}])
    response: str | None = Field(None, title="Response", description="Kept as written.", examples=["Hello Ann"])
    keywords: list[str] | None = Field(None, title="Keywords", description="Kept as written.", examples=[["Ann"]])
    summary: str | None = Field(None, title="Summary", description="Kept as written.", examples=["Greets Ann"])
    output: Any = Field(None, title="Output", description="Kept as written.", examples=["ok"])


Goal = ToolCallGoal | TextGoal | UnscoredGoal
# Each goal `type` and the model that reads it (the schema dispatches on `type` with this table).
GOAL_MODELS: dict[str, str] = {"tool_call": "ToolCallGoal", "text": "TextGoal",
                               **dict.fromkeys(get_args(UnscoredGoalType), "UnscoredGoal")}
