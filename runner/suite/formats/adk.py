"""Google ADK's and Agentflow's eval files, read as they are, into evalrun cases with turns.

Four shapes, recognised by their content:
- an ADK EvalSet (`*.evalset.json`, or a `*.test.json` holding an object): `eval_set_id`, `eval_cases` with
  a `conversation` of invocations (`user_content`, `final_response`, `intermediate_data`) or a
  `conversation_scenario` (a simulated user's starting prompt and plan);
- the Agentflow eval set: the same family, its invocations with `expected_tool_trajectory` [{name, args}]
  and `expected_final_response` {role, content}, messages with OpenAI-like content blocks;
- ADK's older list of turns (`*.test.json` holding a list of {query, expected_tool_use, reference}): one
  case per file, as ADK migrates it;
- ADK's older list of sessions ([{name, data: [turns], initial_session}]).

Each invocation becomes a `Turn`: the user's text, the expected calls (compared as ADK compares them), the
expected answer (ADK's missing final response is an empty answer, as its evaluators read it). The eval
config beside the file (or --eval-config) gives each case its checks (adk_config.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ...util.diagnostics import Diagnostic, did_you_mean, has_errors, sort_diagnostics
from ..models import Case, SourceRef
from ..reader import Document
from .adk_config import EvalConfig, config_beside, default_config, read_eval_config
from .adk_models import EvalCase, EvalSet, OldSession, OldTurn
from .kinds import _AGENTFLOW_KEYS, AGENTFLOW, EVALSET, OLD_SESSIONS, OLD_TURNS, shape_of  # noqa: F401 (re-exported)

_ADK_KEYS = ("final_response", "intermediate_data")


@dataclass
class EvalFileRead:
    """What an eval file turned into: its cases (none when it has errors) and every problem found."""

    kind: str
    cases: list[Case] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    named_ids: set[str] = field(default_factory=set)  # ids the file writes (not made from its name)


def read_eval_file(path: Path, doc: Document, kind: str, eval_config: Path | None = None) -> EvalFileRead:
    """The cases of an eval file already parsed into `doc`; its problems (and its eval config's) as diagnostics."""
    from ..schema_check import check_document

    out = EvalFileRead(kind)
    check_document(doc, "adk-evalset")
    config = _config_for(path, eval_config, out)
    if kind in (EVALSET, AGENTFLOW):
        raw = _evalset_cases(doc, kind)
    elif kind == OLD_TURNS:
        raw = _old_turn_cases(doc, path)
    else:
        raw = _old_session_cases(doc)
    _check_unique_ids(doc, raw)
    out.diagnostics = sort_diagnostics([*doc.diagnostics, *out.diagnostics])
    if has_errors(doc.diagnostics) or config is None or not config.ok:
        return out
    for case, at, named in raw:
        built = _build(doc, case, at, config)
        if built is not None:
            out.cases.append(built)
            if named:
                out.named_ids.add(built.id)
    out.diagnostics = sort_diagnostics([*doc.diagnostics, *out.diagnostics])
    return out


def _config_for(path: Path, explicit: Path | None, out: EvalFileRead) -> EvalConfig | None:
    if explicit is not None:
        config = read_eval_config(explicit)
    else:
        beside, problem = config_beside(path)
        if problem is not None:
            out.diagnostics.append(problem)
            return None
        config = read_eval_config(beside) if beside is not None else default_config()
    out.diagnostics.extend(config.diagnostics)
    return config


# ------------------------------------------------------------------------ eval sets (ADK and Agentflow)

def _evalset_cases(doc: Document, kind: str) -> list[tuple[dict, tuple, bool]]:
    data = doc.data
    found = []
    for key in data:
        if key not in EvalSet.model_fields:
            doc.error((key,), f"'{key}' is not a key of an eval set{did_you_mean(key, EvalSet.model_fields)}; ADK "
                              "ignores it, evalrun too", "unknown-key", key=True, severity="warning")
    set_description = data.get("description") or (data.get("name") if data.get("name") != data.get("eval_set_id")
                                                   else None)
    for i, case in enumerate(data.get("eval_cases") or ()):
        if not isinstance(case, dict):
            continue
        at = ("eval_cases", i)
        for key in case:
            if key not in EvalCase.model_fields:
                doc.error(at + (key,), f"'{key}' is not a key of an eval case"
                                       f"{did_you_mean(key, EvalCase.model_fields)}; ADK keeps it unread, evalrun too",
                          "unknown-key", key=True, severity="warning")
        conversation, scenario = case.get("conversation"), case.get("conversation_scenario")
        if (conversation is None) == (scenario is None):
            doc.error(at, f"eval case {_quoted(case.get('eval_id'))} needs exactly one of `conversation` and "
                          f"`conversation_scenario`; it has {'both' if conversation is not None else 'neither'}",
                      "conversation-or-scenario")
            continue
        eval_id = case.get("eval_id")
        case_id, named = _case_id(eval_id, doc.path)
        out: dict[str, Any] = {"id": case_id}
        description = case.get("description") or case.get("name") or set_description
        if isinstance(description, str) and description:
            out["description"] = description
        if isinstance(case.get("tags"), list):
            out["tags"] = [t for t in case["tags"] if isinstance(t, str)]
        if isinstance(conversation, list):
            out["turns"] = [_turn(doc, inv, at + ("conversation", j), kind) for j, inv in enumerate(conversation)
                            if isinstance(inv, dict)]
        elif isinstance(scenario, dict):
            out["starting_sentence"] = scenario.get("starting_prompt")
            out["story"] = scenario.get("conversation_plan")
        session = _session_input(case.get("session_input"))
        if session is not None:
            out["session_input"] = session
        if isinstance(case.get("final_session_state"), dict):
            out["final_session_state"] = case["final_session_state"]
        rubrics = _rubrics(case.get("rubrics"))
        if rubrics:
            out["rubrics"] = rubrics
        found.append((out, at, named))
    return found


def _turn(doc: Document, invocation: dict, at: tuple, kind: str) -> dict[str, Any]:
    mixed = [k for k in _ADK_KEYS if k in invocation and invocation[k] is not None] and \
        [k for k in _AGENTFLOW_KEYS if k in invocation and invocation[k] is not None]
    if mixed:
        doc.error(at, "this invocation mixes ADK's keys (final_response, intermediate_data) with Agentflow's "
                      "(expected_tool_trajectory, expected_final_response): use one or the other", "mixed-shapes")
    turn: dict[str, Any] = {}
    if isinstance(invocation.get("invocation_id"), str) and invocation["invocation_id"]:
        turn["id"] = invocation["invocation_id"]
    user = _text(invocation.get("user_content"))
    if not user.strip():
        doc.error(at + ("user_content",), "the user's message has no text: evalrun plays the user's text, turn by turn",
                  "no-user-text")
    turn["user"] = user
    if kind == AGENTFLOW:
        turn["calls"] = [_call(c.get("name"), c.get("args")) for c in invocation.get("expected_tool_trajectory") or ()
                         if isinstance(c, dict)]
        turn["response"] = _text(invocation.get("expected_final_response"))
        said = [{"author": m.get("role") or "agent", "text": _text(m)}
                for m in invocation.get("expected_intermediate_responses") or () if isinstance(m, dict)]
        if invocation.get("expected_node_order"):
            doc.error(at + ("expected_node_order",), "expected_node_order is Agentflow's graph order, which evalrun "
                      "does not check (it compares tool calls and answers)", "unchecked", key=True, severity="warning")
    else:
        calls, said = _intermediate(invocation.get("intermediate_data"))
        turn["calls"] = calls
        turn["response"] = _text(invocation.get("final_response"))  # none: "" (ADK's evaluators read it so)
    if said:
        turn["intermediate_responses"] = said
    rubrics = _rubrics(invocation.get("rubrics"))
    if rubrics:
        turn["rubrics"] = rubrics
    return turn


def _intermediate(data: Any) -> tuple[list[dict], list[dict]]:
    """(expected calls, intermediate texts) of ADK's intermediate_data, in either of its two forms."""
    if not isinstance(data, dict):
        return [], []
    if "invocation_events" in data:  # ADK 2.x: every function call of every event, in order
        calls, said = [], []
        for event in data.get("invocation_events") or ():
            content = event.get("content") if isinstance(event, dict) else None
            for part in (content or {}).get("parts") or ():
                if isinstance(part, dict) and isinstance(part.get("function_call"), dict):
                    calls.append(_call(part["function_call"].get("name"), part["function_call"].get("args")))
            text = _text(content)
            if text:
                said.append({"author": event.get("author") or "agent", "text": text})
        return calls, said
    calls = [_call(c.get("name"), c.get("args")) for c in data.get("tool_uses") or () if isinstance(c, dict)]
    said = []
    for entry in data.get("intermediate_responses") or ():
        if isinstance(entry, list) and len(entry) == 2:
            text = _text({"parts": entry[1]})
            if text:
                said.append({"author": str(entry[0]), "text": text})
    return calls, said


def _call(name: Any, args: Any) -> dict[str, Any]:
    # ADK compares `args` with `==`; a call written without arguments (null) is a call with none
    return {"tool_name": name, "args": args if isinstance(args, dict) else {}}


def _text(content: Any) -> str:
    """A message's text as ADK reads it: the text parts joined by newlines (genai `parts`, or Agentflow's
    `content` as a string or a list of text blocks)."""
    if not isinstance(content, dict):
        return ""
    parts = content.get("parts")
    if isinstance(parts, list):
        return "\n".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str) and p["text"])
    body = content.get("content")
    if isinstance(body, str):
        return body
    if isinstance(body, list):
        return "\n".join(b["text"] for b in body if isinstance(b, dict) and b.get("type") == "text"
                         and isinstance(b.get("text"), str) and b["text"])
    return ""


def _session_input(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        return None
    session: dict[str, Any] = {"app_name": str(value.get("app_name") or ""),
                               "user_id": str(value.get("user_id") or "test_user")}
    if isinstance(value.get("session_id"), str):
        session["session_id"] = value["session_id"]
    if isinstance(value.get("state"), dict) and value["state"]:
        session["state"] = value["state"]
    return session


def _rubrics(value: Any) -> list[dict[str, Any]]:
    found = []
    for rubric in value or () if isinstance(value, list) else ():
        if not isinstance(rubric, dict) or not isinstance(rubric.get("rubric_id"), str):
            continue
        text = (rubric.get("rubric_content") or {}).get("text_property") if isinstance(
            rubric.get("rubric_content"), dict) else None
        entry = {"id": rubric["rubric_id"], "text": text or rubric["rubric_id"]}
        for key in ("type", "description"):
            if isinstance(rubric.get(key), str):
                entry[key] = rubric[key]
        found.append(entry)
    return found


def _case_id(eval_id: Any, path: str) -> tuple[str, bool]:
    """(case id, written in the file). ADK writes a file path as the eval_id of migrated files (even the
    author's absolute one); such an id becomes the file's name, as evalrun names a YAML case."""
    if isinstance(eval_id, str) and eval_id.strip() and not any(c in eval_id for c in "/\\") \
            and not eval_id.endswith(".json"):
        return eval_id, True
    return file_stem(Path(eval_id if isinstance(eval_id, str) and eval_id.strip() else path)), False


def file_stem(path: Path) -> str:
    name = path.name
    for suffix in (".evalset.json", ".test.json", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)] or name
    return path.stem


def _quoted(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) else "(no eval_id)"


# ------------------------------------------------------------------------ ADK's older formats

def _old_turns(doc: Document, turns: list, at: tuple) -> list[dict[str, Any]]:
    out = []
    for j, turn in enumerate(turns):
        if not isinstance(turn, dict):
            continue
        for key in turn:
            if key not in OldTurn.model_fields:
                doc.error(at + (j, key), f"'{key}' is not a key of an old-format turn"
                                         f"{did_you_mean(key, OldTurn.model_fields)}; ADK ignores it, evalrun too",
                          "unknown-key", key=True, severity="warning")
        query = turn.get("query")
        if isinstance(query, str) and not query.strip():
            doc.error(at + (j, "query"), "the user's message is empty: evalrun plays the user's text, turn by turn",
                      "no-user-text")
        entry: dict[str, Any] = {"user": query if isinstance(query, str) else "",
                                 "calls": [_call(c.get("tool_name"), c.get("tool_input"))
                                           for c in turn.get("expected_tool_use") or () if isinstance(c, dict)],
                                 "response": turn.get("reference") if isinstance(turn.get("reference"), str) else ""}
        said = [{"author": r.get("author"), "text": r.get("text")}
                for r in turn.get("expected_intermediate_agent_responses") or ()
                if isinstance(r, dict) and isinstance(r.get("author"), str) and isinstance(r.get("text"), str)]
        if said:
            entry["intermediate_responses"] = said
        out.append(entry)
    return out


def _old_turn_cases(doc: Document, path: Path) -> list[tuple[dict, tuple, bool]]:
    return [({"id": file_stem(path), "turns": _old_turns(doc, doc.data, ())}, (), False)]


def _old_session_cases(doc: Document) -> list[tuple[dict, tuple, bool]]:
    found = []
    for i, session in enumerate(doc.data):
        for key in session:
            if key not in OldSession.model_fields:
                doc.error((i, key), f"'{key}' is not a key of an old-format session"
                                    f"{did_you_mean(key, OldSession.model_fields)}; ADK ignores it, evalrun too",
                          "unknown-key", key=True, severity="warning")
        if "initial_state" in session:
            doc.error((i, "initial_state"), "ADK reads a session's state from `initial_session` {app_name, user_id, "
                                            "state}, not `initial_state`: this one is not used (by ADK either)",
                      "unused-key", key=True, severity="warning")
        case: dict[str, Any] = {"id": str(session.get("name") or f"session-{i + 1}"),
                                "turns": _old_turns(doc, session.get("data") or [], (i, "data"))}
        initial = session.get("initial_session")
        if isinstance(initial, dict) and initial:
            case["session_input"] = _session_input(initial)
        found.append((case, (i,), isinstance(session.get("name"), str)))
    return found


# ------------------------------------------------------------------------ cases

def _check_unique_ids(doc: Document, raw: list[tuple[dict, tuple, bool]]) -> None:
    first: dict[str, tuple] = {}
    for case, at, _ in raw:
        if case["id"] in first:
            line = doc.position(first[case["id"]])[0]
            doc.error(at, f"eval id '{case['id']}' is used twice (first at line {line}); ids must be unique",
                      "duplicate-case-id")
        else:
            first[case["id"]] = at


def _build(doc: Document, case: dict, at: tuple, config: EvalConfig) -> Case | None:
    data = {**case, "checks": [dict(spec) for spec in config.checks]}
    if "turns" not in case:
        data["max_user_turns"] = config.max_user_turns
        if data["max_user_turns"] is None:
            del data["max_user_turns"]
    if case.get("turns") == []:
        doc.error(at + ("conversation",), "the conversation has no invocations: nothing to play or compare", "empty")
        return None
    line, column = doc.position(at)
    try:
        return Case.model_validate({**data, "source": SourceRef(path=doc.path, line=line, column=column)})
    except ValidationError as exc:  # the schema let through what the case cannot hold: say where
        for err in exc.errors():
            doc.error(at, f"{'.'.join(map(str, err['loc']))}: {err['msg']}", "model")
        return None
