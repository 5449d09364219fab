"""Tool loading: an agent's tools from wherever they are written, as OpenAI-style definitions.

    load_tools(source, config=...)  -> list of {type: function, function: {name, description, parameters}}
    load_mcp_tools("command args")  -> the same, listed from an MCP server over stdio

`source` is one of:
  - a Python module (`tools.py`): its public functions; type hints become the JSON Schema of the
    arguments (through pydantic, so Literal is an enum, date a `format: date`, a model an object) and the
    docstring the description (its `Args:` section describes each argument);
  - an OpenAPI 3 document (JSON or YAML): each operation is a tool named by its operationId, its path,
    query and header parameters and its JSON request body's properties the arguments;
  - a JSON or YAML list of OpenAI-style tool definitions (or a mapping with such a list under `tools`);
  - `agent:NAME`: the tools of that agent in evalrun.yaml (a model agent's `tools`/`tools_file`, another
    agent's `tools:`).
Whatever the source, the definitions are checked as a suite's `tools:` are (runner.suite.tool_specs);
a problem is a ToolsError naming the source and where.
"""
from __future__ import annotations

import importlib.util
import inspect
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from ..suite.tool_specs import json_path, tool_problems

if TYPE_CHECKING:
    from ..config import LoadedConfig

AGENT_PREFIX = "agent:"
_HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
_REF_DEPTH = 12  # $refs nested in one schema: deeper is left an untyped object (cycles are cut at once)
MCP_TIMEOUT_S = 30.0
_MCP_MAX_TOOLS = 10_000  # a server that pages forever is stopped here


class ToolsError(Exception):
    """The tools cannot be loaded; the message names the source and what is wrong."""


def load_tools(source: str, *, config: Optional["LoadedConfig"] = None) -> list[dict[str, Any]]:
    """The tools `source` defines (see the module's docstring), checked."""
    if source.startswith(AGENT_PREFIX):
        name = source[len(AGENT_PREFIX):]
        definitions = _agent_tools(name, config)
        where = f"agent '{name}' in evalrun.yaml"
    else:
        path = Path(source)
        if not path.is_file():
            raise ToolsError(f"--tools {source}: no such file (give a .py module, an OpenAPI document, a JSON/YAML list "
                             f"of tool definitions, or agent:NAME)")
        where = str(path)
        if path.suffix == ".py":
            definitions = tools_from_module(path)
        else:
            data = _read_data(path)
            if isinstance(data, dict) and ("openapi" in data or "swagger" in data):
                definitions = tools_from_openapi(data, where)
            elif isinstance(data, dict) and isinstance(data.get("tools"), list):
                definitions = data["tools"]
            elif isinstance(data, list):
                definitions = data
            else:
                raise ToolsError(f"{where}: neither an OpenAPI document (no `openapi:` key) nor a list of tool "
                                 "definitions")
    return checked(definitions, where)


def checked(definitions: Any, where: str) -> list[dict[str, Any]]:
    problems = list(tool_problems(definitions))
    if problems:
        raise ToolsError(f"{where}: " + "; ".join(f"tools{json_path(path)[1:]}: {message}"
                                                  for path, message in problems[:10]))
    if not definitions:
        raise ToolsError(f"{where}: defines no tools")
    return [_openai_form(d) for d in definitions]


def _openai_form(definition: dict) -> dict:
    body = definition["function"] if isinstance(definition.get("function"), dict) else definition
    function = {"name": body["name"], "description": body.get("description") or "",
                "parameters": body.get("parameters") or {"type": "object", "properties": {}}}
    return {"type": "function", "function": function}


def _read_data(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolsError(f"{path}: cannot read it: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        if path.suffix == ".json":
            return json.loads(text)
        import yaml

        return yaml.safe_load(text)
    except (ValueError, Exception) as exc:  # yaml.YAMLError or json's ValueError, with its position
        raise ToolsError(f"{path}: not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {exc}") from None


# ------------------------------------------------------------------ evalrun.yaml agents

def _agent_tools(name: str, config: Optional["LoadedConfig"]) -> list:
    from ..suite.diagnostics import did_you_mean

    agents = config.config.agents if config is not None else {}
    if name not in agents:
        declared = f" (declared: {', '.join(agents)})" if agents else " (evalrun.yaml declares no agents)"
        raise ToolsError(f"--tools agent:{name}: no such agent{did_you_mean(name, agents)}{declared}")
    definition = agents[name]
    if definition.type == "model" and definition.tools_file is not None:
        assert config is not None
        return _read_data(config.base_dir / definition.tools_file)
    tools = getattr(definition, "tools", None)
    if not tools:
        raise ToolsError(f"--tools agent:{name}: the agent has no `tools:` in evalrun.yaml")
    return list(tools)


# ------------------------------------------------------------------ Python modules

def tools_from_module(path: Path) -> list[dict[str, Any]]:
    """Each public function defined in the module at `path` (or listed in its `__all__`) as a tool."""
    name = f"_evalrun_tools_{re.sub(r'[^0-9A-Za-z_]', '_', path.stem)}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ToolsError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent.resolve()))  # its own imports of modules beside it
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:  # a module that fails (or exits) while importing: say where
        raise ToolsError(f"{path}: importing it failed: {type(exc).__name__}: {exc}") from None
    finally:
        sys.path.remove(str(path.parent.resolve()))
    exported = getattr(module, "__all__", None)
    functions = [value for key, value in vars(module).items()
                 if inspect.isfunction(value) and value.__module__ == name
                 and (key in exported if exported is not None else not key.startswith("_"))]
    if not functions:
        raise ToolsError(f"{path}: defines no public function to use as a tool")
    return [function_tool(f) for f in functions]


def function_tool(function: Callable) -> dict[str, Any]:
    """One function as an OpenAI-style tool: its signature's type hints as the JSON Schema of the arguments."""
    from pydantic import ConfigDict, Field, create_model

    try:
        hints = _type_hints(function)
    except Exception as exc:  # a hint that names something undefined
        raise ToolsError(f"{function.__name__}: cannot read its type hints: {exc}") from None
    summary, arguments = parse_docstring(inspect.getdoc(function) or "")
    fields: dict[str, Any] = {}
    for parameter in inspect.signature(function).parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        annotation = hints.get(parameter.name, Any)
        default = ... if parameter.default is parameter.empty else parameter.default
        fields[parameter.name] = (annotation, Field(default, description=arguments.get(parameter.name)))
    try:
        model = create_model(f"{function.__name__}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
        schema = model.model_json_schema()
    except Exception as exc:  # a type pydantic cannot describe
        raise ToolsError(f"{function.__name__}: its arguments have no JSON Schema: {exc}") from None
    return {"type": "function", "function": {"name": function.__name__, "description": summary,
                                             "parameters": _without_titles(schema)}}


def _type_hints(function: Callable) -> dict[str, Any]:
    import typing

    return typing.get_type_hints(function, include_extras=True)


_ARGS_HEADERS = ("args:", "arguments:", "parameters:", "params:")


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """(description, {argument: description}) from a Google-style docstring (`Args:` then `name: text`),
    also reading reST `:param name: text` lines."""
    lines = doc.splitlines()
    summary: list[str] = []
    arguments: dict[str, str] = {}
    current: Optional[str] = None
    in_args = False
    indent = None
    for line in lines:
        stripped = line.strip()
        param = re.match(r":param\s+(?:\w+\s+)?(\w+):\s*(.*)", stripped)
        if param:
            current = param.group(1)
            arguments[current] = param.group(2)
            continue
        if stripped.lower() in _ARGS_HEADERS:
            in_args, current, indent = True, None, None
            continue
        if in_args:
            if not stripped:
                continue
            this_indent = len(line) - len(line.lstrip())
            if indent is None:
                indent = this_indent
            if this_indent < indent or (stripped.endswith(":") and " " not in stripped):
                in_args = False  # the next section (Returns:, Raises:)
                continue
            entry = re.match(r"(\w+)(?:\s*\(.*?\))?\s*:\s*(.*)", stripped)
            if this_indent == indent and entry:
                current = entry.group(1)
                arguments[current] = entry.group(2)
            elif current is not None:
                arguments[current] = f"{arguments[current]} {stripped}".strip()
            continue
        if stripped.startswith(":") or (stripped.endswith(":") and " " not in stripped):
            current = None
            continue
        if current is None:
            summary.append(stripped)
    text = " ".join(" ".join(summary).split())
    return text, arguments


def _without_titles(schema: Any) -> Any:
    """pydantic's schema without the `title` of each property and of the whole (noise to a model)."""
    if isinstance(schema, dict):
        out = {}
        for key, value in schema.items():
            if key == "title" and isinstance(value, str):
                continue
            if key in ("properties", "$defs") and isinstance(value, dict):
                out[key] = {name: _without_titles(sub) for name, sub in value.items()}
            else:
                out[key] = _without_titles(value)
        return out
    if isinstance(schema, list):
        return [_without_titles(item) for item in schema]
    return schema


# ------------------------------------------------------------------ OpenAPI

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


# ------------------------------------------------------------------ MCP servers

def load_mcp_tools(command: str, *, timeout_s: float = MCP_TIMEOUT_S) -> list[dict[str, Any]]:
    """The tools an MCP server lists (tools/list), the server started with `command` and spoken to over
    stdio with the `mcp` package. ToolsError when the package is missing or the server cannot be reached."""
    import shlex

    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise ToolsError(f"--tools-mcp {command!r}: cannot split the command: {exc}") from None
    if not argv:
        raise ToolsError("--tools-mcp: the command is empty")
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise ToolsError("--tools-mcp needs the `mcp` package: pip install 'evalrun[mcp]'") from None
    import anyio

    import logging

    quiet = logging.getLogger("mcp")  # the package logs a traceback per unparsable line: the error says it once
    was_disabled, quiet.disabled = quiet.disabled, True
    try:
        listed = anyio.run(_list_mcp_tools, argv, timeout_s)
    except BaseException as exc:  # the server died, spoke no MCP, or never answered
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise ToolsError(f"--tools-mcp {command!r}: could not list the server's tools: {_mcp_reason(exc)}") from None
    finally:
        quiet.disabled = was_disabled
    return checked([{"type": "function", "function": {"name": t.name, "description": t.description or "",
                                                      "parameters": _input_schema(t)}}
                    for t in listed], f"MCP server {command!r}")


def _input_schema(tool: Any) -> dict:
    schema = getattr(tool, "input_schema", None) or getattr(tool, "inputSchema", None)  # mcp 2.x / 1.x
    return _without_titles(schema) if isinstance(schema, dict) else {"type": "object"}


async def _list_mcp_tools(argv: list[str], timeout_s: float) -> list:
    import os

    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    parameters = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    with anyio.fail_after(timeout_s):
        async with stdio_client(parameters, errlog=_devnull()) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools: list = []
                page = await session.list_tools()
                while True:
                    tools.extend(page.tools)
                    cursor = getattr(page, "next_cursor", None) or getattr(page, "nextCursor", None)
                    if not cursor or len(tools) > _MCP_MAX_TOOLS:
                        return tools
                    from mcp import types

                    page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))


def _devnull():
    import os

    return open(os.devnull, "w")


def _mcp_reason(exc: BaseException) -> str:
    """The innermost cause of an exception group (anyio wraps the server's failure), worded."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, TimeoutError):
        return "it did not answer in time"
    if isinstance(exc, FileNotFoundError):
        return f"no such program: {exc.filename or exc}"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
