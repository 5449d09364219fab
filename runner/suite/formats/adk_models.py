"""Google ADK's and Agentflow's evaluation files as pydantic models: the source of
schemas/adk-evalset.schema.json and schemas/adk-eval-config.schema.json, which editors read (completion and
errors on `*.evalset.json`, `*.test.json`, `test_config.json`) and `validate` checks these files against.

The shapes are ADK 2.13's (google.adk.evaluation: EvalSet, EvalCase, Invocation, genai Content, the old
list of turns, the old list of sessions, EvalConfig) and the Agentflow evaluation plan's (invocations with
`expected_tool_trajectory` and `expected_final_response` messages). Keys are snake_case, as both write them.
Where ADK ignores or keeps unknown keys (an eval set's top level, an eval case, a criterion), the reader
warns; where ADK refuses them (an invocation, a content part, a tool call), they are errors.
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, RootModel


def _config(title: str, description: str, extra: str = "forbid") -> ConfigDict:
    return ConfigDict(extra=extra, title=title, json_schema_extra={"description": description})  # type: ignore[typeddict-item]


class FunctionCall(BaseModel):
    model_config = _config("Function call", "A tool call (genai FunctionCall): the tool's name and its arguments.")

    name: str = Field(title="Tool name", description="The tool called.", examples=["get_weather"])
    args: dict[str, Any] | None = Field(None, title="Arguments",
                                           description="The arguments; ADK compares them whole, with `==`.",
                                           examples=[{"city": "Paris"}])
    id: str | None = Field(None, title="Call id", description="Not compared.", examples=["call_1"])
    partial_args: Any | None = Field(None, title="Partial arguments", description="Not compared.")
    will_continue: bool | None = Field(None, title="Will continue", description="Not compared.")


class Part(BaseModel):
    model_config = _config("Part", "One part of a genai Content: text, a function call or response, or media. "
                           "ADK writes every attribute, most of them null.")

    text: str | None = Field(None, title="Text", description="Text of the part.", examples=["Hello"])
    thought: bool | None = Field(None, title="Thought", description="The model's private reasoning.")
    function_call: FunctionCall | None = Field(None, title="Function call", description="A tool call.")
    function_response: dict[str, Any] | None = Field(None, title="Function response", description="A tool result.")
    inline_data: Any | None = None
    file_data: Any | None = None
    executable_code: Any | None = None
    code_execution_result: Any | None = None
    video_metadata: Any | None = None
    thought_signature: Any | None = None
    media_resolution: Any | None = None
    part_metadata: Any | None = None
    audio_transcription: Any | None = None
    media_processing: Any | None = None
    speech_metadata: Any | None = None
    tool_call: Any | None = None
    tool_response: Any | None = None


class Content(BaseModel):
    model_config = _config("Content", "A genai Content: a role and its parts.")

    role: str | None = Field(None, title="Role", description="user or model.", examples=["user"])
    parts: list[Part] | None = Field(None, title="Parts", description="The parts, in order.",
                                        examples=[[{"text": "What's the weather in Paris?"}]])


class ContentBlock(BaseModel):
    model_config = _config("Content block", "One block of an Agentflow message: `{type: text, text}`.", extra="allow")

    type: str = Field(title="Block type", description="text (other kinds are kept, not read).", examples=["text"])
    text: str | None = Field(None, title="Text", description="The block's text.", examples=["Hello"])


class Message(BaseModel):
    model_config = _config("Message", "An Agentflow message: a role and its content (text, or blocks).")

    role: str = Field(title="Role", description="user or assistant.", examples=["user"])
    content: str | list[ContentBlock] = Field(
        title="Content", description="The text, or a list of blocks.",
        examples=[[{"type": "text", "text": "What's the weather in New York?"}]])
    metadata: dict[str, Any] | None = Field(None, title="Metadata", description="Kept, not read.")


AnyContent = Content | Message


class IntermediateData(BaseModel):
    model_config = _config("Intermediate data", "What the agent did before its final answer: tool calls, tool "
                           "results and intermediate text.")

    tool_uses: list[FunctionCall] = Field(default_factory=list, title="Tool uses",
                                          description="The expected tool calls, in order.",
                                          examples=[[{"name": "get_weather", "args": {"city": "Paris"}}]])
    tool_responses: list[dict[str, Any]] = Field(default_factory=list, title="Tool responses",
                                                 description="Tool results (not compared).")
    intermediate_responses: list[tuple[str, list[Part]]] = Field(
        default_factory=list, title="Intermediate responses",
        description="`[author, parts]` pairs: what agents said on the way.",
        examples=[[["root_agent", [{"text": "Let me check."}]]]])


class InvocationEvent(BaseModel):
    model_config = _config("Invocation event", "One event of an invocation, as ADK records an inference.",
                           extra="allow")

    author: str = Field(title="Author", description="The agent (or user) the event comes from.",
                        examples=["root_agent"])
    content: Content | None = Field(None, title="Content", description="What the event holds.")


class InvocationEvents(BaseModel):
    model_config = _config("Invocation events", "The events of an invocation (ADK 2.x's recorded form).")

    invocation_events: list[InvocationEvent] = Field(title="Events", description="In order.")


class Rubric(BaseModel):
    model_config = _config("Rubric", "A property a judge checks with yes or no.")

    rubric_id: str = Field(title="Rubric id", description="Unique within its list.", examples=["cites_source"])
    rubric_content: dict[str, str | None] = Field(
        title="Rubric content", description="`{text_property: ...}`: what must hold.",
        examples=[{"text_property": "The answer names its source."}])
    description: str | None = Field(None, title="Description", description="Kept.")
    type: str | None = Field(None, title="Rubric type", description="FINAL_RESPONSE_QUALITY or TOOL_USE_QUALITY.",
                                examples=["FINAL_RESPONSE_QUALITY"])


class ToolCall(BaseModel):
    model_config = _config("Expected tool call (Agentflow)", "A tool call Agentflow expects: name and arguments.")

    name: str = Field(title="Tool name", description="The tool that must be called.", examples=["get_weather"])
    args: dict[str, Any] = Field(default_factory=dict, title="Arguments", description="Compared whole.",
                                 examples=[{"location": "New York"}])
    call_id: str | None = Field(None, title="Call id", description="Not compared.")
    result: Any | None = Field(None, title="Result", description="Not compared.")


class Invocation(BaseModel):
    model_config = _config("Invocation", "One turn: the user's message, and what the agent is expected to do "
                           "until its final answer (ADK: final_response, intermediate_data; Agentflow: "
                           "expected_tool_trajectory, expected_final_response).")

    invocation_id: str | None = Field(None, title="Invocation id", description="Shown in reports.",
                                         examples=["inv_001"])
    user_content: AnyContent = Field(title="User content", description="What the user says in this turn.")
    final_response: Content | None = Field(None, title="Final response (ADK)",
                                              description="The expected final answer.")
    intermediate_data: IntermediateData | InvocationEvents | None = Field(
        None, title="Intermediate data (ADK)", description="The expected tool calls (tool_uses) and what was said on "
        "the way.")
    creation_timestamp: float | None = None
    duration: float | None = None
    model_duration: float | None = None
    tool_duration: float | None = None
    rubrics: list[Rubric] | None = Field(None, title="Rubrics", description="Rubrics for this turn.")
    app_details: Any | None = None
    expected_tool_trajectory: list[ToolCall] | None = Field(
        None, title="Expected tool trajectory (Agentflow)", description="The expected tool calls, in order.")
    expected_final_response: Message | None = Field(
        None, title="Expected final response (Agentflow)", description="The expected final answer.")
    expected_intermediate_responses: list[Message] | None = Field(
        None, title="Expected intermediate responses (Agentflow)", description="Kept for judges.")
    expected_node_order: list[str] | None = Field(
        None, title="Expected node order (Agentflow)", description="Not checked by evalrun (a warning says so).")


class SessionInput(BaseModel):
    model_config = _config("Session input", "The agent's session at the start.", extra="allow")

    app_name: str | None = Field(None, title="App name", description="The app; names the evalrun agent that "
                                    "plays the case when the case names none.", examples=["weather_agent"])
    user_id: str | None = Field(None, title="User id", description="The session's user.", examples=["test_user"])
    session_id: str | None = Field(None, title="Session id", description="A fixed session id.")
    state: dict[str, Any] | None = Field(None, title="State", description="The initial session state.")


class ConversationScenario(BaseModel):
    model_config = _config("Conversation scenario", "A simulated user: its first message and its plan.")

    starting_prompt: str = Field(title="Starting prompt", description="The user's first message.",
                                 examples=["I want to book a flight."])
    conversation_plan: str = Field(title="Conversation plan", description="What the user wants, turn after turn.",
                                   examples=["Ask for a flight to Paris; accept the cheapest one."])
    user_persona: Any | None = Field(None, title="User persona", description="Kept, not used.")


class EvalCase(BaseModel):
    model_config = _config("Eval case", "One case: a conversation of invocations, or a conversation scenario.",
                           extra="allow")

    eval_id: str = Field(title="Eval id", description="The case's id.", examples=["weather_lookup_simple"])
    conversation: list[Invocation] | None = Field(None, title="Conversation", description="The turns, in order.")
    conversation_scenario: ConversationScenario | None = Field(
        None, title="Conversation scenario", description="Instead of `conversation`: a simulated user's plan.")
    session_input: SessionInput | None = Field(None, title="Session input", description="The initial session.")
    final_session_state: dict[str, Any] | None = Field(None, title="Final session state",
                                                          description="Kept, not checked yet.")
    rubrics: list[Rubric] | None = Field(None, title="Rubrics", description="Rubrics for every turn.")
    creation_timestamp: float | None = None
    name: str | None = Field(None, title="Name (Agentflow)", description="Shown as the case's description.")
    description: str | None = Field(None, title="Description (Agentflow)", description="The case's description.")
    tags: list[str] | None = Field(None, title="Tags (Agentflow)", description="The case's tags.")
    metadata: dict[str, Any] | None = Field(None, title="Metadata (Agentflow)", description="Kept, not read.")


class EvalSet(BaseModel):
    model_config = _config("Eval set", "An ADK or Agentflow eval set: cases of expected conversations.",
                           extra="allow")

    eval_set_id: str = Field(title="Eval set id", description="The set's id.", examples=["weather_agent_basic_tests"])
    name: str | None = Field(None, title="Name", description="The set's name.")
    description: str | None = Field(None, title="Description", description="The set's description.")
    eval_cases: list[EvalCase] = Field(title="Eval cases", description="The cases.")
    creation_timestamp: float | None = None


class OldToolUse(BaseModel):
    model_config = _config("Expected tool use (old format)", "A tool call of ADK's older list format.")

    tool_name: str = Field(title="Tool name", description="The tool.", examples=["roll_die"])
    tool_input: dict[str, Any] = Field(title="Tool input", description="Its arguments, compared whole.",
                                       examples=[{"sides": 6}])


class OldResponse(BaseModel):
    model_config = _config("Intermediate response (old format)", "What an agent said on the way.")

    author: str = Field(title="Author", description="The agent.")
    text: str = Field(title="Text", description="What it said.")


class OldTurn(BaseModel):
    model_config = _config("Turn (old format)", "One turn of ADK's older list format.", extra="allow")

    query: str = Field(title="Query", description="What the user says.", examples=["Roll a die with 6 sides."])
    expected_tool_use: list[OldToolUse] = Field(default_factory=list, title="Expected tool use",
                                                description="The expected tool calls, in order.")
    expected_intermediate_agent_responses: list[OldResponse] = Field(
        default_factory=list, title="Expected intermediate agent responses", description="Kept for judges.")
    reference: str = Field("", title="Reference", description="The expected final answer.")


class OldInitialSession(BaseModel):
    model_config = _config("Initial session (old format)", "The session of an old-format case.", extra="allow")

    app_name: str | None = None
    user_id: str | None = None
    state: dict[str, Any] | None = None


class OldSession(BaseModel):
    model_config = _config("Session (old format)", "One case of ADK's older list of sessions.", extra="allow")

    name: str = Field(title="Name", description="The case's id.")
    data: list[OldTurn] = Field(title="Turns", description="The turns, in order.")
    initial_session: OldInitialSession | None = Field(None, title="Initial session", description="The session.")
    initial_state: Any | None = Field(None, title="Initial state", description="Read by neither ADK nor evalrun "
                                         "(ADK reads `initial_session`).")


class EvalFile(RootModel[EvalSet | list[OldTurn] | list[OldSession]]):
    """The top level of an eval file: an eval set, or one of ADK's older list formats."""

    model_config = ConfigDict(title="ADK or Agentflow eval set", json_schema_extra={
        "description": "A Google ADK eval set (`*.evalset.json`, `*.test.json`), ADK's older list of turns or of "
        "sessions, or an Agentflow eval set. evalrun runs it as it is: `evalrun validate`, `evalrun run`."})


# ------------------------------------------------------------------------ eval config

class JudgeModelOptions(BaseModel):
    model_config = _config("Judge model options", "The judge ADK's judged criteria use.", extra="allow")

    judge_model: str | None = Field(None, title="Judge model", description="A litellm model name, resolved with "
                                       "evalrun.yaml's judge settings (api_base, key).", examples=["gpt-4o-mini"])
    num_samples: int | None = Field(None, ge=1, title="Samples", description="Verdicts asked per turn; most decide.",
                                       examples=[3])
    judge_model_config: Any | None = None
    parallelism_limit: int | None = None


class Criterion(BaseModel):
    model_config = _config("Criterion", "A criterion with options; `threshold` is required.", extra="allow")

    threshold: float = Field(title="Threshold", description="The mean over turns the criterion must reach (>=).",
                             examples=[0.8])
    match_type: str | None = Field(None, title="Match type", description="tool_trajectory_avg_score: EXACT "
                                      "(default), IN_ORDER or ANY_ORDER.", examples=["IN_ORDER"])
    ignore_args: bool | None = Field(None, title="Ignore arguments",
                                        description="tool_trajectory_avg_score: compare tool names only.")
    judge_model_options: JudgeModelOptions | None = Field(None, title="Judge model options",
                                                             description="The judge (ADK's nesting).")
    judge_model: str | None = Field(None, title="Judge model (Agentflow)", description="A litellm model name.",
                                       examples=["gpt-4o-mini"])
    num_samples: int | None = Field(None, ge=1, title="Samples (Agentflow)", description="Verdicts per turn.")
    rubrics: list[Rubric] | None = Field(None, title="Rubrics", description="Rubrics of a rubric_based criterion.")


class UserSimulatorConfig(BaseModel):
    model_config = _config("User simulator", "The simulated user of conversation_scenario cases.", extra="allow")

    type: str | None = Field(None, title="Type", description="llm_backed.")
    model: str | None = Field(None, title="Model", description="Not used: evalrun.yaml's `simulator` plays the user.")
    max_allowed_invocations: int | None = Field(None, title="Maximum invocations",
                                                   description="The most user turns (-1: no limit; default 20).",
                                                   examples=[10])


class EvalConfigFile(BaseModel):
    model_config = _config("ADK or Agentflow eval config", "The criteria of the eval sets beside it "
                           "(`test_config.json`, `eval_config.json`), or named with --eval-config.", extra="allow")

    criteria: dict[str, float | Criterion] = Field(
        default_factory=dict, title="Criteria",
        description="Criterion name to its threshold, or to its options: tool_trajectory_avg_score, "
        "response_match_score, final_response_match_v2, rubric_based_final_response_quality_v1, "
        "rubric_based_tool_use_quality_v1, hallucinations_v1, safety_v1, per_turn_user_simulator_quality_v1, and "
        "the efficiency metrics (reported, never gating).",
        examples=[{"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}])
    user_simulator_config: UserSimulatorConfig | None = Field(None, title="User simulator",
                                                                 description="For conversation_scenario cases.")
    custom_metrics: dict[str, Any] | None = Field(None, title="Custom metrics",
                                                     description="Not supported (an error says so).")
