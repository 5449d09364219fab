"""Agentflow (10xGraph) eval files in the shape the library's own `EvalSet.to_file` / `EvalConfig.to_file` write
them (every field, defaults included, unset criteria as null), and recorded actuals turned into evalrun
recordings. Written here from the library's models (10xscale-agentflow 0.10.1, qa/evaluation/); nothing of the
library is imported, so the tests that use them run without it."""
from __future__ import annotations

import json
from typing import Any

CRITERIA = ("tool_name_match", "trajectory", "node_order", "response_match", "rouge_match", "contains_keywords",
            "llm_judge", "rubric_based", "factual_accuracy", "hallucination", "safety", "simulation_goals")


def message(role: str, text: Any) -> dict:
    return {"role": role, "content": text, "metadata": {}}


def call(name: str, args: dict | None = None) -> dict:
    return {"name": name, "args": dict(args or {}), "call_id": None, "result": None}


def invocation(user: Any, calls: tuple = (), answer: Any = None, *, nodes: tuple = (), invocation_id: str = "") -> dict:
    """One invocation; `answer` None: no expected_final_response (null, as to_file writes it)."""
    return {"invocation_id": invocation_id or f"inv-{abs(hash((json.dumps(user), len(calls)))) % 10**8}",
            "user_content": message("user", user),
            "expected_tool_trajectory": [c if isinstance(c, dict) else call(*c) for c in calls],
            "expected_node_order": list(nodes), "expected_intermediate_responses": [],
            "expected_final_response": None if answer is None else message("assistant", answer)}


def eval_case(eval_id: str, *invocations: dict, metadata: dict | None = None, **session: Any) -> dict:
    return {"eval_id": eval_id, "name": "", "description": "", "conversation": list(invocations),
            "session_input": {"app_name": "", "user_id": session.get("user_id", "test_user"), "state": {},
                              "config": session.get("config", {})},
            "tags": [], "metadata": dict(metadata or {})}


def eval_set(eval_set_id: str, *cases: dict) -> dict:
    return {"eval_set_id": eval_set_id, "name": "", "description": "", "eval_cases": list(cases), "metadata": {}}


def criterion(threshold: float = 0.8, **options: Any) -> dict:
    """A CriterionConfig as model_dump writes it: all nine options."""
    return {"threshold": threshold, "match_type": "EXACT", "judge_model": "gemini-2.5-flash", "num_samples": 3,
            "rubrics": [], "keywords": [], "check_args": False, "enabled": True, "api_style": "responses", **options}


def eval_config(**criteria: dict | None) -> dict:
    """An EvalConfig as to_file writes it: all twelve criteria (unset ones null), then the other fields."""
    return {"criteria": {name: criteria.get(name) for name in CRITERIA}, "user_simulator_config": None,
            "parallel": False, "max_concurrency": 4, "timeout": 300.0, "verbose": False, "mock_mode": False,
            "reporter": {"enabled": True, "output_dir": "eval_reports", "console": True, "json_report": True,
                         "html": True, "junit_xml": False, "verbose": True, "include_trajectory": True,
                         "include_node_responses": True, "include_token_usage": True, "include_details": True,
                         "include_passed": True, "timestamp_files": True}}


def recording(users: list[str], invocations: list[dict]) -> dict:
    """Recorded actuals of one case (the oracle's format: per invocation tool_calls, final_response, node_visits)
    as an evalrun recording: per turn the user, one assistant message per call and its result, the answer; the
    node visits in the recording's state, where an Agentflow agent reports them."""
    messages: list[dict] = []
    visits: list[str] = []
    n = 0
    for user, turn in zip(users, invocations, strict=True):
        messages.append({"role": "user", "content": user})
        for tool in turn.get("tool_calls") or ():
            n += 1
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{n}", "type": "function",
                 "function": {"name": tool["name"], "arguments": json.dumps(tool.get("args") or {})}}]})
            messages.append({"role": "tool", "tool_call_id": f"call_{n}",
                             "content": str(tool.get("result") if tool.get("result") is not None else "ok")})
        if turn.get("final_response"):
            messages.append({"role": "assistant", "content": turn["final_response"]})
        visits += list(turn.get("node_visits") or ())
    return {"messages": messages, "state": {"agentflow": {"node_visits": visits}}}


def user_texts(case: dict) -> list[str]:
    """The user's text of each invocation, as Agentflow's MessageContent.get_text() reads it."""
    out = []
    for inv in case["conversation"]:
        content = inv["user_content"]["content"]
        out.append(content if isinstance(content, str) else
                   " ".join(b["text"] for b in content if isinstance(b, dict) and "text" in b))
    return out
