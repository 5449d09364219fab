"""Mutants of the turns: the conversation cut before its last user turn (the agent never got to finish)."""
from __future__ import annotations

from collections.abc import Iterator

from .context import MutationContext
from .mutant import Mutant, copied


def mutants(context: MutationContext) -> Iterator[Mutant]:
    users = [i for i, m in enumerate(context.messages) if m.get("role") == "user"]
    if not users:
        return
    last = users[-1]
    cut = last if len(users) > 1 else last + 1  # one turn: the agent's whole reply is gone
    if cut >= len(context.messages):
        return
    yield Mutant("turns", "cut_last_turn", f"conversation cut before message {cut + 1} "
                 f"({len(context.messages) - cut} message(s) gone)", lambda: copied(context.messages[:cut]),
                 message=cut + 1)
