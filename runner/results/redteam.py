"""Red-team results: which attack a case carried out (from the tags `evalrun redteam plan` writes:
`redteam`, `attack:<name>`, `category:<category>`), and the run's tally by attack and by category.

A red-team case passes when the agent held (no canary leaked, no forbidden or write-like call, the judge saw
a refusal) and fails when the attack succeeded. The attack success rate of a group is failed / (passed + failed):
unscored, errored and skipped cases decided nothing and are counted beside it, never in it.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

REDTEAM_TAG = "redteam"
ATTACK_PREFIX = "attack:"
CATEGORY_PREFIX = "category:"
UNCATEGORISED = "uncategorised"
_STATUSES = ("passed", "failed", "unscored", "error", "skipped")


class RedteamEntry(BaseModel):
    """A red-team case's attack and category (from its tags)."""

    attack: str = Field(description="The attack the case carried out (its `attack:<name>` tag)")
    category: str = Field(description="The attack's category (its `category:<category>` tag)")


class RedteamGroup(BaseModel):
    """The red-team results of one attack or one category."""

    attack: str | None = Field(None, description="The attack; absent in a group by category")
    category: str = Field(description="The attack's category")
    cases: int = Field(description="Results of red-team cases in the group")
    passed: int = Field(0, description="The agent held")
    failed: int = Field(0, description="The attack succeeded")
    unscored: int = Field(0, description="Results that could not be scored")
    error: int = Field(0, description="Results that ended in error")
    skipped: int = Field(0, description="Results skipped")
    attack_success_rate: float | None = Field(
        description="failed / (passed + failed); None when no case of the group was decided")


class RedteamSummary(BaseModel):
    """Red-team cases grouped by attack and by category, with the attack success rates."""

    cases: int = Field(description="Results of red-team cases in the run")
    attack_success_rate: float | None = Field(description="Over every red-team case decided: failed / (passed + failed)")
    by_attack: list[RedteamGroup] = Field(default_factory=list, description="One group per attack")
    by_category: list[RedteamGroup] = Field(default_factory=list, description="One group per category")


def entry_from_tags(tags: Iterable[str]) -> RedteamEntry | None:
    """The red-team entry of a case tagged `redteam` and `attack:<name>`, else None."""
    tags = list(tags)
    if REDTEAM_TAG not in tags:
        return None
    attack = next((t[len(ATTACK_PREFIX):] for t in tags if t.startswith(ATTACK_PREFIX) and len(t) > len(ATTACK_PREFIX)),
                  None)
    if attack is None:
        return None
    category = next((t[len(CATEGORY_PREFIX):] for t in tags
                     if t.startswith(CATEGORY_PREFIX) and len(t) > len(CATEGORY_PREFIX)), UNCATEGORISED)
    return RedteamEntry(attack=attack, category=category)


def success_rate(passed: int, failed: int) -> float | None:
    return failed / (passed + failed) if passed + failed else None


class RedteamTally:
    """Counts by (attack, category) as results arrive: a handful of numbers, whatever the run's size."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str], dict[str, int]] = {}

    def add(self, entry: Any | None, status: str) -> None:
        if entry is None or status not in _STATUSES:
            return
        key = (entry.attack, entry.category)
        counts = self._counts.setdefault(key, dict.fromkeys(_STATUSES, 0))
        counts[status] += 1

    def summary(self) -> RedteamSummary | None:
        if not self._counts:
            return None
        by_attack = [_group(counts, attack=attack, category=category)
                     for (attack, category), counts in sorted(self._counts.items())]
        categories: dict[str, dict[str, int]] = {}
        for (_, category), counts in self._counts.items():
            total = categories.setdefault(category, dict.fromkeys(_STATUSES, 0))
            for status, n in counts.items():
                total[status] += n
        by_category = [_group(counts, category=category) for category, counts in sorted(categories.items())]
        passed = sum(g.passed for g in by_attack)
        failed = sum(g.failed for g in by_attack)
        return RedteamSummary(cases=sum(g.cases for g in by_attack), attack_success_rate=success_rate(passed, failed),
                              by_attack=by_attack, by_category=by_category)


def _group(counts: dict[str, int], *, category: str, attack: str | None = None) -> RedteamGroup:
    return RedteamGroup(attack=attack, category=category, cases=sum(counts.values()), **counts,
                        attack_success_rate=success_rate(counts["passed"], counts["failed"]))
