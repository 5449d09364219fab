"""Texts as the rules on changed facts read them: word by word, each word with its stem, phrases of the
lexicon as one word, and the lexicon's opposites and quantities looked up by stem.

"The courier picked up the parcel" reads (courier, pick_up, parcel), with the words as written kept
for explanations. Articles are left out: "a bag" and "the bag" state the same fact. Stems are
negation.py's (near-synonyms of lexicon.py share one), so every offline rule compares words alike.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from runner.score.lexicon import OPPOSITES, PLURAL_QUANTITIES, QUANTITIES, VAGUE_QUANTITIES
from runner.score.negation import STOPWORDS, stem, words

_ARTICLES = frozenset({"a", "an", "the"})
_LONGEST_PHRASE = 3  # words; in_front_of


@dataclass(frozen=True)
class Word:
    written: str  # as in the text (lower case; a phrase's words joined by spaces)
    stem: str  # a phrase's stems joined by "_"
    is_content: bool  # carries a fact of its own (not a particle, an auxiliary or a pronoun)


def _word(written: str, stem_: str) -> Word:
    if " " not in written:
        return Word(written, stem_, written not in STOPWORDS)
    return Word(written, stem_, all(part not in STOPWORDS for part in written.split()))


@dataclass(frozen=True)
class Lexicon:
    opposites: dict[tuple[str, str], str]  # (stem, stem) -> kind ("antonym", "another person", ...)
    phrases: dict[tuple[str, ...], str]  # the stems of a phrase's words -> the phrase's stem
    phrase_starts: frozenset[str]  # the stems phrases begin with
    quantities: dict[str, str]  # stem -> value ("1", "2", "all", ...; "vague": some; "plural": several)


@lru_cache(maxsize=4096)
def read(text: str) -> tuple[Word, ...]:
    """The words of `text` without articles, phrases of the lexicon joined (longest first)."""
    plain = [word for word in words(text) if word not in _ARTICLES]
    stems = [stem(word) for word in plain]
    table = lexicon()
    found: list[Word] = []
    index = 0
    while index < len(plain):
        size = 1
        if stems[index] in table.phrase_starts:
            for longer in range(min(_LONGEST_PHRASE, len(plain) - index), 1, -1):
                if tuple(stems[index:index + longer]) in table.phrases:
                    size = longer
                    break
        if size == 1:
            found.append(_word(plain[index], stems[index]))
        else:
            found.append(_word(" ".join(plain[index:index + size]), table.phrases[tuple(stems[index:index + size])]))
        index += size
    return tuple(found)


def as_written(text: str, written: str) -> str:
    """`written` (lower case, as read() gives it) with the letters `text` gives it: 'anna' -> 'Anna'."""
    pattern = r"\s+".join(re.escape(part) for part in written.split())
    found = re.search(rf"(?<!\w){pattern}(?!\w)", text, re.IGNORECASE)
    return found.group(0) if found else written


def opposition(a: str, b: str) -> str | None:
    """What makes two stems state different facts ("antonym", "another person", "another quantity"...),
    or None when the lexicon knows no such difference."""
    if a == b:
        return None
    table = lexicon()
    kind = table.opposites.get((a, b))
    if kind is not None:
        return kind
    first, second = table.quantities.get(a), table.quantities.get(b)
    if first is None or second is None or first == second or {first, second} == {"2", "all"}:
        return None  # "both bags" and "all bags" of two
    vague = {first, second} & {"vague", "plural"}
    if vague and not {first, second} & ({"all", "1"} if vague == {"plural"} else {"all"}):
        return None  # "three boys" are "some boys"; "all" is not "some", and "one" is not "several"
    return "another quantity"


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    opposites: dict[tuple[str, str], str] = {}
    phrases: dict[tuple[str, ...], str] = {}

    def stems_of(words_: str) -> list[str]:
        found = []
        for word in words_.split():
            parts = [stem(part) for part in word.split("_")]
            if len(parts) > 1:
                phrases[tuple(parts)] = "_".join(parts)
            found.append("_".join(parts))
        return found

    for line in OPPOSITES.strip().splitlines():
        kind, _, sides = line.partition(":")
        separator = "/" if "/" in sides else "|"
        groups = [stems_of(group) for group in sides.split(separator)]
        for index, group in enumerate(groups):
            for other in groups[index + 1:]:
                for a in group:
                    for b in other:
                        if a != b:
                            opposites.setdefault((a, b), kind.strip())
                            opposites.setdefault((b, a), kind.strip())
    quantities = {stem(word): value for value, written in QUANTITIES.items() for word in written.split()}
    quantities.update((stem(word), "vague") for word in VAGUE_QUANTITIES.split())
    quantities.update((stem(word), "plural") for word in PLURAL_QUANTITIES.split())
    return Lexicon(opposites, phrases, frozenset(words_[0] for words_ in phrases), quantities)
