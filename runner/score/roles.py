"""Did the answer exchange who does what? The offline stages' guard against swapped roles.

"The dog bit the courier." and "The courier bit the dog." share every word, so similarity scores them
as one sentence (rapidfuzz 1.00, embeddings 0.98). Without a parser, a swap is read from the word order:
the two texts are the same words (articles aside, wording.py), except that two stretches of words have
changed places around a middle that did not change — "Anna owes Bob", "from Paris to Rome", "the
customer emailed the support team". Such a pair does not match, explained, unless what stands between
the two stretches makes the relation symmetric or a list:

- nothing between them, or a list: and/or with no verb between them ("Anna and Bob" = "Bob and Anna",
  "Anna, Bob and the manager", "your savings account and your checking account");
- with, between, against, versus, each other, together, and verbs that say the same both ways
  (meet, marry, hug, fight, ...): "Anna met Bob" = "Bob met Anna".

When the middle changed too, the pair is a converse: a passive ("The manager approved your request" /
"Your request was approved by the manager") or opposite words ("Lisbon is behind Berlin" / "Berlin is
ahead of Lisbon"). `swap` reports it with `converse=True`: no contradiction, and the opposite words it
holds are not read as one either (opposites.py); the similarity stages decide.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from runner.score.negation import quote, stem
from runner.score.wording import Word, as_written, read

_MAX_WORDS = 60  # a sentence or two: answers and argument values, not documents
_MAX_SPAN = 5  # words in one of the exchanged stretches (a noun phrase)
_COMMA = re.compile(r",(?=\s)")  # a comma in a list ("Anna, Bob and Carl") joins as "and" does; not 1,500
_COORDINATION = frozenset({"and", "or", "nor", "plus", "&"})
_AUXILIARIES = frozenset(["is", "are", "was", "were", "be", "been", "am", "has", "have", "had", "will", "would", "shall", "should", "can", "could", "may", "might", "must", "does", "did", "do"])
_SYMMETRIC = frozenset(stem(word) for word in ["with", "between", "against", "versus", "vs", "together", "each", "other", "among", "meet", "met", "marry", "married", "wed", "wedded", "hug", "hugging", "embrace", "kiss", "kissing", "fight", "fighting", "wrestle", "wrestling", "compete", "competing", "chat", "chatting", "argue", "arguing", "equal", "equals", "same", "similar", "like", "resemble", "beside", "next", "near", "close", "opposite"])


@dataclass(frozen=True)
class Swap:
    expected_part: str  # the first exchanged stretch, as the expected text writes it
    other_part: str  # the second
    converse: bool  # the words between them changed too (a converse statement, not a contradiction)
    expected_text: str = ""
    actual_text: str = ""

    @property
    def reason(self) -> str:
        return (f"roles swapped: {self.expected_part!r} and {self.other_part!r} change places: the expected "
                f"text says {quote(self.expected_text)}, the answer says {quote(self.actual_text)}")


def swap(expected: str, actual: str) -> Swap | None:
    """The two stretches of words that changed places between the texts, or None."""
    found = _swap(read(_COMMA.sub(" and ", expected)), read(_COMMA.sub(" and ", actual)))
    if found is None:
        return None
    return Swap(as_written(expected, found.expected_part), as_written(expected, found.other_part), found.converse,
                expected, actual)


@lru_cache(maxsize=2048)
def _swap(a: tuple[Word, ...], b: tuple[Word, ...]) -> Swap | None:
    if not a or not b or len(a) > _MAX_WORDS or len(b) > _MAX_WORDS:
        return None
    first, second = [w.stem for w in a], [w.stem for w in b]
    start = 0
    while start < min(len(first), len(second)) and first[start] == second[start]:
        start += 1
    end = 0
    while end < min(len(first), len(second)) - start and first[-1 - end] == second[-1 - end]:
        end += 1
    middle_a, middle_b = first[start:len(first) - end], second[start:len(second) - end]
    for size_x in range(1, _MAX_SPAN + 1):
        for size_y in range(1, _MAX_SPAN + 1):
            if size_x + size_y >= min(len(middle_a), len(middle_b)):
                continue
            x, y = middle_a[:size_x], middle_a[len(middle_a) - size_y:]
            if x == y or middle_b[:size_y] != y or middle_b[len(middle_b) - size_x:] != x:
                continue
            x_words, y_words = a[start:start + size_x], a[start + len(middle_a) - size_y:start + len(middle_a)]
            between_a = a[start + size_x:start + len(middle_a) - size_y]
            between_b = b[start + size_y:start + len(middle_b) - size_x]
            context = set(first[:start]) | set(first[len(first) - end:])  # the words around both stretches
            if not _exchanges_roles(x_words, y_words, between_a, between_b, context):
                continue
            return Swap(" ".join(w.written for w in x_words), " ".join(w.written for w in y_words),
                        converse=[w.stem for w in between_a] != [w.stem for w in between_b])
    return None


def _exchanges_roles(x: tuple[Word, ...], y: tuple[Word, ...], between_a: tuple[Word, ...],
                     between_b: tuple[Word, ...], context: set[str]) -> bool:
    """Whether exchanging x and y changes who does what: both name something, and what stands between
    them is a relation that reads differently backwards, not a list ("Anna and Bob", "Anna, Bob and the
    manager": an "and" with no verb around it)."""
    if not any(w.is_content for w in x) or not any(w.is_content for w in y):
        return False
    for between in (between_a, between_b):
        if any(part in _SYMMETRIC for word in between for part in word.stem.split("_")):
            return False
        if all(w.stem in _COORDINATION for w in between):
            return False  # "Anna and Bob", or nothing at all between them
        if any(w.stem in _COORDINATION for w in between) and not any(_states_something(w, context) for w in between):
            return False
    return True


def _states_something(word: Word, context: set[str]) -> bool:
    """Whether a word between two exchanged stretches and an "and" makes them two statements ("a man is
    playing a guitar and a woman ...") rather than a list ("Anna, Bob and the manager"): an auxiliary or
    a verb form; the words the list items share (the context) do not count."""
    return word.stem not in context and (word.written in _AUXILIARIES or word.written.endswith(("ing", "ed")))
