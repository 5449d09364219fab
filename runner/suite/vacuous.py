"""`validate`'s diagnostics for what compares nothing: a check, a final state or a list of forbidden calls
under which a case would pass (or could never pass) whatever the agent does.

What makes a check's options compare nothing is said next to the checks (runner/checks/vacuity.py, also
read when a check runs); this module places each at its line and column, and adds what only the case can
tell: a trajectory check with nothing to default to, a final state whose every value is ignored.
"""
from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ..checks import registry
from ..checks.vacuity import state_compares_nothing, vacuities
from .reader import Document

Location = tuple
CODE = "compares-nothing"
_COMPOSITIONS = ("all", "any", "average", "weighted")


def check_compares_something(doc: Document, case: dict[str, Any], at: Location) -> None:
    """Every check of the case (nested and per-turn ones too), its final state and its forbidden calls."""
    checks = case.get("checks")
    if isinstance(checks, list):
        where = _written_at(doc, at, "checks")
        for i, spec in enumerate(checks):
            _check(doc, case, spec, where + ("checks", i), f"checks[{i}]")
    turns = case.get("turns")
    for t, turn in enumerate(turns if isinstance(turns, list) else []):
        specs = turn.get("checks") if isinstance(turn, dict) else None
        for i, spec in enumerate(specs if isinstance(specs, list) else []):
            _check(doc, case, spec, at + ("turns", t, "checks", i), f"turns[{t}].checks[{i}]")
    _final_state(doc, case, at)
    if case.get("forbid_extra_calls") == []:
        _report(doc, _written_at(doc, at, "forbid_extra_calls") + ("forbid_extra_calls",),
                "forbid_extra_calls: [] forbids no call; write `true` to forbid every call no goal expects, or list "
                "the tool names (globs) to forbid", "error")
    _text_goals(doc, case, at)


def _check(doc: Document, case: dict, spec: Any, where: Location, label: str) -> None:
    if not isinstance(spec, dict) or not isinstance(spec.get("type"), str) or spec["type"] not in registry():
        return  # the schema reports it
    if spec["type"] in _COMPOSITIONS and isinstance(spec.get("checks"), list):
        for j, child in enumerate(spec["checks"]):
            _check(doc, case, child, where + ("checks", j), f"{label}.checks[{j}]")
    family = registry()[spec["type"]]
    try:
        options = family.options.model_validate(spec)
    except (ValidationError, ValueError, TypeError):
        return  # invalid options are reported with the schema's and the registry's words
    named = f"check {label} ({spec['type']})"
    for vacuity in vacuities(family, options):
        _report(doc, where + vacuity.where, f"{named} compares nothing: {vacuity.message}"
                if vacuity.severity == "error" else f"{named}: {vacuity.message}", vacuity.severity)
    found = _case_leaves_nothing(case, options)
    if found is not None:
        reason, severity = found
        _report(doc, where, f"{named} compares nothing in case '{case.get('id')}': {reason}", severity)


def _case_leaves_nothing(case: dict, options: Any) -> Any:
    """(why, severity) when the check has nothing to compare in this case, its options leaving that to the case."""
    kind = options.type
    if kind in ("trajectory", "trajectory_match") and options.expected is None \
            and options.match in ("in_order", "any_order", "superset") and not _expected_calls(case):
        return (f"it compares the agent's calls with the case's tool goals, and the case has none, which every "
                f"conversation matches in mode {options.match}; give `expected:` calls, or `match: exact` for \"the "
                "agent makes no call\""), "error"
    # (ADK's tool_trajectory_avg_score with nothing to compare is unscored when it runs, as a converted ADK file
    # may carry it: its files are read as they are, so it is not refused here)
    if kind == "no_leak" and options.canaries and not options.values and not case.get("canaries"):
        return "the case plants no `canaries` and the check lists no `values`: there is no secret to look for", "error"
    return None


def _expected_calls(case: dict) -> bool:
    goals = case.get("goal_details")
    turns = case.get("turns")
    return any(isinstance(g, dict) and g.get("type") == "tool_call" for g in (goals if isinstance(goals, list) else [])) \
        or any(isinstance(t, dict) and t.get("calls") for t in (turns if isinstance(turns, list) else []))


def _final_state(doc: Document, case: dict, at: Location) -> None:
    key = "final_state" if case.get("final_state") is not None else "final_session_state"
    expected = case.get(key)
    if not isinstance(expected, dict):
        return
    checks = given if isinstance(given := case.get("checks"), list) else []
    own = [c for c in checks if isinstance(c, dict) and c.get("type") == "final_state" and "expected" not in c]
    if any(c.get("extra_keys") == "forbid" for c in own):
        return  # the state must hold no key beyond the expected ones: that compares something
    matching = case.get("final_state_matching")
    reason = state_compares_nothing(expected, matching if isinstance(matching, dict) else {})
    if reason is not None:
        _report(doc, _written_at(doc, at, key) + (key,), f"{key} compares nothing: {reason}", "error")


def _text_goals(doc: Document, case: dict, at: Location) -> None:
    goals = case.get("goal_details")
    for i, goal in enumerate(goals if isinstance(goals, list) else []):
        response = goal.get("response") if isinstance(goal, dict) and goal.get("type") == "text" else None
        if isinstance(response, str) and response and not response.strip():
            _report(doc, at + ("goal_details", i, "response"), f"text goal '{goal.get('name')}' compares nothing: a "
                    "response of only spaces is no answer to compare with; write the expected answer, or remove "
                    "`response` and give `keywords`", "error")


def _report(doc: Document, where: Location, message: str, severity: str) -> None:
    """Once per place: a check shared by the cases of a file is reported at its own place, not once per case."""
    line, column = doc.position(where)
    if not any((d.line, d.column, d.message) == (line, column, message) for d in doc.diagnostics):
        doc.error(where, message, CODE, severity=severity)


def _written_at(doc: Document, at: Location, key: str) -> Location:
    """Where the case's `key` is written: in the case, or (a file's default for its cases) at the top level."""
    node: Any = doc.data
    for part in at:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return at
    return at if at == () or (isinstance(node, dict) and key in node) else ()
