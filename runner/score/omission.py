"""Does the answer leave out part of the expected text? The offline stages' guard against half answers.

"Your card is blocked." scores 0.86 against "Your card is blocked and a replacement is on its way.":
similarity rewards the half that is there. Without a judge, when the answer repeats one clause of the
expected text word for word (every content word of it, by stem) and shares no content word at all with
another clause, that other clause was left out, and the pair does not match. A clause of courtesy
("Good news", "Thanks for waiting") is never required. Clauses and stems are negation.py's.
"""
from __future__ import annotations

import re

from runner.score.negation import clauses, stem

_COURTESY = frozenset(stem(word) for word in ["good", "great", "news", "sure", "thanks", "thank", "done", "hello", "hi", "dear", "sorry", "unfortunately", "happy", "glad", "pleased", "afraid", "fortunately", "okay", "certainly", "absolutely", "help", "wait", "waiting", "patience"])


_LEADING_JOINER = re.compile(r"^(?:and|but|then|so|because|while|which|although|though|whereas|however)\s+",
                             re.IGNORECASE)


def omitted_clause(expected: str, actual: str) -> str | None:
    """The clause of `expected` (as written) that `actual` says nothing of, when it says another in full."""
    required = [clause for clause in clauses(expected) if clause.stems - _COURTESY]
    if len(required) < 2:
        return None
    said = frozenset().union(*(clause.stems for clause in clauses(actual)))
    if not any(clause.stems <= said for clause in required):
        return None  # a paraphrase, most likely: the similarity stages weigh it
    left_out = next((clause.text for clause in required if not clause.stems & said), None)
    return None if left_out is None else _LEADING_JOINER.sub("", left_out)
