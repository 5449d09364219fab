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
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...suite.tool_specs import json_path, tool_problems
from .defs import ToolsError, without_titles

__all__ = ["ToolsError", "checked", "function_tool", "load_mcp_tools", "load_tools", "parse_docstring",
           "tools_from_module", "tools_from_openapi", "without_titles"]

if TYPE_CHECKING:
    from ...config.load import LoadedConfig

AGENT_PREFIX = "agent:"


def load_tools(source: str, *, config: LoadedConfig | None = None) -> list[dict[str, Any]]:
    """The tools `source` defines (see the module's docstring), checked."""
    if source.startswith(AGENT_PREFIX):
        name = source[len(AGENT_PREFIX):]
        definitions = _agent_tools(name, config)
        where = f"agent '{name}' in evalrun.yaml"
    else:
        path = Path(source)
        if not path.is_file():
            what = "not a file" if path.exists() else "no such file"
            raise ToolsError(f"--tools {source}: {what} (give a .py module, an OpenAPI document, a JSON/YAML list "
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

def _agent_tools(name: str, config: LoadedConfig | None) -> list:
    from ...util.diagnostics import did_you_mean

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
                                             "parameters": without_titles(schema)}}


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
    current: str | None = None
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


def tools_from_openapi(document: dict, where: str = "the OpenAPI document") -> list[dict[str, Any]]:
    """One tool per operation of an OpenAPI 3 document (runner/authoring/tools/openapi.py)."""
    from .openapi import tools_from_openapi as read

    return read(document, where)


def load_mcp_tools(command: str, *, timeout_s: float = 30.0) -> list[dict[str, Any]]:
    """The tools an MCP server started with `command` lists over stdio, checked (runner/authoring/tools/mcp.py)."""
    from .mcp import list_mcp_tools

    return checked(list_mcp_tools(command, timeout_s=timeout_s), f"MCP server {command!r}")
