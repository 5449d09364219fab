"""`--matrix`: one suite across agents and models. The axes (`--matrix agent=a,b`, `--matrix model=x,y`, or
evalrun.yaml's `matrix:`; the flag wins) make variants, their product in axis order; every selected case is played
once per variant in the one run folder, its results keyed by (case id, variant). A variant plays as a run with
`--agent` (the agent axis) and with the model of every agent that takes one replaced (the model axis) would.

The data contract (report.json's `matrix`, each record's `variant`) is the one the lead keeps in
notes/s2/CONTRACT_MATRIX.md; runner.report.grid draws the grid from it."""
from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..run.case_index import CaseRef
from ..util.diagnostics import Diagnostic, did_you_mean

if TYPE_CHECKING:
    from ..config import LoadedConfig
    from .request import RunRequest

AXES = ("agent", "model")
EXAMPLE = "for example --matrix agent=hr_v1,hr_v2 or --matrix model=openai/a,openai/b"


@dataclass(frozen=True)
class Variant:
    index: int
    assignments: tuple[tuple[str, str], ...]  # (axis, value) in axis order

    @property
    def id(self) -> str:
        return ", ".join(f"{axis}={value}" for axis, value in self.assignments)

    def get(self, axis: str) -> str | None:
        return dict(self.assignments).get(axis)


class VariantRef(CaseRef):
    """A case as one variant plays it: the case's ref, and the variant."""

    __slots__ = ("variant",)

    def __init__(self, ref: CaseRef, variant: Variant):
        for name in CaseRef.__slots__:
            object.__setattr__(self, name, getattr(ref, name))
        self.variant = variant


def run_key(ref: CaseRef) -> str:
    """How the run's tally names a selected case: its id, and its variant in a matrix run."""
    from ..results.models import case_label

    return case_label(ref.id, ref.variant.id) if isinstance(ref, VariantRef) else ref.id


@dataclass
class Matrix:
    axes: dict[str, list[str]]
    variants: list[Variant]

    def expand(self, refs: Sequence[CaseRef]) -> list[CaseRef]:
        """Every case once per variant, case by case (a case's variants finish close together)."""
        return [VariantRef(ref, variant) for ref in refs for variant in self.variants]


# ----------------------------------------------------------------------------- the axes, checked

def plan(request: RunRequest, loaded: LoadedConfig) -> tuple[Matrix | None, list[Diagnostic]]:
    """The run's matrix (None without one) or the usage problems of its axes, each precise."""
    given = request.matrix
    if given:
        where: _Flag | _InConfig = _Flag()
        axes, problems = _parse_flags(given) if not isinstance(given, Mapping) else _check_mapping(given, where)
    elif loaded.config.matrix:
        where = _InConfig(loaded.path)
        axes, problems = _check_mapping(loaded.config.matrix, where)
    else:
        return None, []
    if not problems:
        problems = _against_config(axes, request, loaded, where)
    if problems:
        return None, problems
    variants = [Variant(n, tuple(zip(axes, values, strict=True))) for n, values in enumerate(itertools.product(*axes.values()))]
    return Matrix(axes, variants), []


class _Flag:
    def problem(self, message: str) -> Diagnostic:
        return Diagnostic("--matrix", 1, 1, "error", message, "matrix")


class _InConfig:
    def __init__(self, path: Path | None):
        self.path, self.line = path, 1
        try:  # the line of `matrix:` in evalrun.yaml, so the message points at it
            for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if path else ():
                if text.startswith("matrix:"):
                    self.line = number
                    break
        except (OSError, UnicodeDecodeError):
            pass

    def problem(self, message: str) -> Diagnostic:
        return Diagnostic(str(self.path or "evalrun.yaml"), self.line, 1, "error", f"matrix: {message}", "matrix")


def _parse_flags(flags: Sequence[str]) -> tuple[dict[str, list[str]], list[Diagnostic]]:
    where, given = _Flag(), {}
    for flag in flags:
        axis, sep, values = str(flag).partition("=")
        if not sep:
            return {}, [where.problem(f"'{flag}' is not AXIS=VALUE,VALUE ({EXAMPLE})")]
        if axis.strip() in given:
            return {}, [where.problem(f"axis '{axis.strip()}' is given twice; give its values once, separated by commas")]
        given[axis.strip()] = [value.strip() for value in values.split(",")]
    return _check_mapping(given, where)


def _check_mapping(given: Mapping[str, Any], where) -> tuple[dict[str, list[str]], list[Diagnostic]]:
    axes, problems = {}, []
    for axis, values in given.items():
        if axis not in AXES:
            problems.append(where.problem(f"unknown axis '{axis}'{did_you_mean(str(axis), AXES)}; the axes are "
                                          f"{', '.join(AXES)}"))
            continue
        values = [values] if isinstance(values, str) else list(values or [])
        if not values or any(not isinstance(v, str) or not v.strip() for v in values):
            problems.append(where.problem(f"{axis}: an empty value in {_shown(values)}; give each {axis} by name "
                                          f"({EXAMPLE})"))
            continue
        values = [v.strip() for v in values]
        twice = sorted({v for v in values if values.count(v) > 1})
        if twice:
            problems.append(where.problem(f"{axis}: '{twice[0]}' is listed twice (a variant runs once per case)"))
            continue
        axes[axis] = values
    return axes, problems


def _shown(values: list) -> str:
    return ",".join("" if v is None else str(v) for v in values) or "(nothing)"


def _against_config(axes: dict[str, list[str]], request: RunRequest, loaded: LoadedConfig,
                    where) -> list[Diagnostic]:
    declared = loaded.config.agents
    problems = []
    if "agent" in axes and request.agent is not None:
        problems.append(where.problem(f"agent: --agent {request.agent} and the agent axis both choose the agent; "
                                      "drop --agent (the axis plays every case with each of its agents)"))
    for name in axes.get("agent", []):
        if name not in declared:
            known = f"declared: {', '.join(declared)}" if declared else "evalrun.yaml declares no agents"
            problems.append(where.problem(f"agent: '{name}' is not declared in evalrun.yaml's agents"
                                          f"{did_you_mean(name, declared)} ({known})"))
    if "model" in axes:  # the agents that will play: the axis's, --agent's (each case's own: check_cases)
        problems += _takes_no_model(axes.get("agent") or ([request.agent] if request.agent else []), loaded, where)
    return problems


def _takes_no_model(names: Iterable[str], loaded: LoadedConfig, where) -> list[Diagnostic]:
    declared = loaded.config.agents
    return [where.problem(f"model: agent '{name}' (type {getattr(declared[name], 'type', '?')}) takes no model, so "
                          "the model axis cannot apply to it; the model axis sets the `model` of agents of type "
                          "model (drop the axis, or play these cases with such an agent)")
            for name in sorted(set(names)) if name in declared and "model" not in type(declared[name]).model_fields]


def check_cases(matrix: Matrix, refs: Iterable[CaseRef], request: RunRequest, loaded: LoadedConfig,
                ) -> list[Diagnostic]:
    """The model axis against the agents the selected live cases name (known once the cases are collected)."""
    if "model" not in matrix.axes or "agent" in matrix.axes or request.agent is not None:
        return []
    if request.replay_dir is not None or request.conversations_dir is not None:
        return []  # nothing is played: no model is called
    config = loaded.config
    fallback = config.default_agent or (next(iter(config.agents)) if len(config.agents) == 1 else None)
    named = {name for ref in refs if not ref.recorded and (name := ref.agent or fallback) is not None}
    return _takes_no_model(named, loaded, _Flag() if request.matrix else _InConfig(loaded.path))


# ----------------------------------------------------------------------------- playing a variant

def variant_config(loaded: LoadedConfig, variant: Variant) -> LoadedConfig:
    """evalrun.yaml as the variant plays it: the model axis's model in every agent that takes one."""
    model = variant.get("model")
    if model is None:
        return loaded
    agents = {name: options.model_copy(update={"model": model}) if "model" in type(options).model_fields else options
              for name, options in loaded.config.agents.items()}
    return loaded.model_copy(update={"config": loaded.config.model_copy(update={"agents": agents})})


class MatrixRunner:
    """Plays a VariantRef with its variant's case runner and marks each result with the variant."""

    def __init__(self, runners: list[Any], variants: list[Variant]):
        self._runners, self._variants = runners, variants

    def __getattr__(self, name: str) -> Any:  # everything else (the cascade, in_worker) is the first variant's
        return getattr(self._runners[0], name)

    async def run(self, ref: VariantRef, repeat: int | None = None) -> list:
        return self._marked(ref, await self._runners[ref.variant.index].run(ref, repeat))

    def run_recorded(self, ref: VariantRef, repeat: int | None = None, **options: Any) -> list:
        return self._marked(ref, self._runners[ref.variant.index].run_recorded(ref, repeat, **options))

    @staticmethod
    def _marked(ref: VariantRef, results: list) -> list:
        for result in results:
            result.variant = ref.variant.id
        return results


# ----------------------------------------------------------------------------- the run's parts (lifecycle)

def prepare(prepared: Any) -> None:
    """After the cases are selected: the run's matrix checked (RunEnded with its usage problems) and the
    selected cases expanded, once per variant. Nothing changes in a run without a matrix."""
    from ..results.verdict import EXIT_USAGE
    from .ended import RunEnded
    from .request import RunOutcome

    request, loaded = prepared.request, prepared.loaded
    if request.conversations_dir is not None and not request.matrix:
        return  # rescore scores the conversations a run saved, as they were keyed
    matrix, problems = plan(request, loaded)
    if matrix is not None:
        problems = check_cases(matrix, prepared.index.refs, request, loaded)
        if request.executor in ("processes", "ray"):
            problems.append(Diagnostic("--executor", 1, 1, "error", f"--executor {request.executor} cannot run a "
                                       "--matrix run (its variants play in this process); use --executor local",
                                       "usage"))
        if request.repeat_auto is not None:  # its stopping rule counts a case's runs by id, not by (id, variant)
            problems.append(Diagnostic("--repeat", 1, 1, "error", "--repeat auto cannot run a --matrix run yet; "
                                       "use --repeat N", "usage"))
    if problems:
        raise RunEnded(RunOutcome(EXIT_USAGE, [*prepared.diagnostics, *problems]))
    if matrix is not None:
        prepared.matrix = matrix
        prepared.index.refs = matrix.expand(prepared.index.refs)


def case_runner(matrix: Matrix, loaded: LoadedConfig, options: Any, roots: Sequence[Path], save_conversation,
                on_notice) -> MatrixRunner:
    """A case runner per variant, one scoring cascade for all; each variant's conversations are saved under the
    case's key and the variant (`<key> [<variant>]`), so two variants of a case never share one."""
    from ..run.execute import CaseRunner
    from ..run.scoring_cascade import make_cascade

    cascade = make_cascade(loaded, on_notice)
    runners = []
    for variant in matrix.variants:
        def save(key: str, data: dict, _suffix: str = f" [{variant.id}]"):
            return save_conversation(key + _suffix, data)

        runners.append(CaseRunner(variant_config(loaded, variant),
                                  dataclasses.replace(options, agent=variant.get("agent") or options.agent),
                                  cascade, roots=roots, save_conversation=save, on_notice=on_notice))
    return MatrixRunner(runners, matrix.variants)
