"""Equivalent mutants: changes the suite itself declares cannot matter, so they are named and not counted.
An argument under `ignore` (or written "<IGNORE>"), an `optional` argument dropped, and any change to a call
whose result was an error (dropped, made twice, its arguments) when the case says `failed_calls: ignore`."""
from __future__ import annotations

from ..results.models import CaseResult
from ..suite.models import Case
from .mutant import Mutant
from .rules import argument_rule


def equivalence(case: Case, original: CaseResult, mutant: Mutant) -> str | None:
    """Why the mutant is equivalent, in the suite's words, or None."""
    if case.failed_calls == "ignore" and mutant.family in ("arguments", "calls") and mutant.operator != "extra_write":
        touched = [mutant.call_index] + ([mutant.call_index + 1] if mutant.operator == "swap_calls"
                                         and mutant.call_index is not None else [])
        failed = [c.index for c in original.calls if c.index in touched and c.is_error]
        # a failed call changed nothing: what it carried, or whether it was made, cannot matter; a swap moves the
        # failed result to the other call, which is the same unless the two calls differ in more than order
        if failed and (mutant.operator != "swap_calls" or _same_tool(original, touched)):
            return "the call's result was an error and the case says `failed_calls: ignore`"
    if mutant.family != "arguments" or mutant.arg_path is None:
        return None
    at = argument_rule(case, original, mutant.call_index, mutant.arg_path)
    if at is None:
        return None
    where = f"goal '{at.goal.name}'"
    if at.ignored_value:
        return f"{where} writes `{mutant.arg_path}` as \"<IGNORE>\": declared irrelevant"
    if at.mode == "ignore":
        return f"{where} has `{at.key}: ignore`: declared irrelevant"
    if mutant.operator in ("drop_key", "drop_item") and at.rule is not None and at.rule.optional \
            and at.key == mutant.arg_path:
        return f"{where} has `{at.key}` optional: it may be absent"
    return None


def _same_tool(original: CaseResult, indexes: list) -> bool:
    return len({c.tool_name for c in original.calls if c.index in indexes}) == 1
