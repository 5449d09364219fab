"""What the operators know of a case when they make its mutants: the recorded conversation, its tool calls,
the tools the agent could have called, the answers that achieved the case's text goals, and a seeded random
source (the same seed gives the same mutants, run after run and on any number of cores)."""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from .mutant import CallSite, call_sites


@dataclass
class MutationContext:
    messages: list[dict]
    tools: list[str]  # the tool names the agent knew: goals', canned outputs', declared, and those it called
    write_tools: list[str]  # the write-like ones among them
    keywords: list[str]  # the case's text goals' keywords
    answer_messages: list[int]  # indexes of the assistant texts an answer mutant changes
    rng: random.Random
    sites: list[CallSite] = field(init=False)

    def __post_init__(self) -> None:
        self.sites = call_sites(self.messages)

    def seen_strings(self) -> list[str]:
        """String values the conversation's calls carried, in order of first appearance."""
        from .mutant import leaves

        seen: dict[str, None] = {}
        for site in self.sites:
            for _, value in leaves(site.arguments or {}):
                if isinstance(value, str) and value.strip():
                    seen.setdefault(value, None)
        return list(seen)


def choose(rng: random.Random, options: list[Any]) -> Any:
    return options[rng.randrange(len(options))]


def holds_secret(value: Any) -> bool:
    """Whether a value holds a secret of this process (runner/util/secrets.py). Such a value is never changed into a
    near copy of the secret: the redactor masks a secret, not a secret with one character changed."""
    import json

    from ..util.secrets import redact

    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return redact(text) != text
