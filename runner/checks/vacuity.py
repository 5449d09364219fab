"""Checks that compare nothing: options under which a check would pass (or could never pass) whatever the
agent does. `contains: ""` is found in every text, `regex: ".*"` matches every text, a trajectory of no
expected calls in order is made by every conversation, a `latency` limit of infinity is never exceeded.

`validate` reports each at the option's line and column (runner/suite/checks.py), and a check that gets
through anyway (a value from an ADK file, a variable, a generated suite) is `unscored` with the same words
when it runs (runner/checks/run.py): never a pass. Errors are options that decide nothing; warnings are
options that decide very little (`threshold: 0` passes any score, a schema with no constraint accepts any
JSON) and might be meant.

Every check type is listed in `RULES` (a test keeps it so): a new check says here what, if anything, makes
it compare nothing.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from .adk import TURN_CRITERIA
from .base import CheckFamily, CheckOptions

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Vacuity:
    """One way a check's options compare nothing: where (a path inside the check), why and the fix."""

    where: tuple
    message: str
    severity: Severity = "error"


Rule = Callable[[Any], list[Vacuity]]


def vacuities(family: CheckFamily, options: CheckOptions) -> list[Vacuity]:
    """Every way these options compare nothing (errors first). Cheap: it runs before every check is decided."""
    found = list(RULES.get(family.type, _nothing)(options))
    if options.threshold == 0 and threshold_decides(family, options.type):
        found.append(Vacuity(("threshold",), f"threshold: 0 passes {options.type} on any score, so it fails only when "
                             "it cannot be decided; raise the threshold (1: everything must match), or write "
                             "`gate: false` to record the score without deciding the case", "warning"))
    return sorted(found, key=lambda v: v.severity != "error")


def compares_nothing(family: CheckFamily, options: CheckOptions) -> str | None:
    """Why the check, with these options, decides nothing (the first error), or None."""
    return next((f"{options.type} compares nothing: {v.message}" for v in vacuities(family, options)
                 if v.severity == "error"), None)


# Families that pass when their score reaches the threshold (the others decide pass or fail themselves: a text
# assertion holds or not, a budget is kept or not, a judge says yes or no, `all`/`any` count their children).
_THRESHOLD_DECIDES = {"trajectory", "tool_name_f1", "valid_tool_calls", "final_state", "response_match", "rubric",
                      "groundedness", "factual_accuracy", "safety", "tool_call_accuracy", "intent_resolution",
                      "task_adherence", "response_completeness", "helpfulness", "average", "weighted", "python",
                      "per_turn_user_simulator_quality_v1", "agentflow_trajectory", "agentflow_tool_name_match",
                      "agentflow_node_order", "agentflow_rouge_match", "agentflow_contains_keywords", "agentflow_judge"}


def threshold_decides(family: CheckFamily, check_type: str) -> bool:
    # an ADK criterion is a mean over turns against the threshold, whichever family answers to its name
    return family.type in _THRESHOLD_DECIDES or check_type in TURN_CRITERIA


# ------------------------------------------------------------------ the rules, by check type

def _nothing(options: Any) -> list[Vacuity]:
    return []


def _blank(text: Any) -> bool:
    return isinstance(text, str) and not text.strip()


def _negated(options: Any) -> bool:
    return options.type.startswith("not_")


def _outcome(options: Any, always_holds: bool) -> str:
    """What an assertion that always (or never) holds does to the check, in words."""
    passes = always_holds != _negated(options)
    return f"{options.type} would {'pass whatever the agent says' if passes else 'fail whatever the agent says'}"


def _exact(options: Any) -> list[Vacuity]:
    if _blank(options.value):
        return [Vacuity(("value",), f"an empty value equals no answer (an agent that sends no text fails the check), "
                        f"so {_outcome(options, False)}; give the expected text")]
    return []


def _contains(options: Any) -> list[Vacuity]:
    if options.value == "":
        return [Vacuity(("value",), f"the empty text is found in every answer, so {_outcome(options, True)}; give "
                        "the text to look for")]
    if _blank(options.value):
        return [Vacuity(("value",), "a value of only spaces is found in almost every answer; give the text to look "
                        "for", "warning")]
    return []


def _values(options: Any) -> list[Vacuity]:
    found = []
    for i, value in enumerate(options.values):
        if value == "":
            effect = "so " + _outcome(options, True) if options.type.endswith("contains_any") else \
                "so it checks nothing"
            found.append(Vacuity(("values", i), f"the empty text is found in every answer, {effect}; remove it"))
        elif _blank(value):
            found.append(Vacuity(("values", i), "a value of only spaces is found in almost every answer; remove it "
                                 "or give the text to look for", "warning"))
    return found


def _regex(options: Any) -> list[Vacuity]:
    where = matches_everything(options.pattern)
    if where is None:
        return []
    return [Vacuity(("pattern",), f"the pattern /{options.pattern}/ matches every text (it matches the empty text at "
                    f"the {where} of any answer), so {_outcome(options, True)}; make it require some text")]


_ANNOTATIONS = {"$schema", "$id", "$comment", "title", "description", "examples", "default", "deprecated",
                "readOnly", "writeOnly"}


def _json_schema(options: Any) -> list[Vacuity]:
    if set(options.schema_) <= _ANNOTATIONS:
        return [Vacuity(("schema",), "a schema without constraints accepts any JSON value, so the check only tests that "
                        "the answer parses as JSON; add what the value must be (`type`, `required`, ...)", "warning")]
    return []


def _trajectory(options: Any) -> list[Vacuity]:
    if options.expected != []:
        return []
    if options.type == "tool_trajectory_avg_score":
        mode = options.match_type or "EXACT"
        loose = mode in ("IN_ORDER", "ANY_ORDER")
        fix = "match_type: EXACT"
    else:
        mode = options.match
        loose = mode in ("in_order", "any_order", "superset")
        fix = "match: exact"
    if not loose:
        return []  # no expected calls, in exact terms: the agent must make none
    return [Vacuity(("expected",), f"no expected calls are matched by every conversation in mode {mode}; list the "
                    f"calls, or write `{fix}` for \"the agent makes no call\"")]


def _final_state(options: Any) -> list[Vacuity]:
    if options.expected is None or options.extra_keys == "forbid":
        return []
    reason = state_compares_nothing(options.expected, options.matching or {})
    return [Vacuity(("expected",), reason)] if reason else []


def state_compares_nothing(expected: Any, matching: dict) -> str | None:
    """Why a final state compares no value (with extra keys allowed), or None: `{}`, or every path ignored."""
    if not isinstance(expected, dict):
        return None
    if not expected:
        return ("an empty expected state matches every state; give the values the state must hold, or write "
                "`extra_keys: forbid` on a final_state check for \"the state must be empty\"")
    modes = {path: (spec if isinstance(spec, str) else getattr(spec, "mode", None) if not isinstance(spec, dict)
                    else spec.get("mode")) for path, spec in matching.items()}
    if not any(_compared(key, value, modes) for key, value in expected.items()):
        return ("every value of the expected state is ignored (final_state_matching, or IGNORE), so it matches every "
                "state; compare at least one value")
    return None


def _compared(key: Any, value: Any, modes: dict) -> bool:
    """Whether a top-level key of an expected state is compared: unless its own rule (the first naming it, the key
    or `*`, as the state's matcher picks) is `ignore` or its value is IGNORE, the state must at least hold it."""
    from ..suite.models import IGNORE_VALUE

    mode = next((m for path, m in modes.items() if path in (str(key), "*")), None)
    return mode != "ignore" and not (isinstance(value, str) and value == IGNORE_VALUE)


def _reference(field: str, what: str, severity: Severity = "error") -> Rule:
    """A text the judge decides against, written as only spaces (the schema refuses an empty one)."""
    def rule(options: Any) -> list[Vacuity]:
        if _blank(getattr(options, field, None)):
            return [Vacuity((field,), f"{what} of only spaces gives the judge nothing to go by; write it out",
                            severity)]
        return []
    return rule


def _response_match(options: Any) -> list[Vacuity]:
    if options.reference is None:
        return []
    if not has_words(options.reference, options.type == "response_match_score"):
        return [Vacuity(("reference",), f"the reference {options.reference!r} has no word ROUGE-1 can compare (it "
                        "reads letters and digits), so every answer scores 0; write the expected answer out")]
    return []


def has_words(text: str, unicode: bool) -> bool:
    """Whether ROUGE-1 finds a token in `text` (ADK's tokenizer reads letters of any script; rouge-score a-z, 0-9)."""
    if unicode:
        import unicodedata

        return any(ch.isalnum() or unicodedata.category(ch).startswith("M") for ch in text)
    return any(ch.isascii() and ch.isalnum() for ch in text.lower())


def _facts(options: Any) -> list[Vacuity]:
    return [Vacuity(("facts", i), "a fact of only spaces gives the judge nothing to check; write it out or remove it")
            for i, fact in enumerate(options.facts) if not fact.strip()]


def _rubric(options: Any) -> list[Vacuity]:
    return [Vacuity(("rubrics", i, "description"), f"rubric item '{item.name}' describes nothing (only spaces): the "
                    "judge would score it on its name alone; say what the item asks for")
            for i, item in enumerate(options.rubrics) if not item.description.strip()]


def _budget(field: str) -> Rule:
    def rule(options: Any) -> list[Vacuity]:
        if math.isinf(getattr(options, field)):
            return [Vacuity((field,), f"a limit of infinity is never exceeded, so {options.type} always passes; give "
                            "a finite limit, or remove the check")]
        return []
    return rule


def _no_write_calls(options: Any) -> list[Vacuity]:
    return [Vacuity(("allow", i), f"`{glob}` allows every tool, so no call could fail the check; list the write-like "
                    "tools the case needs instead") for i, glob in enumerate(options.allow) if _names_every_tool(glob)]


def _names_every_tool(glob: str) -> bool:
    """`*`, `**`, `?*`: a glob every tool name (never empty) matches."""
    rest = glob[1:] if glob.startswith("?") else glob
    return bool(rest) and set(rest) == {"*"}


def _no_leak(options: Any) -> list[Vacuity]:
    if not options.canaries and not options.values:
        return [Vacuity(("canaries",), "`canaries: false` and no `values` leave no secret to look for; list the "
                        "secrets under `values`, or remove `canaries: false`")]
    return []


RULES: dict[str, Rule] = {
    "exact": _exact, "contains": _contains, "contains_any": _values, "contains_all": _values, "regex": _regex,
    "json_schema": _json_schema,
    "trajectory": _trajectory, "tool_name_f1": _nothing,  # no names expected: the agent must call nothing
    "valid_tool_calls": _nothing, "final_state": _final_state, "response_match": _response_match,
    "semantic_match": _reference("reference", "a reference answer"), "assert": _reference("statement", "a statement"),
    "refusal": _reference("attack", "an attack"), "rubric": _rubric,
    # an extra context or reference the judge is shown: the check still decides on the conversation
    "groundedness": _reference("context", "a context", "warning"), "factual_accuracy": _facts, "safety": _nothing,
    "response_completeness": _reference("reference", "a reference answer"),
    **{metric: _reference("reference", "a reference answer", "warning") for metric in (
        "tool_call_accuracy", "intent_resolution", "task_adherence", "helpfulness")},
    "per_turn_user_simulator_quality_v1": _nothing,
    "max_turns": _nothing, "max_tool_calls": _nothing,  # whole numbers: every limit can be exceeded
    "latency": _budget("max_s"), "cost": _budget("max_usd"),
    # the nested checks are checked one by one (validate walks them; each is decided, and so guarded, on its own)
    "all": _nothing, "any": _nothing, "average": _nothing, "weighted": _nothing,
    "python": _nothing, "no_leak": _no_leak, "no_write_calls": _no_write_calls,
    # ADK's efficiency metrics never gate: they report, and pass nothing
    "tool_call_count_v1": _nothing, "inference_call_count_v1": _nothing, "token_usage_v1": _nothing,
    "invocation_duration_v1": _nothing,
    # Agentflow's criteria score as Agentflow does (runner/checks/agentflow); an empty config is its own check
    **dict.fromkeys(("agentflow_trajectory", "agentflow_tool_name_match", "agentflow_node_order", "agentflow_rouge_match", "agentflow_contains_keywords", "agentflow_judge", "agentflow_no_criteria"), _nothing),
}


# ------------------------------------------------------------------ patterns that match every text

@lru_cache(maxsize=1024)
def matches_everything(pattern: str) -> str | None:
    """"start" or "end" when `pattern` matches the empty text at that place of every text (so a search finds
    it in any text), else None. Read from the pattern's syntax tree; a construct whose match depends on the
    text around it (a lookaround, a word boundary, a back reference) counts as requiring text, so a pattern is
    never called vacuous wrongly. A pattern Python's `re` cannot parse (the `regex` package's extensions) is
    not judged."""
    try:
        from re import _parser as parser  # type: ignore[attr-defined]  # Python 3.11+
    except ImportError:  # pragma: no cover - Python 3.10
        import sre_parse as parser
    try:
        tree = parser.parse(pattern)
    except Exception:  # re.error, RecursionError on absurd nesting: not judged here
        return None
    for where in ("start", "end"):
        if _empty_at(list(tree), where):
            return where
    return None


def _empty_at(items: list, where: str) -> bool:
    """Whether the sequence `items` matches the empty text at the start (or end) of any text."""
    return all(_item_empty_at(op, av, where) for op, av in items)


def _item_empty_at(op: Any, av: Any, where: str) -> bool:
    name = str(op)
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, _, sub = av
        return low == 0 or _empty_at(list(sub), where)
    if name == "SUBPATTERN":
        return _empty_at(list(av[-1]), where)
    if name == "ATOMIC_GROUP":
        return _empty_at(list(av), where)
    if name == "BRANCH":
        return any(_empty_at(list(alternative), where) for alternative in av[1])
    if name == "AT":
        anchors = ("AT_BEGINNING", "AT_BEGINNING_STRING") if where == "start" else ("AT_END", "AT_END_STRING")
        return str(av) in anchors
    return False  # a character, a set, a lookaround, a boundary, a back reference: needs text or context
