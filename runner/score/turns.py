"""A case's turns paired with the invocations of a conversation, by position, as Google ADK pairs them.

`turn_pairs(case, trajectory)` gives one `TurnPair` per expected turn (with the actual invocation, or None
when the conversation ended before it), or the reason they cannot be paired. A case without turns is one
pair: the whole conversation, against the case's own expectations.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..suite.models import Case, Turn
from ..transcripts.invocations import Invocation, split_invocations
from ..transcripts.read import Trajectory


@dataclass
class TurnPair:
    number: int
    expected: Turn | None  # None: the case has no turns (the whole conversation is the one turn)
    actual: Invocation | None  # None: the conversation ended before this turn


def turn_pairs(case: Case, trajectory: Trajectory) -> tuple[list[TurnPair], str | None]:
    """The case's turns paired by position with the conversation's invocations, or a reason they cannot be
    paired (the conversation has more user turns than the case: the recording is not this case's)."""
    actual = split_invocations(trajectory)
    turns = case.turns
    if not turns:
        return [TurnPair(1, None, _whole_conversation(trajectory, actual))], None
    if len(actual) > len(turns):
        return [], (f"the conversation has {len(actual)} user turns but the case expects {len(turns)}: turns are "
                    "compared by position, so the recording must hold exactly the case's turns")
    return [TurnPair(i + 1, turn, actual[i] if i < len(actual) else None) for i, turn in enumerate(turns)], None


def _whole_conversation(trajectory: Trajectory, parts: list[Invocation]) -> Invocation:
    """A conversation as one invocation: every call, and the last answer of the last user turn."""
    first = parts[0].first if parts else 0
    final = next((p.final_text for p in reversed(parts) if p.final_text is not None), None)
    return Invocation(number=1, user_text=parts[0].user_text if parts else "", first=first,
                      end=len(trajectory.messages), tool_calls=tuple(trajectory.tool_calls), final_text=final)


def turn_name(pair: TurnPair) -> str:
    if pair.expected is None:
        return "the conversation"
    shown = pair.expected.id and len(pair.expected.id) <= 24  # ADK's generated ids are UUIDs: noise in a line
    return f"turn {pair.number}" + (f" ({pair.expected.id})" if shown else "")
