"""An Agentflow eval set read with Agentflow's meaning, when the eval config that applies to it is Agentflow's.

Each eval case becomes an evalrun case whose turns are its invocations (the user's text, the expected calls and
the expected answer, as Agentflow reads them: a message's text is every content block's `text` joined by one
space; a missing `expected_final_response` states nothing) and whose checks are the config's criteria
(runner/checks/agentflow), with what a criterion reads beyond the turns: the expected node order (pooled), the
case's `metadata.reference_facts` and `metadata.context`. `session_input.user_id` and `.config` go to the
case's runtime context, where an Agentflow agent reads them (Agentflow ignores `app_name` and `state`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ....util.diagnostics import did_you_mean, has_errors, sort_diagnostics
from ...models import Case, SourceRef
from ...reader import Document
from .config import AgentflowConfig, read_agentflow_config

# The keys Agentflow's models read (qa/evaluation/dataset/eval_set.py); to_file writes every one
SET_KEYS = ("eval_set_id", "name", "description", "eval_cases", "metadata")
CASE_KEYS = ("eval_id", "name", "description", "conversation", "session_input", "tags", "metadata")
INVOCATION_KEYS = ("invocation_id", "user_content", "expected_tool_trajectory", "expected_node_order",
                   "expected_intermediate_responses", "expected_final_response")


def agentflow_config_for(path: Path, explicit: Path | None) -> AgentflowConfig | None:
    """The Agentflow config that applies to the eval set at `path`, or None (no config, or ADK's)."""
    from ..adk_config import config_beside

    if explicit is None:
        explicit, problem = config_beside(path)
        if problem is not None or explicit is None:
            return None
    return read_agentflow_config(explicit)


def message_text(content: Any) -> str:
    """Agentflow's MessageContent.get_text(): a string as it is; of a list, every block's `text`, one space apart."""
    if not isinstance(content, dict):
        return ""
    body = content.get("content")
    if isinstance(body, str):
        return body
    if isinstance(body, list):
        return " ".join(b["text"] for b in body if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def read_agentflow_eval_set(doc: Document, config: AgentflowConfig) -> Any:
    """The cases of an Agentflow eval set (an adk.EvalFileRead), scored with the Agentflow config's criteria."""
    from ...schema_check import check_document
    from ..adk import EvalFileRead, _case_id, _check_unique_ids
    from ..kinds import AGENTFLOW

    out = EvalFileRead(AGENTFLOW)
    check_document(doc, "adk-evalset")
    data = doc.data
    _unknown(doc, data, (), SET_KEYS, "an eval set")
    raw = []
    for i, case in enumerate(data.get("eval_cases") or ()):
        if not isinstance(case, dict):
            continue
        at = ("eval_cases", i)
        _unknown(doc, case, at, CASE_KEYS, "an eval case")
        case_id, named = _case_id(case.get("eval_id"), doc.path)
        raw.append(({"id": case_id, **_case_fields(doc, case, at, config)}, at, named))
    _check_unique_ids(doc, raw)
    out.diagnostics = sort_diagnostics([*doc.diagnostics, *config.diagnostics])
    if has_errors(doc.diagnostics) or not config.ok:
        return out
    for fields, at, named in raw:
        line, column = doc.position(at)
        try:
            built = Case.model_validate({**fields, "source": SourceRef(path=doc.path, line=line, column=column)})
        except ValidationError as exc:
            for err in exc.errors():
                doc.error(at, f"{'.'.join(map(str, err['loc']))}: {err['msg']}", "model")
            continue
        out.cases.append(built)
        if named:
            out.named_ids.add(built.id)
    out.diagnostics = sort_diagnostics([*doc.diagnostics, *config.diagnostics])
    return out


def _unknown(doc: Document, data: dict, at: tuple, known: tuple, what: str) -> None:
    for key in data:
        if key not in known:
            doc.error(at + (key,), f"'{key}' is not a key of {what} in Agentflow{did_you_mean(key, known)}; Agentflow "
                                   "ignores it, evalrun too", "unknown-key", key=True, severity="warning")


def _case_fields(doc: Document, case: dict, at: tuple, config: AgentflowConfig) -> dict[str, Any]:
    out: dict[str, Any] = {}
    description = case.get("description") or case.get("name")
    if isinstance(description, str) and description:
        out["description"] = description
    if isinstance(case.get("tags"), list):
        out["tags"] = [t for t in case["tags"] if isinstance(t, str)]
    conversation = given if isinstance(given := case.get("conversation"), list) else []
    turns, nodes = [], []
    for j, invocation in enumerate(conversation):
        if isinstance(invocation, dict):
            _unknown(doc, invocation, at + ("conversation", j), INVOCATION_KEYS, "an invocation")
            turns.append(_turn(doc, invocation, at + ("conversation", j)))
            nodes += [n for n in invocation.get("expected_node_order") or () if isinstance(n, str)]
    if not turns:
        doc.error(at + ("conversation",), "the conversation has no invocations: nothing to play or compare", "empty")
    out["turns"] = turns
    metadata = found if isinstance(found := case.get("metadata"), dict) else {}
    out["checks"] = [_case_check(spec, nodes, metadata) for spec in config.checks] or \
        [{"type": "agentflow_no_criteria", "config": config.path}]
    session = case.get("session_input")
    if isinstance(session, dict):
        context = {k: session[k] for k in ("user_id", "config") if session.get(k) not in (None, "", {})}
        if context:
            out["runtime_context"] = context
    return out


def _turn(doc: Document, invocation: dict, at: tuple) -> dict[str, Any]:
    turn: dict[str, Any] = {}
    if isinstance(invocation.get("invocation_id"), str) and invocation["invocation_id"]:
        turn["id"] = invocation["invocation_id"]
    user = message_text(invocation.get("user_content"))
    if not user.strip():
        doc.error(at + ("user_content",), "the user's message has no text: evalrun plays the user's text, turn by turn",
                  "no-user-text")
    turn["user"] = user
    calls = []
    for k, call in enumerate(invocation.get("expected_tool_trajectory") or ()):
        if not isinstance(call, dict):
            continue
        args = call.get("args", {})
        if not isinstance(args, dict):  # Agentflow refuses `"args": null` too
            doc.error(at + ("expected_tool_trajectory", k, "args"), "args must be an object ({} for any arguments)",
                      "args-type")
            continue
        calls.append({"tool_name": call.get("name"), "args": args})
    if calls:
        turn["calls"] = calls
    expected = invocation.get("expected_final_response")
    if isinstance(expected, dict):  # stated, even as "" (which then states no answer, as Agentflow reads it)
        turn["response"] = message_text(expected)
    said = [{"author": m.get("role") or "assistant", "text": message_text(m)}
            for m in invocation.get("expected_intermediate_responses") or () if isinstance(m, dict) and message_text(m)]
    if said:
        turn["intermediate_responses"] = said
    return turn


def _case_check(spec: dict[str, Any], nodes: list[str], metadata: dict) -> dict[str, Any]:
    check = dict(spec)
    if spec["type"] == "agentflow_node_order":
        check["expected"] = list(nodes)
    if spec.get("criterion") == "factual_accuracy" and metadata.get("reference_facts"):
        check["reference_facts"] = str(metadata["reference_facts"])
    if spec.get("criterion") == "hallucination" and metadata.get("context"):
        check["context"] = str(metadata["context"])
    return check
