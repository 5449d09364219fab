"""Does the answer say the opposite in other words, or exchange who does what? The offline stages' guard
against changed facts that are neither a negation nor a number, a date or a name.

"The parcel is inside the locker." scores 0.9 against "...outside the locker." with embeddings: one word
differs, and it is an opposite. Without a judge, two texts that say the same words except where one says
a word and the other, in the same place, its opposite in lexicon.py (an antonym, another person or role,
another quantity, colour or time of day), do not match, explained:
`antonym 'inside' vs 'outside': the expected text says 'The parcel is inside the locker', ...`.

The rule is narrow on purpose, so that a paraphrase never trips it:
1. The words are aligned in order (difflib on wording.py's stems) and only a replaced stretch of at most
   three words is read: "in the park" against "out of the park", not a rewritten sentence.
2. A content word counts only when the other text does not say it anywhere ("a black and white dog" /
   "a white and black dog" say the same colours).
3. The texts are about the same thing: with the opposed pair counted as one shared word, at least half
   of the shorter text's content words are shared.
4. Both clauses have the same polarity: "The door is not locked" / "The door is unlocked" agree (a
   negation in one clause only is negation.py's business, and so are the words it reads as "not X":
   "never open" / "closed" agree).
5. A swap of roles comes first (roles.py): "Anna owes Bob" / "Bob owes Anna" is a non-match; a converse
   ("the basic plan is cheaper than the premium plan" / "the premium plan is more expensive than the
   basic plan") holds opposites that cancel out, and is left to the similarity stages.
"""
from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

from runner.score.negation import clauses, is_negation, quote
from runner.score.roles import swap
from runner.score.wording import Word, as_written, opposition, read

_MAX_TEXT = 5_000  # like the other offline rules: answers, not documents
_MAX_WORDS = 120
_MAX_REPLACED = 3  # words on either side of one replaced stretch


@dataclass(frozen=True)
class Opposite:
    kind: str  # "antonym", "another person", "another quantity", ... (lexicon.py)
    expected_word: str
    actual_word: str
    expected_clause: str
    actual_clause: str

    @property
    def reason(self) -> str:
        return (f"{self.kind} {self.expected_word!r} vs {self.actual_word!r}: the expected text says "
                f"{quote(self.expected_clause)}, the answer says {quote(self.actual_clause)}")


@dataclass(frozen=True)
class ChangedFact:
    reason: str


def changed_fact(expected: str, actual: str) -> ChangedFact | None:
    """Roles swapped, or a word replaced by its opposite, between the two texts; None otherwise."""
    if len(expected) > _MAX_TEXT or len(actual) > _MAX_TEXT:
        return None
    exchanged = swap(expected, actual)
    if exchanged is not None:
        return None if exchanged.converse else ChangedFact(exchanged.reason)
    found = opposite(expected, actual)
    return None if found is None else ChangedFact(found.reason)


def opposite(expected: str, actual: str) -> Opposite | None:
    """The first word of `expected` that `actual` replaces with its opposite, in the same place."""
    a, b = read(expected), read(actual)
    if not a or not b or len(a) > _MAX_WORDS or len(b) > _MAX_WORDS:
        return None
    stems_a, stems_b = [w.stem for w in a], [w.stem for w in b]
    content_a = {w.stem for w in a if w.is_content}
    content_b = {w.stem for w in b if w.is_content}
    matcher = SequenceMatcher(None, stems_a, stems_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace" or i2 - i1 > _MAX_REPLACED or j2 - j1 > _MAX_REPLACED:
            continue
        for x in a[i1:i2]:
            for y in b[j1:j2]:
                kind = opposition(x.stem, y.stem)
                if kind is None or _said_by_both(x, y, stems_a, stems_b) or _negation(x) or _negation(y):
                    continue
                if not _same_topic(content_a, content_b):
                    return None
                expected_clause, actual_clause = _clause_of(expected, x), _clause_of(actual, y)
                if expected_clause[1] != actual_clause[1]:
                    continue  # "not locked" / "unlocked": opposite words, one negated, the same fact
                return Opposite(kind, as_written(expected, x.written), as_written(actual, y.written),
                                expected_clause[0], actual_clause[0])
    return None


def _said_by_both(x: Word, y: Word, stems_a: list[str], stems_b: list[str]) -> bool:
    """A content word the other text says too is no replacement ("black and white" / "white and black").
    Particles (in, on, up, ...) occur everywhere: for them only the place counts."""
    return (x.is_content and x.stem in stems_b) or (y.is_content and y.stem in stems_a)


def _negation(word: Word) -> bool:
    """Words negation.py reads as "not X" (closed, declined, out of stock) are its business: with a
    negation in the other clause they agree ("never open" / "closed")."""
    return any(is_negation(part) for part in word.written.split())


def _same_topic(content_a: set[str], content_b: set[str]) -> bool:
    shared = len(content_a & content_b) + 1  # the opposed pair, aligned
    return 2 * shared >= min(len(content_a), len(content_b))


def _clause_of(text: str, word: Word) -> tuple[str, bool]:
    """The clause of `text` that holds `word` (as written, and whether it is negated); the whole text when
    no clause of negation.py's holds it."""
    for clause in clauses(text):
        if word.stem in {w.stem for w in read(clause.text)}:
            return clause.text, clause.negated
    return text.strip(), any(clause.negated for clause in clauses(text))
