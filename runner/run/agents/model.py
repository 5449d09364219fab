"""`type: model` — a bare model (an OpenAI-compatible server over the fast path, or any litellm model) with
tools that evalrun plays.

Each user turn the model gets its system prompt, the conversation and the tools. When it calls a tool,
evalrun answers from the case: the `output` of the first goal of that tool whose arguments match (compared
strict: no model decides which canned answer to give), else the case's `tool_outputs` entry for the
tool, else an error result saying that no canned output exists. The model is asked again until it
answers in text; after `max_tool_rounds` rounds of tool calls the conversation ends (`max_tool_rounds`).

The played tools keep a state (the case's `initial_state:`, changed by the `effects:` of what answered
each call: runner/run/agents/_effects.py); it is the agent's final state, which `final_state:` reads.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator

from runner.llm.settings import ModelSettings
from runner.suite.models import Case, StateEffect
from runner.transcripts.state import ReportedState

from ._base import Agent, AgentEnv, AgentError, AgentStop, TurnContext, check_messages, excerpt, json_text
from ._effects import apply_effects

KIND = "model"
NO_OUTPUT = ("Error: evalrun has no canned output for tool '{name}' with these arguments. Give a goal of this "
             "tool an `output`, or the case `tool_outputs: {{{name}: ...}}`.")


class ModelAgentOptions(ModelSettings):
    model_config = ConfigDict(
        extra="forbid", title="Model agent",
        json_schema_extra={"description": "A bare model with a system prompt and tools; evalrun plays the tools "
                                          "with the case's canned outputs.",
                           "examples": [{"type": "model", "model": "openai/gpt-4o-mini", "api_key_env": "OPENAI_API_KEY",
                                         "system_prompt_file": "prompts/hr.txt", "tools_file": "tools/hr.json"}]})

    type: Literal["model"] = Field(title="Kind", description="`model`: a bare model.", examples=["model"])
    system_prompt: str | None = Field(
        None, title="System prompt", description="The system message, written here.",
        examples=["You are an HR assistant. Use the tools to answer questions about time off."])
    system_prompt_file: str | None = Field(
        None, title="System prompt file", description="A text file holding the system message (relative to "
        "evalrun.yaml). Give this or `system_prompt`.", examples=["prompts/hr_agent.txt"])
    tools: list[dict[str, Any]] = Field(
        default_factory=list, title="Tools",
        description="The tools the model may call, as OpenAI function specs.",
        examples=[[{"type": "function", "function": {"name": "get_assignment_id_hr_agent",
                                                     "parameters": {"type": "object",
                                                                    "properties": {"username": {"type": "string"}}}}}]])
    tools_file: str | None = Field(
        None, title="Tools file", description="A JSON file holding the list of tool specs (relative to evalrun.yaml). "
        "Give this or `tools`.", examples=["tools/hr.json"])
    max_tool_rounds: int = Field(
        8, ge=1, title="Maximum tool rounds",
        description="How many rounds of tool calls one user turn may take before the conversation is ended.",
        examples=[8])
    top_p: float | None = Field(None, gt=0, le=1, title="Top p", description="Nucleus sampling.", examples=[1.0])
    seed: int | None = Field(None, title="Seed", description="Sampling seed, where the provider supports it.",
                                examples=[7])

    @model_validator(mode="after")
    def _one_source_each(self) -> ModelAgentOptions:
        if self.system_prompt is not None and self.system_prompt_file is not None:
            raise ValueError("give system_prompt or system_prompt_file, not both")
        if self.tools and self.tools_file is not None:
            raise ValueError("give tools or tools_file, not both")
        return self

    def sampling(self) -> dict[str, Any]:
        """Sampling parameters besides temperature, max_tokens and `extra`, which the LLM client sends itself."""
        return {k: getattr(self, k) for k in ("top_p", "seed") if getattr(self, k) is not None}


Options = ModelAgentOptions  # the registry reads each kind's Options


class ModelAgent(Agent):
    kind = KIND

    def __init__(self, name: str, options: ModelAgentOptions, env: AgentEnv):
        self.name = name
        self.options = options
        self.env = env
        self.case: Case | None = None
        self.system: list[dict] = []
        self.tools: list[dict] = []
        self.client: Any = None
        self._cascade: Any = None
        self.state: dict = {}

    async def start(self, case: Case) -> None:
        self.case = case
        self.state = copy.deepcopy(case.initial_state or {})
        options, base = self.options, Path(self.env.base_dir)
        prompt = options.system_prompt
        if options.system_prompt_file is not None:
            prompt = _read(base / options.system_prompt_file, "system_prompt_file")
        self.system = [{"role": "system", "content": prompt}] if prompt else []
        self.tools = list(options.tools)
        if options.tools_file is not None:
            try:
                self.tools = json.loads(_read(base / options.tools_file, "tools_file"))
            except ValueError as exc:
                raise AgentError(f"tools_file {options.tools_file}: not JSON: {exc}") from None
            if not isinstance(self.tools, list) or not all(isinstance(t, dict) for t in self.tools):
                raise AgentError(f"tools_file {options.tools_file}: expected a JSON list of tool specs")
        self.client = self.env.llm_client(options, "agent") if self.env.llm_client else default_client(options, base)

    async def turn(self, messages: list[dict], ctx: TurnContext) -> list[dict]:
        new: list[dict] = []
        rounds = 0
        while True:
            message = await self._ask(self._with_system_prompt(messages) + new, new)
            new.append(message)
            calls = message.get("tool_calls") or []
            if not calls:
                return new
            if rounds == self.options.max_tool_rounds:
                raise AgentStop("max_tool_rounds", new)
            new.extend(self.play(call) for call in calls)
            rounds += 1

    def _with_system_prompt(self, messages: list[dict]) -> list[dict]:
        """The conversation behind one system message: the agent's own prompt, then what the conversation
        opened with (a case's planted canaries), so a model sees them where it sees its instructions."""
        leading = 0
        while leading < len(messages) and messages[leading].get("role") == "system":
            leading += 1
        parts = [m["content"] for m in self.system + messages[:leading] if isinstance(m.get("content"), str)]
        system = [{"role": "system", "content": "\n\n".join(parts)}] if parts else []
        return system + messages[leading:]

    async def final_state(self, ctx: TurnContext) -> ReportedState:
        return ReportedState(value=copy.deepcopy(self.state), source="the state the played tools kept")

    async def _ask(self, request: list[dict], so_far: list[dict]) -> dict:
        from runner.llm.errors import LLMError

        try:
            completion = await self.client.acomplete(request, tools=self.tools or None, **self.options.sampling())
        except LLMError as exc:
            raise AgentError(f"model {self.options.model}: {exc.reason}", messages=so_far) from None
        return check_messages([completion.message()], f"model {self.options.model}")[0]

    # -- playing the tools -------------------------------------------------------------------------
    def play(self, call: Any) -> dict:
        """The tool message answering one call, from the case's canned outputs."""
        call_id = call.get("id") if isinstance(call, dict) else None
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str):
            return _tool_message(call_id, None, f"Error: the tool call has no function name: {excerpt(json_text(call))}")
        raw = function.get("arguments")  # type: ignore[union-attr]  # a dict: it gave a name
        try:
            arguments = json.loads(raw) if isinstance(raw, str) and raw.strip() else (raw or {})
        except ValueError:
            return _tool_message(call_id, name, f"Error: the arguments of {name} are not valid JSON: {excerpt(raw)}")
        output, effects, answered_by = canned_answer(self.case, name, arguments, self._strict_cascade())
        apply_effects(self.state, effects, arguments, f"tool '{name}' answered by {answered_by}")
        return _tool_message(call_id, name, output)

    def _strict_cascade(self) -> Any:
        if self._cascade is None:
            from runner.score.cascade import Cascade, CascadeSettings

            # which canned answer to give is decided without models: fuzzy arguments compare strict
            self._cascade = Cascade(CascadeSettings(enable_fuzzy_matching=False, use_embeddings=False))
        return self._cascade


def canned_answer(case: Case | None, tool: str, arguments: Any,
                  cascade: Any) -> tuple[str, list[StateEffect], str]:
    """(output, effects on the state, what answered) for one call: the first matching goal's `output` and
    `effects`, else the case's `tool_outputs[tool]` and `tool_effects[tool]`, else an error text and none."""
    from runner.score.args import arguments_match

    if case is not None:
        for goal in case.tool_goals():
            if goal.tool_name == tool and "output" in goal.model_fields_set \
                    and arguments_match(goal, arguments, cascade, case.extra_args):
                return _as_text(goal.output), goal.effects, f"goal '{goal.name}'"
        if tool in case.tool_outputs:
            return _as_text(case.tool_outputs[tool]), case.tool_effects.get(tool, []), "tool_outputs"
    return NO_OUTPUT.format(name=tool), [], "no canned output"


def canned_output(case: Case | None, tool: str, arguments: Any, cascade: Any) -> str:
    """The first matching goal's `output`, else the case's `tool_outputs[tool]`, else an error text."""
    return canned_answer(case, tool, arguments, cascade)[0]


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _tool_message(call_id: Any, name: str | None, content: str) -> dict:
    message = {"role": "tool", "tool_call_id": call_id, "content": content}
    if name is not None:
        message["name"] = name
    return message


def _read(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AgentError(f"{what}: cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None


def default_client(options: ModelAgentOptions, base_dir: Path) -> Any:
    """The run's LLM client for this model (its limit, retries, cache and call records), when the
    caller supplies none."""
    from runner.llm.client import LLMClient

    return LLMClient(options, role="agent")


def create(name: str, options: ModelAgentOptions, env: AgentEnv) -> ModelAgent:
    return ModelAgent(name, options, env)
