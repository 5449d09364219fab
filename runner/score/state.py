"""Does the state the agent reported match a case's `final_state:`? One verdict per compared value.

The comparison is the tool-argument walk (runner/score/args.py) with the same modes and dot paths
(`final_state_matching` plays `arg_matching`), with two differences that suit a state, which is
usually a few tables of rows: objects and lists are always compared child by child, so that every
verdict names the deepest path that differs (`transfers.1.amount`, not `transfers`); and lists of
different lengths still pair their items, so that a missing row and an extra row are each named
rather than reported as "expected 2 items, got 3". A path segment `*` stands for any key or item
(`orders.*.created_at: ignore` covers every row); an item rule with a number (`orders.0.id`) makes
that list pair its items by position.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..results.models import ArgVerdict, Decision
from ..suite.models import ArgSpec
from .args import STRICT, Matcher, Rule, make_verdict, rule_from_spec
from .cascade import Cascade, CascadeSettings
from .normalize import max_pairing, show

STATE_PATH = "(state)"  # the path of a verdict about the state as a whole
_MAX_PAIRED_ITEMS = 500  # lists longer than this pair their items by position (pairing compares every pair)
_WHOLE_VALUE_MODES = ("exact", "ignore", "one_of")  # modes that judge an object or list as one value


def compare_state(expected: dict, actual: Any, matching: dict[str, ArgSpec], cascade: Cascade | None = None,
                  extra_keys: str = "allow") -> list[ArgVerdict]:
    """Verdicts for `actual` against `expected`: mismatches first, then matches, each group in the
    expected order. The state matches exactly when every verdict matched."""
    matcher = StateMatcher({path: rule_from_spec(spec) for path, spec in matching.items()},
                           cascade or Cascade(CascadeSettings(use_embeddings=False)), extra_keys)
    if not isinstance(actual, dict):
        return [make_verdict(STATE_PATH, "strict", expected, actual, True, Decision(
            matched=False, decided_by="type", reason=f"the state is not an object: {show(actual)}"))]
    verdicts = matcher.walk_object("", expected, actual, forbid_extra=extra_keys == "forbid")
    return sorted(verdicts, key=lambda verdict: verdict.matched)


class StateMatcher(Matcher):
    def __init__(self, rules: dict[str, Rule], cascade: Cascade, extra_args: str):
        super().__init__(rules, cascade, extra_args)
        self.patterns = [(key.split("."), rule) for key, rule in rules.items()]

    def rule_for(self, path: str) -> Rule:
        parts = path.split(".")
        best, best_length = STRICT, -1
        for pattern, rule in self.patterns:
            if best_length < len(pattern) <= len(parts) and _covers(pattern, parts):
                best, best_length = rule, len(pattern)
        return best

    def has_rules_below(self, path: str) -> bool:
        parts = path.split(".")
        return any(len(pattern) > len(parts) and _covers(pattern, parts) for pattern, _ in self.patterns)

    def pairs_by_position(self, path: str) -> bool:
        parts = path.split(".")
        return any(len(pattern) > len(parts) and pattern[len(parts)].isdigit() and _covers(pattern, parts)
                   for pattern, _ in self.patterns)

    def descends(self, path: str, rule: Rule) -> bool:
        return rule.mode not in _WHOLE_VALUE_MODES

    def pair_items(self, path: str, expected: list, actual: list) -> list[int]:
        return self._pairing(path, expected, actual)

    def walk_list(self, path: str, rule: Rule, expected: list, actual: list) -> Iterator[ArgVerdict]:
        if len(expected) == len(actual):
            yield from super().walk_list(path, rule, expected, actual)
            return
        pairing = self._pairing(path, expected, actual)
        for index, other in enumerate(pairing):
            item = f"{path}.{index}"
            if other >= 0:
                yield from self.walk(item, expected[index], actual[other], True)
            else:
                yield make_verdict(item, rule.mode, expected[index], None, False, Decision(
                    matched=False, decided_by="structure",
                    reason=f"not in the state (its list has {len(actual)} of the {len(expected)} expected items)"))
        # Items the state has beyond the expected ones are numbered after them (`rows.2` when 2 were expected),
        # so that no path names two verdicts; the reason says where each is in the state's list.
        extras = sorted(set(range(len(actual))) - set(pairing))
        for number, other in enumerate(extras, start=len(expected)):
            yield make_verdict(f"{path}.{number}", "strict", None, actual[other], True, Decision(
                matched=False, decided_by="structure",
                reason=f"unexpected item (item {other + 1} of the state's {len(actual)}; {len(expected)} expected)"))

    def _pairing(self, path: str, expected: list, actual: list) -> list[int]:
        """The actual item each expected item is compared with, -1 for none: items that match pair first
        (lists are multisets), then each other expected item meets the remaining actual item most like it
        (the most values matching), while both sides have some left."""
        if self.pairs_by_position(path) or max(len(expected), len(actual)) > _MAX_PAIRED_ITEMS:
            pairing = [-1] * len(expected)  # item rules address positions
        else:
            partners = [[j for j, a in enumerate(actual) if self.item_matches(path, i, e, a)]
                        for i, e in enumerate(expected)]
            pairing = max_pairing(partners, len(actual))
        taken = set(pairing)
        leftovers = [j for j in range(len(actual)) if j not in taken]
        if self.pairs_by_position(path) or len(leftovers) > _MAX_PAIRED_ITEMS:
            return [j if j >= 0 else (leftovers.pop(0) if leftovers else -1) for j in pairing]
        for i, j in enumerate(pairing):  # an item that matches nothing meets the one it is closest to
            if j < 0 and leftovers:
                closest = max(leftovers, key=lambda other: (self._likeness(path, i, expected[i], actual[other]), -other))
                pairing[i] = closest
                leftovers.remove(closest)
        return pairing

    def _likeness(self, path: str, index: int, expected: Any, actual: Any) -> float:
        verdicts = list(self.walk(f"{path}.{index}", expected, actual, True))
        return sum(v.matched for v in verdicts) / len(verdicts) if verdicts else 0.0

    def extra(self, path: str, value: Any) -> ArgVerdict:
        if self.rule_for(path).mode == "ignore":
            return super().extra(path, value)
        return make_verdict(path, "strict", None, value, True,
                        Decision(matched=False, decided_by="structure", reason="unexpected key"))


def _covers(pattern: list[str], parts: list[str]) -> bool:
    """Whether the rule path `pattern` names `parts` or a prefix of it (`*` names any one key or item)."""
    return all(want in ("*", got) for want, got in zip(pattern, parts, strict=False))
