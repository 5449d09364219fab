"""OpenAPI 3 documents as tools: each operation one tool, named by its operationId (else method_path), its path,
query and header parameters and its JSON request body's properties the arguments (runner/authoring/tools/load.py).

A schema's local $refs are written out in place, which a model reads best; but references that fan out (a schema
using another 8 times, which uses another 8 times, ...) would grow without bound, so past MAX_INLINED nodes for
one tool its schemas are shared instead: each referred schema once under the tool's `$defs`."""
from __future__ import annotations

import re
from typing import Any

from .defs import ToolsError

_HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
_REF_DEPTH = 12  # $refs nested in one schema: deeper is left an untyped object (cycles are cut at once)
MAX_INLINED = 20_000  # schema nodes one tool may hold with its $refs written out; past it they are shared ($defs)
MAX_INLINED_IN_ALL = 200_000  # and all the tools of one document
_DROPPED = ("xml", "example", "externalDocs")  # documentation for people, not for validating arguments


def tools_from_openapi(document: dict, where: str = "the OpenAPI document") -> list[dict[str, Any]]:
    """One tool per operation: named by operationId (else method_path), described by its summary."""
    paths = document.get("paths")
    if not isinstance(paths, dict) or not paths:
        raise ToolsError(f"{where}: the OpenAPI document has no `paths`")
    tools = []
    left = [MAX_INLINED_IN_ALL]  # nodes the document's tools may still write out
    for route, item in paths.items():
        if not isinstance(item, dict):
            continue
        shared = listed if isinstance(listed := item.get("parameters"), list) else []
        for method in _HTTP_METHODS:
            operation = item.get(method)
            if isinstance(operation, dict):
                tools.append(_operation_tool(document, route, method, operation, shared, left))
    if not tools:
        raise ToolsError(f"{where}: the OpenAPI document has no operations under `paths`")
    return tools


def _operation_tool(document: dict, route: str, method: str, operation: dict, shared: list,
                    left: list[int]) -> dict[str, Any]:
    name = operation.get("operationId") or re.sub(r"[^0-9A-Za-z]+", "_", f"{method}_{route}").strip("_")
    inliner = _Inliner(document, min(MAX_INLINED, left[0]))
    try:
        parameters_schema = _arguments(document, operation, shared, inliner)
        left[0] -= inliner.used
    except _TooLarge:  # the references fan out: each schema once, under $defs, referred to where it is used
        sharer = _Sharer(document)
        parameters_schema = _arguments(document, operation, shared, sharer)
        parameters_schema["$defs"] = sharer.defs
    description = operation.get("summary") or operation.get("description") or f"{method.upper()} {route}"
    return {"type": "function", "function": {"name": name, "description": description,
                                             "parameters": parameters_schema}}


def _arguments(document: dict, operation: dict, shared: list, write: Any) -> dict[str, Any]:
    """The JSON Schema of the operation's arguments: its parameters and its JSON body's properties, each schema
    written out by `write` (with its $refs inlined, or shared)."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    parameters = [*shared, *(operation.get("parameters") or [])]
    for parameter in parameters:
        parameter = _resolve(document, parameter)
        if not isinstance(parameter, dict) or parameter.get("in") == "cookie" or not parameter.get("name"):
            continue
        schema = dict(write(parameter.get("schema") or {}))
        if parameter.get("description") and "description" not in schema:
            schema["description"] = parameter["description"]
        properties[parameter["name"]] = schema
        if parameter.get("required") or parameter.get("in") == "path":
            required.append(parameter["name"])
    body = _resolve(document, operation.get("requestBody") or {})
    content = body.get("content") if isinstance(body, dict) else None
    json_body = (content or {}).get("application/json") if isinstance(content, dict) else None
    if isinstance(json_body, dict) and json_body.get("schema"):
        schema = write.body(json_body["schema"])
        if isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
            properties.update(schema["properties"])
            required += [r for r in schema.get("required") or [] if isinstance(r, str)]
        else:
            properties["body"] = schema
            if body.get("required"):
                required.append("body")
    parameters_schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters_schema["required"] = list(dict.fromkeys(required))
    return parameters_schema


def _resolve(document: dict, node: Any) -> Any:
    """A `$ref` to a local component, followed (not recursively)."""
    for _ in range(_REF_DEPTH):
        if not (isinstance(node, dict) and isinstance(node.get("$ref"), str)):
            return node
        node = _pointer(document, node["$ref"])
    return {}


class _TooLarge(Exception):
    """Writing the references out would pass MAX_INLINED nodes for one tool."""


class _Inliner:
    """A tool's schemas with their local $refs replaced by what they point to, counting the nodes written: past
    `limit` (references that fan out, 8 uses of a schema that uses another 8 times, ...) it stops. A reference
    already being inlined on this path (a cycle: a pet whose owner has pets), or past _REF_DEPTH of them, is an
    untyped object."""

    def __init__(self, document: dict, limit: int):
        self.document, self.limit, self.used = document, limit, 0

    def __call__(self, schema: Any, path: tuple = ()) -> Any:
        self.used += 1
        if self.used > self.limit:
            raise _TooLarge()
        if isinstance(schema, dict):
            ref = schema.get("$ref")
            if isinstance(ref, str):
                if ref in path or len(path) >= _REF_DEPTH:
                    return {"type": "object"}
                return self(_pointer(self.document, ref), (*path, ref))
            return {key: self(value, path) for key, value in schema.items() if key not in _DROPPED}
        if isinstance(schema, list):
            return [self(item, path) for item in schema]
        return schema

    body = __call__  # the request body's schema: its properties become the tool's arguments


class _Sharer:
    """A tool's schemas with each local $ref pointing into the tool's own `$defs`, where every referred schema is
    written once (its own references shared the same way): as large as the document at most, and exact for
    recursive schemas."""

    def __init__(self, document: dict):
        self.document = document
        self.defs: dict[str, Any] = {}
        self.names: dict[str, str] = {}  # $ref -> its name under $defs

    def __call__(self, schema: Any) -> Any:
        if isinstance(schema, dict):
            out = {key: self(value) for key, value in schema.items() if key not in _DROPPED and key != "$ref"}
            ref = schema.get("$ref")
            if isinstance(ref, str):
                out["$ref"] = f"#/$defs/{self._define(ref)}"
            return out
        if isinstance(schema, list):
            return [self(item) for item in schema]
        return schema

    def body(self, schema: Any) -> Any:
        """The request body's schema, its own $refs followed so that its properties can become the arguments."""
        resolved = _resolve(self.document, schema)
        return self(resolved if isinstance(resolved, dict) and isinstance(resolved.get("properties"), dict) else schema)

    def _define(self, ref: str) -> str:
        if ref not in self.names:
            base = re.sub(r"[^0-9A-Za-z_.-]+", "_", ref.rsplit("/", 1)[-1]) or "schema"
            name, n = base, 1
            while name in self.defs:
                n += 1
                name = f"{base}_{n}"
            self.names[ref] = name
            self.defs[name] = {}  # taken before it is written: a schema that refers to itself finds its name
            self.defs[name] = self(_pointer(self.document, ref))
        return self.names[ref]


def _pointer(document: dict, ref: str) -> Any:
    if not ref.startswith("#/"):
        raise ToolsError(f"$ref {ref!r}: only references inside the document (#/...) are followed")
    node: Any = document
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise ToolsError(f"$ref {ref!r}: nothing at that place in the document")
        node = node[part]
    return node


