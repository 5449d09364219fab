"""docs/reference/checks.md: every check type of the check registry (runner/checks/: each family's names,
aliases, default threshold, whether it needs a model) with its options from its pydantic model."""
from __future__ import annotations

from typing import Any

from reference_md import Problems, cell, code, header, options_table, prose, table, yaml_block

INTRO = """\
# Checks

A check is a criterion beyond goals, listed under a case's (or a turn's, or a file's) `checks:`. `type` names
the check; the other keys are its options. Every check also takes the [common options](#common-options).
A check passes when its score reaches its threshold; a check that needs a model is decided by the judge of
evalrun.yaml (`judge:`, or the check's own `judge:`), and is `unscored` when there is none or it gives no
usable answer (see the [judge protocol](judge-protocol.md)). The suite schema (`evalrun schema suite`) lists the
same types.
"""


def render() -> str:
    from runner.authoring.schema import build_schema
    from runner.checks import CheckOptions, builtin_families

    problems = Problems()
    defs = build_schema("suite")["$defs"]
    common = defs[CheckOptions.__name__] if CheckOptions.__name__ in defs else _common_schema(CheckOptions)
    families = sorted(builtin_families(), key=lambda f: f.type)
    lines = [header("the check registry, runner/checks/"), INTRO, "| type | aliases | needs a model | "
             "default threshold | what it checks |", "|---|---|---|---|---|"]
    for family in families:
        problems.need(family.description, f"check {family.type}: its CheckFamily has no description")
        aliases = ", ".join(code(a) for a in family.types[1:]) or "-"
        lines.append(f"| [{family.type}](#{family.type}) | {aliases} | {_yes(family.needs_model)} | "
                     f"{_threshold(family)} | {cell(family.description)} |")
    lines += ["", "## Common options", "", "Every check takes these, besides its own.", ""]
    lines += options_table(common, "common check options", problems)
    referenced: set[str] = set()
    for family in families:
        lines += ["", *_family(family, defs, common, problems, referenced)]
    lines += ["", "## Option types", "", "The models that checks' options are made of.", ""]
    for name in sorted(referenced - {"Check"}):
        node = defs[name]
        lines += [f"### {name}", "", prose(problems.need(node.get("description"), f"option type {name} has no "
                                                                                "description")), ""]
        lines += options_table(node, f"option type {name}", problems, link=_link)
        lines.append("")
    problems.raise_if_any()
    return "\n".join(lines).rstrip("\n") + "\n"


def _family(family: Any, defs: dict[str, Any], common: dict[str, Any], problems: Problems,
            referenced: set[str]) -> list[str]:
    schema = defs[family.options.__name__]
    where = f"check {family.type}"
    lines = [f"## {family.type}", "", prose(family.description), ""]
    more = " ".join((schema.get("description") or "").split())
    if more and more != " ".join(family.description.split()):
        lines += [prose(more), ""]
    facts = [["aliases", ", ".join(code(a) for a in family.types[1:]) or "-"],
             ["needs a model", _yes(family.needs_model)],
             ["default threshold", _threshold(family)],
             ["decided", "when the conversation is scored" if family.reads == "trajectory"
              else "after the run, from what it measured (time, cost, tokens)"]]
    lines += table(["", ""], facts) + [""]
    own = [name for name, node in schema.get("properties", {}).items()
           if name != "type" and common.get("properties", {}).get(name) != node]
    _collect_refs(schema, referenced)
    if own:
        lines += options_table(schema, where, problems, skip=[n for n in schema["properties"] if n not in own],
                               link=_link)
    else:
        lines.append("No options of its own.")
    if schema.get("examples"):
        lines += ["", "Example:", "", *yaml_block({"checks": [_type_first(e) for e in schema["examples"][:1]]})]
    return lines


def _type_first(example: dict[str, Any]) -> dict[str, Any]:
    return {"type": example["type"], **{k: v for k, v in example.items() if k != "type"}} if "type" in example \
        else example


def _collect_refs(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        if "$ref" in node:
            found.add(node["$ref"].rsplit("/", 1)[-1])
        for value in node.values():
            _collect_refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _collect_refs(value, found)


def _link(name: str) -> str:
    return "check" if name == "Check" else f"[{name}](#{name.lower()})"


def _common_schema(model: Any) -> dict[str, Any]:
    from runner.authoring.schema import _simplify

    return _simplify(model.model_json_schema())


def _yes(flag: bool) -> str:
    return "yes (the judge)" if flag else "no"


def _threshold(family: Any) -> str:
    shown = _number(family.default_threshold)
    others = ", ".join(f"{alias}: {_number(value)}" for alias, value in family.alias_thresholds)
    return f"{shown} ({others})" if others else shown


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


