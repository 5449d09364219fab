"""Did the answer exchange who does what? The offline stages' guard against swapped roles.

"The dog bit the courier." and "The courier bit the dog." share every word, so similarity scores them
as one sentence (rapidfuzz 1.00, embeddings 0.98). Without a parser, a swap is read from the word order:
the two texts are the same words (articles aside, wording.py), except that two stretches of words have
changed places around a middle that did not change — "Anna owes Bob", "from Paris to Rome", "the
customer emailed the support team". Such a pair does not match, explained, unless what stands between
the two stretches makes the relation symmetric or a list:

- nothing between them, or a list: and/or with only the words the items share ("Anna and Bob" = "Bob
  and Anna", "your savings account and your checking account");
- with, between, against, versus, each other, together, and verbs that say the same both ways
  (meet, marry, hug, fight, ...): "Anna met Bob" = "Bob met Anna".

A passive in one text only ("Your request was approved by the manager") is no swap: the two texts are not
the same words. When the middle did change, the pair is a converse ("Lisbon is behind Berlin" / "Berlin is
ahead of Lisbon"): `swap` reports it with `converse=True`, so that the opposite words it holds are not
read as a contradiction (opposites.py), and the similarity stages decide.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from runner.score.negation import STOPWORDS, stem
from runner.score.wording import Word, read

_MAX_WORDS = 60  # a sentence or two: answers and argument values, not documents
_MAX_SPAN = 5  # words in one of the exchanged stretches (a noun phrase)
_COORDINATION = frozenset({"and", "or", "nor", "plus", "&"})
_SYMMETRIC = frozenset(stem(word) for word in """
with between against versus vs together each other among meet met marry married wed wedded hug hugging
embrace kiss kissing fight fighting wrestle wrestling compete competing chat
chatting argue arguing equal equals same similar like resemble beside next near close opposite
""".split())


@dataclass(frozen=True)
class Swap:
    expected_part: str  # the first exchanged stretch, as the expected text writes it
    other_part: str  # the second
    converse: bool  # the words between them changed too (a converse statement, not a contradiction)

    @property
    def reason(self) -> str:
        return (f"roles swapped: {self.expected_part!r} and {self.other_part!r} change places between the "
                "two texts (offline stages never match a statement with its roles exchanged)")


def swap(expected: str, actual: str) -> Optional[Swap]:
    """The two stretches of words that changed places between the texts, or None."""
    return _swap(read(expected), read(actual))


@lru_cache(maxsize=2048)
def _swap(a: tuple[Word, ...], b: tuple[Word, ...]) -> Optional[Swap]:
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
            between_a = middle_a[size_x:len(middle_a) - size_y]
            between_b = middle_b[size_y:len(middle_b) - size_x]
            context = set(first[:start]) | set(first[len(first) - end:])
            if not _exchanges_roles(a[start:start + size_x], a[start + len(middle_a) - size_y:start + len(middle_a)],
                                    between_a, between_b, context):
                continue
            written_x = " ".join(w.written for w in a[start:start + size_x])
            written_y = " ".join(w.written for w in a[start + len(middle_a) - size_y:start + len(middle_a)])
            return Swap(written_x, written_y, converse=between_a != between_b)
    return None


def _exchanges_roles(x: tuple[Word, ...], y: tuple[Word, ...], between_a: list[str], between_b: list[str],
                     context: set[str]) -> bool:
    """Whether exchanging x and y changes who does what: both name something, and what stands between
    them is a relation that reads differently backwards, not a list ("Anna and Bob"; "your savings account
    and your checking account": around "and", only the words the two items share)."""
    if not any(w.is_content for w in x) or not any(w.is_content for w in y):
        return False
    for between in (between_a, between_b):
        if any(part in _SYMMETRIC for word in between for part in word.split("_")):
            return False
        if any(word in _COORDINATION for word in between) and all(
                word in _COORDINATION or word in context or word in STOPWORDS for word in between):
            return False
    return True
