"""A case's mutants: every operator of every family applied to its recording, duplicates (and changes that
change nothing) removed, then at most N chosen, the families taking turns so that each is represented. The
choice is seeded by --seed and the case's id only: the same mutants on any machine and any number of cores."""
from __future__ import annotations

import json
import random

from ..results.models import CaseResult
from ..suite.models import Case
from . import ops_answer, ops_args, ops_calls, ops_turns
from .context import MutationContext
from .mutant import Mutant, assistant_texts, call_sites

# The families, in the order they take turns when mutants are chosen.
FAMILIES = {"calls": ops_calls, "arguments": ops_args, "answer": ops_answer, "turns": ops_turns}


def case_mutants(case: Case, messages: list[dict], original: CaseResult, *, seed: int, limit: int,
                 declared_tools: list[tuple[str, str]] | None = None) -> list[Mutant]:
    """At most `limit` mutants of `messages` (the recording `original` scored), chosen with `seed`."""
    context = mutation_context(case, messages, original, random.Random(f"{seed}:{case.id}:make"), declared_tools)
    pools = {family: list(module.mutants(context)) for family, module in FAMILIES.items()}
    return choose_mutants(pools, limit, random.Random(f"{seed}:{case.id}:choose"), messages)


def choose_mutants(pools: dict[str, list[Mutant]], limit: int, rng: random.Random,
                   messages: list[dict]) -> list[Mutant]:
    """Round robin over the families, each pool shuffled: `limit` mutants, as varied as the pools allow. A
    candidate that makes the recording itself, or a conversation already chosen, is passed over; only the
    candidates looked at are made (a case has several times more than are chosen)."""
    seen = {json.dumps(messages, sort_keys=True, ensure_ascii=False, default=str)}
    for pool in pools.values():
        rng.shuffle(pool)
    chosen: list[Mutant] = []
    queues = [list(pool) for pool in pools.values()]
    while len(chosen) < limit and any(queues):
        for queue in queues:
            while queue and len(chosen) < limit:
                mutant = queue.pop(0)
                key = mutant.fingerprint()
                if key not in seen:
                    seen.add(key)
                    chosen.append(mutant)
                    break
    return chosen


def mutation_context(case: Case, messages: list[dict], original: CaseResult, rng: random.Random,
                     declared_tools: list[tuple[str, str]] | None = None) -> MutationContext:
    from ..checks.write_calls import write_reason

    tools: dict[str, str] = {goal.tool_name: "" for goal in case.tool_goals()}
    tools.update((name, "") for name in case.tool_outputs if name not in tools)
    for name, description in declared_tools or ():
        tools[name] = description or tools.get(name, "")
    for site in call_sites(messages):
        tools.setdefault(site.name, "")
    writes = [name for name, description in tools.items() if write_reason(name, description) is not None]
    texts = assistant_texts(messages)
    answers = sorted({goal.message - 1 for goal in original.goals
                      if goal.type == "text" and goal.achieved and goal.message} & set(texts) | set(texts[-1:]))
    keywords = list(dict.fromkeys(k for goal in case.text_goals() for k in goal.keywords if k.strip()))
    return MutationContext(messages, sorted(tools), writes, keywords, answers, rng)

