"""The JSON Schemas: generated from the pydantic models, committed under schemas/, checked with positions.

`build_schema(kind)` makes a schema from the models; `schemas/<kind>.schema.json` is the committed
contract that editors and CI read, and a test fails when it differs from the generated one
(`python -m runner.suite.schema --write` refreshes them). At run time validation uses the shipped file.
"""
from __future__ import annotations

import functools
import json
import sys
from typing import Any, Iterable

from ..resources import resource_dir, schema_path
from .diagnostics import did_you_mean, format_path, quote
from .reader import Document
from .models import GOAL_MODELS

KINDS = ("suite", "config", "report")
_ANNOTATIONS = {"title", "description", "examples", "default", "deprecated"}
_DRAFT = "https://json-schema.org/draft/2020-12/schema"


def build_schema(kind: str) -> dict[str, Any]:
    if kind == "suite":
        from .models import SuiteFile

        raw = SuiteFile.model_json_schema(by_alias=True)
        schema = _simplify(raw)
        _goal_items_by_type(schema)
        _titles_from_refs(schema)
    elif kind == "config":
        from ..config import Config

        schema = _simplify(Config.model_json_schema(by_alias=True))
        _titles_from_refs(schema)
    elif kind == "report":
        from ..results import RunReport

        schema = RunReport.model_json_schema(by_alias=True)  # read by programs, not typed by people: kept as generated
    else:
        raise ValueError(f"unknown schema kind {kind!r}; expected one of {', '.join(KINDS)}")
    header = {"$schema": _DRAFT, "$id": f"https://evalrun.dev/schemas/{kind}.schema.json"}
    return {**header, **schema}


def render(kind: str) -> str:
    return json.dumps(build_schema(kind), indent=2, ensure_ascii=False) + "\n"


@functools.lru_cache(maxsize=None)
def load_shipped(kind: str) -> dict[str, Any]:
    return json.loads(schema_path(kind).read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def validator(kind: str):
    """A validator for the shipped schema with its `$ref`s written out in place.

    Following a reference costs a lookup on every use, which made up half of the validation time of a
    large suite folder; the inlined schema says the same and validates about twice as fast.
    """
    from jsonschema import Draft202012Validator

    shipped = load_shipped(kind)
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


def _simplify(node: Any) -> Any:
    """Make pydantic's output read well in an editor and give precise errors.

    `Optional[X]` becomes plain X (an empty value is a mistake a user wants to hear about), and
    `default: null` noise goes.
    """
    if isinstance(node, list):
        return [_simplify(n) for n in node]
    if not isinstance(node, dict):
        return node
    node = {k: _simplify(v) for k, v in node.items()}
    variants = node.get("anyOf")
    if isinstance(variants, list):
        kept = [v for v in variants if v != {"type": "null"}]
        if len(kept) != len(variants):
            del node["anyOf"]
            if len(kept) == 1:
                node = {**kept[0], **node}
            else:
                node["anyOf"] = kept
    if node.get("default", 0) is None:
        del node["default"]
    return node


def _titles_from_refs(schema: dict[str, Any]) -> None:
    """Give a property that is a bare `$ref` the title of what it refers to.

    pydantic leaves out a field's title when it equals the title of the referenced model, so the
    property would show no title in an editor's hover.
    """
    defs = schema.get("$defs", {})
    for holder in [schema, *defs.values()]:
        for prop in holder.get("properties", {}).values():
            ref = prop.get("$ref", "")
            target = defs.get(ref.rsplit("/", 1)[-1]) if ref.startswith("#/$defs/") else None
            if target and "title" not in prop and "title" in target:
                prop["title"] = target["title"]


def _goal_items_by_type(schema: dict[str, Any]) -> None:
    """Validate each goal against the model its `type` names (if/then), not against a union.

    With a plain anyOf, a typo in a tool goal is reported as "not valid under any of the given
    schemas"; dispatching on `type` lets the error name the unknown key.
    """
    goal = {
        "title": "Goal",
        "description": "A goal: `type: tool_call` (a tool the agent must call) or `type: text` (something it must say).",
        "type": "object",
        "required": ["type", "name"],
        "properties": {"type": {"title": "Goal type", "enum": list(GOAL_MODELS),
                                "description": "tool_call or text.", "examples": ["tool_call"]}},
        "allOf": [
            {"if": {"properties": {"type": {"const": t}}, "required": ["type"]}, "then": {"$ref": f"#/$defs/{ref}"}}
            for t, ref in GOAL_MODELS.items()
        ],
    }
    schema["$defs"]["Goal"] = goal
    case = schema["$defs"]["CaseFields"]
    for holder in (case, schema):
        field = holder["properties"]["goal_details"]
        field["items"] = {"$ref": "#/$defs/Goal"}


# ---------------------------------------------------------------- schema errors as diagnostics

def check_suite(doc: Document) -> None:
    """Schema-check a suite file: the models decide quickly that a file is valid; when they don't,
    the shipped schema says precisely why, with positions.

    jsonschema is thorough but slow (most of `validate`'s time on large trees); pydantic's strict
    validation of the same models accepts exactly what the generated schema accepts, except explicit
    nulls (the schema drops `null` from optional fields). `conforms` checks those too, and a
    property test keeps "conforms => the schema has no error" true on mutated suites.
    """
    if not conforms(doc.data):
        check_document(doc, "suite")


def conforms(data: Any) -> bool:
    from pydantic import BaseModel, ValidationError

    from .models import SuiteFile

    try:
        model = SuiteFile.model_validate(data, strict=True)
    except ValidationError:
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


def check_document(doc: Document, kind: str, data: Any = None) -> None:
    """Validate `doc.data` (or `data`) against the shipped schema; add one diagnostic per problem."""
    instance = doc.data if data is None else data
    seen: set[tuple] = set()
    for error in validator(kind).iter_errors(instance):
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
        expected = error.validator_value
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
    else:
        yield location, f"{where}: {error.message}", "schema", False


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
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


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


def main(argv: list[str]) -> int:
    """`python -m runner.suite.schema --write` regenerates schemas/*.schema.json in the repository."""
    target = resource_dir("schemas")
    if "--write" in argv:
        for kind in KINDS:
            (target / f"{kind}.schema.json").write_text(render(kind), encoding="utf-8")
            print(f"wrote {target / f'{kind}.schema.json'}")
        return 0
    print("usage: python -m runner.suite.schema --write", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
