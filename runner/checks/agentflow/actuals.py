"""What Agentflow's evaluator reads of a case's conversation, taken from evalrun's trajectory and case.

- calls: every tool call of every turn, in order, except failed ones: Agentflow's TrajectoryCollector never
  records a call that raised (its after-invoke callback does not run), so a call whose result is an error
  is left out here too, and the explanation says so;
- the answer: the final text of the LAST user turn ("" when that turn ended without text), not the last text
  of the conversation;
- node visits: the graph's node visits, which only an Agentflow agent records (its reported state's
  `agentflow.node_visits`, also readable from a transcript's `state`);
- the expectations a check leaves out: the case's turns, pooled (calls), or the last stated one (answer).
"""
from __future__ import annotations

from typing import Any

from ..base import CheckContext

NODE_VISITS_KEY = "agentflow"  # state {"agentflow": {"node_visits": [...]}}
_UNREADABLE = "\x00unreadable arguments"  # arguments that could not be read equal no expected ones


def pooled_calls(ctx: CheckContext) -> tuple[list[tuple[str, dict]], int]:
    """(the calls Agentflow would score, how many failed calls were left out)."""
    calls, failed = [], 0
    for call in ctx.trajectory.tool_calls:
        if call.is_error:
            failed += 1
            continue
        args = call.arguments if call.arguments is not None else {_UNREADABLE: call.raw_arguments}
        calls.append((call.name, args))
    return calls, failed


def last_answer(ctx: CheckContext) -> str:
    """The final text of the conversation's last user turn, as Agentflow's actual_response."""
    from ...transcripts.invocations import split_invocations

    parts = split_invocations(ctx.trajectory)
    if parts:
        return parts[-1].answer
    return ctx.trajectory.final_text or ""


def turn_count(ctx: CheckContext) -> int:
    return len(ctx.case.turns) if ctx.case.turns else max(ctx.trajectory.user_turns, 1)


def node_visits(ctx: CheckContext) -> list[str] | None:
    state = ctx.trajectory.state
    value = state.value if state is not None and state.reported else None
    entry = value.get(NODE_VISITS_KEY) if isinstance(value, dict) else None
    visits = entry.get("node_visits") if isinstance(entry, dict) else None
    if isinstance(visits, list) and all(isinstance(v, str) for v in visits):
        return list(visits)
    return None


def expected_calls_of_turns(ctx: CheckContext) -> list[tuple[str, dict]]:
    return [(c.tool_name, dict(c.args or {})) for turn in ctx.case.turns or () for c in turn.calls or ()]


def reference_of_turns(ctx: CheckContext) -> str:
    """The last expected answer a turn states (a later turn without one does not clear it), "" when none."""
    found = ""
    for turn in ctx.case.turns or ():
        if turn.response is not None:
            found = turn.response
    return found


def question(ctx: CheckContext) -> str:
    """The first user message, as Agentflow's judges read the question."""
    if ctx.case.turns:
        return ctx.case.turns[0].user
    from ...transcripts.read import content_text

    first = next((m for m in ctx.trajectory.messages if m.get("role") == "user"), None)
    return content_text(first.get("content")) if first else ""


def shown_call(call: tuple[str, dict]) -> str:
    name, args = call
    return f"{name}({', '.join(f'{k}={_show(v)}' for k, v in args.items())})"


def _show(value: Any) -> str:
    from ...score.normalize import show

    return show(value)
