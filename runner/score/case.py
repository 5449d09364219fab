"""Score one trajectory against one case: which goals were achieved, by which call, and why not.

1. Candidates: every call of a goal's tool is compared with the goal (args.py); every assistant text
   in scope is checked for the keywords and the reference answer (cascade.py).
2. Assignment: the optimal placement of goals on candidates under the order graph (assign.py).
3. Explanations, call roles and metrics (metrics.py) from the placement.
"""
from __future__ import annotations

import difflib
import fnmatch
from collections import Counter
from dataclasses import dataclass, field

from ..results.models import ArgVerdict, CallAttempt, CallRecord, Decision, GoalResult, Metrics
from ..suite.models import Case, TextGoal, ToolCallGoal, UnscoredGoal
from ..transcripts.read import AssistantText, ToolCall, Trajectory
from .args import arguments_match, match_arguments, verdicts_of_a_match
from .assign import Slot, assign_goals
from .cascade import Cascade, fuzzy_argument_texts
from .explain import decided_offline, describe_mismatches, message_number, message_ref, show
from .keywords import missing_keywords
from .metrics import compute_metrics

_TEXT_KEY_OFFSET = 1_000_000  # text slots get keys that can never collide with call indexes


@dataclass
class Scored:
    goals: list[GoalResult]
    calls: list[CallRecord]
    metrics: Metrics
    failures: list[str]
    unscored: list[str] = field(default_factory=list)  # goals evalrun cannot score, with the reason
    asked_by_turns: Counter = field(default_factory=Counter)  # tool name -> calls the case's turns expect

    @property
    def extra_calls(self) -> list[str]:
        """The tool names of the calls no goal asked for, in call order (see `extra_calls`). A case written
        turn by turn asks for its calls in its turns (their criteria judge them): those are not extra."""
        extra = extra_calls(self.calls, self.goals)
        if not self.asked_by_turns:
            return extra
        left, kept = Counter(self.asked_by_turns), []
        for name in extra:
            if left[name] > 0:
                left[name] -= 1
            else:
                kept.append(name)
        return kept

    @property
    def passed(self) -> bool:
        return self.metrics.journey_success and not self.unscored

    @property
    def status(self) -> str:
        """passed, failed, or unscored: nothing that was scored failed, but a goal could not be scored (it is
        never passed over)."""
        if self.failures:
            return "failed"
        return "unscored" if self.unscored else "passed"


@dataclass
class _TextCheck:
    text: AssistantText
    missing: list[str]
    decision: Decision | None

    @property
    def matched(self) -> bool:
        return not self.missing and (self.decision is None or self.decision.matched)


@dataclass
class _GoalEvidence:
    goal: ToolCallGoal | TextGoal | UnscoredGoal
    slots: list[Slot] = field(default_factory=list)
    tried: list[ToolCall] = field(default_factory=list)  # calls of the goal's tool
    failed: dict[int, bool] = field(default_factory=dict)  # call index -> its result was an error
    attempts: list[CallAttempt] = field(default_factory=list)  # the explained ones (see _explained_attempts)
    text_checks: list[_TextCheck] = field(default_factory=list)


def score_trajectory(case: Case, trajectory: Trajectory, cascade: Cascade) -> Scored:
    counted = [c for c in trajectory.tool_calls if not (case.failed_calls == "ignore" and c.is_error)]
    references = [g.response for g in case.text_goals() if g.response]
    answers = references + [t.text for t in trajectory.texts] if references else []
    # Every text the case may embed goes into one batch: answers and fuzzy argument values alike.
    cascade.expect(answers + fuzzy_argument_texts(case.goal_details, counted))
    evidence = {g.name: _tool_evidence(g, counted, case, cascade) if isinstance(g, ToolCallGoal)
                else _text_evidence(g, trajectory, cascade) if isinstance(g, TextGoal)
                else _GoalEvidence(g) for g in case.goal_details}
    edges = [(a, b) for a, targets in case.goals.items() for b in targets]
    placement = assign_goals([g.name for g in case.goal_details],
                             {name: ev.slots for name, ev in evidence.items()}, edges).placed
    for name, ev in evidence.items():
        if isinstance(ev.goal, ToolCallGoal):
            ev.attempts = _explained_attempts(ev, placement.get(name), case, cascade)

    ignored = Counter(c.name for c in trajectory.tool_calls if c.is_error and case.failed_calls == "ignore")
    called: dict[str, int] = {}  # tool name -> the first message that calls it, for "did you mean"
    for c in trajectory.tool_calls:
        called.setdefault(c.name, message_number(c.message_index))
    goals = [_goal_result(ev, placement, edges, evidence, ignored, called) for ev in evidence.values()]
    calls = _call_records(case, trajectory.tool_calls, counted, placement, evidence)
    ending = _ending_problem(case, trajectory)
    metrics = compute_metrics(case, goals, calls, evidence_attempts={n: ev.attempts for n, ev in evidence.items()},
                              placement=placement, user_turns=trajectory.user_turns, ended_as_required=ending is None)
    failures = [f"goal '{g.name}': {g.explanation}" for g in goals if not g.achieved and g.status != "unscored"]
    failures += [f"forbidden call: {c.note}" for c in calls if c.role == "forbidden"]
    failures += [ending] if ending else []
    unplayed = _unplayed_story(case, trajectory)
    if failures and unplayed:  # the agent is not to blame for a question nobody answered
        failures.insert(0, unplayed)
    unscored = [f"goal '{g.name}': {g.explanation}" for g in goals if g.status == "unscored"]
    asked = Counter(call.tool_name for turn in case.turns or () for call in turn.calls or ())
    return Scored(goals=goals, calls=calls, metrics=metrics, failures=failures, unscored=unscored,
                  asked_by_turns=asked)


def _ending_problem(case: Case, trajectory: Trajectory) -> str | None:
    """Why the conversation's ending breaks the case's `termination` rule, or None."""
    if not case.termination or trajectory.termination_reason in case.termination:
        return None
    accepted = ", ".join(case.termination)
    if trajectory.termination_reason is None:
        return f"ending: the recording does not say how the conversation ended (termination: {accepted})"
    return f"ending: the conversation ended by '{trajectory.termination_reason}', not by one of: {accepted}"


def _unplayed_story(case: Case, trajectory: Trajectory) -> str | None:
    """Why a conversation with a `story` ended when its scripted messages ran out: a simulated user plays
    the story and never ends by `script_end`, so none was configured."""
    if not case.story or trajectory.termination_reason != "script_end":
        return None
    last = next((m for m in reversed(trajectory.messages) if m.get("role") in ("user", "assistant")), None)
    unanswered = " the agent's last message went unanswered;" if last is not None and last.get("role") == "assistant" else ""
    return ("conversation: it ended because no simulated user was configured: the case has a `story`, but nobody "
            f"played the user once the scripted messages ran out (script_end);{unanswered} add `simulator:` to "
            "evalrun.yaml")


# ------------------------------------------------------------------------------------ candidates

def _tool_evidence(goal: ToolCallGoal, calls: list[ToolCall], case: Case, cascade: Cascade) -> _GoalEvidence:
    """Which calls of the goal's tool match it. Only the yes/no is worked out here (it stops at the
    first wrong argument); `_explained_attempts` builds full verdicts for the calls a report shows."""
    ev = _GoalEvidence(goal)
    for call in calls:
        if call.name != goal.tool_name:
            continue
        ev.tried.append(call)
        ev.failed[call.index] = call.is_error
        if call.arguments is not None and arguments_match(goal, call.arguments, cascade, case.extra_args):
            ev.slots.append(Slot(key=call.index, position=call.position, exclusive=True))
    return ev


def _explained_attempts(ev: _GoalEvidence, placed: Slot | None, case: Case, cascade: Cascade) -> list[CallAttempt]:
    """An achieved goal shows the call that achieved it; any other goal shows every call of its tool."""
    assert isinstance(ev.goal, ToolCallGoal)
    shown = [c for c in ev.tried if c.index == placed.key] if placed is not None else ev.tried
    attempts = []
    for call in shown:
        if placed is not None and not ev.goal.arg_matching:
            verdicts = verdicts_of_a_match(ev.goal, call.arguments)  # type: ignore[arg-type]  # placed: its arguments were read
        elif call.arguments is None:
            verdicts = [ArgVerdict(path="(arguments)", mode="strict", expected=ev.goal.args, actual=call.raw_arguments,
                                   matched=False, decided_by="type",
                                   reason=call.arguments_error or "arguments could not be read")]
        else:
            verdicts = match_arguments(ev.goal, call.arguments, cascade, case.extra_args)
        attempts.append(CallAttempt(call_index=call.index, message=message_number(call.message_index),
                                    matched=all(v.matched for v in verdicts), arguments=verdicts))
    return attempts


def _text_evidence(goal: TextGoal, trajectory: Trajectory, cascade: Cascade) -> _GoalEvidence:
    ev = _GoalEvidence(goal)
    texts = [t for t in trajectory.texts if t.is_final] if goal.scope == "final" else trajectory.texts
    for text in texts:
        missing = missing_keywords(text.text, goal.keywords)
        # The reference answer is only judged where the keywords are all there: it saves model calls,
        # and a message missing a keyword cannot achieve the goal anyway.
        decision = None
        if goal.response and not missing:
            decision = cascade.compare(goal.response, text.text, context="the agent's answer")
        check = _TextCheck(text, missing, decision)
        ev.text_checks.append(check)
        if check.matched:
            ev.slots.append(Slot(key=_TEXT_KEY_OFFSET + text.message_index, position=text.position, exclusive=False))
    return ev


# ---------------------------------------------------------------------------------- explanations

def _goal_result(ev: _GoalEvidence, placement: dict[str, Slot], edges: list[tuple[str, str]],
                 evidence: dict[str, _GoalEvidence], ignored: Counter, called: dict[str, int]) -> GoalResult:
    goal = ev.goal
    is_tool = isinstance(goal, ToolCallGoal)
    tool_name = goal.tool_name if isinstance(goal, ToolCallGoal) else ""
    base = {"name": goal.name, "type": goal.type, "attempts": ev.attempts}
    if isinstance(goal, UnscoredGoal):
        return GoalResult(**base, status="unscored", achieved=False,
                          explanation=f"unscored: evalrun cannot score goals of type '{goal.type}' yet")
    slot = placement.get(goal.name)
    if slot is not None:
        message_index = slot.position[0]
        text_check = next((c for c in ev.text_checks if c.text.message_index == message_index), None)
        missing_predecessors = [a for a, b in edges if b == goal.name and a not in placement
                                and not isinstance(getattr(evidence.get(a), "goal", None), UnscoredGoal)]
        note = (f"; but {', '.join(repr(p) for p in missing_predecessors)} (which must come first) was not achieved"
                if missing_predecessors else "")
        what = f"called {tool_name} with matching arguments" if is_tool else "said"
        what += _offline_note(ev, slot, text_check)
        number = message_number(message_index)
        return GoalResult(**base, status="achieved", achieved=True, message=number,
                          call_index=slot.key if is_tool else None,
                          text_decision=text_check.decision if text_check else None,
                          explanation=f"achieved at {message_ref(number)}: {what}{note}")
    if ev.slots:
        return _unplaced_result(ev, placement, edges, evidence, base)
    if is_tool:
        if not ev.attempts and ignored[tool_name]:
            return GoalResult(**base, status="not_called", achieved=False,
                              explanation=f"not called successfully: the agent called {tool_name} "
                                          f"{ignored[tool_name]} time(s) and every call returned an error "
                                          "(failed_calls: ignore)")
        if not ev.attempts:
            return GoalResult(**base, status="not_called", achieved=False,
                              explanation=f"not called: the agent never called {tool_name}"
                                          + _close_tool_name(tool_name, called))
        closest = min(ev.attempts, key=lambda a: sum(not v.matched for v in a.arguments))
        failed = " (that call failed with an error)" if ev.failed.get(closest.call_index) else ""
        return GoalResult(**base, status="wrong_args", achieved=False,
                          explanation=f"called {tool_name} {len(ev.attempts)} time(s), never with matching arguments; "
                                      f"closest at {message_ref(closest.message)}{failed}: "
                                      f"{describe_mismatches(closest.arguments)}")
    return _text_not_said(ev, base)


def _unplaced_result(ev: _GoalEvidence, placement: dict[str, Slot], edges: list[tuple[str, str]],
                     evidence: dict[str, _GoalEvidence], base: dict) -> GoalResult:
    """The goal had matching events, but the optimal placement could not use them: why?"""
    name = ev.goal.name
    earliest = min(s.position for s in ev.slots)
    latest = max(s.position for s in ev.slots)
    violations = []
    for a, b in edges:
        if b == name and a in placement and placement[a].position >= latest:
            violations.append(f"must come after '{a}' ({message_ref(message_number(placement[a].position[0]))}), "
                              f"but its matching {'call' if isinstance(ev.goal, ToolCallGoal) else 'message'} "
                              f"was at {message_ref(message_number(latest[0]))}")
        if a == name and b in placement and placement[b].position <= earliest:
            violations.append(f"must come before '{b}' ({message_ref(message_number(placement[b].position[0]))}), "
                              f"but its first match was at {message_ref(message_number(earliest[0]))}")
    if violations:
        return GoalResult(**base, status="order_violated", achieved=False, order_violations=violations,
                          explanation="order violated: " + "; ".join(violations))
    own_calls = {x.key for x in ev.slots if x.exclusive}  # messages are shared; only calls can be taken
    users = sorted({g for g, s in placement.items() if s.exclusive and s.key in own_calls})
    if users:
        return GoalResult(**base, status="not_called", achieved=False,
                          explanation="its matching call(s) already achieve " + ", ".join(f"'{u}'" for u in users)
                                      + "; each call achieves one goal, so this goal needs a call of its own")
    # No single edge explains it: the placed neighbours together leave no room for any of its matches.
    after = [f"'{a}' ({message_ref(message_number(placement[a].position[0]))})" for a, b in edges if b == name and a in placement]
    before = [f"'{b}' ({message_ref(message_number(placement[b].position[0]))})" for a, b in edges if a == name and b in placement]
    window = " and ".join(part for part in (after and "after " + ", ".join(after),
                                            before and "before " + ", ".join(before)) if part)
    matches = ", ".join(message_ref(n) for n in sorted({message_number(x.position[0]) for x in ev.slots}))
    return GoalResult(**base, status="order_violated", achieved=False,
                      explanation=f"order violated: it must come {window}, and none of its matches ({matches}) fits")


def _text_not_said(ev: _GoalEvidence, base: dict) -> GoalResult:
    goal = ev.goal
    assert isinstance(goal, TextGoal)
    scope = "the final assistant message" if goal.scope == "final" else "the assistant's messages"
    if not ev.text_checks:
        return GoalResult(**base, status="not_said", achieved=False, missing_keywords=list(goal.keywords),
                          explanation=f"not said: the agent sent no text{' at the end' if goal.scope == 'final' else ''}")
    with_keywords = [c for c in ev.text_checks if not c.missing]
    if goal.keywords and not with_keywords:
        best = min(ev.text_checks, key=lambda c: len(c.missing))
        return GoalResult(**base, status="not_said", achieved=False, missing_keywords=best.missing,
                          explanation=f"not said: nothing in {scope} contains all keywords; the closest "
                                      f"({message_ref(message_number(best.text.message_index))}) misses {', '.join(repr(k) for k in best.missing)}")
    best = max(with_keywords, key=lambda c: (c.decision.score or 0.0) if c.decision else 0.0)
    decision = best.decision
    closest = f"not said: nothing in {scope} matches the reference answer; the closest is " \
              f"{message_ref(message_number(best.text.message_index))}"
    if decision is not None and decided_offline(decision.decided_by):
        # The reason says how: "decided offline: embeddings 0.62 < threshold 0.70".
        return GoalResult(**base, status="not_said", achieved=False, text_decision=decision,
                          explanation=f"{closest}, {decision.reason}")
    score = f" (score {decision.score:.2f})" if decision and decision.score is not None else ""
    return GoalResult(**base, status="not_said", achieved=False, text_decision=decision,
                      explanation=f"{closest}, decided by {decision.decided_by if decision else '?'}"
                                  f"{score}: {decision.reason if decision else ''}".rstrip(": "))


def _offline_note(ev: _GoalEvidence, slot: Slot, text_check: _TextCheck | None) -> str:
    """` (decided offline: embeddings 0.87 >= threshold 0.70)` for a goal achieved without a judge's
    verdict on its free text; for a call, each fuzzy argument the offline stages passed."""
    if text_check is not None:
        decision = text_check.decision
        return f" ({decision.reason})" if decision is not None and decided_offline(decision.decided_by) else ""
    offline = [v for attempt in ev.attempts if attempt.call_index == slot.key
               for v in attempt.arguments if decided_offline(v.decided_by)]
    return f" ({'; '.join(f'`{v.path}` {v.reason}' for v in offline)})" if offline else ""


# ------------------------------------------------------------------------------------------ calls

def _call_records(case: Case, all_calls: list[ToolCall], counted: list[ToolCall], placement: dict[str, Slot],
                  evidence: dict[str, _GoalEvidence]) -> list[CallRecord]:
    achieved_by = {slot.key: name for name, slot in placement.items() if isinstance(evidence[name].goal, ToolCallGoal)}
    goal_tools = {g.tool_name for g in case.tool_goals()}
    counted_ids = {c.index for c in counted}
    records = []
    for call in all_calls:
        arguments = call.arguments if call.arguments is not None else call.raw_arguments
        role, goal, note = _call_role(case, call, arguments, counted_ids, achieved_by, goal_tools, evidence)
        records.append(CallRecord(index=call.index, message=message_number(call.message_index), tool_name=call.name,
                                  arguments=arguments, is_error=call.is_error, role=role, goal=goal, note=note))
    return records


def _call_role(case: Case, call: ToolCall, arguments, counted_ids: set[int], achieved_by: dict[int, str],
               goal_tools: set[str], evidence: dict[str, _GoalEvidence]) -> tuple[str, str | None, str]:
    """(role, goal achieved, note) of one call; the first rule that applies wins."""
    where = f"{call.name} at {message_ref(message_number(call.message_index))}"
    if call.index not in counted_ids:
        return "ignored_failed", None, f"{where} returned an error and failed calls are ignored"
    if call.index in achieved_by:
        failed = (" (its result was an error; with failed_calls: ignore it would achieve nothing)"
                  if call.is_error else "")
        return "goal", achieved_by[call.index], f"{where} achieves '{achieved_by[call.index]}'{failed}"
    if _forbidden(case, call.name):
        if call.is_error:
            return "forbidden", None, (f"{call.name}({show(arguments)}) at {message_ref(message_number(call.message_index))} "
                                       "failed with an error and achieves no goal; failed_calls: ignore would pass over it")
        return "forbidden", None, (f"{call.name}({show(arguments)}) at {message_ref(message_number(call.message_index))} "
                                   "achieves no goal")
    role, goal, note = _unforbidden_role(call, counted_ids, achieved_by, goal_tools, evidence, where)
    if call.is_error:
        note += "; it failed with an error and achieves no goal (failed_calls: ignore would pass over it)"
    return role, goal, note


def _unforbidden_role(call: ToolCall, counted_ids: set[int], achieved_by: dict[int, str], goal_tools: set[str],
                      evidence: dict[str, _GoalEvidence], where: str) -> tuple[str, str | None, str]:
    if call.arguments is None:
        return "invalid_arguments", None, f"{where}: {call.arguments_error}"
    if call.name in goal_tools:
        matched = [n for n, ev in evidence.items() if any(s.key == call.index for s in ev.slots)]
        repeated = [n for n in matched if n in achieved_by.values()]
        if repeated:
            return "extra", None, f"{where} repeats '{repeated[0]}', already achieved"
        if matched:
            return "extra", None, f"{where} matches '{matched[0]}' but comes out of the required order"
        return "wrong_arguments", None, f"{where} matches no goal's arguments"
    return "extra", None, f"{where} is not part of any goal"


# Roles of the calls that achieved no goal and were not forbidden (a forbidden one fails the case anyway);
# a failed call passed over under `failed_calls: ignore` is not counted.
_EXTRA_ROLES = ("extra", "wrong_arguments", "invalid_arguments")


def extra_calls(calls: list[CallRecord], goals: list[GoalResult]) -> list[str]:
    """The tool names of the calls no goal asked for, in call order: a tool no goal names, a goal's tool
    with arguments no goal has, a goal repeated. A call that tried a goal that was not achieved is that
    goal's attempt (its failure explains it), not an extra call. A passing case says so on its line."""
    attempts = {a.call_index for goal in goals if not goal.achieved for a in goal.attempts}
    return [call.tool_name for call in calls if call.role in _EXTRA_ROLES and call.index not in attempts]


def _close_tool_name(tool_name: str, called: dict[str, int]) -> str:
    """` (did you mean X, called at message N?)` when the agent called a tool with a close name."""
    close = difflib.get_close_matches(tool_name, [name for name in called if name != tool_name], n=1, cutoff=0.75)
    if not close:
        return ""
    return (f"; it called {close[0]} at {message_ref(called[close[0]])}, a close name: "
            f"did you mean tool_name: {close[0]}?")


def _forbidden(case: Case, tool_name: str) -> bool:
    rule = case.forbid_extra_calls
    if rule is True:
        return True
    if not rule:
        return False
    return any(fnmatch.fnmatchcase(tool_name, pattern) for pattern in rule)
