"""Running a case's checks and folding their verdicts into the case's status.

Checks that read the conversation are decided at scoring time (`apply_checks`). Budget checks over
what the run measured (wall time, model cost) are decided once the case has finished and those are
known (`settle_run_checks`); until then they read as skipped with `PENDING`, which is also what they
stay if the case never gets that far.

Nothing passes that was not checked: a judged check with no judge to ask is `unscored` (a configuration
problem, never a pass), and a case whose only criteria are checks that were all skipped (left out by
a --profile, no reference answer, no live timing) is `unscored` with the reasons.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ..results.models import CaseResult, CheckResult
from ..score.turns import turn_name, turn_pairs
from . import CheckContext, CheckFamily, CheckOptions, Verdict, registry
from .adk import TURN_CRITERIA, adk_verdict, turn_context
from .judged import JUDGE_TURNED_OFF, NO_JUDGE
from .select import Selection
from .vacuity import compares_nothing
from .write_calls import red_team_guard

if TYPE_CHECKING:
    from ..score.cascade import Cascade
    from ..suite.models import Case
    from ..suite.tool_specs import ToolSet
    from ..transcripts.read import Trajectory

PENDING = "not measured: decided when the case has finished"
_LIVE = "_live"  # evidence key carried from scoring to settling: was the conversation played live?
_ONLY_CHECKS = "_only_checks"  # evidence key carried to settling: the case has no criteria but its checks


def parse_check(spec: dict[str, Any]) -> tuple[CheckFamily, CheckOptions]:
    """The family and typed options of one `checks:` item. KeyError for an unknown type, ValidationError
    for bad options (the loader reports both with positions first; this is the run-time guard)."""
    family = registry()[spec.get("type")]  # type: ignore[index]  # no type: the KeyError the docstring promises
    return family, family.options.model_validate(spec)


def check_problem(spec: Any) -> str | None:
    """Why a `checks:` item is not a valid check, or None. Strict, and no explicit nulls, as the schema."""
    if not isinstance(spec, dict) or spec.get("type") not in registry():
        return f"unknown check type {spec.get('type') if isinstance(spec, dict) else spec!r}"
    judge = spec.get("judge")
    if any(value is None for value in spec.values()) or (
            isinstance(judge, dict) and any(value is None for value in judge.values())):
        return "a check option is null"  # the schema has no nulls: it reports where
    try:
        registry()[spec["type"]].options.model_validate(spec, strict=True)
    except ValidationError as error:
        return "; ".join(_worded(e) for e in error.errors())
    return None


def _worded(error: Mapping[str, Any]) -> str:
    """One pydantic error as `where: what`, without pydantic's "Value error," prefix and links."""
    where = ".".join(str(part) for part in error.get("loc", ()))
    cause = (error.get("ctx") or {}).get("error")
    what = str(cause) if cause is not None else error.get("msg", "invalid")
    return f"{where}: {what}" if where else what


def evaluate(family: CheckFamily, options: CheckOptions, ctx: CheckContext) -> CheckResult:
    """One check's result. A check that raises is unscored with the reason: never a pass, never a crash."""
    try:
        vacuous = compares_nothing(family, options)  # `validate` refuses these; one that got through decides nothing
        if vacuous is not None:
            verdict = Verdict(unscored=vacuous)
        else:  # a check written under an ADK criterion's name is scored turn by turn, as ADK scores it
            verdict = adk_verdict(family, options, ctx) if options.type in TURN_CRITERIA else family.run(options, ctx)
    except Exception as exc:  # a bug in a check must not take the case down
        verdict = Verdict(unscored=f"the check failed to run: {type(exc).__name__}: {exc}")
    if verdict.skipped == NO_JUDGE:  # nobody could decide it: the configuration's fault, never a pass
        verdict = Verdict(unscored=no_judge_reason(ctx), evidence=verdict.evidence)
    threshold = options.threshold if options.threshold is not None else family.default_threshold_for(options.type)
    base = {"name": options.name or options.type, "type": options.type, "gate": options.gate, "weight": options.weight,
                "threshold": threshold}
    if verdict.skipped is not None:
        return CheckResult(**base, status="skipped", explanation=f"skipped: {verdict.skipped}",
                           evidence=verdict.evidence)
    if verdict.unscored is None and verdict.score is None and verdict.passed is not None:  # informational
        return CheckResult(**base, status="passed" if verdict.passed else "failed", explanation=verdict.explanation,
                           evidence=verdict.evidence)
    if verdict.unscored is not None or verdict.score is None:
        reason = verdict.unscored or "the check gave no score"
        return CheckResult(**base, status="unscored", explanation=f"unscored: {reason}", evidence=verdict.evidence)
    passed = verdict.passed if verdict.passed is not None else verdict.score >= threshold
    versus = "" if verdict.passed is not None else f" (score {verdict.score:.3g} {'>=' if passed else '<'} threshold {threshold:g})"
    return CheckResult(**base, status="passed" if passed else "failed", score=verdict.score,
                       explanation=verdict.explanation + versus, evidence=verdict.evidence)


def no_judge_reason(ctx: CheckContext) -> str:
    """Why a judged check had no judge: none configured, or enable_fuzzy_matching turned it off."""
    settings = getattr(ctx.cascade, "settings", None)
    return JUDGE_TURNED_OFF if settings is not None and not settings.enable_fuzzy_matching else NO_JUDGE


def skipped_result(options: CheckOptions, reason: str) -> CheckResult:
    return CheckResult(name=options.name or options.type, type=options.type, gate=options.gate, weight=options.weight,
                       status="skipped", explanation=f"skipped: {reason}")


def checks_of(case: Case) -> list[dict[str, Any]]:
    """The case's `checks:`, and `no_leak` when it plants canaries and does not check them itself: a canary
    is by definition something no reply may contain; and `no_write_calls` on a red-team case that has none
    (runner/checks/write_calls.py): under attack the agent must change nothing."""
    checks = list(case.checks)
    if case.canaries and not any(isinstance(s, dict) and s.get("type") == "no_leak" and s.get("canaries", True)
                                 for s in case.checks):
        checks.append({"type": "no_leak", "name": "canaries"})
    guard = red_team_guard(case)
    return [*checks, guard] if guard is not None else checks


def run_checks(case: Case, trajectory: Trajectory, cascade: Cascade | None = None, *,
               live: bool = False, selection: Selection | None = None,
               base_dir: Path | None = None, tools: ToolSet | None = None) -> list[CheckResult]:
    """Every check of the case, in the order written; budget checks on the run are left PENDING, and
    checks the run's profile leaves out are skipped with its name."""
    results = []
    ctx = CheckContext(case=case, trajectory=trajectory, cascade=cascade, selection=selection, base_dir=base_dir,
                       tools=tools)
    for spec in case_checks(case):
        try:
            family, options = parse_check(spec)
        except (KeyError, TypeError, ValidationError) as exc:
            name = str(spec.get("name") or spec.get("type")) if isinstance(spec, dict) else "check"
            results.append(CheckResult(name=name, type=str(spec.get("type") if isinstance(spec, dict) else ""),
                                       status="unscored", explanation=f"unscored: invalid check: {exc}"))
            continue
        left_out = selection.left_out(family, options) if selection is not None else None
        if left_out is not None:
            results.append(skipped_result(options, left_out))
        elif family.reads == "run":
            results.append(CheckResult(name=options.name or options.type, type=options.type, gate=options.gate,
                                       weight=options.weight, status="skipped", explanation=f"skipped: {PENDING}",
                                       evidence={"spec": spec, _LIVE: live}))
        else:
            results.append(evaluate(family, options, ctx))
    if case.turns and any(turn.checks for turn in case.turns):
        results += run_turn_checks(ctx)
    return results


def run_turn_checks(ctx: CheckContext) -> list[CheckResult]:
    """Each turn's own `checks:`, on that turn alone (its messages, calls and answer), named `turn N: <name>`."""
    pairs, problem = turn_pairs(ctx.case, ctx.trajectory)
    results = []
    for number, turn in enumerate(ctx.case.turns or (), start=1):
        pair = next((p for p in pairs if p.number == number), None)
        for spec in turn.checks:
            try:
                family, options = parse_check(spec)
            except (KeyError, TypeError, ValidationError) as exc:
                results.append(CheckResult(name=f"turn {number}: {spec.get('type')}", type=str(spec.get("type")),
                                           status="unscored", explanation=f"unscored: invalid check: {exc}"))
                continue
            name = f"{turn_name(pair) if pair is not None else f'turn {number}'}: {options.name or options.type}"
            if pair is None or pair.actual is None:
                why = problem or "the conversation ended before this turn (no such user message was recorded)"
                results.append(CheckResult(name=name, type=options.type, gate=options.gate, weight=options.weight,
                                           status="unscored" if problem else "failed",
                                           explanation=f"{'unscored: ' if problem else ''}{why}"))
                continue
            left_out = ctx.selection.left_out(family, options) if ctx.selection is not None else None
            if left_out is not None:
                results.append(skipped_result(options, left_out).model_copy(update={"name": name}))
            else:
                results.append(evaluate(family, options, turn_context(ctx, pair)).model_copy(update={"name": name}))
    return results


def apply_checks(result: CaseResult, case: Case, trajectory: Trajectory, cascade: Cascade | None = None,
                 *, live: bool = False, selection: Selection | None = None,
                 base_dir: Path | None = None, tools: ToolSet | None = None) -> CaseResult:
    """Scoring's hook: run the case's checks and fold the gating ones into the result's status."""
    if case_checks(case) or any(turn.checks for turn in case.turns or ()):
        result.checks = run_checks(case, trajectory, cascade, live=live, selection=selection, base_dir=base_dir,
                                   tools=tools)
        fold_into_status(result, result.checks)
        if not criteria_besides_checks(case):
            for check in result.checks:
                if check.explanation == f"skipped: {PENDING}":
                    check.evidence[_ONLY_CHECKS] = True
            require_something_checked(result)
    return result


def case_checks(case: Case) -> list[dict[str, Any]]:
    """The case's `checks:` (with `no_leak` for its canaries, see checks_of), and a `final_state` check when it
    has a `final_state:` (or ADK's `final_session_state`) that none of them compares."""
    checks = checks_of(case)
    if (case.final_state is not None or case.final_session_state is not None) and not any(
            isinstance(spec, dict) and spec.get("type") == "final_state" for spec in checks):
        return [*checks, {"type": "final_state"}]
    return checks


def criteria_besides_checks(case: Case) -> bool:
    """Whether the case decides something besides its checks: a goal evalrun scores, forbidden calls, or a
    required ending."""
    return bool(case.tool_goals() or case.text_goals() or case.forbid_extra_calls or case.termination)


def require_something_checked(result: CaseResult) -> None:
    """A passing case whose checks are its only criteria, none of which was decided (each skipped: left
    out by a profile, no reference answer, no live timing; or not gating), is unscored: nothing was
    checked. Budget checks still PENDING are decided later (`settle_run_checks` asks again)."""
    if result.status != "passed" or any(c.explanation == f"skipped: {PENDING}" for c in result.checks):
        return
    if any(c.gate and c.status in ("passed", "failed") for c in result.checks):
        return
    skipped = [f"check '{c.name}' {c.explanation}" for c in result.checks if c.status == "skipped"]
    not_gating = [f"check '{c.name}' is not gating (gate: false)" for c in result.checks if not c.gate]
    result.status = "unscored"
    result.unscored_reason = ("nothing was checked: the case has no goals, forbidden calls or required ending, and "
                              "none of its checks was decided: " + "; ".join(skipped + not_gating))


def settle_run_checks(result: CaseResult) -> CaseResult:
    """Decide the budget checks on the finished case's measured wall time and model usage."""
    only_checks = any(c.evidence.get(_ONLY_CHECKS) for c in result.checks)
    settled = []
    for i, check in enumerate(result.checks):
        if check.explanation != f"skipped: {PENDING}" or "spec" not in check.evidence:
            continue
        family, options = parse_check(check.evidence["spec"])
        live = bool(check.evidence.get(_LIVE))
        ctx = CheckContext(case=None, trajectory=None, usage=result.model_usage,  # type: ignore[arg-type]
                           duration_s=result.duration_s if live else None)
        result.checks[i] = evaluate(family, options, ctx)
        settled.append(result.checks[i])
    fold_into_status(result, settled)
    if only_checks:
        require_something_checked(result)
    return result


def fold_into_status(result: CaseResult, checks: list[CheckResult]) -> None:
    """A failing gating check fails the case; an unscored one makes a passing case unscored. Cases that
    errored or were skipped keep their status."""
    if result.status not in ("passed", "failed", "unscored"):
        return
    failing = [c for c in checks if c.gate and c.status == "failed"]
    unscored = [c for c in checks if c.gate and c.status == "unscored"]
    result.failures += [f"check '{c.name}': {c.explanation}" for c in failing]
    if failing:
        result.status = "failed"
    elif unscored and result.status in ("passed", "unscored"):
        result.status = "unscored"
        reasons = [result.unscored_reason] if result.unscored_reason else []
        result.unscored_reason = "; ".join(reasons + [f"check '{c.name}': {c.explanation}" for c in unscored])
