"""docs/reference/agents.md: every agent kind (runner/run/agents/: each module's KIND, ALIASES and Options)
with its options from its pydantic model, as evalrun.yaml's `agents:` reads them."""
from __future__ import annotations

from typing import Any

from reference_md import Problems, cell, code, header, options_table, prose, yaml_block

INTRO = """\
# Agents

An agent is what the cases talk to. evalrun.yaml declares them under `agents:`, by name; `type` says the kind
and the other keys are its options. A case or a suite file picks one with `agent:` (or `--agent NAME`); with
one agent declared, or `default_agent:`, cases that name none use it. See [evalrun.yaml](config.md#agents).
"""


def render() -> str:
    from runner.authoring.schema import build_schema
    from runner.run.agents._registry import _KIND_MODULES

    problems = Problems()
    defs = build_schema("config")["$defs"]
    modules: dict[str, Any] = {}
    for module in _KIND_MODULES.values():
        modules.setdefault(module.KIND, module)  # an alias maps to its kind's module
    lines = [header("the agent kinds, runner/run/agents/"), INTRO, "| kind | aliases | what it is |", "|---|---|---|"]
    sections: list[str] = []
    referenced: set[str] = set()
    for kind in sorted(modules):
        module = modules[kind]
        schema = defs[module.Options.__name__]
        where = f"agent kind {kind} ({module.__name__}.Options)"
        description = problems.need(schema.get("description"), f"{where} has no description")
        aliases = ", ".join(code(a) for a in getattr(module, "ALIASES", ())) or "-"
        lines.append(f"| [{kind}](#{kind}) | {aliases} | {cell(description)} |")
        sections += ["", f"## {kind}", "", prose(description), ""]
        if aliases != "-":
            sections += [f"Also written as {aliases}.", ""]
        sections += options_table(schema, where, problems, skip=["type"], link=_link)
        _refs(schema, referenced)
        if schema.get("examples"):
            example = {"type": kind, **{k: v for k, v in schema["examples"][0].items() if k != "type"}}
            sections += ["", "Example:", "", *yaml_block({"agents": {f"my_{kind}_agent": example}})]
    if referenced:
        sections += ["", "## Option types", "", "The models that agents' options are made of.", ""]
    for name in sorted(referenced):
        node = defs[name]
        sections += [f"### {name}", "", prose(problems.need(node.get("description"), f"option type {name} has no "
                                                                                      "description")), ""]
        sections += options_table(node, f"option type {name}", problems, link=_link) + [""]
    problems.raise_if_any()
    return "\n".join(lines + sections).rstrip("\n") + "\n"


def _link(name: str) -> str:
    return f"[{name}](#{name.lower()})"


def _refs(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        if "$ref" in node:
            found.add(node["$ref"].rsplit("/", 1)[-1])
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)
