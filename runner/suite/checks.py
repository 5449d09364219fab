"""Semantic checks: what a schema cannot say about one case.

Each check reads the case's plain data and reports through the document, so its diagnostics carry
the exact line and column of the offending key or value. The checks run even when the schema found
problems (a user sees every problem of a file at once), so each one passes over values of the wrong
type quietly: the schema has already reported those.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..util.diagnostics import did_you_mean
from .models import ARG_MODES, IGNORE_KEY, CaseFields
from .reader import Document
from .tool_specs import tool_problems
from .vacuous import check_compares_something

Location = tuple


def check_case(doc: Document, case: dict[str, Any], at: Location, *, referenceless: bool = False) -> None:
    """Every semantic check of one case. `referenceless` (evalrun quick): a case needs nothing to check
    of its own, the run brings its checks."""
    for check in CHECKS:
        if not (referenceless and check is check_something_to_check):
            check(doc, case, at)


def _goals(case: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """(index, goal) for each goal that is a mapping; anything else is the schema's to report."""
    details = case.get("goal_details")
    if not isinstance(details, list):
        return []
    return [(i, g) for i, g in enumerate(details) if isinstance(g, dict)]


def _goal_names(case: dict[str, Any]) -> list[str]:
    return [g["name"] for _, g in _goals(case) if isinstance(g.get("name"), str)]


def _order(case: dict[str, Any]) -> dict[str, list[tuple[int, str]]]:
    """`goals` as name -> [(index, name)], keeping only the text entries of list values."""
    goals = case.get("goals")
    if not isinstance(goals, dict):
        return {}
    return {source: [(i, t) for i, t in enumerate(targets) if isinstance(t, str)] if isinstance(targets, list) else []
            for source, targets in goals.items() if isinstance(source, str)}


def check_unique_goal_names(doc: Document, case: dict, at: Location) -> None:
    first: dict[str, int] = {}
    for i, goal in _goals(case):
        name = goal.get("name")
        if not isinstance(name, str):
            continue
        if name in first:
            line = doc.position(at + ("goal_details", first[name], "name"))[0]
            doc.error(at + ("goal_details", i, "name"),
                      f"goal name '{name}' is used twice (first at line {line}); goal names must be unique", "duplicate-goal")
        else:
            first[name] = i


def check_goal_references(doc: Document, case: dict, at: Location) -> None:
    names = set(_goal_names(case))
    for source, targets in _order(case).items():
        if source not in names:
            doc.error(at + ("goals", source),
                      f"goal '{source}' is listed in goals but has no goal_details entry{did_you_mean(source, names)}",
                      "unknown-goal", key=True)
        for i, target in targets:
            if target not in names:
                doc.error(at + ("goals", source, i),
                          f"goal '{target}' is listed in goals but has no goal_details entry{did_you_mean(target, names)}",
                          "unknown-goal")


def check_goal_cycles(doc: Document, case: dict, at: Location) -> None:
    """A depth-first search with an explicit stack: a chain of thousands of goals cannot exhaust the recursion limit."""
    graph = {k: [t for _, t in v] for k, v in _order(case).items()}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    reported: set[frozenset] = set()

    for start in graph:
        if state.get(start) is not None:
            continue
        state[start] = 1
        path = [start]  # the nodes on the stack, in order
        stack = [iter(graph.get(start, []))]  # for each node on the path, the successors still to visit
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:  # every successor visited
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                cycle = path[path.index(nxt):] + [nxt]
                key = frozenset(cycle)
                if key not in reported:
                    reported.add(key)
                    doc.error(at + ("goals", cycle[0]),
                              f"goals form a cycle: {' -> '.join(cycle)}; no order of calls can satisfy it",
                              "goal-cycle", key=True)
            elif state.get(nxt) is None:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(graph.get(nxt, [])))


def check_text_goals(doc: Document, case: dict, at: Location) -> None:
    for i, goal in _goals(case):
        if goal.get("type") == "text" and not goal.get("response") and not goal.get("keywords"):
            doc.error(at + ("goal_details", i),
                      f"text goal '{goal.get('name')}' needs a `response`, `keywords`, or both", "empty-text-goal")
        keywords = goal.get("keywords")
        if isinstance(keywords, list):
            for j, keyword in enumerate(keywords):
                if isinstance(keyword, str) and not keyword.strip():
                    doc.error(at + ("goal_details", i, "keywords", j),
                              "an empty keyword matches every message; remove it", "empty-keyword")


def check_tool_goals(doc: Document, case: dict, at: Location) -> None:
    for i, goal in _goals(case):
        if goal.get("type") != "tool_call":
            continue
        here = at + ("goal_details", i)
        args = goal.get("args") or {}
        matching = goal.get("arg_matching")
        if not isinstance(args, dict) or not isinstance(matching, dict):
            continue
        for path, spec in matching.items():
            where = here + ("arg_matching", path)
            if args == {IGNORE_KEY: None}:
                doc.error(where, f"arg_matching '{path}' has no effect: args is {{IGNORE: null}}, which skips every argument",
                          "unused-arg-matching", key=True, severity="warning")
            elif not _path_exists(args, path):
                doc.error(where, f"arg_matching names '{path}', which is not an argument of goal "
                                 f"'{goal.get('name')}'{did_you_mean(path, _all_paths(args))}", "unknown-argument", key=True)
            if isinstance(spec, dict):
                _check_rule(doc, spec, where)


# The modes each rule works with (None: no mode given). `ignore` compares nothing, so it goes with none;
# a threshold needs `fuzzy`, which is checked on its own.
_MODES_WITH = {"one_of": (None, "strict", "optional"), "regex": (None, "strict", "optional"),
               "tolerance": (None, "optional", "fuzzy")}


def _check_rule(doc: Document, rule: dict, where: Location) -> None:
    kinds = [k for k in ("one_of", "regex", "tolerance") if k in rule]
    if len(kinds) > 1:
        doc.error(where, f"use one of one_of, regex and tolerance per argument, not {' and '.join(kinds)}", "conflicting-rule")
    mode = rule.get("mode")
    clash = next((kind for kind in kinds if mode not in _MODES_WITH[kind]), None)
    if clash is not None:
        doc.error(where + ("mode",), f"mode '{mode}' cannot be combined with {clash}; remove the mode", "conflicting-rule")
    if "threshold" in rule and mode != "fuzzy":
        doc.error(where + ("threshold",), "threshold only applies with `mode: fuzzy`", "conflicting-rule")
    if "regex" in rule and isinstance(rule["regex"], str):
        import regex  # the package scoring runs suite regexes with (it has a time limit)

        try:
            regex.compile(rule["regex"])
        except regex.error as exc:
            doc.error(where + ("regex",), f"invalid regular expression {rule['regex']!r}: {exc}", "bad-regex")


def check_final_state(doc: Document, case: dict, at: Location) -> None:
    """`final_state_matching` names paths of `final_state`, and its rules are well formed (as arg_matching's)."""
    expected, matching = case.get("final_state"), case.get("final_state_matching")
    if not isinstance(matching, dict) or not matching:
        return
    if not isinstance(expected, dict):
        doc.error(at + ("final_state_matching",), "final_state_matching has no effect without a final_state",
                  "unused-arg-matching", key=True, severity="warning")
        return
    for path, spec in matching.items():
        where = at + ("final_state_matching", path)
        if not _path_exists(expected, path, wildcards=True):
            doc.error(where, f"final_state_matching names '{path}', which is not a path of final_state"
                             f"{did_you_mean(path, _all_paths(expected))}", "unknown-argument", key=True)
        if isinstance(spec, dict):
            _check_rule(doc, spec, where)


def check_effects(doc: Document, case: dict, at: Location) -> None:
    """Effects apply to calls a played tool answers: a goal's with its `output`, a tool's with `tool_outputs`."""
    for i, goal in _goals(case):
        if goal.get("type") == "tool_call" and goal.get("effects") and "output" not in goal:
            doc.error(at + ("goal_details", i, "effects"), f"goal '{goal.get('name')}' has effects but no `output`: "
                      "they apply when a played call gets this goal's output; give it one", "unused-effects",
                      key=True, severity="warning")
    effects, outputs = case.get("tool_effects"), case.get("tool_outputs")
    if isinstance(effects, dict):
        for tool in effects:
            if not isinstance(outputs, dict) or tool not in outputs:
                doc.error(at + ("tool_effects", tool), f"tool_effects names '{tool}', which has no `tool_outputs` "
                          "entry: they apply when a played call is answered from tool_outputs; add one",
                          "unused-effects", key=True, severity="warning")


def check_something_to_check(doc: Document, case: dict, at: Location) -> None:
    """A case without goals, forbidden calls or a required ending passes whatever the agent does."""
    details = case.get("goal_details")
    if details or case.get("forbid_extra_calls") or case.get("termination") or case.get("skip") or case.get("checks") \
            or case.get("canaries") or _turns_expect_something(case) or case.get("final_state") is not None \
            or case.get("final_session_state") is not None:  # canaries are checked by no_leak
        return
    if any(key not in _CASE_KEYS for key in case):
        return  # an unknown key (a misspelt `goal_details`?) is reported, and says more than this would
    if details is not None and not isinstance(details, list):
        return  # the schema reports it
    where = at + ("goal_details",) if "goal_details" in case else at
    doc.error(where, f"case '{case.get('id')}' has nothing to check: no goals and no forbidden calls, so it would pass "
                     "whatever the agent does; add goal_details, or `forbid_extra_calls: true` for \"the agent must "
                     "refuse and change nothing\" (a case with only a starting sentence or story is for `evalrun "
                     "quick`)", "nothing-to-check", key="goal_details" in case)


_CASE_KEYS = set(CaseFields.model_fields) | {"cases", "$schema"}


def _turns_expect_something(case: dict) -> bool:
    turns = case.get("turns")
    return isinstance(turns, list) and any(
        isinstance(t, dict) and (t.get("calls") is not None or t.get("response") is not None or t.get("checks"))
        for t in turns)


def check_turns(doc: Document, case: dict, at: Location) -> None:
    """The user's messages come from `turns` or from starting_sentence/user_prompts, never both."""
    if not case.get("turns"):
        return
    for key in ("starting_sentence", "user_prompts"):
        if case.get(key):
            doc.error(at + (key,), f"'{key}' and `turns` both give the user's messages; the turns' `user` messages "
                                   f"are played in order, so remove `{key}`", "turns-and-script", key=True)
    if case.get("story"):
        doc.error(at + ("story",), "`story` cannot go with `turns`: the user says the turns' messages, one per turn, "
                                   "and a simulated user would go on past them; remove `story`", "turns-and-story",
                  key=True)


# Goal keys that, written one level too deep under `args`, become expected arguments; and how the value of
# each looks when it was meant as the goal's own key.
_GOAL_KEYS_BY_LOOK: dict[str, Callable[[Any, dict], bool]] = {
    "arg_matching": lambda value, goal: isinstance(value, dict) and bool(value) and all(
        (isinstance(v, str) and v in ARG_MODES) or (isinstance(v, dict) and bool(v) and set(v) <= _RULE_KEYS)
        for v in value.values()),
    "extra_args": lambda value, goal: value in ("allow", "forbid"),
    "tool_name": lambda value, goal: "tool_name" not in goal and isinstance(value, str),
    "output": lambda value, goal: "output" not in goal,
    "description": lambda value, goal: "description" not in goal and isinstance(value, str),
    "type": lambda value, goal: value in ("tool_call", "text"),
}
_RULE_KEYS: set[str] = {"mode", "threshold", "tolerance", "one_of", "regex", "optional", "ignore_chars", "type"}


def check_goal_keys_under_args(doc: Document, case: dict, at: Location) -> None:
    for i, goal in _goals(case):
        args = goal.get("args")
        if goal.get("type") != "tool_call" or not isinstance(args, dict):
            continue
        for key, value in args.items():
            looks = _GOAL_KEYS_BY_LOOK.get(key)
            if looks is not None and looks(value, goal):
                doc.error(at + ("goal_details", i, "args", key),
                          f"'{key}' is indented under `args`, so it is an expected argument of the call; if it is "
                          f"goal '{goal.get('name')}'s own `{key}`, move it out to the level of `args`",
                          "goal-key-in-args", key=True, severity="warning")


def check_forbid_patterns(doc: Document, case: dict, at: Location) -> None:
    forbid = case.get("forbid_extra_calls")
    if isinstance(forbid, list):
        for i, pattern in enumerate(forbid):
            if isinstance(pattern, str) and not pattern.strip():
                doc.error(at + ("forbid_extra_calls", i), "an empty tool name matches nothing", "empty")


def check_tools(doc: Document, case: dict, at: Location) -> None:
    """Tool definitions whose schema cannot validate a call are errors where they are written. A file's
    default tools are checked once, at their own place, not again in every case that inherits them."""
    tools = case.get("tools")
    if not isinstance(tools, list):
        return  # absent; anything else the schema reports
    where = at if (at == () or "tools" in _own_keys(doc, at)) else ()
    for path, message in tool_problems(tools):
        if len(path) == 1 and not isinstance(tools[path[0]], dict):
            continue  # the schema says what a tool definition must be
        line, column = doc.position(where + ("tools", *path))
        if not any((d.line, d.column, d.message) == (line, column, message) for d in doc.diagnostics):
            doc.error(where + ("tools", *path), message, "bad-tool")


def _own_keys(doc: Document, at: Location) -> set:
    node: Any = doc.data
    for part in at:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return set()
    return set(node) if isinstance(node, dict) else set()


def _path_exists(args: Any, path: str, *, wildcards: bool = False) -> bool:
    """Whether the dot path names something in `args` (with `wildcards`, a `*` part names any key or item)."""
    node = args
    parts = path.split(".")
    for n, part in enumerate(parts):
        if wildcards and part == "*" and isinstance(node, (dict, list)):
            rest = ".".join(parts[n + 1:])
            children = node.values() if isinstance(node, dict) else node
            # an empty list or object: the rule waits for items (a default shared by cases with and without rows)
            return not children or any(not rest or _path_exists(child, rest, wildcards=True) for child in children)
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False
    return True


def _all_paths(args: Any, prefix: str = "") -> list[str]:
    paths: list[str] = []
    if isinstance(args, dict):
        for key, value in args.items():
            full = f"{prefix}{key}"
            paths.append(full)
            paths.extend(_all_paths(value, full + "."))
    return paths


CHECKS: tuple[Callable[[Document, dict, Location], None], ...] = (
    check_unique_goal_names,
    check_goal_references,
    check_goal_cycles,
    check_text_goals,
    check_tool_goals,
    check_forbid_patterns,
    check_final_state,
    check_effects,
    check_tools,
    check_something_to_check,
    check_goal_keys_under_args,
    check_turns,
    check_compares_something,
)
