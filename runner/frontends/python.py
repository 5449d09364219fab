"""Evaluate from Python: the functions a script or a test calls.

    from runner import evaluate, aevaluate, evaluate_file

    report = evaluate("suites/", agent=respond)          # respond(messages, context) -> reply
    report.exit_code, report.passed, report.cases, report.metrics
    report.raise_for_failures()                          # EvaluationFailed, with evalrun's explanations

    report = await aevaluate("suites/", agent=respond)   # the same, its cases played on the caller's loop
    evaluate_file("evals/order.yaml", agent=respond)     # one call in a test: runs, raises when it did not pass

`agent` is what plays the live cases: a Python function `(messages, context) -> reply` (sync or async,
as `type: python`), a Google ADK agent object (as `type: adk`), an entry point `"module:attribute"`
naming either, the name of an agent declared in evalrun.yaml (as `--agent`), or None (evalrun.yaml's
own choice, as the CLI). `config` is None (the evalrun.yaml next to or above the paths, as the CLI
finds it), the path of one, or a dict of its settings (relative paths in it are read from the current
folder). Every run writes its folder and report.json as the CLI does.
"""
from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from ..config.discovery import find_config
from ..config.load import LoadedConfig, load_config
from ..config.model import Config
from ..results.models import CaseResult, Summary
from ..results.verdict import EXIT_USAGE, Verdict
from ..session.request import RunOutcome, RunRequest
from ..session.run import arun, run_request
from ..util.diagnostics import Diagnostic

__all__ = ["EvaluationFailed", "Report", "aevaluate", "evaluate", "evaluate_file"]

PathLike = Union[str, "os.PathLike[str]"]


class EvaluationFailed(AssertionError):
    """The evaluation did not pass; the message is evalrun's explanation of every case that did not.
    An AssertionError, so that a test shows it as a failed assertion."""

    def __init__(self, report: Report):
        super().__init__(report.explain())
        self.report = report


@dataclass
class Report:
    """What one evaluation found. `exit_code` is the CLI's (0 passed, 1 failed, 3 errors or unscored,
    4 a usage problem such as a suite error, 5 nothing to run); `path` is its report.json."""

    exit_code: int
    summary: Summary | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    path: Path | None = None
    notes: list[str] = field(default_factory=list)
    outcome: RunOutcome | None = field(default=None, repr=False)
    _cases: list[CaseResult] | None = field(default=None, repr=False)

    @classmethod
    def of(cls, outcome: RunOutcome) -> Report:
        return cls(outcome.exit_code, outcome.summary, list(outcome.diagnostics), outcome.report_path,
                   list(outcome.notes), outcome)

    @property
    def verdict(self) -> Verdict:
        """The run's one verdict (runner.results.verdict), as the CLI exits with it and pytest reports it."""
        if self.outcome is not None:
            return self.outcome.verdict
        errors = [str(d) for d in self.diagnostics if d.severity == "error"]
        return Verdict(self.exit_code, f"{errors[0] if errors else 'the run did not start'}: exit {self.exit_code}")

    @property
    def passed(self) -> bool:
        return self.verdict.ok

    @property
    def cases(self) -> list[CaseResult]:
        """Every case's result (goals, checks, metrics, the conversation), in collection order."""
        if self._cases is None:
            self._cases = list(self.outcome.results()) if self.outcome is not None else []
        return self._cases

    def case(self, case_id: str) -> CaseResult:
        """The result of the case with this id; KeyError naming the ids there are."""
        for result in self.cases:
            if result.id == case_id:
                return result
        raise KeyError(f"no case '{case_id}' in this report (cases: {', '.join(r.id for r in self.cases)})")

    @property
    def metrics(self) -> dict[str, float | None]:
        """The run's pass rate and the means of its case metrics (None when nothing was scored)."""
        s = self.summary
        if s is None:
            return {}
        return {"pass_rate": s.pass_rate, "journey_completion": s.mean_journey_completion,
                "tool_call_precision": s.mean_tool_call_precision, "tool_call_recall": s.mean_tool_call_recall}

    def explain(self) -> str:
        """The console's account of the run: problems of the suites, each case that did not pass with why,
        and the verdict."""
        from ..report.console import case_line, explain_case

        redact = self.outcome.redact if self.outcome is not None else str
        lines = [str(d) for d in self.diagnostics]
        for result in self.cases:
            if result.status in ("failed", "error", "unscored"):
                lines += [case_line(result), *explain_case(result)]
        if self.summary is not None:
            s = self.summary
            counts = ", ".join(f"{getattr(s, k)} {k}" for k in ("passed", "failed", "error", "unscored", "skipped")
                               if getattr(s, k))
            lines.append(f"{counts or 'no case ran'}; {s.exit_reason}")
        elif not self.diagnostics:
            lines.append(f"exit {self.exit_code}")
        if self.path is not None:
            lines.append(f"report: {self.path}")
        return redact("\n".join(lines))

    def raise_for_failures(self) -> Report:
        """EvaluationFailed unless the run passed (exit code 0); the report itself otherwise."""
        __tracebackhide__ = True  # pytest shows the test's line and evalrun's explanation, not this frame
        if not self.passed:
            raise EvaluationFailed(self)
        return self


def evaluate(paths: PathLike | Sequence[PathLike], *, agent: Any = None,
             config: PathLike | dict | Config | None = None, **options: Any) -> Report:
    """Run the suites under `paths` (files or folders) as `evalrun PATHS` does and return the Report.
    The other keyword arguments are the run's options, RunRequest's fields as the CLI's flags set them:
    `filters` (-k), `tags` (--tag), `output_dir`, `concurrency` (-j), `formats` (--format), `repeats`
    (--repeat: N, "auto" or "auto:max=8,..."), `profile`, `min_pass_rate`, `baseline`, `max_regression`,
    `exitfirst` (-x), ...; an unknown one is a TypeError naming the known ones.
    Ctrl-C stops the cases in flight, writes the report of those that finished, then raises
    KeyboardInterrupt."""
    with _Request(paths, agent, config, options) as request:
        if isinstance(request, Report):
            return request
        in_main_thread = threading.current_thread() is threading.main_thread()
        report = Report.of(run_request(request, handle_signals=in_main_thread))
    if report.summary is not None and report.summary.interrupted and report.summary.stop_reason == "SIGINT":
        raise KeyboardInterrupt  # the report of what finished is written; Ctrl-C still stops the caller (pytest)
    return report


async def aevaluate(paths: PathLike | Sequence[PathLike], *, agent: Any = None,
                    config: PathLike | dict | Config | None = None, **options: Any) -> Report:
    """`evaluate` for async code: the cases are played on the caller's event loop (an async agent may use
    what the caller set up on it); reading the suites and writing the report run in a worker thread.
    Cancelled, it cancels the cases in flight and still writes the report of those that finished."""
    with _Request(paths, agent, config, options) as request:
        if isinstance(request, Report):
            return request
        return Report.of(await arun(request))


def evaluate_file(eval_file: PathLike, *, agent: Any = None, config: PathLike | dict | Config | None = None,
                  **options: Any) -> Report:
    """One call for a test: evaluate one suite file (an evalrun YAML, a watsonx dataset, ...) and raise
    EvaluationFailed with evalrun's explanations unless every case passed. Needs no evalrun.yaml when
    `agent` is given. Returns the Report. The other keyword arguments are `evaluate`'s."""
    __tracebackhide__ = True
    return evaluate([eval_file], agent=agent, config=config, **options).raise_for_failures()


# ----------------------------------------------------------------------------- the request

class _Request:
    """The RunRequest for an evaluation (or the Report of a configuration that cannot be used), holding
    an agent given as an object for as long as the run lasts."""

    def __init__(self, paths: Any, agent: Any, config: Any, options: dict[str, Any]):
        self.paths = [Path(p) for p in ([paths] if isinstance(paths, (str, os.PathLike)) else paths)]
        self.agent, self.config, self.options = agent, config, _checked_options(options)
        self.held: str | None = None

    def __enter__(self) -> RunRequest | Report:
        loaded, problems = _loaded_config(self.config, self.paths)
        if problems:
            return Report(EXIT_USAGE, diagnostics=problems)
        agent_name = None
        if self.agent is not None:
            loaded, agent_name, self.held = _with_agent(loaded, self.agent)
        return RunRequest(self.paths, loaded.path, agent=agent_name, loaded=loaded, **self.options)

    def __exit__(self, *exc_info: Any) -> None:
        if self.held is not None:
            from ..run.agents import _inline

            _inline.release(self.held)


# Set by evaluate itself (paths, agent, config) or by the run, not by a caller.
_NOT_OPTIONS = {"paths", "config_path", "agent", "loaded", "saved_selection", "conversations_dir"}
_PATH_OPTIONS = {"output_dir", "replay_dir", "baseline", "eval_config"}


def _checked_options(options: dict[str, Any]) -> dict[str, Any]:
    """The run options given to evaluate/aevaluate, checked against RunRequest's fields: an unknown one is a
    TypeError naming it, the closest known one and every known one."""
    import dataclasses
    import difflib

    known = [f.name for f in dataclasses.fields(RunRequest) if f.name not in _NOT_OPTIONS]
    for name in options:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise TypeError(f"evaluate() got an unknown option '{name}'{hint} (known: {', '.join(sorted(known))})")
    return {name: Path(value) if name in _PATH_OPTIONS and value is not None else value
            for name, value in options.items()}


def _loaded_config(config: Any, paths: list[Path]) -> tuple[LoadedConfig, list[Diagnostic]]:
    if isinstance(config, Config):
        return LoadedConfig(config=config), []
    if isinstance(config, dict):
        from pydantic import ValidationError

        try:
            return LoadedConfig(config=Config.model_validate(config)), []
        except ValidationError as exc:
            return LoadedConfig(config=Config()), [
                Diagnostic("config", 1, 1, "error", f"config: {'.'.join(map(str, e['loc'])) or 'the settings'}: "
                                                    f"{e['msg']}", "config") for e in exc.errors()]
    if config is not None and not isinstance(config, (str, os.PathLike)):
        raise TypeError(f"config must be a path to evalrun.yaml, a dict of its settings or None, not "
                        f"{type(config).__name__}")
    return load_config(Path(config) if config is not None else find_config(paths), for_run=True)


def _with_agent(loaded: LoadedConfig, agent: Any) -> tuple[LoadedConfig, str, str | None]:
    """The configuration with `agent` declared in it (unless it names a declared one); the name every live
    case is played by; the entry point held for an agent given as an object."""
    from ..run.agents import _inline

    if isinstance(agent, str) and ":" not in agent:
        return loaded, agent, None  # a declared agent's name: checked with the run's other options
    held = None
    entrypoint: str | None
    if isinstance(agent, str):
        entrypoint, target = agent, _load(agent, loaded.base_dir)
    else:
        entrypoint, target = _entrypoint_of(agent), agent
        if entrypoint is None:
            entrypoint = held = _inline.hold(agent)
    kind = "adk" if _is_adk_agent(target) else "python" if callable(target) else None
    if kind is None:
        raise TypeError(f"agent must be a function (messages, context) -> reply, a Google ADK agent, "
                        f"'module:attribute' naming one, or the name of an agent in evalrun.yaml; got a "
                        f"{type(target).__name__}. For another framework (LangGraph, the OpenAI Agents SDK), wrap "
                        f"it in a function: see docs/how-to/connect-python.md, 'Wrapping an agent built with a framework'")
    name = _free_name(getattr(target, "__name__", None) or getattr(target, "name", None) or "agent", loaded.config)
    declared = Config.model_validate({"agents": {name: {"type": kind, "entrypoint": entrypoint}}}).agents[name]
    config = loaded.config.model_copy(update={"agents": {**loaded.config.agents, name: declared}})
    return loaded.model_copy(update={"config": config}), name, held


def _load(entrypoint: str, base_dir: Path) -> Any:
    from ..run.agents._base import AgentError
    from ..run.agents.adk import load_adk_object

    try:
        return load_adk_object(entrypoint, base_dir)
    except AgentError as exc:
        raise ValueError(exc.reason) from None


def _entrypoint_of(target: Any) -> str | None:
    """`module:name` when `target` is importable by its own names (a module-level function): reports then
    name it as the user does."""
    module, qualname = getattr(target, "__module__", None), getattr(target, "__qualname__", None)
    if not module or not qualname or "<" in qualname or module not in sys.modules:
        return None
    found: Any = sys.modules[module]
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return f"{module}:{qualname}" if found is target else None


def _is_adk_agent(target: Any) -> bool:
    return any(c.__module__.startswith("google.adk.") for c in type(target).__mro__)


def _free_name(wanted: str, config: Config) -> str:
    wanted = re.sub(r"[^\w.-]", "_", str(wanted)).strip("_") or "agent"  # a lambda's name is <lambda>
    name, n = wanted, 2
    while name in config.agents:
        name, n = f"{wanted}_{n}", n + 1
    return name
