"""Why a surviving mutant passed: the line of the suite that let it through, and the fix to consider, in the
words of the person who wrote the YAML ("`start_date: fuzzy` accepted 2025-01-02 for 2025-01-01: consider
`strict`, or a `tolerance`")."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..results.models import CaseResult
from ..suite.models import Case, TextGoal
from .locate import Locator
from .mutant import Mutant
from .rules import argument_rule, goal_named, goal_of_call


@dataclass
class Finding:
    line: str  # file:line of the suite
    why: str  # what let the mutant through, and the fix to consider


def diagnose(case: Case, original: CaseResult, mutant: Mutant, locator: Locator, *, judged_left_out: bool = False
             ) -> Finding:
    """`judged_left_out`: the case's judged checks were left out (offline), which the fix should say."""
    if mutant.family == "answer":
        return _answer(case, original, mutant, locator, judged_left_out)
    family = {"arguments": _argument, "calls": _call, "turns": _turn}[mutant.family]
    return family(case, original, mutant, locator)


def _show(value: Any) -> str:
    from ..util.secrets import redact

    plain = isinstance(value, str) and value.isprintable() and value.strip() == value and value != ""
    # a text with control characters (or that YAML would read otherwise) is shown as JSON, quoted and escaped
    text = redact(value if plain else json.dumps(value, ensure_ascii=False, default=str))
    return text if len(text) <= 60 else text[:59] + "…"


def _tool(original: CaseResult, call_index: Any) -> str:
    return next((c.tool_name for c in original.calls if c.index == call_index), "the tool")


def _no_goal(original: CaseResult, mutant: Mutant, locator: Locator, what: str) -> Finding:
    tool = _tool(original, mutant.call_index)
    return Finding(locator.line_of("goal_details"),
                   f"call {mutant.call_index} to {tool} achieves no goal, so {what}: add a `tool_call` goal for "
                   f"{tool} with the arguments that matter (or list it in `forbid_extra_calls`)")


def _argument(case: Case, original: CaseResult, mutant: Mutant, locator: Locator) -> Finding:
    path = mutant.arg_path or ""
    at = argument_rule(case, original, mutant.call_index, path)
    if at is None:
        return _no_goal(original, mutant, locator, "its arguments are never compared")
    goal, g = at.goal, at.goal_index
    changed = ("dropping it" if mutant.after is None and mutant.operator.startswith("drop")
               else f"{_show(mutant.after)} for {_show(mutant.before)}")
    if at.mode == "ignore_all":
        return Finding(locator.line_of("goal_details", g, "args"),
                       f"`args: {{IGNORE: null}}` of goal '{goal.name}' compares no argument and accepted {changed} "
                       f"in `{path}`: list the arguments that matter instead")
    if not at.listed:
        fix = f"add `{path}: {_show(mutant.before)}` to its `args`" if mutant.before is not None else "list it"
        return Finding(locator.line_of("goal_details", g, "args"),
                       f"goal '{goal.name}' does not list `{path}` in `args`, so it accepted {changed}: {fix}")
    if at.key is None:  # strict by default
        return Finding(locator.line_of("goal_details", g, "args", *path.split(".")),
                       f"`{path}` is compared strict (case and surrounding spaces ignored, numbers by value), which "
                       f"accepted {changed}: consider `exact`")
    line = locator.line_of("goal_details", g, "arg_matching", at.key)
    fixes = {"fuzzy": "consider `strict`, or a `tolerance`" if _numeric_or_date(mutant.before)
             else "consider `strict`, or a higher `threshold`",
             "one_of": "keep only the right values in `one_of`", "regex": "make the `regex` stricter",
             "tolerance": "lower the `tolerance`", "optional": "make it required (`strict`)",
             "strict": "consider `exact`", "exact": "add a check for the value"}
    return Finding(line, f"`{at.key}: {at.mode}` accepted {changed}: {fixes.get(at.mode, 'consider `strict`')}")


def _numeric_or_date(value: Any) -> bool:
    from .values import as_date

    return isinstance(value, (int, float)) or (isinstance(value, str) and as_date(value) is not None)


def _call(case: Case, original: CaseResult, mutant: Mutant, locator: Locator) -> Finding:
    tool = mutant.after if mutant.operator in ("extra_write", "sibling_tool") else _tool(original, mutant.call_index)
    goal = goal_of_call(original, mutant.call_index)
    if mutant.operator in ("drop_call", "sibling_tool") and goal is None:
        return _no_goal(original, mutant, locator, "nothing notices it " +
                        ("missing" if mutant.operator == "drop_call" else "made to another tool"))
    if mutant.operator == "swap_calls":
        return _order(case, original, mutant, locator)
    if mutant.operator in ("duplicate_call", "extra_write", "sibling_tool"):
        forbid = case.forbid_extra_calls
        if forbid is True:
            return Finding(locator.line_of("forbid_extra_calls"), f"an extra call to {tool} passed although "
                           "`forbid_extra_calls: true`: a goal it matches again achieves nothing new; add a check "
                           "that counts calls")
        if isinstance(forbid, list) and forbid:
            return Finding(locator.line_of("forbid_extra_calls"), f"`forbid_extra_calls` does not cover {tool}, "
                           f"so an extra call to it passed: add `{tool}` to the list")
        return Finding(locator.line_of("forbid_extra_calls"), f"extra calls are allowed, so an extra call to {tool} "
                       f"passed: consider `forbid_extra_calls: true`, or `forbid_extra_calls: [{tool}]`")
    return Finding(locator.line_of("goal_details"), f"goal '{goal}' was achieved by another call as well")


def _order(case: Case, original: CaseResult, mutant: Mutant, locator: Locator) -> Finding:
    first = goal_of_call(original, mutant.call_index)
    second = goal_of_call(original, (mutant.call_index or 0) + 1)
    if first is None:
        return _no_goal(original, mutant, locator, "its place is not checked")
    if second is None:
        return Finding(locator.line_of("goal_details"), f"call {(mutant.call_index or 0) + 1} achieves no goal, so "
                       "its place is not checked: add a goal for it")
    return Finding(locator.line_of("goals"), f"`goals` puts no order between '{first}' and '{second}', so "
                   f"swapping them passed: add `{first}: [{second}]` to `goals` if the order matters")


def _answer(case: Case, original: CaseResult, mutant: Mutant, locator: Locator, notes: bool) -> Finding:
    achieved = [g.name for g in original.goals if g.type == "text" and g.achieved and g.message == mutant.message]
    what = _ANSWERS.get(mutant.operator, "a changed answer")
    if not achieved:
        if not case.text_goals():
            return Finding(locator.line_of("goal_details"), f"no goal reads the answer, so {what} passed: add a "
                           "`text` goal with the keywords a right answer must hold"
                           + (" (the case's judged checks were left out: --judged asks them)" if notes else ""))
        return Finding(locator.line_of("goal_details"), "the text goals were achieved by another message, so this "
                       "answer is never read: consider `scope: final` on the goal that should read it")
    index, goal = goal_named(case, achieved[0])
    assert isinstance(goal, TextGoal)
    if goal.keywords:
        return Finding(locator.line_of("goal_details", index, "keywords"),
                       f"text goal '{goal.name}' (keywords {goal.keywords}) accepted {what}: add a keyword for the "
                       "fact that must be said, or a `not_contains` check for the wrong one")
    return Finding(locator.line_of("goal_details", index, "response"),
                   f"text goal '{goal.name}' has no keywords and its `response` matched {what}: add `keywords` "
                   "(the numbers, dates and names a right answer holds)")


_ANSWERS = {"negate": "a negated answer", "change_fact": "an answer with a fact changed",
            "drop_keyword": "an answer without one of its keywords", "other_answer": "another turn's answer",
            "empty": "an empty answer"}


def _turn(case: Case, original: CaseResult, mutant: Mutant, locator: Locator) -> Finding:
    return Finding(locator.line_of("goal_details"), f"the conversation cut before message {mutant.message} passed: "
                   "no goal needs what happens in the last turn; add a goal for its outcome")
