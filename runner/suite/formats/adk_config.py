"""An ADK or Agentflow eval config (`test_config.json`, `eval_config.json`, or --eval-config FILE) as evalrun
checks: each criterion becomes the check of the same name with ADK's meaning (runner/checks/adk.py).

    {"criteria": {"tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "IN_ORDER"},
                  "response_match_score": 0.7,
                  "final_response_match_v2": {"threshold": 0.8, "judge_model": "gpt-4o-mini", "num_samples": 3}},
     "user_simulator_config": {"model": "gpt-4o", "max_allowed_invocations": 10}}

A number is a threshold; an object needs `threshold`. The judge of a judged criterion is evalrun.yaml's
`judge`; a `judge_model` (ADK nests it under `judge_model_options`, Agentflow writes it beside the threshold)
overrides only the model name, so one local or proxied judge (api_base, key) serves every criterion.
Without a config, ADK's defaults apply. An unknown criterion is an error that lists the known ones.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...util.diagnostics import Diagnostic, did_you_mean, has_errors
from ...util.files import display_path
from ..models import ADK_DEFAULT_CRITERIA
from ..reader import Document, read_document
from .kinds import CONFIG_FILE_NAMES

# Criteria ADK 2.13 knows that run on Google's Vertex AI service: evalrun has no equivalent of its own.
VERTEX_ONLY = ("response_evaluation_score", "multi_turn_task_success_v1", "multi_turn_trajectory_quality_v1",
               "multi_turn_tool_use_quality_v1", "rubric_based_multi_turn_trajectory_quality_v1")
_JUDGED = ("final_response_match_v2", "rubric_based_final_response_quality_v1", "rubric_based_tool_use_quality_v1",
           "hallucinations_v1", "safety_v1", "per_turn_user_simulator_quality_v1")
# The options each criterion reads (besides threshold); ADK keeps any other key and ignores it, evalrun warns.
_OPTIONS = {
    "tool_trajectory_avg_score": {"match_type", "ignore_args"},
    "response_match_score": set(),
    "final_response_match_v2": {"judge_model_options", "judge_model", "num_samples"},
    "rubric_based_final_response_quality_v1": {"judge_model_options", "judge_model", "num_samples", "rubrics"},
    "rubric_based_tool_use_quality_v1": {"judge_model_options", "judge_model", "num_samples", "rubrics"},
    "hallucinations_v1": {"judge_model_options", "judge_model", "num_samples"},
    "safety_v1": set(),
    "per_turn_user_simulator_quality_v1": {"judge_model_options", "judge_model", "num_samples"},
}
_MATCH_TYPES = ("EXACT", "IN_ORDER", "ANY_ORDER")
DEFAULT_MAX_INVOCATIONS = 20  # ADK's LlmBackedUserSimulatorConfig


@dataclass
class EvalConfig:
    """What a config means to evalrun: the checks of each case, and the simulated user's turn limit."""

    path: str | None  # None: ADK's defaults, no file
    checks: list[dict[str, Any]] = field(default_factory=list)
    max_user_turns: int | None = DEFAULT_MAX_INVOCATIONS  # for conversation_scenario cases; None: no limit
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not has_errors(self.diagnostics)


def default_config() -> EvalConfig:
    return EvalConfig(path=None, checks=[{"type": name, "threshold": threshold}
                                         for name, threshold in ADK_DEFAULT_CRITERIA.items()])


def config_beside(eval_set: Path) -> tuple[Path | None, Diagnostic | None]:
    """The eval config that applies to an eval set found in a folder: `test_config.json` or `eval_config.json`
    in its own folder (ADK looks nowhere else). Both there is ambiguous: an error on the eval set."""
    found = [eval_set.parent / name for name in CONFIG_FILE_NAMES if (eval_set.parent / name).is_file()]
    if len(found) > 1:
        return None, Diagnostic(display_path(eval_set), 1, 1, "error",
                                f"two eval configs apply to this eval set: {display_path(found[0])} and "
                                f"{display_path(found[1])}; remove one, or name the one to use with --eval-config",
                                "two-eval-configs")
    return (found[0] if found else None), None


_CACHE: dict[tuple[str, int, int], EvalConfig] = {}


def read_eval_config(path: Path) -> EvalConfig:
    """The eval config at `path` (read once per version of the file)."""
    try:
        info = os.stat(path)
        key = (str(path.resolve()), info.st_mtime_ns, info.st_size)
    except OSError:
        key = None
    if key is not None and key in _CACHE:
        return _CACHE[key]
    doc = read_document(path, display_path(path), what="eval configs")
    config = eval_config_of(doc)
    if key is not None:
        if len(_CACHE) > 64:
            _CACHE.clear()
        _CACHE[key] = config
    return config


def eval_config_of(doc: Document) -> EvalConfig:
    """The config a parsed file holds; its problems are diagnostics on `doc` with positions."""
    from ..schema_check import check_document

    config = EvalConfig(path=doc.path, diagnostics=doc.diagnostics)
    data = doc.data
    if data is None:
        if not doc.diagnostics:
            doc.error((), "the eval config is empty: it needs `criteria`", "empty")
        return config
    if not isinstance(data, dict):
        doc.error((), "an eval config must be an object with `criteria`", "not-a-mapping")
        return config
    check_document(doc, "adk-eval-config")
    for key in data:
        if key not in ("criteria", "user_simulator_config", "custom_metrics", "live_model_config"):
            doc.error((key,), f"'{key}' is not a key of an eval config; ADK ignores it and so does evalrun"
                              f"{did_you_mean(key, ['criteria', 'user_simulator_config'])}", "unknown-key", key=True,
                      severity="warning")
    if data.get("custom_metrics"):
        doc.error(("custom_metrics",), "custom_metrics (Python metric functions) are not run by evalrun; convert the "
                                       "eval set (`evalrun convert`) and write a `python` check instead",
                  "custom-metrics")
    criteria = data.get("criteria")
    if isinstance(criteria, dict):
        for name, value in criteria.items():
            spec = _criterion(doc, name, value)
            if spec is not None:
                config.checks.append(spec)
    config.max_user_turns = _max_invocations(data.get("user_simulator_config"))
    return config


def _criterion(doc: Document, name: str, value: Any) -> dict[str, Any] | None:
    from ...checks.adk import EFFICIENCY, KNOWN_CRITERIA
    from ...checks.run import check_problem
    from .agentflow.detect import CRITERIA as AGENTFLOW_CRITERIA

    where = ("criteria", name)
    if name not in KNOWN_CRITERIA:
        if name in VERTEX_ONLY:
            why = f"ADK runs '{name}' on Google's Vertex AI service; evalrun has no equivalent"
        elif name in AGENTFLOW_CRITERIA:
            why = (f"'{name}' is an Agentflow criterion, but this eval set is ADK's: an Agentflow eval config applies "
                   "to Agentflow eval sets (invocations with expected_tool_trajectory); use ADK's criteria")
        else:
            why = f"unknown criterion '{name}'{did_you_mean(name, KNOWN_CRITERIA)}"
        doc.error(where, f"{why} (known: {', '.join(KNOWN_CRITERIA)})", "unknown-criterion", key=True)
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, dict)):
        return None  # the schema reported it
    if name in EFFICIENCY:
        doc.error(where, f"{name} is informational: evalrun reports it and never gates on it, so its threshold is "
                         "not used (ADK refuses a threshold for it)", "informational", key=True, severity="warning")
        return {"type": name}
    if not isinstance(value, dict):
        return {"type": name, "threshold": float(value)}
    if "threshold" not in value or isinstance(value.get("threshold"), bool) \
            or not isinstance(value.get("threshold"), (int, float)):
        return None  # the schema reported it
    spec: dict[str, Any] = {"type": name, "threshold": float(value["threshold"])}
    for key in value:
        if key != "threshold" and key not in _OPTIONS[name]:
            doc.error(where + (key,), f"criterion {name} does not read '{key}'; ADK keeps the key and ignores it, "
                                      "and so does evalrun", "unused-option", key=True, severity="warning")
    if name == "tool_trajectory_avg_score":
        match_type = value.get("match_type")
        if isinstance(match_type, str):
            normal = match_type.strip().upper().replace("-", "_").replace(" ", "_")  # as ADK reads it
            if normal not in _MATCH_TYPES:
                doc.error(where + ("match_type",), f"match_type '{match_type}' is not one of {', '.join(_MATCH_TYPES)}"
                                                   f"{did_you_mean(normal, _MATCH_TYPES)}", "enum")
                return None
            spec["match_type"] = normal
        if value.get("ignore_args") is True:
            spec["ignore_args"] = True
    if name in _JUDGED:
        spec.update(_judge_options(value))
    if name.startswith("rubric_based_") and isinstance(value.get("rubrics"), list):
        spec["rubrics"] = [{"name": r["rubric_id"], "description": (r.get("rubric_content") or {}).get("text_property")}
                           for r in value["rubrics"] if isinstance(r, dict) and isinstance(r.get("rubric_id"), str)]
    problem = check_problem(spec)
    if problem is not None:
        doc.error(where, f"criterion {name}: {problem}", "criterion")
        return None
    return spec


def _judge_options(value: dict) -> dict[str, Any]:
    """ADK's judge_model_options {judge_model, num_samples}, or Agentflow's flat judge_model and num_samples, as
    the check's `judge_model` (a model name for evalrun.yaml's judge settings) and `samples`."""
    nested = given if isinstance(given := value.get("judge_model_options"), dict) else {}
    model = nested.get("judge_model", value.get("judge_model"))
    samples = nested.get("num_samples", value.get("num_samples"))
    options: dict[str, Any] = {}
    if isinstance(model, str) and model.strip():
        options["judge_model"] = model.strip()
    if isinstance(samples, int) and not isinstance(samples, bool):
        options["samples"] = samples
    return options


def _max_invocations(simulator: Any) -> int | None:
    if not isinstance(simulator, dict):
        return DEFAULT_MAX_INVOCATIONS
    limit = simulator.get("max_allowed_invocations", DEFAULT_MAX_INVOCATIONS)
    if isinstance(limit, bool) or not isinstance(limit, int):
        return DEFAULT_MAX_INVOCATIONS
    return None if limit < 0 else max(limit, 1)
