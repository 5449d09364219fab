"""Does one text deny what the other says? The offline stages' guard against negations.

Embeddings and rapidfuzz score "Your refund is approved." and "Your refund is not approved." 0.9 and
more: similar words, opposite facts. Without a judge, a pair where one text negates a statement the
other makes is a non-match, explained. The rule is small and deterministic:

1. Each text is cut into clauses (at . ; : ! ? and commas, and before but/and/so/because/...).
2. A clause is negated when it holds an odd number of negations (double negation cancels out:
   "not impossible" says "possible"). Negations are: not, n't (won't, can't), cannot, no, never,
   none, nothing, nobody, nowhere, neither, nor, without, "no longer", "free of", "out of stock",
   `non-` before a word, and a short list of un-/in-/dis- words that mean "not X" (unavailable,
   ineligible, disabled ...; a list, because "under", "inform" and "discuss" are not negations), with
   a few opposites that mean "not X" in an agent's answer: declined, denied, refused and rejected are
   "not approved" (accepted and granted are approved), failed is "not succeeded", closed "not open",
   free "not charged".
   Phrases that only sound negative are not: "not only", "no later than", "no more than", "or not".
3. What a negation denies (its focus) is the first content word after it ("is not *approved*"),
   the words of the noun phrase after no/without, up to its verb ("no *delivery charge*", "no *man*
   slicing"), or the word itself for un-/in-/dis- words. Words are compared by a light stem
   (approved = approve = approves; near-synonyms of lexicon.py share one: lady = woman).
4. The two texts contradict each other when a negated clause's focus (all of it, or the head of its
   noun phrase: "no small *guinea pig*") appears in a clause of the other text that is not negated,
   and that clause is the best-aligned one (most shared content words, more than half of the shorter
   clause; a tie goes to a negated clause, i.e. agreement). A clause that says no one does something
   ("There is no man doing tricks", "Nobody is ...") denies the action whoever does it: at least two
   of its other content words, and more than half, said by the other clause ("A person is doing tricks").
   "not ... until/before" restricts time rather than denies ("can't check in before 3 pm" is
   "check-in opens at 3 pm"), unless the other clause says the same until/before.

It cannot see other opposites (early vs late, warm vs cold) or meaning carried by context;
the labelled pairs in tests/data/offline_cascade/ measure what it catches and what it misses.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from runner.score.lexicon import SYNONYMS
from runner.score.sentences import without_abbreviation_dots
from runner.util.secrets import redact

# Words that carry no fact of their own: they never are a negation's focus nor count for alignment.
STOPWORDS = frozenset(["a", "an", "the", "this", "that", "these", "those", "there", "here", "it", "its", "it's", "i", "me", "my", "mine", "you", "your", "yours", "he", "him", "his", "she", "her", "hers", "we", "us", "our", "ours", "they", "them", "their", "theirs", "one", "ones", "someone", "anyone", "anything", "something", "everything", "everyone", "any", "some", "all", "each", "every", "both", "either", "other", "another", "such", "own", "same", "be", "is", "are", "was", "were", "been", "being", "am", "have", "has", "had", "having", "do", "does", "did", "doing", "done", "will", "would", "shall", "should", "can", "could", "may", "might", "must", "get", "gets", "got", "to", "of", "in", "on", "at", "for", "by", "from", "with", "about", "into", "onto", "over", "under", "than", "as", "per", "via", "up", "off", "out", "and", "or", "but", "so", "because", "since", "although", "though", "while", "whereas", "if", "then", "else", "also", "too", "just", "only", "very", "really", "quite", "still", "yet", "anymore", "now", "again", "already", "currently", "please", "well", "even", "ever", "much", "more", "most", "less", "least", "what", "which", "who", "whom", "whose", "when", "where", "why", "how"])

# Negations that deny the noun phrase after them ("no fee", "without breakfast").
_PHRASE_NEGATIONS = frozenset({"no", "without", "none", "nothing", "nobody", "nowhere", "neither", "nor", "free_of",
                               "out_of"})
# Negations that deny the predicate after them ("is not approved", "never arrived").
_PREDICATE_NEGATIONS = frozenset({"not", "never", "no_longer"})
# Words that mean "not <base>". Only a list: un-/in-/dis- begin many words that are no negation.
_NEGATED_WORDS = {
    "unable": "able", "unapproved": "approved", "unavailable": "available", "unconfirmed": "confirmed",
    "unverified": "verified", "unresolved": "resolved", "unlikely": "likely", "unpaid": "paid",
    "unsuccessful": "successful", "unsuccessfully": "successfully", "unchanged": "changed",
    "unaffected": "affected", "unauthorized": "authorized", "unauthorised": "authorised", "unsigned": "signed",
    "unused": "used", "unknown": "known", "unreachable": "reachable", "unsupported": "supported",
    "unsafe": "safe", "uninsured": "insured", "unemployed": "employed", "unfinished": "finished",
    "unacceptable": "acceptable", "unnecessary": "necessary", "unprocessed": "processed", "unsent": "sent",
    "undelivered": "delivered", "unreturned": "returned", "unrefunded": "refunded", "uncovered": "covered",
    "ineligible": "eligible", "invalid": "valid", "inactive": "active", "incorrect": "correct",
    "incomplete": "complete", "inaccurate": "accurate", "insufficient": "sufficient", "inapplicable": "applicable",
    "impossible": "possible", "improper": "proper", "illegal": "legal", "irrelevant": "relevant",
    "disabled": "enabled", "disallowed": "allowed", "disagree": "agree", "disagrees": "agrees",
    "disapproved": "approved", "disconnected": "connected", "dissatisfied": "satisfied",
    # Opposites that say "not X" in an agent's answer about a request, a payment or a place.
    "declined": "approved", "denied": "approved", "refused": "approved", "rejected": "approved",
    "failed": "succeeded", "closed": "open",
    # "Delivery is free" says there is no charge.
    "free": "charged",
}
# Stems read as another, so that the opposites above meet their positive side (accepted = approved).
_SAME_STEM = {"accept": "approv", "grant": "approv", "successful": "succeed", "successfully": "succeed"}
# Phrases read as one token before anything else (order matters: longer first).
_PHRASES = [
    (re.compile(r"\bno\s+longer\b"), " no_longer "),
    (re.compile(r"\bfree\s+of\b"), " free_of "),
    (re.compile(r"\bout\s+of\s+(?=stock\b|order\b|service\b)"), " out_of "),
    # Not negations, though they contain one: bounds, emphasis, alternatives.
    (re.compile(r"\bnot\s+(?:only|just|merely)\b"), " "),
    (re.compile(r"\b(?:no|not)\s+(?:later|earlier|more|less|fewer|sooner)\s+than\b"), " within "),
    (re.compile(r"\bno\s+(?:matter|doubt)\b"), " "),
    (re.compile(r"\bor\s+not\b"), " "),
]
_CONTRACTIONS = [
    (re.compile(r"\bwon't\b"), "will not"), (re.compile(r"\bcan't\b"), "can not"),
    (re.compile(r"\bshan't\b"), "shall not"), (re.compile(r"\bcannot\b"), "can not"),
    (re.compile(r"n't\b"), " not"),
]
_TEMPORAL = frozenset({"until", "till", "before"})
_THERE_IS = frozenset({"there", "is", "are", "was", "were"})
_MIN_DOING = 2  # content words a denied action must share with the other clause
_NOT_DOING = frozenset({"during", "nothing", "something", "anything", "everything", "morning", "evening"})

# Where clauses end: sentence punctuation, and commas that do not sit inside a number or a date.
_CLAUSE_BREAK = re.compile(r"[.!?;:]+(?=\s|$)|[;!?]|,(?!\s*\d{4}\b)(?!\d)|\n|"
                           r"\s(?=(?:but|and|so|because|although|though|while|whereas|however|then|which)\b)")
_WORD = re.compile(r"[a-z0-9_]+(?:[-'.][a-z0-9_]+)*")
_CLITIC = re.compile(r"'(?:ve|re|ll|d|m|s)\b")

_IRREGULAR = {
    "left": "leave", "went": "go", "gone": "go", "sent": "send", "paid": "pay", "made": "make", "gave": "give",
    "given": "give", "took": "take", "taken": "take", "brought": "bring", "bought": "buy", "kept": "keep",
    "held": "hold", "told": "tell", "found": "find", "came": "come", "saw": "see", "seen": "see", "spent": "spend",
    "lost": "lose", "won": "win", "chose": "choose", "chosen": "choose", "wrote": "write", "written": "write",
    "broke": "break", "broken": "break", "froze": "freeze", "frozen": "freeze", "began": "begin", "begun": "begin",
    "ran": "run", "met": "meet", "felt": "feel", "rode": "ride", "flew": "fly", "flown": "fly", "drove": "drive",
    "driven": "drive", "fell": "fall", "fallen": "fall", "rose": "rise", "risen": "rise", "shut": "shut",
    "signed": "sign", "children": "child", "people": "person", "men": "man", "women": "woman", "used": "use",
    "uses": "use", "using": "use",
}
_MAX_TEXT = 5_000  # like the offline facts: answers, not documents


@dataclass(frozen=True)
class Clause:
    text: str  # as written, for explanations
    stems: frozenset[str]  # content words, negations left out, un-words as their base
    negated: bool
    focus: frozenset[str]  # what the clause's (first) negation denies; empty when not negated
    temporal: frozenset[str]  # until/till/before in the clause
    head: str = ""  # the focus's last word: the head of the noun phrase no/without denies
    existential: bool = False  # "There is no man doing tricks", "Nobody is ...": the doer is denied


@dataclass(frozen=True)
class Contradiction:
    expected_clause: str
    actual_clause: str
    negated_in: str  # "expected" or "actual"

    @property
    def reason(self) -> str:
        return (f"one text negates the other: the expected text says {quote(self.expected_clause)}, the answer "
                f"says {quote(self.actual_clause)} (offline stages never match a statement with its negation)")


def contradiction(expected: str, actual: str) -> Contradiction | None:
    """The first statement one text makes and the other negates, or None."""
    if len(expected) > _MAX_TEXT or len(actual) > _MAX_TEXT:
        return None
    expected_clauses, actual_clauses = clauses(expected), clauses(actual)
    for negated, other, negated_in in ((expected_clauses, actual_clauses, "expected"),
                                       (actual_clauses, expected_clauses, "actual")):
        for clause in negated:
            if not clause.negated or not clause.focus:
                continue
            opposite = _denied_by(clause, other)
            if opposite is not None:
                if negated_in == "expected":
                    return Contradiction(clause.text, opposite.text, negated_in)
                return Contradiction(opposite.text, clause.text, negated_in)
    return None


def _denied_by(negated: Clause, others: tuple[Clause, ...]) -> Clause | None:
    """The clause of the other text that affirms what `negated` denies, if it is the best-aligned one."""
    # All of the focus, or its head: "no small guinea pig" denies a guinea pig, whatever its size; or,
    # when no one at all is said to do it, the action itself ("no man doing tricks" / "a person doing tricks").
    candidates = [c for c in others if negated.focus <= c.stems or negated.head in c.stems
                  or _same_action(negated, c)]
    if not candidates:
        return None
    best = max(candidates, key=lambda c: (_overlap(negated, c), c.negated))  # a tie: agreement wins
    if best.negated or _overlap(negated, best) <= 0.5:
        return None
    if negated.temporal and not negated.temporal & best.temporal:
        return None  # "can't check in before 3 pm" restricts a time; "check-in opens at 3 pm" says the same
    return best


def _same_action(negated: Clause, other: Clause) -> bool:
    if not negated.existential:
        return False
    action = negated.stems - negated.focus
    shared = len(action & other.stems)
    return shared >= _MIN_DOING and 2 * shared > len(action)


def _overlap(a: Clause, b: Clause) -> float:
    smaller = min(len(a.stems), len(b.stems))
    return len(a.stems & b.stems) / smaller if smaller else 0.0


@lru_cache(maxsize=4096)
def clauses(text: str) -> tuple[Clause, ...]:
    """The clauses of `text` that hold content words, each with its polarity and focus."""
    found = []
    for piece in _CLAUSE_BREAK.split(without_abbreviation_dots(text)):
        if piece and piece.strip():
            clause = _clause(piece.strip())
            if clause.stems:
                found.append(clause)
    return tuple(found)


def _clause(text: str) -> Clause:
    tokens = words(text)
    stems: set[str] = set()
    negations = 0
    focus: frozenset[str] | None = None
    head = ""
    existential = False
    for index, word in enumerate(tokens):
        if word in _PHRASE_NEGATIONS or word in _PREDICATE_NEGATIONS:
            negations += 1
            if focus is None:
                denied = _focus_after(tokens, index, phrase=word in _PHRASE_NEGATIONS)
                focus, head = frozenset(denied), denied[-1] if denied else ""
                existential = _denies_a_doer(tokens, index)
        elif word in _NEGATED_WORDS:
            negations += 1
            base = stem(_NEGATED_WORDS[word])
            stems.add(base)
            if focus is None:
                focus = frozenset({base})
        elif word.startswith("non-") and len(word) > 4:
            negations += 1
            base = stem(word[4:])
            stems.add(base)
            if focus is None:
                focus = frozenset({base})
        elif word not in STOPWORDS:
            stems.add(stem(word))
    negated = negations % 2 == 1
    return Clause(text=text, stems=frozenset(stems), negated=negated,
                  focus=(focus or frozenset()) if negated else frozenset(),
                  temporal=frozenset(w for w in tokens if w in _TEMPORAL), head=head if negated else "",
                  existential=negated and existential)


def _denies_a_doer(words: tuple[str, ...], index: int) -> bool:
    """Whether the negation at `index` denies that anyone does what the clause says: "There is no man
    doing tricks", "No dog is rolling", "Nobody is brushing a cat". Such a clause contradicts one that
    says someone does it, whatever it calls the doer ("a person doing tricks"); "There is no delivery
    charge for this order" names no action and stays with its focus."""
    if words[index] not in ("no", "nobody", "none") or any(w not in _THERE_IS for w in words[:index]):
        return False
    return any(word.endswith("ing") and word not in _NOT_DOING for word in words[index + 1:])


def _focus_after(words: tuple[str, ...], index: int, *, phrase: bool) -> list[str]:
    """What the negation at `index` denies: the next content word, or (for no/without) the run of
    content words after it (its noun phrase, as far as word classes can be told without a parser)."""
    focus: list[str] = []
    for word in words[index + 1:]:
        if word in STOPWORDS or word in _PHRASE_NEGATIONS or word in _PREDICATE_NEGATIONS:
            if focus:
                break
            continue
        if focus and word.endswith("ing"):
            break  # "no man slicing an onion": the noun phrase ends where its verb begins
        focus.append(stem(_NEGATED_WORDS.get(word, word[4:] if word.startswith("non-") else word)))
        if not phrase:
            break
    return focus


def is_negation(word: str) -> bool:
    """Whether `word` (as words() returns it) is one of the negations this module reads: not, no, ..., and
    the words that mean "not X" (unavailable, declined, closed)."""
    return (word in _PHRASE_NEGATIONS or word in _PREDICATE_NEGATIONS or word in _NEGATED_WORDS
            or (word.startswith("non-") and len(word) > 4))


@lru_cache(maxsize=8192)
def words(text: str) -> tuple[str, ...]:
    """The words of `text`, lower case: contractions written out (won't -> will not), negation phrases as
    one word (no_longer), hyphenated words as their parts."""
    lowered = text.casefold().replace("’", "'").replace("‘", "'")
    for pattern, replacement in _CONTRACTIONS:
        lowered = pattern.sub(replacement, lowered)
    for pattern, replacement in _PHRASES:
        lowered = pattern.sub(replacement, lowered)
    lowered = _CLITIC.sub("", lowered)  # we've, it's, you'll: the pronoun is all that is left
    found = []
    for word in _WORD.findall(lowered):
        word = word.removesuffix("'s").strip("'.")
        if "-" in word and not word.startswith("non-"):
            found += [part for part in word.split("-") if part]  # check-in, auto-renew: their parts
        elif word:
            found.append(word)
    return tuple(found)


@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """A light, consistent stem: approved/approves/approve -> approv, shipped/ships -> ship. Consistency
    between the forms of a word is what matters here, not linguistic roots. Near-synonyms of lexicon.py
    share one stem (plane = airplane, lady = woman), so that clauses reworded that way still align."""
    light = _light_stem(word)
    return _synonyms().get(light, light)


@lru_cache(maxsize=1)
def _synonyms() -> dict[str, str]:
    """Each synonym's light stem -> the light stem of the first word of its line in lexicon.SYNONYMS."""
    table: dict[str, str] = {}
    for line in SYNONYMS.strip().splitlines():
        stems = [_light_stem(word) for word in line.split()]
        table.update((other, stems[0]) for other in stems[1:] if other != stems[0])
    return table


def _light_stem(word: str) -> str:
    word = _IRREGULAR.get(word, word)
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, replacement in (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: len(word) - len(suffix)] + replacement
            break
    else:  # no -ing/-ed: a plural or third person -s, then a final -e (approves, approve -> approv)
        if word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        if word.endswith("e") and len(word) > 3:
            word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouys":
        word = word[:-1]  # shipp -> ship, cancell -> cancel, call -> cal (every form of a word alike)
    return _SAME_STEM.get(word, word)


def quote(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    text = redact(text)  # before the cut: a cut secret is a fragment no redactor knows
    return repr(text if len(text) <= limit else text[: limit - 1].rstrip() + "…")
