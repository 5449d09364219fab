"""`evalrun convert SUITE… --to agentflow -o DIR`: evalrun YAML back as Agentflow's own files, where it can be.

Each suite file becomes DIR/<name>/<name>.evalset.json and DIR/<name>/eval_config.json, in the shape Agentflow's
`EvalSet.to_file` / `EvalConfig.to_file` write (every field, unset criteria null), so that 10xscale-agentflow /
10xgraph read them and evalrun reads them back with the same verdicts. What carries over: each case's turns (the
user's message, the expected calls and answer), its runtime context's `user_id` and `config` (session_input), and
its agentflow_* checks as the config's criteria (a node order, reference facts or context per case go into the eval
set, where Agentflow reads them). What Agentflow's files cannot say is named, never dropped silently: evalrun's own
checks and goals, argument modes, per-turn checks, and criteria that differ between the cases of one file (Agentflow
has one config per eval set).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...config.discovery import find_config
from ...config.load import load_config, suite_roots
from ...suite.formats.agentflow.config import AGENTFLOW_DEFAULT_JUDGE
from ...suite.formats.agentflow.detect import CRITERIA
from ...suite.models import Case
from ...util.diagnostics import Diagnostic
from ...util.files import display_path

_CASE_DATA = {"agentflow_node_order": ("expected",), "agentflow_judge": ("reference_facts", "context")}


def to_agentflow(cases: list[Case], source: str) -> tuple[dict | None, dict | None, list[Diagnostic]]:
    """(eval set, eval config, problems) for the cases of one suite file; (None, None, errors) when it cannot be."""
    notes: list[Diagnostic] = []

    def note(case: Case, message: str, severity: str = "warning") -> None:
        notes.append(Diagnostic(source, case.source.line, case.source.column, severity,  # type: ignore[arg-type]
                                f"case '{case.id}': {message}", "not-carried"))

    criteria: dict[str, Any] | None = None
    eval_cases = []
    for case in cases:
        own, extras = _criteria(case, note)
        if criteria is None:
            criteria = own
        elif own != criteria:
            note(case, "its agentflow_* checks differ from the first case's; Agentflow has one eval config per eval set: "
                       "put these cases in a file of their own", "error")
        eval_cases.append(_eval_case(case, extras, note))
    if any(d.severity == "error" for d in notes):
        return None, None, notes
    if not criteria:
        notes.append(Diagnostic(source, 1, 1, "warning", "no agentflow_* check: the eval config checks nothing "
                                "(Agentflow passes every case; evalrun reports them unscored)", "not-carried"))
    eval_set = {"eval_set_id": Path(source).stem, "name": "", "description": "", "eval_cases": eval_cases,
                "metadata": {}}
    return eval_set, eval_config(criteria or {}), notes


def eval_config(criteria: dict[str, dict]) -> dict[str, Any]:
    return {"criteria": {name: criteria.get(name) for name in CRITERIA}, "user_simulator_config": None,
            "parallel": False, "max_concurrency": 4, "timeout": 300.0, "verbose": False, "mock_mode": False,
            "reporter": {"enabled": True, "output_dir": "eval_reports", "console": True, "json_report": True,
                         "html": True, "junit_xml": False, "verbose": True, "include_trajectory": True,
                         "include_node_responses": True, "include_token_usage": True, "include_details": True,
                         "include_passed": True, "timestamp_files": True}}


def _criteria(case: Case, note: Any) -> tuple[dict[str, dict], dict[str, Any]]:
    """The case's agentflow_* checks as Agentflow's criteria, and the per-case data they carry."""
    criteria: dict[str, dict] = {}
    extras: dict[str, Any] = {}
    for spec in case.checks:
        kind = spec.get("type") if isinstance(spec, dict) else None
        if not isinstance(kind, str) or not kind.startswith("agentflow_"):
            note(case, f"check '{kind}' is evalrun's own: Agentflow's config cannot carry it")
            continue
        if kind == "agentflow_no_criteria":
            continue
        name = spec.get("criterion") if kind == "agentflow_judge" else kind.removeprefix("agentflow_")
        criteria[name] = {"threshold": float(spec.get("threshold", 0.8)), "match_type": spec.get("match_type", "EXACT"),  # type: ignore[index]  # the schema requires a criterion
                          "judge_model": spec.get("judge_model", AGENTFLOW_DEFAULT_JUDGE),
                          "num_samples": spec.get("samples", 3),
                          "rubrics": list(spec.get("rubrics", [])), "keywords": list(spec.get("keywords", [])),
                          "check_args": bool(spec.get("check_args", False)), "enabled": True, "api_style": "responses"}
        for key in _CASE_DATA.get(kind, ()):
            if spec.get(key) is not None:
                extras[key] = spec[key]
        if kind in ("agentflow_trajectory", "agentflow_tool_name_match", "agentflow_rouge_match") and \
                (spec.get("expected") is not None or spec.get("reference") is not None):
            note(case, f"check {kind} lists its own expectations; Agentflow reads them from the turns, which are "
                       "written instead")
        if spec.get("gate") is False or spec.get("weight", 1) != 1:
            note(case, f"check {kind}: gate and weight are evalrun's, not carried")
    return criteria, extras


def _eval_case(case: Case, extras: dict[str, Any], note: Any) -> dict[str, Any]:
    if case.goal_details:
        note(case, "goal_details (evalrun's goals) are not carried: write the expectations as turns")
    turns = case.turns or []
    if not turns:
        note(case, "has no turns: only its first user message is carried, with no expectation")
    conversation = []
    users = [t.user for t in turns] or [case.starting_sentence or ""]
    for n, user in enumerate(users):
        turn = turns[n] if turns else None
        calls = []
        for call in (turn.calls or []) if turn else []:
            if call.arg_matching or call.extra_args:
                note(case, f"turn {n + 1}: the argument modes of {call.tool_name} are not carried (Agentflow compares "
                           "arguments exactly, with check_args)")
            calls.append({"name": call.tool_name, "args": dict(call.args or {}), "call_id": None, "result": None})
        if turn is not None and turn.checks:
            note(case, f"turn {n + 1}: its own checks are not carried")
        last = n == len(users) - 1
        conversation.append({
            "invocation_id": (turn.id if turn and turn.id else f"{case.id}-{n + 1}"),
            "user_content": {"role": "user", "content": user, "metadata": {}},
            "expected_tool_trajectory": calls,
            "expected_node_order": list(extras.get("expected", [])) if last else [],
            "expected_intermediate_responses": [{"role": "assistant", "content": r.text, "metadata": {}}
                                                for r in (turn.intermediate_responses or [])] if turn else [],
            "expected_final_response": ({"role": "assistant", "content": turn.response, "metadata": {}}
                                        if turn is not None and turn.response is not None else None)})
    context = case.runtime_context or {}
    metadata = {key: extras[key] for key in ("reference_facts", "context") if key in extras}
    return {"eval_id": case.id, "name": "", "description": case.description or "", "conversation": conversation,
            "session_input": {"app_name": "", "user_id": str(context.get("user_id") or "test_user"), "state": {},
                              "config": dict(context.get("config") or {})},
            "tags": list(case.tags), "metadata": metadata}


def write_agentflow(paths: list[Path], output_dir: Path | None) -> tuple[list[tuple[Path, int]], list[Diagnostic]]:
    """Convert every suite under `paths` (a folder keeps its layout under `output_dir`); (written eval sets with
    their case counts, problems)."""
    from ...suite.load import load_suites

    jobs: list[tuple[Path, Path]] = []  # (suite file, the folder its files go to)
    diagnostics: list[Diagnostic] = []
    for path in paths:
        if path.is_dir():
            for file in sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.name != "evalrun.yaml"
                               and not any(part.startswith(".") for part in p.relative_to(path).parts)):
                jobs.append((file, (output_dir or path) / file.parent.relative_to(path) / file.stem))
        elif path.is_file():
            jobs.append((path, (output_dir or path.parent) / path.stem))
        else:
            diagnostics.append(Diagnostic(display_path(path), 1, 1, "error", "no such file or folder", "not-found"))
    written = []
    for file, folder in jobs:
        loaded = load_suites([file], roots=suite_roots([file], load_config(find_config([file]))[0]))
        diagnostics += loaded.diagnostics
        if any(d.severity == "error" for d in loaded.diagnostics) or not loaded.cases:
            continue
        eval_set, config, notes = to_agentflow(loaded.cases, display_path(file))
        diagnostics += notes
        if eval_set is None:
            continue
        targets = (folder / f"{file.stem}.evalset.json", folder / "eval_config.json")
        clash = next((t for t in targets if t.exists()), None)
        if clash is not None:
            diagnostics.append(Diagnostic(display_path(clash), 1, 1, "error", "exists already; evalrun convert never "
                                          "overwrites a file", "exists"))
            continue
        folder.mkdir(parents=True, exist_ok=True)
        targets[0].write_text(json.dumps(eval_set, indent=2), encoding="utf-8")  # as Agentflow's to_file writes it
        targets[1].write_text(json.dumps(config, indent=2), encoding="utf-8")
        written.append((targets[0], len(loaded.cases)))
    return written, diagnostics
