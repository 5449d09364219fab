"""An Agentflow eval config (`eval_config.json`, or --eval-config) as the criteria evalrun runs, Agentflow's way.

    {"criteria": {"trajectory": {"threshold": 0.8, "match_type": "IN_ORDER", "check_args": true},
                  "rouge_match": {"threshold": 0.5}, "llm_judge": null,
                  "contains_keywords": {"keywords": ["Paris"], "enabled": false}},
     "parallel": false, "timeout": 300.0, "reporter": {...}}

As Agentflow reads it: each criterion an object of options with Agentflow's defaults (threshold 0.8, match_type
EXACT, check_args false, num_samples 3); `null` or `enabled: false` turns it off; no criterion on means nothing
is checked. Stricter than Agentflow where it would run something other than what was meant: an unknown
criterion (Agentflow refuses it too) lists the known ones, a threshold outside 0..1 and a lower-case match type
are errors, and a bare number where the options go is an error (Agentflow refuses it; ADK's configs allow it).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ....util.diagnostics import Diagnostic, did_you_mean, has_errors
from ...reader import Document
from .detect import CRITERIA, JUDGED, LEGACY_NAMES, TOP_LEVEL

MATCH_TYPES = ("EXACT", "IN_ORDER", "ANY_ORDER")
AGENTFLOW_DEFAULT_JUDGE = "gemini-2.5-flash"  # CriterionConfig.judge_model's default: evalrun.yaml's judge serves it
_OPTIONS = ("threshold", "match_type", "judge_model", "num_samples", "rubrics", "keywords", "check_args", "enabled",
            "api_style")
_KIND = {"tool_name_match": "agentflow_tool_name_match", "trajectory": "agentflow_trajectory",
         "node_order": "agentflow_node_order", "rouge_match": "agentflow_rouge_match",
         "contains_keywords": "agentflow_contains_keywords"}


@dataclass
class AgentflowConfig:
    """The criteria that are on, in Agentflow's run order, as check specs without the case's own data."""

    path: str
    checks: list[dict[str, Any]] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not has_errors(self.diagnostics)


_CACHE: dict[tuple[str, int, int], AgentflowConfig | None] = {}


def read_agentflow_config(path: Path) -> AgentflowConfig | None:
    """The Agentflow config at `path`, or None when the file is not one (then it is ADK's, read as before)."""
    from ....util.files import display_path
    from ...reader import read_document
    from .detect import is_agentflow_config

    try:
        info = os.stat(path)
        key: tuple[str, int, int] | None = (str(path.resolve()), info.st_mtime_ns, info.st_size)
    except OSError:
        key = None
    if key is not None and key in _CACHE:
        return _CACHE[key]
    doc = read_document(path, display_path(path), what="eval configs")
    config = config_of(doc) if is_agentflow_config(doc.data, agentflow_eval_set=True) else None
    if key is not None:
        if len(_CACHE) > 64:
            _CACHE.clear()
        _CACHE[key] = config
    return config


def config_of(doc: Document) -> AgentflowConfig:
    """The config a parsed Agentflow file holds; its problems are diagnostics on `doc`, with positions."""
    config = AgentflowConfig(path=doc.path, diagnostics=doc.diagnostics)
    data = doc.data
    if not isinstance(data, dict):
        doc.error((), "an Agentflow eval config must be an object with `criteria`", "not-a-mapping")
        return config
    for key in data:
        if key not in TOP_LEVEL:
            doc.error((key,), f"'{key}' is not a key of an Agentflow eval config{did_you_mean(key, TOP_LEVEL)}; "
                              "Agentflow ignores it, evalrun too", "unknown-key", key=True, severity="warning")
    criteria = data.get("criteria", {})
    if not isinstance(criteria, dict):
        doc.error(("criteria",), "criteria must be an object of criterion name to its options (Agentflow refuses "
                                 f"{'null' if criteria is None else type(criteria).__name__} too); `{{}}` runs none",
                  "criteria-type")
        return config
    for name, value in criteria.items():
        spec = _criterion(doc, str(name), value)
        if spec is not None:
            config.checks.append(spec)
    config.checks.sort(key=lambda spec: CRITERIA.index(spec["name"]))
    return config


def _criterion(doc: Document, name: str, value: Any) -> dict[str, Any] | None:
    where = ("criteria", name)
    if name not in CRITERIA:
        renamed = LEGACY_NAMES.get(name)
        hint = (f" (ADK's and Agentflow 0.6's name; since 0.8 Agentflow calls it '{renamed}')" if renamed
                else did_you_mean(name, CRITERIA))
        doc.error(where, f"unknown criterion '{name}'{hint} (known: {', '.join(CRITERIA)})", "unknown-criterion",
                  key=True)
        return None
    if value is None:
        return None  # off, as Agentflow reads null
    if not isinstance(value, dict):
        doc.error(where, f"criterion {name} must be an object of options, e.g. {{\"threshold\": 0.8}}; Agentflow "
                         f"refuses a {type(value).__name__} here", "criterion-type")
        return None
    for key in value:
        if key not in _OPTIONS:
            doc.error(where + (key,), f"criterion {name} has no option '{key}'{did_you_mean(key, _OPTIONS)}; "
                                      "Agentflow ignores it, evalrun too", "unused-option", key=True,
                      severity="warning")
    ok = True
    enabled = _lax(doc, where + ("enabled",), value.get("enabled", True), "bool")
    if not isinstance(enabled, bool):
        ok = _bad(doc, where + ("enabled",), f"{name}.enabled must be true or false")
    threshold = _lax(doc, where + ("threshold",), value.get("threshold", 0.8), "float")
    if not isinstance(threshold, float):
        ok = _bad(doc, where + ("threshold",), f"{name}.threshold must be a number from 0 to 1")
    elif not 0 <= threshold <= 1:  # Agentflow accepts it silently: above 1 never passes, below 0 always does
        ok = _bad(doc, where + ("threshold",), f"{name}.threshold {threshold:g} is outside 0..1: a score is 0..1, so "
                  f"it would {'never pass' if threshold > 1 else 'always pass'} (Agentflow does not check it)")
    spec: dict[str, Any] = {"type": _KIND.get(name, "agentflow_judge"), "name": name,
                            "threshold": float(threshold) if ok else 0.8}
    if name in ("trajectory", "node_order"):
        match_type = value.get("match_type", "EXACT")
        if match_type not in MATCH_TYPES:
            shown = match_type if isinstance(match_type, str) else repr(match_type)
            ok = _bad(doc, where + ("match_type",), f"{name}.match_type '{shown}' is not one of "
                      f"{', '.join(MATCH_TYPES)}{did_you_mean(str(shown).upper(), MATCH_TYPES)} (Agentflow's "
                      "values are upper case)")
        spec["match_type"] = match_type
    if name == "trajectory":
        check_args = _lax(doc, where + ("check_args",), value.get("check_args", False), "bool")
        if not isinstance(check_args, bool):
            ok = _bad(doc, where + ("check_args",), f"{name}.check_args must be true or false")
        spec["check_args"] = check_args
    if name == "contains_keywords":
        keywords = value.get("keywords", [])
        if not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords):
            ok = _bad(doc, where + ("keywords",), f"{name}.keywords must be a list of texts")
        spec["keywords"] = keywords
    if name in JUDGED:
        ok = _judge_options(doc, where, name, value, spec) and ok
    if not ok:
        return None
    return spec if enabled else None


def _judge_options(doc: Document, where: tuple, name: str, value: dict, spec: dict[str, Any]) -> bool:
    ok = True
    spec["criterion"] = name
    samples = _lax(doc, where + ("num_samples",), value.get("num_samples", 3), "int")
    if name == "simulation_goals":
        samples = 1  # Agentflow asks once whatever num_samples says
    if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= 15:
        ok = _bad(doc, where + ("num_samples",), f"{name}.num_samples must be a whole number from 1 to 15 (Agentflow "
                  "fails the criterion with none)")
    spec["samples"] = samples
    model = value.get("judge_model", AGENTFLOW_DEFAULT_JUDGE)
    if not isinstance(model, str):
        ok = _bad(doc, where + ("judge_model",), f"{name}.judge_model must be a model name")
    elif model.strip() and model != AGENTFLOW_DEFAULT_JUDGE:
        spec["judge_model"] = model.strip()
    if name == "rubric_based":
        rubrics = value.get("rubrics", [])
        good = isinstance(rubrics, list) and all(
            isinstance(r, dict) and isinstance(r.get("rubric_id"), str) and isinstance(r.get("content"), str)
            for r in rubrics)
        if not good:
            ok = _bad(doc, where + ("rubrics",), f"{name}.rubrics must be a list of {{rubric_id, content, weight}}")
        else:
            spec["rubrics"] = [{"rubric_id": r["rubric_id"], "content": r["content"],
                                "weight": float(r.get("weight", 1.0))} for r in rubrics]
    return ok


_TRUE, _FALSE = ("1", "on", "t", "true", "y", "yes"), ("0", "off", "f", "false", "n", "no")


def _lax(doc: Document, where: tuple, value: Any, kind: str) -> Any:
    """`value` as Agentflow's pydantic models read it in their lax mode ("0.5" is 0.5, "yes" is true, 1 is 1.0),
    with a warning when it was not written as the type itself; unchanged when pydantic would refuse it too."""
    read: Any = value
    try:
        if kind == "float" and not isinstance(value, float):
            read = float(value.strip() if isinstance(value, str) else value) if isinstance(value, (str, int)) else value
        elif kind == "bool" and not isinstance(value, bool):
            text = value.strip().lower() if isinstance(value, str) else value
            read = True if text in _TRUE or text == 1 else False if text in _FALSE or text == 0 else value
        elif kind == "int" and (isinstance(value, bool) or not isinstance(value, int)):
            number = float(value) if isinstance(value, (str, float, bool)) else None
            read = int(number) if number is not None and number.is_integer() else value
    except ValueError:
        return value
    written_as_text = isinstance(value, str) or (isinstance(value, bool) != (kind == "bool"))
    if read is not value and written_as_text:
        shown = {"float": "a number", "bool": "true or false", "int": "a whole number"}[kind]
        doc.error(where, f"{value!r} is read as {read!r}, as Agentflow reads it; write {shown}", "lax-value",
                  severity="warning")
    return read


def _bad(doc: Document, where: tuple, message: str) -> bool:
    doc.error(where, message, "criterion")
    return False
