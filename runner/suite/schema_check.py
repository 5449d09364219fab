"""Checking data against the shipped JSON Schemas, with positions: `check_suite`, `check_document`.

Kept apart from the schema generator (schema.py), which needs the models and the Config class: the
config loader and the suite loader use this module, and the generator uses them, so arrows point down.
"""
from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable
from typing import Any

from ..util.diagnostics import did_you_mean, format_path, quote
from ..util.jsontext import json_kind
from ..util.resources import schema_path
from .reader import Document

# Why a `checks:` entry is not a valid check (runner.checks.run.check_problem), or None
CheckProblem = Callable[[Any], str | None]

_ANNOTATIONS = {"title", "description", "examples", "default", "deprecated"}


@functools.cache
def load_shipped(kind: str) -> dict[str, Any]:
    return json.loads(schema_path(kind).read_text(encoding="utf-8"))


@functools.cache
def validator(kind: str, widen: Callable[[dict[str, Any]], dict[str, Any]] | None = None):
    """A validator for the shipped schema with its `$ref`s written out in place. `widen`: the schema as the
    installed plugins widen it, given by the layer that knows them (config/load.py for agent kinds); the
    suite's check types are widened here.

    Following a reference costs a lookup on every use, which made up half of the validation time of a
    large suite folder; the inlined schema says the same and validates about twice as fast.
    """
    from jsonschema import Draft202012Validator

    from .schema_plugins import with_plugins

    shipped = with_plugins(kind, load_shipped(kind))
    if widen is not None:
        shipped = widen(shipped)
    return Draft202012Validator({**_inline_refs(shipped, shipped.get("$defs", {}), ()), "$defs": shipped.get("$defs", {})})


def _inline_refs(node: Any, defs: dict[str, Any], expanding: tuple[str, ...]) -> Any:
    """`node` with each local `#/$defs/X` reference replaced by X (a recursive one is left as a reference)."""
    if isinstance(node, list):
        return [_inline_refs(n, defs, expanding) for n in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    name = ref[len("#/$defs/"):] if isinstance(ref, str) and ref.startswith("#/$defs/") else None
    if name in defs and name not in expanding:
        target = _inline_refs(defs[name], defs, expanding + (name,))
        siblings = {k: _inline_refs(v, defs, expanding) for k, v in node.items() if k != "$ref"}
        if set(siblings) & set(target) <= _ANNOTATIONS:  # words for people only: the reference's own win
            return {**target, **siblings}
        return {**siblings, "allOf": [target]}
    return {k: _inline_refs(v, defs, expanding) for k, v in node.items() if k != "$defs"}


# ---------------------------------------------------------------- schema errors as diagnostics

def check_suite(doc: Document, check_problem: CheckProblem) -> None:
    """Schema-check a suite file: the models decide quickly that a file is valid; when they don't,
    the shipped schema says precisely why, with positions. `check_problem` judges each `checks:` entry
    against the check registry (runner.checks, which reads these models, so they cannot import it).

    jsonschema is thorough but slow (most of `validate`'s time on large trees); pydantic's strict
    validation of the same models accepts exactly what the generated schema accepts, except explicit
    nulls (the schema drops `null` from optional fields). `conforms` checks those too, and a
    property test keeps "conforms => the schema has no error" true on mutated suites.
    """
    if not conforms(doc.data, check_problem):
        check_document(doc, "suite")


def conforms(data: Any, check_problem: CheckProblem) -> bool:
    from pydantic import BaseModel, ValidationError

    from .models import SuiteFile

    try:
        model = SuiteFile.model_validate(data, strict=True)
    except ValidationError:
        return False
    entries = [*model.checks, *(check for case in model.cases or () for check in case.checks)]
    if any(check_problem(entry) for entry in entries):
        return False

    def no_explicit_nulls(node: BaseModel) -> bool:
        for name in node.model_fields_set:
            value = getattr(node, name)
            if value is None and name not in ("output",):  # `output` is any JSON value, null included
                return False
            children = value if isinstance(value, list) else value.values() if isinstance(value, dict) else [value]
            if not all(no_explicit_nulls(child) for child in children if isinstance(child, BaseModel)):
                return False
        return True

    return no_explicit_nulls(model)


def check_document(doc: Document, kind: str, data: Any = None,
                   widen: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> None:
    """Validate `doc.data` (or `data`) against the shipped schema (as `widen` widens it, see `validator`); add
    one diagnostic per problem."""
    instance = doc.data if data is None else data
    seen: set[tuple] = set()
    for error in validator(kind, widen).iter_errors(instance):
        for location, message, code, on_key in _explain(error):
            if (location, message) not in seen:  # a goal's `required` is checked by Goal and by its type's model
                seen.add((location, message))
                doc.error(location, message, code, key=on_key)


def _explain(error) -> Iterable[tuple[tuple, str, str, bool]]:
    location = tuple(error.absolute_path)
    where = format_path(location)
    kind = error.validator
    instance = error.instance
    if kind in ("anyOf", "oneOf"):
        yield from _explain_alternatives(error, location, where)
    elif kind == "additionalProperties":
        allowed = list(error.schema.get("properties", {}))
        for key in instance:
            if key not in allowed:
                yield location + (key,), f"unknown key '{key}' in {_owner(where)}{did_you_mean(key, allowed)}", "unknown-key", True
    elif kind == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        yield location, f"{_owner(where)} is missing the required key '{missing}'", "missing-key", False
    elif kind == "type":
        shape = _field_shape(error)
        if shape is not None:
            yield location, f"{where} must be {shape}; here it is {_type_name(instance)} {quote(instance)}", "type", False
            return
        expected = error.validator_value
        if expected == ["string", "number"]:  # text, where a number is read as its text (runner/suite/coerce.py)
            expected = "string"
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        yield location, f"{where} must be {_article(expected)}, got {_type_name(instance)} {quote(instance)}", "type", False
    elif kind in ("enum", "const"):
        options = error.validator_value if kind == "enum" else [error.validator_value]
        hint = did_you_mean(str(instance), [str(o) for o in options])
        yield location, f"{where}: {quote(instance)} is not one of {', '.join(map(str, options))}{hint}", "enum", False
    elif kind in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        yield location, f"{where} is {instance}, but it must be {_bound(kind)} {error.validator_value}", "range", False
    elif kind == "minLength":
        yield location, f"{where} must not be empty", "empty", False
    elif kind == "minItems":
        yield location, f"{where} needs at least {error.validator_value} item(s)", "empty", False
    elif kind == "not" and isinstance(error.validator_value, dict) and error.validator_value.get("description"):
        # a value refused on purpose (`skip: no`): the refused schema's description says why and the fix
        yield location, f"{where}: {quote(instance)} {error.validator_value['description']}", "refused-value", False
    else:
        yield location, f"{where}: {error.message}", "schema", False


# What a container field holds, in the words of the README, for type errors on that field: "goals
# must be a map of goal name → goals that come after it" says more than "must be a mapping".
_SHAPES = {
    "goals": "a map of goal name → goals that come after it (a list of goal names)",
    "goal_details": "a list of goals, each a map with `type` and `name`",
    "cases": "a list of cases, each a map of case keys",
    "args": "a map of argument name → expected value",
    "arg_matching": "a map of argument name → how to compare it (a mode such as fuzzy, or a rule)",
    "keywords": "a list of words or phrases the answer must contain",
    "tags": "a list of tags",
    "user_prompts": "a list of the user's messages",
    "termination": "a list of accepted endings (such as user_stop)",
    "tool_outputs": "a map of tool name → the output it returns",
    "runtime_context": "a map of name → value passed to the agent",
    "canaries": "a list of secret marker strings no reply may contain",
    "file_upload": "a map with `file_path` (and `file_id`, `content_type`)",
    "one_of": "a list of accepted values",
    "exclude": "a list of globs (relative to evalrun.yaml)",
    "allowed_paths": "a list of folders (relative to evalrun.yaml)",
    "judge": "a map with `model` (and `api_key_env`, `api_base`, ...)",
    "embeddings": "a map with `enabled` (and `model_path`)",
}


def _field_shape(error) -> Any:
    """The shape of the field a type error is about, when it is a known container field: the error's
    schema path ends in `properties/<field>/type`, so the value is that field's own (not an item's)."""
    path = list(error.absolute_schema_path)
    if len(path) >= 3 and path[-1] == "type" and path[-3] == "properties" and path[-2] in _SHAPES:
        return _SHAPES[path[-2]]
    return None


def _explain_alternatives(error, location: tuple, where: str):
    # Report the alternative whose JSON type fits the value: a string mode gets the enum error, an
    # object rule gets its own key errors.
    depth = len(error.absolute_path)
    fitting = [e for e in error.context
               if not (e.validator == "type" and len(e.absolute_path) == depth)  # "not this branch's type"
               and e.relative_schema_path
               and _branch_accepts_type(error.validator_value[e.relative_schema_path[0]], error.instance)]
    if fitting:
        for sub in fitting:
            yield from _explain(sub)
        return
    kinds = sorted({t for v in error.validator_value for t in _types_of(v)})
    yield (location, f"{where} must be {' or '.join(_article(k) for k in kinds)}, got "
                     f"{_type_name(error.instance)} {quote(error.instance)}", "type", False)


def _branch_accepts_type(branch: dict, instance: Any) -> bool:
    types = _types_of(branch)
    return not types or _json_type(instance) in types or (_json_type(instance) == "integer" and "number" in types)


def _types_of(branch: dict) -> list[str]:
    t = branch.get("type")
    if t is None and "enum" in branch:
        return sorted({_json_type(v) for v in branch["enum"]})
    return [t] if isinstance(t, str) else list(t or [])


def _json_type(value: Any) -> str:
    kind = json_kind(value)
    return kind if kind in _SCHEMA_KINDS else "object"


_SCHEMA_KINDS = {"null", "boolean", "integer", "number", "string", "array", "object"}


def _type_name(value: Any) -> str:
    return {"null": "nothing (null)", "array": "a list", "object": "a mapping", "integer": "the number",
            "number": "the number", "boolean": "the boolean", "string": "the text"}[_json_type(value)]


def _article(kind: str) -> str:
    names = {"string": "text", "integer": "a whole number", "number": "a number", "boolean": "true or false",
             "array": "a list", "object": "a mapping", "null": "empty"}
    return names.get(kind, kind)


def _bound(kind: str) -> str:
    return {"minimum": "at least", "maximum": "at most", "exclusiveMinimum": "more than",
            "exclusiveMaximum": "less than"}[kind]


def _owner(where: str) -> str:
    return "the top level" if where == "the file" else where
