"""Compositions: `all`, `any`, `average` and `weighted` over nested `checks:` (ordinary checks).

What each does with a child that is skipped or unscored:
- a skipped child (no reference, no judge, left out by the profile) is left out of the count; when every
  child is skipped, so is the composition;
- `all`: one failing child fails it (the others cannot change that); otherwise an unscored child makes
  it unscored; otherwise it passes. The score is the share of counted children that passed.
- `any`: one passing child passes it; otherwise an unscored child makes it unscored (it might have
  passed); otherwise it fails. The score is the share of counted children that passed.
- `average` / `weighted`: the (weighted, by each child's `weight`) mean of the children's scores against
  the threshold (default 0.5); an unscored child makes it unscored, since the mean without it is
  another number.
Nested checks' own `gate` is not used: the composition's `gate` decides for the whole.
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator

from .base import CheckContext, CheckFamily, CheckOptions, Verdict

_EXAMPLE: list[Any] = [{"type": "contains", "value": "15778303"}, {"type": "trajectory", "match": "in_order"}]
_DESCRIPTIONS = {
    "all": "Passes when every nested check passes.",
    "any": "Passes when at least one nested check passes.",
    "average": "The mean of the nested checks' scores, against the threshold (default 0.5).",
    "weighted": "The mean of the nested checks' scores weighted by each one's `weight`, against the threshold "
                "(default 0.5).",
}


class ComposeOptions(CheckOptions):
    type: str
    checks: list[dict[str, Any]] = Field(
        min_length=1, title="Nested checks",
        description="Ordinary checks (any type, compositions too), decided on the same conversation. Budget checks "
        "on the run (latency, cost) cannot be nested.",
        examples=[_EXAMPLE])  # the schema checks each item as a check (runner/authoring/schema.py)

    @field_validator("checks")
    @classmethod
    def _nested_checks_are_valid(cls, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        from . import registry
        from .run import check_problem

        for n, item in enumerate(items):
            problem = check_problem(item)
            if problem:
                raise ValueError(f"nested check {n + 1}: {problem}")
            if registry()[item["type"]].reads == "run":
                raise ValueError(f"nested check {n + 1} ({item['type']}) is decided on the finished run (its time "
                                 "or cost) and cannot be nested: list it on its own")
        return items


def _line(child: Any) -> str:
    return f"[{child.status}] {child.name}: {child.explanation}"


def run_compose(options: ComposeOptions, ctx: CheckContext) -> Verdict:
    from .run import evaluate, parse_check, skipped_result

    children = []
    for spec in options.checks:
        family, child_options = parse_check(spec)
        left_out = ctx.selection.left_out(family, child_options) if ctx.selection is not None else None
        children.append(skipped_result(child_options, left_out) if left_out else evaluate(family, child_options, ctx))
    evidence = {"checks": [c.model_dump() for c in children]}
    counted = [c for c in children if c.status != "skipped"]
    listing = "; ".join(_line(c) for c in children)
    if not counted:
        return Verdict(skipped=f"every nested check was skipped: {listing}", evidence=evidence)
    passed = [c for c in counted if c.status == "passed"]
    failed = [c for c in counted if c.status == "failed"]
    unscored = [c for c in counted if c.status == "unscored"]
    share = len(passed) / len(counted)
    tally = f"{len(passed)} of {len(counted)} nested check(s) passed"
    if options.type in ("all", "any"):
        if options.type == "all":
            outcome = False if failed else (None if unscored else True)
        else:
            outcome = True if passed else (None if unscored else False)
        if outcome is None:
            return Verdict(unscored=f"{tally}, and {len(unscored)} unscored could decide it: {listing}",
                           evidence=evidence)
        return Verdict(score=share, passed=outcome, explanation=f"{tally} ({options.type}): {listing}",
                       evidence=evidence)
    if unscored:
        return Verdict(unscored=f"{len(unscored)} nested check(s) unscored, so there is no {options.type} score: "
                       f"{listing}", evidence=evidence)
    weights = [c.weight if options.type == "weighted" else 1.0 for c in counted]
    if sum(weights) == 0:
        return Verdict(unscored=f"the weights of the nested checks sum to 0: {listing}", evidence=evidence)
    mean = sum(w * c.score for w, c in zip(weights, counted, strict=True)) / sum(weights)  # type: ignore[operator,misc]  # none unscored here: each has a score
    parts = ", ".join(f"{c.name} {c.score:.3g}" + (f"×{w:g}" if options.type == "weighted" else "")
                      for w, c in zip(weights, counted, strict=True))
    return Verdict(score=mean, explanation=f"{options.type} score {mean:.3g} of {parts}; {tally}: {listing}",
                   evidence=evidence)


def _options_model(kind: str) -> type[ComposeOptions]:
    """One options model per combinator, so each schema entry accepts exactly its own type."""
    return type(f"{kind.capitalize()}CheckOptions", (ComposeOptions,), {
        "__annotations__": {"type": Literal[kind]},
        "type": Field(title="Check type", description=f"{kind}.", examples=[kind]),
        "model_config": ConfigDict(extra="forbid", title=f"Check: {kind}", json_schema_extra={
            "description": _DESCRIPTIONS[kind] + " The nested checks are ordinary checks.",
            "examples": [{"type": kind, "checks": _EXAMPLE}]}),
    })


FAMILIES = tuple(
    CheckFamily(types=(kind,), description=_DESCRIPTIONS[kind], options=_options_model(kind), run=run_compose,
                default_threshold=0.5 if kind in ("average", "weighted") else 1.0)
    for kind in ("all", "any", "average", "weighted"))
