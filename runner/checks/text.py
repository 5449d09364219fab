"""Assertions on the agent's text: exact, contains, contains_any, contains_all, regex, json_schema, and
the `not_` form of each.

A `not_` form passes when the assertion is false; an assertion that cannot be evaluated (an invalid
pattern or schema, a regex stopped by its time limit) is `unscored` in both forms, never a pass. An agent
that sent no text fails both forms: there is nothing to assert on.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ConfigDict, Field, create_model

from ..score.explain import message_number, message_ref
from ..util.secrets import redact
from .base import CheckContext, CheckFamily, CheckOptions, Verdict

REGEX_TIMEOUT_S = 1.0  # the agent's text is hostile: a pattern must not hang the run


class CheckError(Exception):
    """The assertion could not be evaluated (the suite's pattern or schema is broken, a time limit)."""


@dataclass
class Hit:
    holds: bool
    detail: str


class TextOptions(CheckOptions):
    scope: Literal["final", "any"] = Field(
        "final", title="Scope",
        description="final (default): the agent's final answer. any: passes when any assistant message satisfies "
        "it (a `not_` form: when none does).", examples=["any"])


class _CaseOption(TextOptions):
    case_sensitive: bool = Field(
        True, title="Case sensitive", description="false: compare ignoring upper/lower case.", examples=[False])


def _fold(text: str, options: Any) -> str:
    return text if getattr(options, "case_sensitive", True) else text.casefold()


def _exact(options: Any, text: str) -> Hit:
    holds = _fold(text.strip(), options) == _fold(options.value.strip(), options)
    return Hit(holds, "equals the expected text" if holds else "differs from the expected text")


def _contains(options: Any, text: str) -> Hit:
    holds = _fold(options.value, options) in _fold(text, options)
    return Hit(holds, f"{'contains' if holds else 'does not contain'} {options.value!r}")


def _contains_any(options: Any, text: str) -> Hit:
    found = [v for v in options.values if _fold(v, options) in _fold(text, options)]
    return Hit(bool(found), f"contains {', '.join(map(repr, found))}" if found else "contains none of the values")


def _contains_all(options: Any, text: str) -> Hit:
    missing = [v for v in options.values if _fold(v, options) not in _fold(text, options)]
    return Hit(not missing, f"misses {', '.join(map(repr, missing))}" if missing else "contains every value")


def _regex(options: Any, text: str) -> Hit:
    import regex  # `re` with a time limit

    flags = 0 if options.case_sensitive else regex.IGNORECASE
    try:
        found = regex.search(options.pattern, text, flags=flags, timeout=REGEX_TIMEOUT_S)
    except regex.error as error:
        raise CheckError(f"invalid regular expression {options.pattern!r}: {error}") from None
    except TimeoutError:
        raise CheckError(f"the regular expression /{options.pattern}/ took longer than {REGEX_TIMEOUT_S:g} s and was "
                         "stopped; simplify it (nested repeats such as (a+)+ backtrack)") from None
    if found is None:
        return Hit(False, f"has no match for /{options.pattern}/")
    return Hit(True, f"/{options.pattern}/ matches {redact(found.group(0))[:80]!r}")


def _json_schema(options: Any, text: str) -> Hit:
    import jsonschema

    try:
        validator_class = jsonschema.validators.validator_for(options.schema_)
        validator_class.check_schema(options.schema_)
    except jsonschema.SchemaError as error:
        raise CheckError(f"the check's schema is invalid: {error.message}") from None
    try:
        value = json.loads(text)
    except ValueError as error:
        return Hit(False, f"is not JSON ({error})")
    from .bounded_schema import SchemaTooCostly, bounded, checked_errors

    try:
        problems, stopped = checked_errors(bounded(validator_class)(options.schema_), value)
    except SchemaTooCostly as error:
        raise CheckError(f"the check's schema cannot be applied: {error}") from None
    if stopped:  # the agent's JSON was not checked against one of the schema's patterns: no verdict
        where = "/".join(str(p) for p in stopped[0].path) or "(top level)"
        raise CheckError(f"at {where}, {stopped[0]}; simplify the schema's pattern")
    problem = problems[0] if problems else None
    if problem is not None:
        where = "/".join(str(p) for p in problem.absolute_path) or "(top level)"
        return Hit(False, f"is JSON that does not validate at {where}: {problem.message}")
    return Hit(True, "is JSON that validates against the schema")


_VALUE = {"value": (str, Field(title="Expected text", description="The text to look for.", examples=["2025-01-05"]))}
_VALUES = {"values": (list[str], Field(min_length=1, title="Texts", description="The texts to look for.",
                                         examples=[["refund", "credit"]]))}
_PATTERN = {"pattern": (str, Field(min_length=1, title="Regular expression",
                                    description="A Python regular expression searched for anywhere in the text "
                                    "(anchor it with ^ and $ to match the whole text).",
                                    examples=["\\b\\d{4}-\\d{2}-\\d{2}\\b"]))}
_SCHEMA = {"schema_": (dict[str, Any], Field(alias="schema", title="JSON Schema",
                                              description="The schema the answer, parsed as JSON, must validate against.",
                                              examples=[{"type": "object", "required": ["status"]}]))}

# name -> (what it asserts, its option fields, whether it takes case_sensitive, the test)
_ASSERTIONS: dict[str, tuple[str, dict, bool, Callable[..., Any]]] = {
    "exact": ("the text equals `value` (surrounding whitespace ignored)", _VALUE, True, _exact),
    "contains": ("the text contains `value`", _VALUE, True, _contains),
    "contains_any": ("the text contains at least one of `values`", _VALUES, True, _contains_any),
    "contains_all": ("the text (one message) contains every one of `values`", _VALUES, True, _contains_all),
    "regex": ("`pattern` is found in the text", _PATTERN, True, _regex),
    "json_schema": ("the text parses as JSON and validates against `schema`", _SCHEMA, False, _json_schema),
}


def _options_model(name: str, what: str, fields: dict, case_option: bool) -> type[CheckOptions]:
    types = (name, f"not_{name}")
    model: type[CheckOptions] = create_model(
        f"{''.join(p.title() for p in name.split('_'))}Options",
        __base__=_CaseOption if case_option else TextOptions,
        type=(Literal[types], Field(title="Check type", description=f"{name}: {what}. not_{name}: it does not.",  # type: ignore[arg-type]  # names known at run time
                                    examples=[name])),
        **fields,
    )
    example = {"type": name, **{("schema" if k == "schema_" else k): f[1].examples[0] for k, f in fields.items()}}
    model.model_config = ConfigDict(extra="forbid", populate_by_name=True, title=f"Check: {name} / not_{name}",
                                    json_schema_extra={"description": f"Passes when {what}; not_{name} when it does not.",
                                                       "examples": [example]})
    model.model_rebuild(force=True)
    return model  # type: ignore[return-value]  # create_model made a subclass of the base given


def _runner(test):
    def run(options: Any, ctx: CheckContext) -> Verdict:
        negated = options.type.startswith("not_")
        texts = ctx.trajectory.texts
        if options.scope == "final":
            texts = texts[-1:]
        if not texts:
            return Verdict(score=0.0, passed=False, explanation="the agent sent no text to check")
        hits = []
        for text in texts:
            try:
                hits.append((text, test(options, text.text)))
            except CheckError as error:
                return Verdict(unscored=str(error))
        holding = [(t, h) for t, h in hits if h.holds]
        shown_text, shown_hit = holding[0] if holding else hits[-1]  # the message that decided
        number = message_number(shown_text.message_index)
        passed = bool(holding) != negated
        what = "the final answer" if options.scope == "final" else "the assistant's text"
        return Verdict(score=1.0 if passed else 0.0, passed=passed,
                       explanation=f"{what} ({message_ref(number)}) {shown_hit.detail}",
                       evidence={"message": number, "holds": bool(holding)})
    return run


FAMILIES = tuple(
    CheckFamily(types=(name, f"not_{name}"), description=f"Passes when {what}; not_{name}: when it does not.",
                options=_options_model(name, what, fields, case_option), run=_runner(test))
    for name, (what, fields, case_option, test) in _ASSERTIONS.items()
)
