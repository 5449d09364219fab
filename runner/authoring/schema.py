"""The JSON Schemas editors and CI read, generated from the pydantic models and committed under schemas/.

`build_schema(kind)` makes a schema from the models; `schemas/<kind>.schema.json` is the committed
contract that editors and CI read, and a test fails when it differs from the generated one
(`python -m runner.authoring.schema --write` refreshes them). It sits above every model it reads (the suite's,
every check family's and agent kind's options, evalrun.yaml's, the report's); validating a document against the
shipped file is runner/suite/schema_check.py.
"""
from __future__ import annotations

import json
import sys
from typing import Any

from ..suite.models import GOAL_MODELS
from ..util.resources import resource_dir

KINDS = ("suite", "config", "report", "adk-evalset", "adk-eval-config")
_DRAFT = "https://json-schema.org/draft/2020-12/schema"


def build_schema(kind: str) -> dict[str, Any]:
    if kind == "suite":
        from ..suite.models import SuiteFile

        raw = SuiteFile.model_json_schema(by_alias=True)
        raw["$defs"].update(_check_option_defs())
        schema = _simplify(raw)
        _numbers_as_text(schema)
        _goal_items_by_type(schema)
        _check_items_by_type(schema)
        _titles_from_refs(schema)
    elif kind == "config":
        from ..config.model import Config

        schema = _simplify(Config.model_json_schema(by_alias=True))
        _titles_from_refs(schema)
    elif kind in ("adk-evalset", "adk-eval-config"):  # Google ADK's and Agentflow's files, read as they are
        from ..suite.formats.adk_models import EvalConfigFile, EvalFile

        model = EvalFile if kind == "adk-evalset" else EvalConfigFile
        schema = _simplify(model.model_json_schema(), keep_null=True)  # ADK writes null for what is not set
        _branch_by_key(schema, {"InvocationEvents": "invocation_events", "Message": "content"})
        if kind == "adk-evalset":
            _eval_file_by_shape(schema)
        else:
            schema = _with_agentflow_config(schema)
        _titles_from_refs(schema)
    elif kind == "report":
        from ..results.models import RunReport

        schema = RunReport.model_json_schema(by_alias=True)  # read by programs, not typed by people: kept as generated
    else:
        raise ValueError(f"unknown schema kind {kind!r}; expected one of {', '.join(KINDS)}")
    header = {"$schema": _DRAFT, "$id": f"https://evalrun.dev/schemas/{kind}.schema.json"}
    return {**header, **schema}


def render(kind: str) -> str:
    return json.dumps(build_schema(kind), indent=2, ensure_ascii=False) + "\n"


def _simplify(node: Any, keep_null: bool = False) -> Any:
    """Make pydantic's output read well in an editor and give precise errors.

    `Optional[X]` becomes plain X (an empty value is a mistake a user wants to hear about; not for
    other tools' files, `keep_null`, which write null for what is not set), and `default: null` noise goes.
    """
    if isinstance(node, list):
        return [_simplify(n, keep_null) for n in node]
    if not isinstance(node, dict):
        return node
    node = {k: _simplify(v, keep_null) for k, v in node.items()}
    variants = node.get("anyOf")
    if isinstance(variants, list) and not keep_null:
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


def _numbers_as_text(schema: dict[str, Any]) -> None:
    """Where the loader reads a number as its text (`id: 42`, `tags: [2025]`, `keywords: [1500]`; see
    runner/suite/coerce.py), the schema accepts a number too: the editor underlines what validate refuses,
    and nothing else."""
    from ..suite.coerce import NUMBERS_AS_TEXT

    def widen(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                widen(item)
        elif isinstance(node, dict):
            if node.get("type") == "string":
                node["type"] = ["string", "number"]
            for key, value in node.items():
                if key not in ("examples", "default"):
                    widen(value)

    for model, keys in NUMBERS_AS_TEXT.items():
        holders = [schema["$defs"][model]] + ([schema] if model == "CaseFields" else [])  # the top level is a case
        for holder in holders:
            for key in keys:
                if key in holder["properties"]:
                    widen(holder["properties"][key])


def _branch_by_key(node: Any, keyed: dict[str, str]) -> None:
    """A union of two models, one of them told apart by a key of its own (`keyed`: model -> key), checks the
    value against that one model (if/then/else), so an error names the keys of the shape meant, not of both."""
    if isinstance(node, list):
        for item in node:
            _branch_by_key(item, keyed)
        return
    if not isinstance(node, dict):
        return
    for value in node.values():
        _branch_by_key(value, keyed)
    variants = node.get("anyOf")
    refs = [v.get("$ref", "").rsplit("/", 1)[-1] for v in variants or () if isinstance(v, dict) and "$ref" in v]
    marked = [r for r in refs if r in keyed]
    if len(refs) != 2 or len(marked) != 1:
        return
    other = next(r for r in refs if r != marked[0])
    branch = {"if": {"type": "object", "required": [keyed[marked[0]]]}, "then": {"$ref": f"#/$defs/{marked[0]}"},
              "else": {"$ref": f"#/$defs/{other}"}}
    node["anyOf"] = [v for v in variants or () if "$ref" not in v] + [branch]
    if len(node["anyOf"]) == 1:
        del node["anyOf"]
        node.update(branch)


def _eval_file_by_shape(schema: dict[str, Any]) -> None:
    """An eval file is an eval set (an object), a list of turns (items with `query`) or a list of sessions:
    checked against the one its shape says, so a broken turn is not also reported as a broken session."""
    del schema["anyOf"]
    schema.update({
        "if": {"type": "object"}, "then": {"$ref": "#/$defs/EvalSet"},
        "else": {"if": {"type": "array", "contains": {"type": "object", "required": ["query"]}},
                 "then": {"type": "array", "items": {"$ref": "#/$defs/OldTurn"}},
                 "else": {"type": "array", "items": {"$ref": "#/$defs/OldSession"}}}})


def _with_agentflow_config(adk: dict[str, Any]) -> dict[str, Any]:
    """An eval config is ADK's or Agentflow's own (runner/suite/formats/agentflow/detect.py): one naming an Agentflow
    criterion, or written with Agentflow's other keys, is checked against Agentflow's model, any other against ADK's."""
    from ..suite.formats.agentflow.detect import CRITERIA, TOP_LEVEL
    from ..suite.formats.agentflow.models import AgentflowEvalConfig

    agentflow = _simplify(AgentflowEvalConfig.model_json_schema(), keep_null=True)
    defs = {**adk.pop("$defs", {}), **agentflow.pop("$defs", {})}
    defs["AdkEvalConfig"], defs["AgentflowEvalConfig"] = adk, agentflow
    own_keys = [key for key in TOP_LEVEL if key not in ("criteria", "user_simulator_config")]
    is_agentflow = {"type": "object", "anyOf": [
        {"required": ["criteria"], "properties": {"criteria": {"type": "object",
                                                               "anyOf": [{"required": [c]} for c in CRITERIA]}}},
        *({"required": [key]} for key in own_keys)]}
    return {"title": "ADK or Agentflow eval config", "description": adk.get("description", ""), "$defs": defs,
            "if": is_agentflow, "then": {"$ref": "#/$defs/AgentflowEvalConfig"},
            "else": {"$ref": "#/$defs/AdkEvalConfig"}}


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


def _check_option_defs() -> dict[str, Any]:
    """The options model of every check family (runner/checks), as schema definitions."""
    from ..checks import families

    defs: dict[str, Any] = {}
    for family in families():
        model = family.options.model_json_schema(by_alias=True, ref_template="#/$defs/{model}")
        defs.update(model.pop("$defs", {}))
        defs[family.options.__name__] = model
    return defs


def _check_items_by_type(schema: dict[str, Any]) -> None:
    """Validate each check against its family's options model, chosen by `type` (as goals are), so a
    typo in an option is reported as an unknown key; the list of types comes from the check registry."""
    from ..checks import registry

    table = registry()
    schema["$defs"]["Check"] = {
        "title": "Check",
        "description": "A criterion beyond goals: `type` names the check, the other keys are its options.",
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"title": "Check type", "enum": list(table),
                                "description": "The check to run; every type and its options: docs/reference/checks.md.",
                                "examples": ["trajectory"]}},
        "allOf": [
            {"if": {"properties": {"type": {"const": t}}, "required": ["type"]},
             "then": {"$ref": f"#/$defs/{family.options.__name__}"}}
            for t, family in table.items()
        ],
    }
    for holder in (schema["$defs"]["CaseFields"], schema["$defs"]["Turn"], schema):
        holder["properties"]["checks"]["items"] = {"$ref": "#/$defs/Check"}
    for family in table.values():  # compositions nest ordinary checks: validate them the same way
        nested = schema["$defs"][family.options.__name__]["properties"].get("checks")
        if nested is not None:
            nested["items"] = {"$ref": "#/$defs/Check"}


def main(argv: list[str]) -> int:
    """`python -m runner.authoring.schema --write` regenerates schemas/*.schema.json in the repository."""
    target = resource_dir("schemas")
    if "--write" in argv:
        for kind in KINDS:
            (target / f"{kind}.schema.json").write_text(render(kind), encoding="utf-8")
            print(f"wrote {target / f'{kind}.schema.json'}")
        return 0
    print("usage: python -m runner.authoring.schema --write", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
