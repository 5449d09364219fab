"""JSON Schema validation with limits: its regular expressions run with a time limit, and the references it
follows are counted.

jsonschema searches a schema's `pattern` (and the keys of `patternProperties`, which `additionalProperties`
reads too) with `re`, which has no time limit: a pattern with nested repeats, from a tool's schema (a
`tools:` file, an MCP server, an OpenAPI document) or a suite's `json_schema` check, backtracks for minutes
on an argument the agent under test wrote. Here those keywords search with the `regex` package and a
limit, as suite regexes already are (runner/checks/text.py). A search stopped by the limit is neither a
match nor a breach: it is reported as a `StoppedPattern` (the pattern, the value, where), which makes the
check unscored. After the first one, no pattern runs again in that check (`one_limit`), so one check waits
at most once.

A schema whose references fan out (`anyOf` eight references, each to a schema with `anyOf` eight more, ...)
makes one value be validated against millions of subschemas; past MAX_REFERENCES followed for one value,
validation stops with `SchemaTooCostly`, which also leaves the check unscored.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

PATTERN_TIMEOUT_S = 1.0
MAX_REFERENCES = 10_000  # $refs followed while validating one value (jsonschema: ~0.1 ms each)


class SchemaTooCostly(Exception):
    """Validating would follow more than MAX_REFERENCES references: the schema's references fan out."""


@dataclass(frozen=True)
class StoppedPattern:
    """A pattern the time limit stopped: the value at `path` (a JSON path's parts) was not checked against it."""

    pattern: str
    value: str
    path: tuple
    is_key: bool

    def __str__(self) -> str:
        what = f"the key {self.value!r:.80}" if self.is_key else f"the value {self.value!r:.80}"
        return (f"the pattern /{self.pattern}/ took longer than {PATTERN_TIMEOUT_S:g} s on {what} and was stopped "
                "(nested repeats such as (a+)+ backtrack)")


@lru_cache(maxsize=1)
def _timeout_error() -> type[Any]:
    """jsonschema's ValidationError, subclassed to carry a stopped pattern through its walk (made on first use:
    this package's modules are all imported to build the check registry, and jsonschema costs time)."""
    from jsonschema.exceptions import ValidationError

    class PatternTimeout(ValidationError):
        def __init__(self, pattern: str, value: str, key: str | None):
            super().__init__(f"pattern /{pattern}/ stopped", path=() if key is None else (key,))
            self.pattern, self.value, self.is_key = pattern, value, key is not None

    return PatternTimeout


@dataclass
class _Limit:
    """The patterns of one validation: after the first one stopped, none runs again, and it is reported once."""

    stopped: str | None = None
    reported: bool = False
    references: int = 0  # followed so far


_limit: ContextVar[_Limit | None] = ContextVar("evalrun_pattern_limit", default=None)


@contextmanager
def one_limit() -> Iterator[None]:
    """Validations in this block share one stop: once a pattern hit the time limit, no pattern of any of them runs
    again (a check validating twenty calls waits once, not twenty times)."""
    token = _limit.set(_limit.get() or _Limit())
    try:
        yield
    finally:
        _limit.reset(token)


def checked_errors(validator: Any, instance: Any) -> tuple[list[Any], list[StoppedPattern]]:
    """(jsonschema's errors, patterns stopped by the time limit) of `instance` against a `bounded` validator."""
    with one_limit():
        _limit.get().references = 0  # type: ignore[union-attr]  # counted per value validated
        errors = list(validator.iter_errors(instance))
    timeout = _timeout_error()
    return ([e for e in errors if not isinstance(e, timeout)],
            [StoppedPattern(e.pattern, e.value, tuple(e.absolute_path), e.is_key) for e in errors
             if isinstance(e, timeout)])


@cache
def bounded(validator_class: type[Any]) -> type:
    """`validator_class` whose pattern keywords search with a time limit."""
    from jsonschema.validators import extend

    known = validator_class.VALIDATORS
    plain_additional = known.get("additionalProperties")

    def additional_properties(validator: Any, allowed: Any, instance: Any, schema: dict) -> Iterator[Any]:
        """The keys no `properties` or `patternProperties` names, found with bounded searches, then the keyword as
        jsonschema applies it to them (with the keys a pattern matched named as plain properties)."""
        patterns = schema.get("patternProperties")
        if not isinstance(patterns, dict) or not validator.is_type(instance, "object"):
            yield from plain_additional(validator, allowed, instance, schema)
            return
        named = dict(schema.get("properties") or {})
        for key in instance:
            for pattern in patterns if key not in named else ():
                found = _search(pattern, key)
                if found is None:
                    yield from _stopped(pattern, key, key=key)
                if found is not False:  # matched, or not checked: not an additional property either way
                    named[key] = {}
                    break
        extras = sorted((key for key in instance if key not in named), key=str)
        if allowed is False and extras:  # said here: jsonschema's own words would search the patterns again
            from jsonschema.exceptions import ValidationError

            listed = ", ".join(map(repr, extras))
            yield ValidationError(f"{listed} {'is' if len(extras) == 1 else 'are'} not allowed: not among the "
                                  f"properties, and matching none of the patternProperties "
                                  f"({', '.join(map(repr, patterns))})")
            return
        yield from plain_additional(validator, allowed, instance,
                                    {**{k: v for k, v in schema.items() if k != "patternProperties"},
                                     "properties": named})

    def counted(keyword: str) -> Any:
        plain = known[keyword]

        def follow(validator: Any, reference: Any, instance: Any, schema: dict) -> Iterator[Any]:
            limit = _limit.get()
            if limit is not None:
                limit.references += 1
                if limit.references > MAX_REFERENCES:
                    raise SchemaTooCostly(f"validating the value follows more than {MAX_REFERENCES:,} $refs (the "
                                          "schema's references fan out, as anyOf of references to anyOf of "
                                          "references); share fewer alternatives")
            yield from plain(validator, reference, instance, schema)
        return follow

    overrides = {"pattern": _pattern, "patternProperties": _pattern_properties,
                 "additionalProperties": additional_properties,
                 **{keyword: counted(keyword) for keyword in ("$ref", "$dynamicRef", "$recursiveRef") if keyword in known}}
    return extend(validator_class, {k: v for k, v in overrides.items() if k in known and v is not None})


def _search(pattern: str, text: str) -> bool | None:
    """Whether `pattern` is found in `text`; None when the limit stopped it (or stopped one before it)."""
    import regex

    limit = _limit.get() or _Limit()
    if limit.stopped is not None:
        return None
    try:
        return regex.search(pattern, text, timeout=PATTERN_TIMEOUT_S) is not None
    except TimeoutError:
        limit.stopped = pattern
        return None


def _stopped(pattern: str, value: str, *, key: str | None = None) -> Iterator[Any]:
    """The error that carries the stopped search (the searches skipped after it are not reported)."""
    limit = _limit.get()  # None: a validation outside `checked_errors`, where each stop is its own
    if limit is None or not limit.reported:
        if limit is not None:
            limit.reported = True
        yield _timeout_error()(pattern, value, key)


def _pattern(validator: Any, pattern: str, instance: Any, schema: dict) -> Iterator[Any]:
    if not validator.is_type(instance, "string"):
        return
    found = _search(pattern, instance)
    if found is None:
        yield from _stopped(pattern, instance)
    elif not found:
        from jsonschema.exceptions import ValidationError

        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: dict, instance: Any, schema: dict) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            found = _search(pattern, key)
            if found is None:
                yield from _stopped(pattern, key, key=key)
            elif found:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)
