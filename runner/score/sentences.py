"""Where the sentences of an answer end: at . ! ? and the like, not at the dot of an abbreviation."""
from __future__ import annotations

import re

# Dots that end no sentence: Dr. Patel, J. Ortiz, e.g. (a single capital letter is an initial).
_ABBREVIATION = re.compile(r"\b(Dr|Mr|Mrs|Ms|Prof|St|Jr|Sr|vs|etc|e\.g|i\.e|[A-Z])\.")


def without_abbreviation_dots(text: str) -> str:
    """`text` with the dots of abbreviations and initials removed (same words, one character less each)."""
    return _ABBREVIATION.sub(r"\1", text)
