"""What the generator model answers, made into a suite, and every reason it cannot be one.

The model answers in a small shape (prompts/generate_cases.j2): per case a starting sentence, the calls in
order (tool, args, output), the final answer and its keywords. This module turns it into an ordinary
suite (goal_details, a goal graph, argument modes, the story) and lists its problems: a tool or an
argument that does not exist, arguments that break the tool's schema, a keyword nobody could know,
two cases that are the same. The suite loader's own diagnostics are added by the caller.
"""
from __future__ import annotations

import json
import re
from typing import Any

from ...checks.tool_calls import argument_breaches
from ...suite.tool_specs import ToolSet, ToolSpec
from ...util.diagnostics import did_you_mean
from .stories import Story

ANSWER_GOAL = "answer"
_FREE_TEXT_WORDS = 4  # a string argument of this many words or more is free text: compared fuzzy
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2})?.*)?$")
_DATE_FORMATS = ("date", "date-time", "time")


def parse_answer(content: str | None) -> tuple[list | None, list[str]]:
    """The `cases` list of the model's JSON answer, or the reason it has none."""
    from ...llm.replies import json_objects

    text = (content or "").strip()
    try:
        data = json.loads(text)
    except ValueError:  # a JSON object amid prose or in a code fence: the first with `cases`
        data = next((o for o in json_objects(text) if "cases" in o), None)
    if not isinstance(data, dict):
        return None, ["the answer is not a JSON object of the form {\"cases\": [...]}"]
    cases = data.get("cases")
    if not isinstance(cases, list) or not cases:
        return None, ["the JSON object has no non-empty `cases` list"]
    return cases, []


def build_suite(cases: list, story: Story, tools: ToolSet, wanted: int, slug: str) -> tuple[dict, list[str]]:
    """The suite for `story` from the model's cases (the first `wanted` of them), and its problems."""
    problems: list[str] = []
    if len(cases) < wanted:
        problems.append(f"{len(cases)} case(s) written, {wanted} asked for")
    built = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(cases[:wanted], start=1):
        where = f"case {number}"
        if not isinstance(raw, dict):
            problems.append(f"{where}: must be a JSON object")
            continue
        case, found = _build_case(raw, where, story, tools, f"{slug}-{number}")
        problems += found
        sentence = " ".join(str(raw.get("starting_sentence") or "").lower().split())
        if sentence and sentence in seen:
            problems.append(f"{where}: its starting_sentence repeats case {seen[sentence]}'s; write a different "
                            "variant")
        seen.setdefault(sentence, number)
        built.append(case)
    suite: dict[str, Any] = {}
    if story.agent:
        suite["agent"] = story.agent
    suite["cases"] = built
    return suite, problems


def _build_case(raw: dict, where: str, story: Story, tools: ToolSet, case_id: str) -> tuple[dict, list[str]]:
    problems: list[str] = []
    unknown = sorted(set(raw) - {"starting_sentence", "calls", "answer", "keywords"})
    if unknown:
        problems.append(f"{where}: unknown key(s) {', '.join(unknown)} (the keys are starting_sentence, calls, answer, "
                        "keywords)")
    sentence = raw.get("starting_sentence")
    if not isinstance(sentence, str) or not sentence.strip():
        problems.append(f"{where}: starting_sentence must be the user's first message (text)")
        sentence = ""
    calls = raw.get("calls")
    if not isinstance(calls, list):
        problems.append(f"{where}: calls must be a list (empty when the agent needs no tool)")
        calls = []
    answer = raw.get("answer")
    if not isinstance(answer, str) or not answer.strip():
        problems.append(f"{where}: answer must be what the agent finally tells the user (text)")
        answer = ""
    keywords = raw.get("keywords", [])
    if not isinstance(keywords, list) or not all(isinstance(k, (str, int, float)) and str(k).strip() for k in keywords):
        problems.append(f"{where}: keywords must be a list of words from the answer")
        keywords = []
    keywords = [str(k).strip() for k in keywords]

    goal_details: list[dict] = []
    order: dict[str, list[str]] = {}
    names: list[str] = []
    outputs: dict[str, Any] = {}
    for i, call in enumerate(calls, start=1):
        goal, found = _goal(call, f"{where}, call {i}", tools, names)
        problems += found
        if goal is None:
            continue
        key = json.dumps([goal["tool_name"], goal["args"]], sort_keys=True)
        if key in outputs and outputs[key] != goal.get("output"):
            problems.append(f"{where}, call {i}: the same call as before returns a different output; a tool "
                            "answers the same call the same way")
        outputs.setdefault(key, goal.get("output"))
        if names:
            order.setdefault(names[-1], []).append(goal["name"])  # in the order written: each after the one before
        names.append(goal["name"])
        goal_details.append(goal)

    known_text = " ".join([story.text, sentence, *(json.dumps(g.get("output"), ensure_ascii=False)
                                                    for g in goal_details),
                           *(json.dumps(g["args"], ensure_ascii=False) for g in goal_details)]).lower()
    for keyword in keywords:
        if keyword.lower() not in answer.lower():
            problems.append(f"{where}: keyword {keyword!r} is not in the answer")
        elif keyword.lower() not in known_text and not _same_date_known(keyword, known_text):
            problems.append(f"{where}: keyword {keyword!r} is in no tool output, argument or the user's words: the "
                            "agent could not know it")
    text_goal: dict[str, Any] = {"type": "text", "name": ANSWER_GOAL, "response": answer}
    if keywords:
        text_goal["keywords"] = keywords
    goal_details.append(text_goal)
    if names:
        order.setdefault(names[-1], []).append(ANSWER_GOAL)
    # the story goes in the description: the starting sentence carries what the agent needs, and a `story`
    # would ask for a simulated user to go on with
    case: dict[str, Any] = {"id": case_id, "description": story.text, "starting_sentence": sentence.strip()}
    if order:
        case["goals"] = order
    case["goal_details"] = goal_details
    return case, problems


def _goal(call: Any, where: str, tools: ToolSet, earlier: list[str]) -> tuple[dict | None, list[str]]:
    if not isinstance(call, dict):
        return None, [f"{where}: must be a JSON object with tool, args and output"]
    unknown = sorted(set(call) - {"tool", "args", "output"})
    problems = [f"{where}: unknown key(s) {', '.join(unknown)} (the keys are tool, args, output)"] if unknown else []
    name = call.get("tool")
    known = tools.by_name()
    if not isinstance(name, str) or name not in known:
        shown = f"'{name}'" if isinstance(name, str) else "no tool name"
        suggestion = did_you_mean(name, known) if isinstance(name, str) else ""
        return None, problems + [f"{where}: {shown} is not one of the tools{suggestion} (the tools: "
                                 f"{', '.join(sorted(known))})"]
    spec = known[name]
    args = call.get("args", {})
    if not isinstance(args, dict):
        return None, problems + [f"{where}: args of '{name}' must be a JSON object"]
    parameters = spec.parameters.get("properties")
    if isinstance(parameters, dict):
        for arg in args:
            if arg not in parameters:
                problems.append(f"{where}: '{arg}' is not a parameter of '{name}'{did_you_mean(arg, parameters)} "
                                f"(its parameters: {', '.join(parameters) or 'none'})")
    breaches, _ = argument_breaches(spec, args)
    problems += [f"{where}: the args of '{name}' break its schema: {b}" for b in breaches
                 if "Additional properties" not in b]  # unknown parameters are named above
    if "output" not in call or call["output"] in (None, "", {}, []):
        problems.append(f"{where}: give the `output` '{name}' returns (a JSON value)")
    goal_name = name if name not in earlier and not any(e.startswith(f"{name}_") for e in earlier) else \
        f"{name}_{sum(1 for e in earlier if e == name or e.startswith(f'{name}_')) + 1}"
    goal: dict[str, Any] = {"type": "tool_call", "name": goal_name, "tool_name": name, "args": args}
    matching = {arg: mode for arg, value in args.items()
                if (mode := argument_mode(spec, arg, value)) is not None}
    if matching:
        goal["arg_matching"] = matching
    goal["output"] = call.get("output")
    return goal, problems


def argument_mode(spec: ToolSpec, name: str, value: Any) -> Any:
    """How a generated argument is compared (None: strict, the default). The rule, kept small and in one
    place: dates (a `format: date` parameter, or a value written as one) and free text (a string of
    several words) are fuzzy, since a correct agent may write them otherwise; an argument the tool does
    not require may be left out. Ids, enums, numbers and booleans stay strict."""
    schema = (spec.parameters.get("properties") or {}).get(name)
    schema = schema if isinstance(schema, dict) else {}
    required = spec.parameters.get("required")
    optional = isinstance(required, list) and name not in required
    fuzzy = isinstance(value, str) and "enum" not in schema and (
        schema.get("format") in _DATE_FORMATS or bool(_DATE.match(value))
        or len(value.split()) >= _FREE_TEXT_WORDS)
    if fuzzy and optional:
        return {"mode": "fuzzy", "optional": True}
    if fuzzy:
        return "fuzzy"
    return "optional" if optional else None


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH_DAY = re.compile(r"\b(" + "|".join(_MONTHS) + r")\s+(\d{1,2})\b|\b(\d{1,2})\s+(" + "|".join(_MONTHS) + r")\b")


def _same_date_known(keyword: str, known_text: str) -> bool:
    """A keyword that writes a known date another way ("January 5" for an output's 2025-01-05) is known."""
    from ...score.dates import dates_in_text

    known = dates_in_text(known_text)
    if not known:
        return False
    written = dates_in_text(keyword)
    if written:
        return bool(written & known)
    found = _MONTH_DAY.search(keyword.lower())
    if found is None:
        return False
    month = _MONTHS.index(found.group(1) or found.group(4)) + 1
    day = int(found.group(2) or found.group(3))
    return any((d.month, d.day) == (month, day) for d in known)
