"""OpenAPI 3 documents as tools: each operation one tool, named by its operationId (else method_path), its path,
query and header parameters and its JSON request body's properties the arguments (runner/authoring/tools.py)."""
from __future__ import annotations

import re
from typing import Any

from .tool_defs import ToolsError

_HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
_REF_DEPTH = 12  # $refs nested in one schema: deeper is left an untyped object (cycles are cut at once)


def tools_from_openapi(document: dict, where: str = "the OpenAPI document") -> list[dict[str, Any]]:
    """One tool per operation: named by operationId (else method_path), described by its summary."""
    paths = document.get("paths")
    if not isinstance(paths, dict) or not paths:
        raise ToolsError(f"{where}: the OpenAPI document has no `paths`")
    tools = []
    for route, item in paths.items():
        if not isinstance(item, dict):
            continue
        shared = item.get("parameters") if isinstance(item.get("parameters"), list) else []
        for method in _HTTP_METHODS:
            operation = item.get(method)
            if isinstance(operation, dict):
                tools.append(_operation_tool(document, route, method, operation, shared))
    if not tools:
        raise ToolsError(f"{where}: the OpenAPI document has no operations under `paths`")
    return tools


def _operation_tool(document: dict, route: str, method: str, operation: dict, shared: list) -> dict[str, Any]:
    name = operation.get("operationId") or re.sub(r"[^0-9A-Za-z]+", "_", f"{method}_{route}").strip("_")
    properties: dict[str, Any] = {}
    required: list[str] = []
    parameters = [*shared, *(operation.get("parameters") or [])]
    for parameter in parameters:
        parameter = _resolve(document, parameter)
        if not isinstance(parameter, dict) or parameter.get("in") == "cookie" or not parameter.get("name"):
            continue
        schema = dict(_inline(document, parameter.get("schema") or {}))
        if parameter.get("description") and "description" not in schema:
            schema["description"] = parameter["description"]
        properties[parameter["name"]] = schema
        if parameter.get("required") or parameter.get("in") == "path":
            required.append(parameter["name"])
    body = _resolve(document, operation.get("requestBody") or {})
    content = body.get("content") if isinstance(body, dict) else None
    json_body = (content or {}).get("application/json") if isinstance(content, dict) else None
    if isinstance(json_body, dict) and json_body.get("schema"):
        schema = _inline(document, json_body["schema"])
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
    description = operation.get("summary") or operation.get("description") or f"{method.upper()} {route}"
    return {"type": "function", "function": {"name": name, "description": description,
                                             "parameters": parameters_schema}}


def _resolve(document: dict, node: Any) -> Any:
    """A `$ref` to a local component, followed (not recursively)."""
    for _ in range(_REF_DEPTH):
        if not (isinstance(node, dict) and isinstance(node.get("$ref"), str)):
            return node
        node = _pointer(document, node["$ref"])
    return {}


def _inline(document: dict, schema: Any, path: tuple = ()) -> Any:
    """`schema` with its local $refs replaced by what they point to. A reference already being inlined on
    this path (a cycle: a pet whose owner has pets), or past _REF_DEPTH of them, is an untyped object."""
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str):
            if ref in path or len(path) >= _REF_DEPTH:
                return {"type": "object"}
            return _inline(document, _pointer(document, ref), (*path, ref))
        return {key: _inline(document, value, path) for key, value in schema.items()
                if key not in ("xml", "example", "externalDocs")}
    if isinstance(schema, list):
        return [_inline(document, item, path) for item in schema]
    return schema


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


