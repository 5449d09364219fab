"""`valid_tool_calls`: a check that needs no reference. Every call names a tool the agent was given, and its
arguments validate against that tool's JSON Schema (required keys, types, enums, formats such as `date`
and `email`). Each breach is named with the call (#N, its message), the tool and the JSON path.

The tools are the agent's: a model agent's `tools:`/`tools_file`, else `tools:` on the case (or its file),
else `tools:` under the agent in evalrun.yaml (the run puts them in the context: `CheckContext.tools`).
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from ..suite.tool_specs import ToolSet, ToolSpec, json_path
from ..util.diagnostics import did_you_mean
from ..util.secrets import clip
from .base import CheckContext, CheckFamily, CheckOptions, Verdict
from .bounded_schema import SchemaTooCostly, bounded, checked_errors, one_limit

NO_TOOLS = ("no tools are known for this case: give the agent `tools:` in evalrun.yaml (a model agent's "
            "`tools`/`tools_file`), or `tools:` on the case or its file (OpenAI-style definitions)")
_BREACHES_SHOWN = 8  # in the explanation; the evidence keeps them all


class ValidToolCallsOptions(CheckOptions):
    model_config = ConfigDict(
        extra="forbid", title="Check: valid_tool_calls",
        json_schema_extra={"description": "Every tool call names a tool the agent was given and its arguments "
                           "validate against that tool's JSON Schema (required, types, enums, formats). Needs no "
                           "expected calls.", "examples": [{"type": "valid_tool_calls"}]})

    type: Literal["valid_tool_calls"] = Field(title="Check type", description="valid_tool_calls.",
                                              examples=["valid_tool_calls"])


def call_breaches(call: Any, tools: ToolSet) -> tuple[list[str], list[str]]:
    """(breaches, reasons the call could not be checked) of one trajectory call, each worded."""
    known = tools.by_name()
    spec = known.get(call.name)
    if spec is None:
        return [f"'{call.name}' is not one of the agent's tools{did_you_mean(call.name, known)}"], []
    if call.arguments is None:
        return [f"the arguments are not a JSON object: {call.arguments_error or call.raw_arguments!r}"], []
    if spec.problem is not None:
        return [], [f"the schema of '{spec.name}' is not valid ({spec.problem})"]
    return argument_breaches(spec, call.arguments)


def argument_breaches(spec: ToolSpec, arguments: dict) -> tuple[list[str], list[str]]:
    """Each way `arguments` breaks the tool's schema, as `$.path: reason`, in path order; and the arguments a
    pattern of the schema could not be checked against within its time limit (runner/checks/bounded_schema.py)."""
    from jsonschema import FormatChecker
    from jsonschema.validators import validator_for

    try:
        validator_class = bounded(validator_for(spec.parameters, default=_draft()))
        validator = validator_class(spec.parameters, format_checker=FormatChecker())
        errors, stopped = checked_errors(validator, arguments)
        errors.sort(key=lambda e: (list(map(str, e.absolute_path)), e.message))
    except SchemaTooCostly as exc:
        return [], [f"the schema of '{spec.name}' cannot be applied: {exc}"]
    except Exception as exc:  # an unresolvable $ref, a schema jsonschema cannot apply: not a verdict on the call
        return [], [f"the schema of '{spec.name}' cannot be applied: {type(exc).__name__}: {exc}"]
    unchecked = [f"{json_path(s.path)} is not checked: {s} (the schema of '{spec.name}')" for s in stopped]
    return [f"{json_path(tuple(e.absolute_path))}: {_short(e.message)}" for e in errors], unchecked


def _draft():
    from jsonschema import Draft202012Validator

    return Draft202012Validator


def _short(text: str, limit: int = 200) -> str:
    return clip(text, limit, "...")


def run_valid_tool_calls(options: ValidToolCallsOptions, ctx: CheckContext) -> Verdict:
    tools = ctx.tools
    calls = ctx.trajectory.tool_calls
    if tools is None:
        return Verdict(unscored=NO_TOOLS)
    if not tools.specs and tools.problems:
        return Verdict(unscored=f"the tools of {tools.source} cannot be used: {tools.problems[0][1]}")
    if not calls:
        return Verdict(skipped="the agent made no tool call: there is nothing to validate")
    breaches: list[dict] = []
    unchecked: list[str] = []
    with one_limit():  # a pattern stopped by its time limit stops the patterns of the later calls too
        found_by_call = [call_breaches(call, tools) for call in calls]
    for call, (found, cannot) in zip(calls, found_by_call, strict=True):
        where = f"call #{call.index + 1} (message {call.message_index + 1}) {call.name}"
        breaches += [{"call": call.index + 1, "tool": call.name, "breach": b, "where": where} for b in found]
        unchecked += [f"{where}: {reason}" for reason in cannot]
    bad_calls = {b["call"] for b in breaches}
    valid = len(calls) - len(bad_calls)
    evidence = {"tools_from": tools.source, "calls": len(calls), "valid": valid, "breaches": breaches}
    if unchecked and not breaches:
        return Verdict(unscored="; ".join(unchecked), evidence=evidence)
    by_call: dict[str, list[str]] = {}
    for b in breaches[:_BREACHES_SHOWN]:
        by_call.setdefault(b["where"], []).append(b["breach"])
    lines = [f"{where}: {', '.join(found)}" for where, found in by_call.items()]
    more = len(breaches) - _BREACHES_SHOWN
    explanation = f"{valid} of {len(calls)} tool call(s) valid against the tools of {tools.source}"
    if lines:
        explanation += "; " + "; ".join(lines) + (f"; and {more} more breach(es)" if more > 0 else "")
    return Verdict(score=valid / len(calls), explanation=explanation, evidence=evidence)


FAMILIES = (
    CheckFamily(types=("valid_tool_calls",), description="Every call names a known tool and its arguments "
                "validate against the tool's JSON Schema.", options=ValidToolCallsOptions, run=run_valid_tool_calls),
)
