"""Strict and exact equality of JSON-like values, with a human reason for the first difference.

strict (the default mode): strings trimmed and case-insensitive; numbers by value (10, 10.0 and "10"
are equal); booleans equal only booleans or the strings "true"/"false"; None equals only None; lists
are multisets; objects need every expected key, extra actual keys allowed unless extra_args is "forbid"
(then at every depth).

exact: JSON equality: type- and case-sensitive, lists in order, objects with the same keys.

Both treat an expected "<IGNORE>" (at any depth) as "anything, or absent".
"""
from __future__ import annotations

import json
import math
import re
from collections import Counter, deque
from datetime import date
from typing import Any, NamedTuple

from runner.results.models import Decision
from runner.suite.models import IGNORE_VALUE
from runner.util.secrets import redact

Number = int | float

# A whole string that is a number: sign, decimals, exponent; no thousands separators (1,000 is text).
_NUMBER_TEXT = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?")
_LEADING_ZERO = re.compile(r"[+-]?0\d")
_BOOL_TEXT = {"true": True, "false": False}
_PLAIN_TYPES = (str, int, float, bool)
_NUMBER_START = frozenset("0123456789+-.")


class Difference(NamedTuple):
    """Why two values are not equal: the reason people read, and which kind of check failed."""

    reason: str
    decided_by: str  # "exact" or "structure" (an unexpected key)


# ---------------------------------------------------------------- value helpers

def as_number(value: Any) -> Number | None:
    """The number `value` is or spells (a finite numeric string), else None. Booleans are not numbers."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if not isinstance(value, str):
        return None
    text = value.strip().casefold()
    if not _NUMBER_TEXT.fullmatch(text) or _LEADING_ZERO.match(text):
        return None  # "02134" is a zip code or an id, not 2134 (as the suite reader keeps it text)
    if "." not in text and "e" not in text:
        try:
            return int(text)  # ints stay exact: 12345678901234567890 must not round
        except ValueError:  # more digits than Python converts; a float will do
            pass
    number = float(text)
    return number if math.isfinite(number) else None


def numbers_equal(a: Number, b: Number) -> bool:
    # NaN can only come from a non-JSON source; keep equality reflexive anyway.
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


def show(value: Any, limit: int = 80) -> str:
    """A short, unambiguous rendering for reasons: strings quoted, everything else as JSON; secrets masked
    before the cut (a cut secret is a fragment no redactor would know)."""
    if isinstance(value, str):
        text = repr(redact(value))
    else:
        try:
            text = redact(json.dumps(value, ensure_ascii=False, default=str))
        except (TypeError, ValueError):  # e.g. circular structures
            text = redact(repr(value))
    return text if len(text) <= limit else _cut(text, limit)


# A word or a number, with the separators inside it: "1,500.25", "x_y", "e-mail".
_TOKEN = re.compile(r"\w+(?:[.,_-]\w+)*")


def _cut(text: str, limit: int) -> str:
    """`text` shortened to at most `limit` characters, ending with "…" at a boundary: never inside a word or a
    number (a cut "1500" would read as 15). A single word longer than the limit is cut where it must be."""
    end = limit - 1
    for token in _TOKEN.finditer(text, 0, len(text)):
        if token.start() < end < token.end():  # the cut falls inside this token: cut before it
            if text[:token.start()].strip(" '\"{[(:,"):
                end = token.start()
            break
        if token.start() >= end:
            break
    return text[:end].rstrip() + "…"


def _leaf(value: Any) -> Any:
    # YAML turns an unquoted 2025-01-05 into a date; compare it as the ISO text it was written as.
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, tuple):
        return list(value)
    return value


def _at(where: str, reason: str) -> str:
    return f"at {where}: {reason}" if where else reason


def _child(where: str, key: Any) -> str:
    return f"{where}.{key}" if where else str(key)


def _mismatch(expected: Any, actual: Any, where: str) -> Difference:
    return Difference(_at(where, f"expected {show(expected)}, got {show(actual)}"), "exact")


# ---------------------------------------------------------------- strict

def strict_difference(expected: Any, actual: Any, extra_args: str = "allow", where: str = "") -> Difference | None:
    """None when `actual` strictly equals `expected`, else the first difference found."""
    if type(expected) is type(actual) and type(expected) in _PLAIN_TYPES and expected == actual:
        return None  # the common case, decided before any normalisation (scoring calls this a lot)
    expected, actual = _leaf(expected), _leaf(actual)
    if isinstance(expected, str) and expected == IGNORE_VALUE:
        return None
    if expected is None or actual is None:
        return None if expected is None and actual is None else _mismatch(expected, actual, where)
    if isinstance(expected, bool) or isinstance(actual, bool):
        return None if _as_bool(expected) is not None and _as_bool(expected) == _as_bool(actual) \
            else _mismatch(expected, actual, where)
    if isinstance(expected, dict) or isinstance(actual, dict):
        if not (isinstance(expected, dict) and isinstance(actual, dict)):
            return _mismatch(expected, actual, where)
        return _dict_difference(expected, actual, where, extra_args, strict_difference, allow_extra=extra_args != "forbid")
    if isinstance(expected, list) or isinstance(actual, list):
        if not (isinstance(expected, list) and isinstance(actual, list)):
            return _mismatch(expected, actual, where)
        return _multiset_difference(expected, actual, extra_args, where)
    if isinstance(expected, str) and isinstance(actual, str) and expected.strip().casefold() == actual.strip().casefold():
        return None  # equal texts need no number parsing ("10" vs "10.0" is settled below)
    expected_number, actual_number = as_number(expected), as_number(actual)
    if expected_number is not None and actual_number is not None:
        return None if numbers_equal(expected_number, actual_number) else _mismatch(expected, actual, where)
    if isinstance(expected, str) and isinstance(actual, str):
        return _mismatch(expected, actual, where)
    return None if expected == actual else _mismatch(expected, actual, where)


def strict_equal(expected: Any, actual: Any, extra_args: str = "allow") -> bool:
    return strict_difference(expected, actual, extra_args) is None


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _BOOL_TEXT.get(value.strip().casefold())
    return None


def _dict_difference(expected: dict, actual: dict, where: str, extra_args: str, compare, *,
                     allow_extra: bool) -> Difference | None:
    for key, expected_value in expected.items():
        if key not in actual:
            if isinstance(expected_value, str) and expected_value == IGNORE_VALUE:
                continue
            return Difference(_at(where, f"missing key {show(key)}"), "exact")
        found = compare(expected_value, actual[key], extra_args, _child(where, key))
        if found is not None:
            return found
    if not allow_extra:
        for key in actual:
            if key not in expected:
                return Difference(_at(where, f"unexpected key {show(key)}"), "structure")
    return None


def _multiset_difference(expected: list, actual: list, extra_args: str, where: str) -> Difference | None:
    if len(expected) != len(actual):
        return Difference(_at(where, f"expected {len(expected)} items, got {len(actual)}: "
                                     f"expected {show(expected)}, got {show(actual)}"), "exact")
    expected_keys, actual_keys = _canonical_items(expected), _canonical_items(actual)
    if expected_keys is not None and actual_keys is not None:
        # No objects and no "<IGNORE>" inside: equality is an equivalence, so counting decides (fast on long lists).
        return _count_difference(expected, expected_keys, Counter(actual_keys), actual, where)
    # With extra keys allowed, element equality is not an equivalence (it is not symmetric), so sorting or
    # counting cannot decide; look for a perfect one-to-one pairing instead.
    partners = [[j for j, a in enumerate(actual) if strict_difference(e, a, extra_args) is None] for e in expected]
    lonely = next((i for i, options in enumerate(partners) if not options), None)
    if lonely is not None:
        return Difference(_at(where, f"no actual item matches expected item {show(expected[lonely])}"), "exact")
    if not _perfect_matching(partners, len(actual)):
        return Difference(_at(where, f"items cannot be paired one to one: expected {show(expected)}, "
                                     f"got {show(actual)}"), "exact")
    return None


def _canonical_items(items: list) -> list | None:
    keys = []
    for item in items:
        key = _canonical(item)
        if key is None:
            return None
        keys.append(key)
    return keys


def _canonical(value: Any) -> tuple | None:
    """A hashable key such that two dict-free values are strictly equal exactly when their keys are equal;
    None when the value holds an object or "<IGNORE>" (no such key exists then)."""
    if type(value) is str:  # the common case, without the generic checks below
        if value == IGNORE_VALUE:
            return None
        text = value.strip().casefold()
        if text in _BOOL_TEXT:
            return ("bool", _BOOL_TEXT[text])
        if text[:1] in _NUMBER_START:
            number = as_number(text)
            if number is not None:
                return ("nan",) if number != number else ("number", number)
        return ("text", text)
    value = _leaf(value)
    if value is None:
        return ("null",)
    if isinstance(value, str) and value == IGNORE_VALUE:
        return None
    if isinstance(value, list):
        keys = _canonical_items(value)
        return None if keys is None else ("list", frozenset(Counter(keys).items()))
    if isinstance(value, dict):
        return None
    if _as_bool(value) is not None:
        return ("bool", _as_bool(value))
    number = as_number(value)
    if number is not None:
        return ("nan",) if number != number else ("number", number)  # 10 and 10.0 hash alike
    if isinstance(value, str):
        return ("text", value.strip().casefold())
    try:
        hash(value)
    except TypeError:
        return None
    return ("other", type(value).__name__, value)


def _count_difference(expected: list, expected_keys: list, available: Counter, actual: list,
                      where: str) -> Difference | None:
    for item, key in zip(expected, expected_keys, strict=True):
        if available[key] > 0:
            available[key] -= 1
            continue
        if key not in available:
            return Difference(_at(where, f"no actual item matches expected item {show(item)}"), "exact")
        return Difference(_at(where, f"items cannot be paired one to one: expected {show(expected)}, "
                                     f"got {show(actual)}"), "exact")
    return None


def _perfect_matching(partners: list[list[int]], size: int) -> bool:
    """Does every left item get its own right item?"""
    return all(right >= 0 for right in max_pairing(partners, size))


def max_pairing(partners: list[list[int]], size: int) -> list[int]:
    """A maximum one-to-one pairing of left items with right items (`partners[left]` lists the right
    items it may take; `size` is how many right items there are): the right item of each left item,
    -1 where none is left for it. Augmenting paths are found breadth-first (no recursion limit)."""
    owner_of_right = [-1] * size
    right_of_left = [-1] * len(partners)
    for root in range(len(partners)):
        reached_from: dict[int, int] = {}  # right item -> left item that reached it
        queue, free_right = deque([root]), -1
        while queue and free_right < 0:
            left = queue.popleft()
            for right in partners[left]:
                if right in reached_from:
                    continue
                reached_from[right] = left
                if owner_of_right[right] < 0:
                    free_right = right
                    break
                queue.append(owner_of_right[right])
        right = free_right
        while right >= 0:  # flip the path: each left item on it takes the right item it reached
            left = reached_from[right]
            previous = right_of_left[left]
            owner_of_right[right], right_of_left[left] = left, right
            right = previous
    return right_of_left


def strict_decision(expected: Any, actual: Any, extra_args: str = "allow") -> Decision:
    """A strict comparison as a Decision: decided_by "number" when both sides are numbers, else "exact"
    (or "structure" for an unexpected key)."""
    found = strict_difference(expected, actual, extra_args)
    both_numbers = as_number(_leaf(expected)) is not None and as_number(_leaf(actual)) is not None
    if found is None:
        return Decision(matched=True, decided_by="number" if both_numbers else "exact", reason="equal")
    return Decision(matched=False, decided_by="number" if both_numbers else found.decided_by, reason=found.reason)


# ---------------------------------------------------------------- exact

def exact_difference(expected: Any, actual: Any, extra_args: str = "allow", where: str = "") -> Difference | None:
    """JSON equality. `extra_args` is accepted for a uniform signature but exact objects need the same keys."""
    expected, actual = _leaf(expected), _leaf(actual)
    if isinstance(expected, str) and expected == IGNORE_VALUE:
        return None
    if isinstance(expected, bool) or isinstance(actual, bool):
        same = isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
        return None if same else _mismatch(expected, actual, where)
    if _is_json_number(expected) and _is_json_number(actual):
        return None if numbers_equal(expected, actual) else _mismatch(expected, actual, where)
    if isinstance(expected, dict) and isinstance(actual, dict):
        return _dict_difference(expected, actual, where, extra_args, exact_difference, allow_extra=False)
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return Difference(_at(where, f"expected {len(expected)} items, got {len(actual)}"), "exact")
        for index, (e, a) in enumerate(zip(expected, actual, strict=True)):
            found = exact_difference(e, a, extra_args, _child(where, index))
            if found is not None:
                return found
        return None
    if type(expected) is type(actual) and expected == actual:
        return None
    return _mismatch(expected, actual, where)


def exact_equal(expected: Any, actual: Any) -> bool:
    return exact_difference(expected, actual) is None


def _is_json_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def exact_decision(expected: Any, actual: Any) -> Decision:
    found = exact_difference(expected, actual)
    both_numbers = _is_json_number(_leaf(expected)) and _is_json_number(_leaf(actual))
    if found is None:
        return Decision(matched=True, decided_by="number" if both_numbers else "exact", reason="equal")
    return Decision(matched=False, decided_by="number" if both_numbers else found.decided_by, reason=found.reason)
