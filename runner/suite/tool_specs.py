"""Tool definitions as suites and evalrun.yaml write them: OpenAI-style function specs.

A definition is `{type: function, function: {name, description, parameters}}` (OpenAI's chat form) or the
same keys without the wrapper (`{name, description, parameters}`). `parameters` is a JSON Schema. This
module reads a list of them into `ToolSpec`s and says, with the JSON path of each, what makes a
definition unusable: no name, a name given twice, parameters that are not a valid JSON Schema.
Validating calls against them is the `valid_tool_calls` check's job (runner/checks/tool_calls.py).
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

Path_ = tuple  # a JSON path as keys and list positions


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]
    at: Path_ = ()  # where the definition is, within the list it came from
    problem: str | None = None  # why its parameters cannot be used to validate a call


@dataclass
class ToolSet:
    """The tools an agent was given, and where they were declared (for explanations)."""

    specs: list[ToolSpec]
    source: str
    problems: list[tuple[Path_, str]] = field(default_factory=list)

    def by_name(self) -> dict[str, ToolSpec]:
        return {spec.name: spec for spec in self.specs}


def read_tools(definitions: Any, source: str) -> ToolSet:
    """The usable tools of a list of definitions, and the problems of the others (path, message)."""
    problems = list(tool_problems(definitions))
    specs: dict[str, ToolSpec] = {}
    for spec in _specs(definitions):
        if spec.name in specs:
            continue  # defined twice: the first definition stands (the problem is reported)
        trouble = [f"{json_path(path)}: {message}" for path, message in problems if path[:1] == spec.at]
        specs[spec.name] = ToolSpec(spec.name, spec.description, spec.parameters, spec.at,
                                    "; ".join(trouble) if trouble else None)
    return ToolSet(specs=list(specs.values()), source=source, problems=problems)


def _specs(definitions: Any) -> Iterator[ToolSpec]:
    if not isinstance(definitions, list):
        return
    for i, item in enumerate(definitions):
        body, _ = _body(item)
        if body is None or not isinstance(body.get("name"), str):
            continue
        parameters = body.get("parameters")
        description = body.get("description")
        yield ToolSpec(name=body["name"], description=description if isinstance(description, str) else "",
                       parameters=parameters if isinstance(parameters, dict) else {"type": "object"}, at=(i,))


def _body(item: Any) -> tuple[dict | None, Path_]:
    """The mapping holding name/parameters, and its path inside the item."""
    if not isinstance(item, dict):
        return None, ()
    if isinstance(item.get("function"), dict):
        return item["function"], ("function",)
    return item, ()


def tool_problems(definitions: Any) -> Iterator[tuple[Path_, str]]:
    """Every problem of a list of tool definitions, as (path within the list, message)."""
    if not isinstance(definitions, list):
        yield (), "tools must be a list of tool definitions ({type: function, function: {name, parameters}})"
        return
    seen: dict[str, int] = {}
    for i, item in enumerate(definitions):
        body, inner = _body(item)
        if body is None:
            yield (i,), "a tool definition must be a mapping with `name` and `parameters` (or OpenAI's " \
                        "`{type: function, function: {...}}`)"
            continue
        if "function" in item and not isinstance(item["function"], dict):
            yield (i, "function"), "`function` must be a mapping with `name` and `parameters`"
            continue
        name = body.get("name")
        if not isinstance(name, str) or not name.strip():
            yield (i, *inner) + (("name",) if "name" in body else ()), "the tool has no name: give it `name`"
        elif name in seen:
            yield (i, *inner, "name"), f"tool '{name}' is defined twice (first as tools[{seen[name]}])"
        else:
            seen[name] = i
        if "parameters" in body:
            yield from (((i, *inner, "parameters", *where), message)
                        for where, message in schema_problems(body["parameters"]))


def schema_problems(schema: Any) -> Iterator[tuple[Path_, str]]:
    """Why `schema` is not a usable JSON Schema for a tool's arguments: its own path and the reason."""
    if not isinstance(schema, dict):
        yield (), "parameters must be a JSON Schema object (a mapping such as {type: object, properties: {...}})"
        return
    from jsonschema.validators import validator_for

    try:
        validator = validator_for(schema, default=_default_validator())
    except Exception as exc:  # an unknown $schema URI
        yield ("$schema",), f"unknown $schema: {exc}"
        return
    meta = validator(validator.META_SCHEMA, format_checker=validator.FORMAT_CHECKER)
    try:
        errors = sorted(meta.iter_errors(schema), key=lambda e: list(map(str, e.absolute_path)))
    except Exception as exc:  # a metaschema that cannot even be applied (it should not happen): say so
        yield (), f"the schema cannot be checked: {type(exc).__name__}: {exc}"
        return
    for error in errors:
        yield tuple(error.absolute_path), f"not a valid JSON Schema: {_worded(error)}"


_JSON_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")


def _worded(error: Any) -> str:
    """The metaschema's complaint, said plainly where it is a common slip (a misspelt type)."""
    path = list(error.absolute_path)
    if path and path[-1] == "type" and isinstance(error.instance, str) and error.instance not in _JSON_TYPES:
        from ..util.diagnostics import did_you_mean

        return (f"'{error.instance}' is not a JSON type{did_you_mean(error.instance, _JSON_TYPES)} "
                f"(types: {', '.join(_JSON_TYPES)})")
    return error.message


def _default_validator():
    from jsonschema import Draft202012Validator

    return Draft202012Validator


def json_path(parts: Path_) -> str:
    """`$.address.zip`, `$.items[0]`: a path as people read it."""
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if _plain(str(part)) else f"[{str(part)!r}]")
    return out


def _plain(key: str) -> bool:
    return key.isidentifier()
