"""The suite language as pydantic models: the one source the JSON Schema is generated from.

Every field carries a title, a description and an example: they become the hover help that editors
show through schemas/suite.schema.json. Models forbid unknown keys; the loader reports them with
positions before these models are ever built (see runner/suite/load.py).
"""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, WithJsonSchema, model_validator

from .arguments import ARG_MODES, IGNORE_KEY, IGNORE_VALUE, ArgMode, ArgRule, ArgSpec, ArgType, _Strict  # noqa: F401
from .effects import StateEffect
from .endings import ENDINGS_HELP, Ending  # how a conversation can end, as the engine lists it
from .goals import GOAL_MODELS, Goal, GoalType, TextGoal, ToolCallGoal, UnscoredGoal, UnscoredGoalType  # noqa: F401
from .turns import (  # noqa: F401
    ADK_DEFAULT_CRITERIA,
    ExpectedCall,
    IntermediateResponse,
    Rubric,
    SessionInput,
    Turn,
    default_turn_checks,
)

# Keys of a multi-case file (one with `cases:`) that act as defaults for each of its cases.
DEFAULTABLE_KEYS: tuple[str, ...] = (
    "agent", "tags", "forbid_extra_calls", "failed_calls", "extra_args", "max_user_turns",
    "tool_outputs", "runtime_context", "canaries", "skip", "termination", "timeout_s", "checks", "session_input",
    "tools", "final_state", "final_state_matching", "initial_state", "tool_effects",
)


# The words YAML 1.1 (PyYAML, many editors) reads as false. evalrun keeps them as text, and text in `skip`
# is a reason to skip: `skip: no` would skip the case its author meant to run. Refused, with the fix.
SKIP_FALSE_WORDS: tuple[str, ...] = ("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")
SKIP_FALSE_WORD_FIX = ("is text, so it would skip the case with that word as the reason; write `skip: false`, "
                       "or remove the key")


def _not_a_false_word(reason: str) -> str:
    if reason in SKIP_FALSE_WORDS:
        raise ValueError(f"{reason!r} {SKIP_FALSE_WORD_FIX}")
    return reason


SkipReason = Annotated[str, AfterValidator(_not_a_false_word), WithJsonSchema(
    {"type": "string", "not": {"enum": list(SKIP_FALSE_WORDS), "description": SKIP_FALSE_WORD_FIX}})]


class FileUpload(BaseModel):
    """watsonx: a file the simulated user uploads (kept for compatibility, passed to agents as is)."""

    model_config = ConfigDict(
        extra="forbid", title="File upload",
        json_schema_extra={"description": "watsonx Orchestrate: a file the user uploads during the conversation.",
                           "examples": [{"file_path": "id-card.jpg", "file_id": "001", "content_type": "image/jpeg"}]})

    file_path: str = Field(title="File path", description="Path of the file to upload.", examples=["id-card.jpg"])
    file_id: str | None = Field(None, title="File id", description="Identifier of the file.", examples=["001"])
    content_type: str | None = Field(
        None, title="Content type", description="MIME type of the file.", examples=["image/jpeg"])


class CaseFields(_Strict):
    """The keys of one case. A suite file either is one case or holds several under `cases`."""

    id: str | None = Field(
        None, min_length=1, title="Case id",
        description="Unique id of the case. Default: the file name without extension; with `cases`, the file "
        "name plus the case's position (`timeoff-1`).", examples=["timeoff-basic"])
    description: str | None = Field(
        None, title="Description", description="What the case checks, shown in reports.",
        examples=["Employee asks for their time-off schedule"])
    tags: list[str] = Field(
        default_factory=list, title="Tags",
        description="Labels to select cases with `--tag`. In a file with `cases`, file tags are added to each case's.",
        examples=[["hr", "smoke"]])
    skip: StrictBool | SkipReason = Field(  # strict: pydantic would read "no" as false
        False, title="Skip",
        description="true, or the reason as text, to collect the case but not run it (status `skipped`). Words "
        "YAML 1.1 reads as false (no, off, \"false\") are refused: write `false`.",
        examples=["waiting for the new HR API"])
    agent: str | None = Field(
        None, title="Agent", description="Name of the agent target (from evalrun.yaml) that plays this case.",
        examples=["hr_agent"])
    story: str | None = Field(
        None, title="Story", description="What the simulated user wants, in their words.",
        examples=["My username is nwaters. I want my time-off schedule from 2025-01-01 to 2025-03-03."])
    starting_sentence: str | None = Field(
        None, title="Starting sentence", description="The first user message.",
        examples=["I want to know my timeoff schedule for a certain period."])
    user_prompts: list[str] = Field(
        default_factory=list, title="Scripted user turns",
        description="Follow-up user messages, sent in order instead of simulating the user.",
        examples=[["My username is nwaters.", "From 2025-01-01 to 2025-03-03."]])
    max_user_turns: int | None = Field(
        None, ge=1, title="Maximum user turns", description="Stop the conversation after this many user messages.",
        examples=[8])
    goals: dict[str, list[str]] = Field(
        default_factory=dict, title="Goal order",
        description="The dependency graph: goal name to the goals that must come AFTER it (`{A: [B]}`: A before "
        "B). A goal not mentioned has no order constraint.",
        examples=[{"get_assignment_id": ["get_timeoff_schedule"], "get_timeoff_schedule": ["summarize"]}])
    goal_details: list[Goal] = Field(
        default_factory=list, title="Goals",
        description="What the agent must do (`tool_call`) and say (`text`). May be empty with "
        "`forbid_extra_calls`: the agent must refuse and change nothing.",
        examples=[[{"type": "tool_call", "name": "get_assignment_id", "tool_name": "get_assignment_id_hr_agent",
                    "args": {"username": "nwaters"}}]])
    checks: list[dict[str, Any]] = Field(
        default_factory=list, title="Checks",
        description="Criteria beyond goals, each `{type, ...options}` (every type and its options: "
        "docs/reference/checks.md). A case passes when its goals are achieved and every gating check passes. "
        "In a file with `cases`, the file's checks are the default for a case that has none.",
        examples=[[{"type": "trajectory", "match": "in_order"}, {"type": "not_contains", "value": "As an AI"}]])
    forbid_extra_calls: bool | list[str] = Field(
        False, title="Forbid extra calls",
        description="true: every tool call must achieve a goal. A list of tool names or globs: calls to these "
        "tools that achieve no goal fail the case. Default false: extra calls only lower precision.",
        examples=[["cancel_*", "book_reservation"]])
    failed_calls: Literal["count", "ignore"] = Field(
        "count", title="Failed calls",
        description="count (default): a call whose result is an error is scored like any call. ignore: it is "
        "neither a match nor an extra call.", examples=["ignore"])
    extra_args: Literal["allow", "forbid"] = Field(
        "allow", title="Extra arguments",
        description="Default for every tool goal of the case: may calls carry arguments not listed in `args`?",
        examples=["forbid"])
    tool_outputs: dict[str, Any] = Field(
        default_factory=dict, title="Tool outputs",
        description="Tool name to canned result, for tools the runner plays that are not goals.",
        examples=[{"get_weather": {"temp_c": 21}}])
    tool_effects: dict[str, list[StateEffect]] = Field(
        default_factory=dict, title="Tool effects",
        description="Model agents: tool name to what a call answered from `tool_outputs` does to the played "
        "tools' state (a goal's own `effects` apply to the calls it answers).",
        examples=[{"cancel_hold": [{"delete": "holds.H-7"}]}])
    initial_state: dict[str, Any] | None = Field(
        None, title="Initial state",
        description="Model agents: the state the played tools start from (default: empty). Each played call's "
        "`effects` change it; `final_state:` is compared with what it has become.",
        examples=[{"accounts": {"A-1": {"balance": 100}}}])
    final_state: dict[str, Any] | None = Field(
        None, title="Final state",
        description="What the world must look like after the conversation, compared with the state the agent "
        "reports (a python agent's `state(context)`, an http agent's `state_url`, a command agent's `state_file`, "
        "a model agent's played tools, a transcript's `state`). Values compare strict unless "
        "`final_state_matching` says otherwise; keys the state has beyond these are allowed. A case whose agent "
        "reports no state is unscored, never passed.",
        examples=[{"transfers": [{"from": "A-1", "to": "B-2", "amount": 50}], "accounts": {"A-1": {"balance": 50}}}])
    final_state_matching: dict[str, ArgSpec] = Field(
        default_factory=dict, title="Final state matching",
        description="Dot path in `final_state` to comparison mode, as `arg_matching` for tool arguments "
        "(strict, exact, fuzzy, optional, ignore, or a rule with one_of, regex, tolerance). A parent's mode "
        "covers its children unless a child has its own.",
        examples=[{"transfers.0.id": "ignore", "accounts.A-1.balance": {"tolerance": 0.01}}])
    tools: list[dict[str, Any]] | None = Field(
        None, title="Tools",
        description="The tools the agent was given, as OpenAI-style definitions (`{type: function, function: {name, "
        "description, parameters}}`; `parameters` is a JSON Schema). The `valid_tool_calls` check validates every "
        "call against them. Default: the agent's `tools:` in evalrun.yaml. In a file with `cases`, the file's tools "
        "are the default for each case.",
        examples=[[{"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]])
    termination: list[Ending] | None = Field(
        None, min_length=1, title="Accepted endings",
        description="How the conversation must have ended: the recorded termination reason (a transcript's "
        "`termination_reason`) must be one of these. A conversation that records another ending, or none, fails. "
        f"The endings: {ENDINGS_HELP}.",
        examples=[["user_stop", "agent_stop"]])
    transcript: str | None = Field(
        None, min_length=1, title="Transcript",
        description="A recorded conversation (path relative to this file) to score instead of running an agent. "
        "A trace file (OpenTelemetry OTLP/JSON) may hold many: `FILE#ID` names one by its conversation id "
        "(gen_ai.conversation.id or the dialect's session id) or a trace id (32 lowercase hex digits); so may a "
        "live run's conversations.jsonl, whose `FILE#ID` names a case id.",
        examples=["transcripts/timeoff-basic.json", "traces/prod.jsonl#conv-0042"])
    runtime_context: dict[str, Any] = Field(
        default_factory=dict, title="Runtime context",
        description="watsonx Orchestrate: context variables passed to the agent.",
        examples=[{"sap_username": "nwaters"}])
    canaries: list[Annotated[str, Field(min_length=6)]] = Field(
        default_factory=list, title="Canaries",
        description="Secret marker strings (at least 6 characters) planted in the agent's context: evalrun delivers "
        "them in a system message at the start of the conversation and in the turn context (the python agent's "
        "`context.canaries`, the http body's and command input's `canaries`, an ADK session's state). The case fails when any assistant "
        "text or tool-call argument contains one, as written, in another case, with spaces or punctuation between "
        "its characters, reversed, or base64- or hex-encoded (the `no_leak` check, added when the case has none).",
        examples=[["CANARY-7F3K-Q9XW"]])
    file_upload: FileUpload | None = Field(
        None, title="File upload", description="watsonx Orchestrate: a file the user uploads.",
        examples=[{"file_path": "id-card.jpg", "file_id": "001", "content_type": "image/jpeg"}])
    timeout_s: float | None = Field(
        None, gt=0, title="Timeout (seconds)",
        description="Live runs: the case ends in error when its conversation takes longer than this.",
        examples=[120])
    turns: list[Turn] | None = Field(
        None, min_length=1, title="Turns",
        description="The conversation turn by turn (Google ADK's invocations): each user message with the calls and "
        "answer expected in that turn. The user's messages are played in order; the turn criteria "
        "(tool_trajectory_avg_score, response_match_score, ...) score each turn and pass on the mean. Without "
        "`checks`, ADK's defaults apply: tool_trajectory_avg_score 1.0 and response_match_score 0.8.",
        examples=[[{"user": "Roll a die with 6 sides.", "calls": [{"tool_name": "roll_die", "args": {"sides": 6}}],
                    "response": "I rolled a 4."}]])
    session_input: SessionInput | None = Field(
        None, title="Session input",
        description="ADK's session_input: app name, user id and the initial state of the agent's session.",
        examples=[{"app_name": "weather_agent", "user_id": "test_user"}])
    final_session_state: dict[str, Any] | None = Field(
        None, title="Final session state",
        description="ADK's expected final session state: compared, as a `final_state`, with the session state the "
        "ADK agent ends with (or any agent's reported state), when the case has no `final_state` of its own.",
        examples=[{"booked": True}])
    rubrics: list[Rubric] | None = Field(
        None, title="Rubrics", description="Rubrics for every turn of the case (ADK's case rubrics).",
        examples=[[{"id": "polite", "text": "The answer is polite."}]])
    dataset_name: str | None = Field(
        None, title="Dataset name", description="watsonx Orchestrate: the dataset's name, kept.",
        examples=["hr_timeoff"])
    summary: Any | None = Field(
        None, title="Summary",
        description="watsonx Orchestrate `record`: a summary of the recorded conversation, kept.",
        examples=["The user asked for their time-off schedule."])
    response_summary_version: Any | None = Field(
        None, title="Response summary version",
        description="watsonx Orchestrate `record`: the version of the summary format, kept.", examples=["v1"])


class SuiteFile(CaseFields):
    """The top level of a suite file: one case, or shared defaults plus `cases`."""

    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, title="evalrun suite",
        json_schema_extra={
            "description": "An evalrun test suite: one case at the top level, or several under `cases` "
            "(then the other top-level keys are defaults for each case). A superset of watsonx Orchestrate "
            "evaluation datasets.",
        },
    )

    schema_: str | None = Field(
        None, alias="$schema", title="JSON Schema", description="Editor hint: the schema this file follows.",
        examples=["../schemas/suite.schema.json"])
    cases: list[CaseFields] | None = Field(
        None, min_length=1, title="Cases",
        description="Several cases in one file. The file's other keys (" + ", ".join(DEFAULTABLE_KEYS)
        + ") are defaults for each case; tags are merged.",
        examples=[[{"id": "refuse-cancel", "starting_sentence": "Cancel my booking", "goal_details": []}]])


class SourceRef(BaseModel):
    """Where a case was written: shown in diagnostics and reports."""

    path: str
    line: int = 1
    column: int = 1

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


class Case(CaseFields):
    """A case ready to run: id filled in, the file's defaults applied, its origin attached."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str
    source: SourceRef

    @model_validator(mode="after")
    def _turns_play_as_the_script(self) -> Case:
        """The turns' user messages are the scripted user's (the loader refuses a case giving both), and an
        ADK session's initial state is the agent's runtime context unless the case gives one."""
        if self.turns and not self.starting_sentence and not self.user_prompts:
            self.starting_sentence = self.turns[0].user
            self.user_prompts = [turn.user for turn in self.turns[1:]]
        if self.turns and not self.checks:
            self.checks = default_turn_checks(self.turns)
        if self.session_input is not None and self.session_input.state and not self.runtime_context:
            self.runtime_context = dict(self.session_input.state)
        return self

    def asks_final_state(self) -> bool:
        """Whether the case compares the world after the conversation (`final_state:`, ADK's
        `final_session_state`, or a final_state check)."""
        return self.final_state is not None or self.final_session_state is not None or any(
            isinstance(check, dict) and check.get("type") == "final_state" for check in self.checks)

    def tool_goals(self) -> list[ToolCallGoal]:
        return [g for g in self.goal_details if isinstance(g, ToolCallGoal)]

    def text_goals(self) -> list[TextGoal]:
        return [g for g in self.goal_details if isinstance(g, TextGoal)]

    def unscored_goals(self) -> list[UnscoredGoal]:
        return [g for g in self.goal_details if isinstance(g, UnscoredGoal)]
