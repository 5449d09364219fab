"""evalrun.yaml read and checked: LoadedConfig, load_config, and the checks that need the cases or the environment."""
from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from pydantic import BaseModel, ValidationError

from ..suite.reader import read_document
from ..suite.schema_check import check_document
from ..util.diagnostics import Diagnostic
from ..util.files import display_path, real_path
from .discovery import config_search, find_config, project_home
from .model import Config

if TYPE_CHECKING:
    from ..suite.models import Case

__all__ = ["LoadedConfig", "cache_folder", "check_cases_against_config", "config_line", "load_config", "suite_roots"]


def check_cases_against_config(cases: list[Case], config: Config) -> list[Diagnostic]:
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
    from ..checks import registry

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
    path: Path | None = None  # None: built-in defaults
    home: Path | None = None  # without a file: the project folder (`project_home`) that relative paths start from

    @property
    def base_dir(self) -> Path:
        return self.path.parent if self.path else (self.home or Path.cwd())

    @overload
    def resolve(self, relative: str) -> Path: ...
    @overload
    def resolve(self, relative: str | None) -> Path | None: ...

    def resolve(self, relative: str | None) -> Path | None:
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
    from ..suite.tool_specs import tool_problems

    for name, agent in config.agents.items():
        tools = getattr(agent, "tools", None)
        if tools:
            for path, message in tool_problems(tools):
                doc.error(("agents", name, "tools", *path), message, "bad-tool")


def config_line(paths: list[Path], config_path: Path | None = None, cwd: Path | None = None) -> str:
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


def suite_roots(paths: list[Path], loaded: LoadedConfig) -> list[Path]:
    """The folders transcripts may be read from: each folder named on the command line (a file's own
    folder), the config file's folder and the config's `allowed_paths`; all with symlinks resolved."""
    roots = [real_path(p) if real_path(p).is_dir() else real_path(p).parent for p in paths]
    if loaded.path is not None:
        roots.append(real_path(loaded.path).parent)
        roots.extend(real_path(loaded.base_dir / p) for p in loaded.config.allowed_paths)
    return list(dict.fromkeys(roots))


def load_config(path: Path | None, *, for_run: bool = False) -> tuple[LoadedConfig, list[Diagnostic]]:
    """Read and check a config file; its problems come back as diagnostics. `for_run` adds the checks
    of what a run needs from the environment (a judge's API key), which `validate` leaves alone."""
    from ..util.secrets import remember

    if path is None:
        remember()
        return LoadedConfig(config=Config()), []
    doc = read_document(path, display_path(path))
    remember(doc.data)  # what it names is masked wherever this process writes (runner/util/secrets.py)
    if doc.diagnostics:
        return LoadedConfig(config=Config()), doc.diagnostics
    if doc.data is None:
        return LoadedConfig(config=Config(), path=path), []
    check_document(doc, "config", widen=with_agent_kinds)
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


def cache_folder(paths: list[Path], config_path: Path | None) -> tuple[Path, list]:
    """The cache folder of the project `paths` lie in (as a run of them would use it), and the problems of
    its evalrun.yaml (diagnostics; the folder is then the default one)."""
    loaded, problems = load_config(config_path or find_config(paths))
    if loaded.path is None:
        loaded.home = project_home(paths, None)
    return loaded.resolve(loaded.config.cache_dir), problems


def with_agent_kinds(schema: dict[str, Any]) -> dict[str, Any]:
    """The config schema with the agent kinds of installed plugins (`evalrun.agents`) as valid `type`s."""
    from ..util.extensions import declared

    if not declared("agents"):
        return schema
    from ..run.agents._registry import KINDS, agent_kinds

    extra = [kind for kind in agent_kinds() if kind not in KINDS]
    if not extra:
        return schema
    schema = copy.deepcopy(schema)
    kind = schema["properties"]["agents"]["additionalProperties"]["properties"]["type"]
    kind["enum"] = kind["enum"] + extra  # their Options read them when the config is loaded
    return schema
