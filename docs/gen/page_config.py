"""docs/reference/config.md: every key of evalrun.yaml, from its pydantic model (runner.config.Config, read
through the JSON Schema it publishes), the settings models under it included."""
from __future__ import annotations

from typing import Any

from reference_md import Problems, cell, default_of, header, options_table, prose, type_of, yaml_block

INTRO = """\
# evalrun.yaml

The project's settings. evalrun looks for `evalrun.yaml` (or `evalrun.yml`) next to the suites it is given and
in the folders above them, up to the repository's root (the folder holding `.git`) or, outside a repository, up
to the current folder; `--config FILE` names one. Every key is optional. Relative paths in it are relative to
its own folder. Editors check the file as you type with the schema `evalrun schema config` prints.

| key | type | default | what it sets |
|---|---|---|---|
"""


def render() -> str:
    from runner.authoring.schema import build_schema

    problems = Problems()
    schema = build_schema("config")
    defs = schema["$defs"]
    problems.need(schema.get("description"), "evalrun.yaml's model (runner.config.Config) has no description")
    rows: list[str] = []
    sections: list[str] = []
    for key, node in schema["properties"].items():  # the model's own order: the order of the schema
        where = f"evalrun.yaml key `{key}`"
        description = problems.need(node.get("description"), f"{where} has no description")
        title = problems.need(node.get("title"), f"{where} has no title")
        anchor = _anchor(key)
        kind = type_of(node, _link) if key != "agents" else "map of name to [agent](agents.md)"
        rows.append(f"| [`{key}`](#{anchor}) | {kind} | {default_of(key, node, schema.get('required', []))} | "
                    f"{cell(title)} |")
        default = default_of(key, node, [])
        shown = "no default" if default == "-" else f"default {default}"
        sections += ["", f"## {key}", "", f"**{prose(title)}** ({kind}; {shown})", "", prose(description)]
        if node.get("examples"):
            sections += ["", *yaml_block({key: node["examples"][0]})]
        if key == "agents":
            sections += ["", "Each kind's options: [Agents](agents.md)."]
            continue
        for name in _refs(node, defs):
            sections += ["", f"### {key}: {defs[name].get('title', name)}", "",
                         prose(problems.need(defs[name].get("description"), f"{where}: the model {name} has no "
                                                                               "description")), ""]
            sections += options_table(defs[name], f"{where} ({name})", problems, link=_link)
    problems.raise_if_any()
    return header("evalrun.yaml's model, runner.config.Config") + "\n" + INTRO + "\n".join(rows) + "\n" + \
        "\n".join(sections).rstrip("\n") + "\n"


def _anchor(key: str) -> str:
    return key.lstrip("$").lower()


def _link(name: str) -> str:
    return name


def _refs(node: Any, defs: dict[str, Any], found: list[str] | None = None) -> list[str]:
    """The models a key's value is made of, and theirs, each once, in the order met."""
    found = [] if found is None else found
    if isinstance(node, dict):
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            if name not in found:
                found.append(name)
                _refs(defs[name], defs, found)
        for value in node.values():
            _refs(value, defs, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, defs, found)
    return found


