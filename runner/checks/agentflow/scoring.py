"""Agentflow's (10xGraph's) deterministic scores, float for float, as its `AgentEvaluator` computes them.

Read from 10xscale-agentflow 0.10.1 / 10xgraph 0.10.3, `qa/evaluation/criteria/` (the two are the same code).
Pure functions on plain data, so the agreement benchmark and the tests can call them without a conversation:
- calls are (name, args) pairs, pooled over every turn of the case (Agentflow compares once per case);
- a call matches an expected one when the names are equal and, with `check_args` and only when the
  expected call lists arguments, the argument dicts are equal as Python compares them (1 == 1.0 == True);
  an expected `args: {}` means "any arguments";
- EXACT counts the positions of the common prefix where the calls match (calls after the expected ones
  cost nothing: Agentflow's code, although its docs say "no extras"), IN_ORDER is a greedy subsequence,
  ANY_ORDER takes the first unused matching call (not an optimal pairing); score = matched / expected.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MATCH_TYPES = ("EXACT", "IN_ORDER", "ANY_ORDER")
Call = tuple[str, dict]


def call_matches(actual: Call, expected: Call, check_args: bool) -> bool:
    """Agentflow's ToolCall.matches(expected, check_args): names, then arguments only when asked and listed."""
    if actual[0] != expected[0]:
        return False
    return not (check_args and expected[1] and actual[1] != expected[1])


@dataclass(frozen=True)
class SequenceScore:
    score: float
    matched: int  # expected items matched
    expected: int
    matched_at: tuple[int, ...] = ()  # indices of the expected items matched


def trajectory_score(actual: Sequence[Call], expected: Sequence[Call], match_type: str,
                     check_args: bool) -> SequenceScore:
    """tool_trajectory_avg_score. No expected call: EXACT 1.0 only when no call was made; the others 1.0."""
    return _sequence(list(actual), list(expected), match_type, lambda a, e: call_matches(a, e, check_args),
                     empty_exact_needs_nothing=True)


def node_order_score(actual: Sequence[str], expected: Sequence[str], match_type: str) -> SequenceScore:
    """node_order_score: the same three rules on node names; no expected node scores 1.0 whatever the match type."""
    return _sequence(list(actual), list(expected), match_type, lambda a, e: a == e, empty_exact_needs_nothing=False)


def _sequence(actual: list, expected: list, match_type: str, match: Any, *,
              empty_exact_needs_nothing: bool) -> SequenceScore:
    n = len(expected)
    if n == 0:
        score = 0.0 if (match_type == "EXACT" and empty_exact_needs_nothing and actual) else 1.0
        return SequenceScore(score, 0, 0)
    hits: list[int] = []
    if match_type == "EXACT":
        hits = [i for i in range(min(len(actual), n)) if match(actual[i], expected[i])]
    elif match_type == "IN_ORDER":
        k = 0
        for item in actual:
            if k >= n:
                break
            if match(item, expected[k]):
                hits.append(k)
                k += 1
    else:  # ANY_ORDER: each expected item takes the first still-unused actual item that matches
        remaining = list(actual)
        for i, wanted in enumerate(expected):
            for j, item in enumerate(remaining):
                if match(item, wanted):
                    hits.append(i)
                    remaining.pop(j)
                    break
    return SequenceScore(len(hits) / n, len(hits), n, tuple(hits))


def tool_name_score(actual_names: Sequence[str], expected_names: Sequence[str]) -> float:
    """tool_name_match_score: multiset coverage of the expected names; none expected: 1.0 if no call, else 0.5."""
    if not expected_names:
        return 1.0 if not actual_names else 0.5
    remaining = list(actual_names)
    matched = 0
    for name in expected_names:
        if name in remaining:
            matched += 1
            remaining.remove(name)
    return matched / len(expected_names)


def rouge_tokens(text: str) -> list[str]:
    """Agentflow's ROUGE tokens: lower-cased, every non-word non-space character a space (Unicode \\w: `_` and
    accented letters stay inside a word), no stemming."""
    return [t for t in re.sub(r"[^\w\s]", " ", text.lower()).split() if t]


def rouge_f1(actual: str, expected: str) -> tuple[float, float, float]:
    """(precision, recall, F1) of ROUGE-1 on token SETS, as Agentflow's RougeMatchCriterion."""
    got, wanted = set(rouge_tokens(actual)), set(rouge_tokens(expected))
    if not wanted:
        return (1.0, 1.0, 1.0) if not got else (0.0, 0.0, 0.0)
    if not got:
        return (0.0, 0.0, 0.0)
    overlap = len(got & wanted)
    precision = overlap / len(got)
    recall = overlap / len(wanted)
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return precision, recall, f1


def rouge_score(actual: str, expected: str) -> float:
    """rouge_match: no expected answer gives 1.0 for an empty answer, 0.5 for any other; else the F1."""
    if not expected:
        return 1.0 if not actual else 0.5
    return rouge_f1(actual, expected)[2]


def keywords_found(actual: str, keywords: Sequence[str]) -> tuple[list[str], list[str]]:
    """(found, missing): case-insensitive substrings of the answer, each keyword counted as listed."""
    lowered = actual.lower()
    return [k for k in keywords if k.lower() in lowered], [k for k in keywords if k.lower() not in lowered]


def keywords_score(actual: str, keywords: Sequence[str]) -> float:
    """contains_keywords: the fraction of keywords found; no keyword scores 1.0."""
    if not keywords:
        return 1.0
    return len(keywords_found(actual, keywords)[0]) / len(keywords)
