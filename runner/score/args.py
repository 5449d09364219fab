"""Does one tool call's arguments achieve one tool goal? One verdict per compared argument.

Each value is compared by the `arg_matching` rule of its longest dot-path prefix (`address` covers
`address.city` unless `address.city` has its own rule); no rule means strict. A top-level argument
gets one verdict, unless a rule names something inside it (or it is a fuzzy object/list): then the
walk goes down and each child gets its own verdict, so every verdict has exactly one rule.
"""
from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from runner.results.models import ArgVerdict, Decision
from runner.score.cascade import Cascade
from runner.score.normalize import (
    as_number,
    exact_decision,
    max_pairing,
    show,
    strict_decision,
    strict_difference,
    strict_equal,
)
from runner.suite.models import IGNORE_KEY, IGNORE_VALUE, ArgRule, ArgSpec, ToolCallGoal
from runner.util.jsontext import json_kind


@dataclass(frozen=True)
class Rule:
    """An `arg_matching` entry in one shape. `mode` is the label verdicts carry."""

    mode: str = "strict"  # strict, exact, optional, ignore, fuzzy, one_of, regex, tolerance
    optional: bool = False
    threshold: float | None = None
    tolerance: float | None = None
    one_of: list | None = None
    regex: str | None = None
    type: str | None = None  # integer, number, string, boolean: checked before comparing
    ignore_chars: str | None = None  # dropped from texts on both sides before comparing


STRICT = Rule()
_ITEMWISE_MODES = ("fuzzy", "tolerance", "regex")
_MAX_PAIRED_ITEMS = 30


def rule_from_spec(spec: ArgSpec | dict | None) -> Rule:
    if spec is None:
        return STRICT
    if isinstance(spec, str):
        return Rule(mode=spec, optional=spec == "optional")
    if isinstance(spec, dict):
        spec = ArgRule.model_validate(spec)
    optional = spec.optional or spec.mode == "optional"
    common: dict[str, Any] = {"optional": optional, "type": spec.type, "ignore_chars": spec.ignore_chars or None}
    # The schema asks for one of these per rule; if several are given, the first in this order wins.
    if spec.mode in ("fuzzy", "ignore"):
        return Rule(mode=spec.mode, threshold=spec.threshold, tolerance=spec.tolerance, **common)
    if spec.one_of is not None:
        return Rule(mode="one_of", one_of=list(spec.one_of), **common)
    if spec.regex is not None:
        return Rule(mode="regex", regex=spec.regex, **common)
    if spec.tolerance is not None:
        return Rule(mode="tolerance", tolerance=spec.tolerance, **common)
    return Rule(mode=spec.mode or ("optional" if optional else "strict"), **common)


def match_arguments(goal: ToolCallGoal, actual: Any, cascade: Cascade,
                    default_extra_args: str = "allow") -> list[ArgVerdict]:
    """Verdicts for the call's arguments against the goal: mismatches first, then matches, each group in
    expected-key order. The call achieves the goal exactly when every verdict matched."""
    # sorted() is stable, so each group keeps the walk's expected-key order.
    return sorted(_verdicts(goal, actual, cascade, default_extra_args), key=lambda verdict: verdict.matched)


def arguments_match(goal: ToolCallGoal, actual: Any, cascade: Cascade, default_extra_args: str = "allow") -> bool:
    """Whether `match_arguments` would find no mismatch, stopping at the first one (the walk is lazy).

    Scoring asks this of every call of a goal's tool, and most of those calls are for other goals:
    the full verdicts are only built for the calls a report explains."""
    if not goal.arg_matching and goal.args != {IGNORE_KEY: None}:
        # Without rules every argument is strict, and strict equality of the whole object says the
        # same as the walk (a property test checks it): one call instead of a verdict per argument.
        if actual is not None and not isinstance(actual, dict):
            return False
        return strict_difference(goal.args, actual or {}, goal.extra_args or default_extra_args) is None
    return all(verdict.matched for verdict in _verdicts(goal, actual, cascade, default_extra_args))


def verdicts_of_a_match(goal: ToolCallGoal, actual: dict) -> list[ArgVerdict]:
    """What `match_arguments` says of a call already known to achieve a goal without `arg_matching`,
    built without comparing again (a property test checks the two are identical). Every achieved
    goal's call is shown in the report, so this is on the hot path of replay runs."""
    assert not goal.arg_matching
    if goal.args == {IGNORE_KEY: None}:
        return []
    verdicts = []
    for key, expected in goal.args.items():
        value = actual.get(key)
        if isinstance(expected, str) and expected == IGNORE_VALUE:
            verdicts.append(ArgVerdict(path=key, mode="ignore", expected=expected, actual=value, present=key in actual,
                                       matched=True, decided_by="ignore", reason="not compared"))
        else:
            numbers = as_number(expected) is not None and as_number(value) is not None
            verdicts.append(ArgVerdict(path=key, mode="strict", expected=expected, actual=value, present=True,
                                       matched=True, decided_by="number" if numbers else "exact", reason="equal"))
    return verdicts


def _verdicts(goal: ToolCallGoal, actual: Any, cascade: Cascade, default_extra_args: str) -> Iterator[ArgVerdict]:
    if goal.args == {IGNORE_KEY: None}:
        return
    matcher = Matcher({path: rule_from_spec(spec) for path, spec in goal.arg_matching.items()},
                       cascade, goal.extra_args or default_extra_args)
    if actual is None:
        actual = {}  # a call without arguments
    elif not isinstance(actual, dict):
        yield ArgVerdict(path="(arguments)", mode="strict", expected=goal.args, actual=actual,
                         matched=False, decided_by="type", reason=f"the arguments are not an object: {show(actual)}")
        actual = {}
    yield from matcher.walk_object("", goal.args, actual, forbid_extra=matcher.extra_args == "forbid")


class Matcher:
    """The walk over expected and actual values that gives one verdict per compared value, each under the
    rule of its longest `arg_matching` prefix (also used for a case's final state: runner/score/state.py)."""

    def __init__(self, rules: dict[str, Rule], cascade: Cascade, extra_args: str):
        self.rules = rules
        self.cascade = cascade
        self.extra_args = extra_args

    def rule_for(self, path: str) -> Rule:
        if not self.rules:
            return STRICT  # most goals have no arg_matching at all
        best = max((key for key in self.rules if path == key or path.startswith(key + ".")), key=len, default=None)
        return STRICT if best is None else self.rules[best]

    def has_rules_below(self, path: str) -> bool:
        return bool(self.rules) and any(key.startswith(path + ".") for key in self.rules)

    # ------------------------------------------------------------ the walk

    def walk_object(self, path: str, expected: dict, actual: dict, *, forbid_extra: bool) -> Iterator[ArgVerdict]:
        for key, value in expected.items():
            if key in actual:
                yield from self.walk(_join(path, key), value, actual[key], True)
                continue
            for verdict in self.walk(_join(path, key), value, None, False):
                if verdict.decided_by == "absent" and not verdict.matched:
                    verdict.reason += _near_miss(key, value, expected, actual)
                yield verdict
        if forbid_extra:
            for key, value in actual.items():
                if key not in expected:
                    yield self.extra(_join(path, key), value)

    def walk(self, path: str, expected: Any, actual: Any, present: bool) -> Iterator[ArgVerdict]:
        rule = self.rule_for(path)
        both_objects = isinstance(expected, dict) and isinstance(actual, dict)
        both_lists = isinstance(expected, list) and isinstance(actual, list)
        # Go down when a rule names something inside (it needs its own verdict), or the rule is one
        # that only means something for single values (fuzzy, tolerance, regex): it then covers each child.
        descend = (both_objects or both_lists) and self.descends(path, rule)
        if (isinstance(expected, str) and expected == IGNORE_VALUE) or (rule.mode == "ignore" and not descend):
            yield make_verdict(path, "ignore", expected, actual, present,
                           Decision(matched=True, decided_by="ignore", reason="not compared"))
        elif not present:
            decision = (Decision(matched=True, decided_by="absent", reason="optional argument not given")
                        if rule.optional else Decision(matched=False, decided_by="absent", reason="missing argument"))
            yield make_verdict(path, rule.mode, expected, None, False, decision)
        elif descend and both_objects:
            # Exact objects need the same keys whatever extra_args says.
            yield from self.walk_object(path, expected, actual,
                                        forbid_extra=self.extra_args == "forbid" or rule.mode == "exact")
        elif descend:
            yield from self.walk_list(path, rule, expected, actual)
        else:
            yield make_verdict(path, rule.mode, expected, actual, True, self.compare(path, rule, expected, actual))

    def descends(self, path: str, rule: Rule) -> bool:
        """Whether two objects (or two lists) at `path` are compared child by child rather than as one value."""
        return self.has_rules_below(path) or rule.mode in _ITEMWISE_MODES

    def walk_list(self, path: str, rule: Rule, expected: list, actual: list) -> Iterator[ArgVerdict]:
        if len(expected) != len(actual):
            yield make_verdict(path, rule.mode, expected, actual, True, Decision(
                matched=False, decided_by="structure", reason=f"expected {len(expected)} items, got {len(actual)}"))
        elif not self.has_rules_below(path) and rule.type is None and not rule.ignore_chars \
                and strict_equal(expected, actual, self.extra_args):
            # A fuzzy list that is strictly equal in any order needs no item-by-item fuzzy pass.
            yield make_verdict(path, rule.mode, expected, actual, True,
                           Decision(matched=True, decided_by="exact", score=1.0, reason="equal after normalisation"))
        else:
            for index, other in enumerate(self.pair_items(path, expected, actual)):
                yield from self.walk(_join(path, str(index)), expected[index], actual[other], True)

    def pair_items(self, path: str, expected: list, actual: list) -> list[int]:
        """Which actual item each expected item is compared with (same length lists).

        Lists are multisets, as in strict mode: the items are paired one to one so that as many as
        possible match. Item rules (`items.0`) address positions, so those lists pair by position, and
        so do lists longer than _MAX_PAIRED_ITEMS (the search compares every item with every other).
        """
        positional = list(range(len(expected)))
        if self.has_rules_below(path) or len(expected) > _MAX_PAIRED_ITEMS or all(
                self.item_matches(path, i, expected[i], actual[i]) for i in positional):
            return positional
        partners = [[j for j, a in enumerate(actual) if self.item_matches(path, i, e, a)] for i, e in enumerate(expected)]
        pairing = max_pairing(partners, len(actual))
        taken = set(pairing)
        leftovers = iter(j for j in positional if j not in taken)  # unmatched items meet in order
        return [j if j >= 0 else next(leftovers) for j in pairing]

    def item_matches(self, path: str, index: int, expected: Any, actual: Any) -> bool:
        return all(verdict.matched for verdict in self.walk(_join(path, str(index)), expected, actual, True))

    def extra(self, path: str, value: Any) -> ArgVerdict:
        if self.rule_for(path).mode == "ignore":  # an argument named `ignore` may be sent even under forbid
            return make_verdict(path, "ignore", None, value, True,
                            Decision(matched=True, decided_by="ignore", reason="not compared"))
        return make_verdict(path, "strict", None, value, True,
                        Decision(matched=False, decided_by="structure", reason="unexpected argument"))

    # ------------------------------------------------------------ one value, one rule

    def compare(self, path: str, rule: Rule, expected: Any, actual: Any) -> Decision:
        if rule.type is not None:
            problem = type_problem(rule.type, actual)
            if problem is not None:
                return Decision(matched=False, decided_by="type", reason=problem)
        if rule.ignore_chars:
            expected, actual = drop_chars(expected, rule.ignore_chars), drop_chars(actual, rule.ignore_chars)
            if rule.one_of is not None:
                rule = replace(rule, one_of=[drop_chars(option, rule.ignore_chars) for option in rule.one_of])
        if rule.mode == "fuzzy":
            return self.cascade.compare(expected, actual, threshold=rule.threshold, tolerance=rule.tolerance,
                                        context=f"the tool argument `{path}`")
        if rule.mode == "exact":
            return exact_decision(expected, actual)
        if rule.mode == "one_of":
            return _one_of(rule.one_of or [], actual, self.extra_args)
        if rule.mode == "regex":
            return _regex(rule.regex or "", actual)
        if rule.mode == "tolerance":
            return _tolerance(rule.tolerance or 0.0, expected, actual, self.extra_args)
        # strict, and optional when present (compared strict, not raw)
        return strict_decision(expected, actual, self.extra_args)


_TYPE_NAMES = {"integer": "an integer", "number": "a number with a decimal point", "string": "text",
               "boolean": "a boolean (true or false)"}


def type_problem(expected_type: str, value: Any) -> str | None:
    """Why `value` does not have the JSON type a rule's `type` names (every item, for a list), or None."""
    if isinstance(value, list):
        return next((f"item {i}: {problem}" for i, item in enumerate(value)
                     if (problem := type_problem(expected_type, item)) is not None), None)
    ok = {"integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
          "number": lambda v: isinstance(v, float),
          "string": lambda v: isinstance(v, str),
          "boolean": lambda v: isinstance(v, bool)}[expected_type](value)
    if ok:
        return None
    return f"expected {_TYPE_NAMES[expected_type]} (type: {expected_type}), got {_type_of(value)} {show(value)}"


_KIND_WORDS = {"boolean": "a boolean", "integer": "an integer", "number": "a number with a decimal point",
               "string": "text", "null": "null", "object": "an object", "array": "a list"}


def _type_of(value: Any) -> str:
    kind = json_kind(value)
    return _KIND_WORDS.get(kind, kind)


def drop_chars(value: Any, chars: str) -> Any:
    """`value` with every character of `chars` removed from its texts, at any depth."""
    if isinstance(value, str):
        return value if value == IGNORE_VALUE else value.translate({ord(c): None for c in chars})
    if isinstance(value, list):
        return [drop_chars(item, chars) for item in value]
    if isinstance(value, dict):
        return {key: drop_chars(item, chars) for key, item in value.items()}
    return value


def _near_miss(key: str, value: Any, expected: dict, actual: dict) -> str:
    """` (did you mean ...?)` when the call sends the expected value under a close name."""
    names = [name for name in actual if isinstance(name, str) and name not in expected]
    for name in difflib.get_close_matches(str(key), names, n=3, cutoff=0.6):
        if strict_equal(value, actual[name]):
            return f" — the call sends the same value as `{name}`: did you mean `{name}`?"
    return ""


def _one_of(options: list, actual: Any, extra_args: str) -> Decision:
    matched = any(strict_equal(option, actual, extra_args) for option in options)
    reason = f"{show(actual)} is one of {show(options)}" if matched else f"expected one of {show(options)}, got {show(actual)}"
    return Decision(matched=matched, decided_by="one_of", reason=reason)


REGEX_TIMEOUT_S = 1.0  # a suite's regex on the agent's text must not hang the run (catastrophic backtracking)


def _regex(pattern: str, actual: Any) -> Decision:
    import regex  # the `regex` package: `re` with a time limit

    text = _as_text(actual)
    try:
        matched = regex.fullmatch(pattern, text, timeout=REGEX_TIMEOUT_S) is not None
    except regex.error as error:
        return Decision(matched=False, decided_by="regex", reason=f"invalid regular expression {pattern!r}: {error}")
    except TimeoutError:
        return Decision(matched=False, decided_by="regex",
                        reason=f"the regular expression /{pattern}/ took longer than {REGEX_TIMEOUT_S:g} s on "
                               f"{show(text)} and was stopped; simplify it (nested repeats such as (a+)+ backtrack)")
    verb = "matches" if matched else "does not match"
    return Decision(matched=matched, decided_by="regex", reason=f"{show(text)} {verb} /{pattern}/")


def _tolerance(tolerance: float, expected: Any, actual: Any, extra_args: str) -> Decision:
    expected_number, actual_number = as_number(expected), as_number(actual)
    if expected_number is None or actual_number is None:
        return strict_decision(expected, actual, extra_args)  # not numbers: nothing to be tolerant about
    try:
        within = abs(float(expected_number) - float(actual_number)) <= tolerance
    except OverflowError:
        within = expected_number == actual_number
    verb = "within" if within else "outside"
    return Decision(matched=within, decided_by="number",
                    reason=f"{show(actual)} is {verb} ±{tolerance:g} of {show(expected)}")


def _as_text(value: Any) -> str:
    """The text a regex sees: strings as they are, numbers via str, anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def make_verdict(path: str, mode: str, expected: Any, actual: Any, present: bool, decision: Decision) -> ArgVerdict:
    # Plain construction: in pydantic 2.14 model_construct is slower than validating (measured 17 vs 3 µs).
    return ArgVerdict(path=path, mode=mode, expected=expected, actual=actual, present=present,
                      matched=decision.matched, decided_by=decision.decided_by, score=decision.score,
                      reason=decision.reason, notes=list(decision.notes), judge_failure=decision.judge_failure)
