"""A secret as evalrun may find it written, and masking every such form (the engine of runner/util/secrets.py).

An agent says a token back raw, or inside a tool call's argument text, which is JSON: any character there may
be written as a `\\uXXXX` escape (`sk-ab\\u0063def`), a slash as `\\/`, a quote as `\\"`. evalrun then saves that
argument text as a JSON string inside JSON (results.jsonl, conversations.jsonl), which doubles each backslash,
and a string inside that doubles them again. A URL carries it percent-encoded. So each character of a secret
is looked for in all of these forms at once: raw; `\\uXXXX` behind any number of backslashes (hex digits in
either case; a surrogate pair above U+FFFF); `\\xXX`; `\\"`, `\\/` and `\\\\` at any depth; `%XX` per UTF-8 byte
(and `%25XX` for a URL inside a URL).

Masking keeps JSON valid, at every depth: a match that starts on the letter of an escape (`\\n` before a secret
starting with `n`) takes the backslashes before it too, one never starts among the digits of a `\\u0030`, and a
run of backslashes is taken whole or in escaped pairs.

Looking for every form with one regular expression costs ~0.5 µs per character of text; a plain search
costs ~1 % of that. So the expression runs only where a cheap test says a secret may be there: the secret
raw in the text, or in the text with its escapes decoded and its backslashes dropped (`normal_form`).
"""
from __future__ import annotations

import re
from collections.abc import Iterable

MIN_SECRET_LENGTH = 4  # shorter values would mask ordinary words; no real key is this short
# Values that are no secret, whatever variable holds them (OPENAI_API_KEY=none for a local server): masking the
# words JSON and YAML are made of, or a short number, would break every file written.
_PLACEHOLDERS = frozenset({"null", "none", "true", "false", "nan", "infinity"})


def is_maskable(value: str) -> bool:
    """Whether `value` can be a secret to mask (see MIN_SECRET_LENGTH and _PLACEHOLDERS)."""
    return (len(value) >= MIN_SECRET_LENGTH and value.strip().lower() not in _PLACEHOLDERS
            and not (value.isdigit() and len(value) < 8))
_SHORT_ESCAPES = {"\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t"}
# (starting with a literal backslash, the search jumps from backslash to backslash)
_ESCAPED_UNIT = re.compile(r"\\\\*(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2}))")
_PRINTABLE_UNIT = re.compile(r"\\\\*(?:u(00[2-7][0-9a-fA-F])|x([2-7][0-9a-fA-F]))")


def _hex(number: int, width: int) -> str:
    return "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in f"{number:0{width}x}")


# The backslash that starts an escape, at any depth: doubled by each JSON layer (`\\\\u0063`), written as an
# escape itself (`\\u005cu0063`) or percent-encoded (`%5Cu0063`). It only ever precedes the rest of its escape,
# so it cannot take what follows.
_PERCENT = r"%(?:25)*"  # percent-encoding, once or again (a URL inside a URL)
_ESCAPE = rf"(?:\\|{_PERCENT}5[cC])(?:\\|{_PERCENT}5[cC]|u005[cC])*"


def _char_pattern(ch: str) -> str:
    if ch == "\\":  # raw, or escaped at a depth of up to four (never half of a pair), as \u005c, as %5C
        forms = [r"\\{16}|\\{8}|\\{4}|\\{2}|\\", rf"(?:{_PERCENT}5[cC]){{1,16}}", _ESCAPE + "u005[cC]"]
    elif ch in "\"/":
        forms = [f"(?:{_ESCAPE})?(?:{re.escape(ch)}|{_PERCENT}{_hex(ord(ch), 2)})"]
    elif ch in _SHORT_ESCAPES:
        forms = [re.escape(ch), _ESCAPE + _SHORT_ESCAPES[ch]]
    else:
        forms = [re.escape(ch)]
    code = ord(ch)
    units = [code] if code <= 0xFFFF else [0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)]
    forms.append("".join(_ESCAPE + "u" + _hex(unit, 4) for unit in units))
    if code < 0x100:
        forms.append(_ESCAPE + "x" + _hex(code, 2))
    forms.append("".join(_PERCENT + _hex(byte, 2) for byte in ch.encode("utf-8", "surrogatepass")))
    return "(?:" + "|".join(forms) + ")"


def pattern_of(secret: str) -> re.Pattern[str]:
    """The expression matching `secret` in any of its forms."""
    return re.compile("".join(_char_pattern(ch) for ch in secret))


def _unit(match: re.Match[str]) -> str:
    return chr(int(match.group(1) or match.group(2), 16))


_DECODING_ROUNDS = 16  # layers of encoding undone at most: a few over a secret, and the secret's own, with room


def normal_form(text: str, units: re.Pattern[str] = _ESCAPED_UNIT) -> str:
    """`text` with its `\\uXXXX`/`\\xXX` escapes decoded (those `units` matches), percent-encoding decoded (a layer
    at a time, either inside the other) and every backslash dropped: any form of a secret in `text` holds the
    secret's own normal form."""
    # Each round takes off one layer: as many as the text holds over the secret, plus what the secret's own
    # `%XX` or `\\uXXXX` take (its normal form decodes those). Four stopped short of a secret holding `%00` sent
    # through four percent-encodings. Bounded all the same: a round costs a pass over hostile text.
    for _ in range(_DECODING_ROUNDS):
        before = text
        if "\\" in text:
            text = units.sub(_unit, text)
        if "%" in text:
            from urllib.parse import unquote

            text = unquote(text, errors="replace")
        if text == before:
            break
    return text.replace("\\", "")


class Matcher:
    """Masks every form of `secrets` (those `is_maskable`) with `mask`. Pickles (a Ray worker
    gets one inside a run's result serialiser); compiles a secret's expression the first time it is seen."""

    def __init__(self, secrets: Iterable[str], mask: str):
        self.secrets = sorted({s for s in secrets if is_maskable(s)}, key=len, reverse=True)
        self.mask = mask
        # Decoding every escape of a JSON line written with ensure_ascii costs a call each: decode only those
        # that can stand for a character of a secret (printable ASCII, for the keys and tokens of real life).
        plain = all(" " <= ch <= "~" for s in self.secrets for ch in s)
        self._units = _PRINTABLE_UNIT if plain else _ESCAPED_UNIT
        self._normal = [normal_form(s, self._units) for s in self.secrets]  # read as the text will be
        self._patterns: dict[str, re.Pattern[str]] = {}

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def __call__(self, text: str) -> str:
        if not self.secrets or not text:
            return text
        if "\\" not in text and "%" not in text:  # no escape and no encoding: only the raw forms can be there
            for secret in self.secrets:
                if secret in text:
                    text = text.replace(secret, self.mask)
            return text
        normal: str | None = None
        for secret, secret_normal in zip(self.secrets, self._normal, strict=True):  # the longest first
            if secret not in text:
                normal = normal_form(text, self._units) if normal is None else normal
                if secret_normal not in normal:
                    continue
            text = self._masked(text, secret)
            normal = None
        return text

    def _masked(self, text: str, secret: str) -> str:
        pattern = self._patterns.get(secret)
        if pattern is None:
            pattern = self._patterns[secret] = pattern_of(secret)
        out: list[str] = []
        at = 0
        match = pattern.search(text)
        while match is not None:
            start = match.start()
            if _inside_escape(text, start):  # the digits of `\u0030` are not the secret's "0"s: look further on
                match = pattern.search(text, start + 1)
                continue
            while start > at and text[start - 1] == "\\":  # the escape its first letter ends (`\n`), at any depth
                start -= 1
            out += (text[at:start], self.mask)
            at = match.end()
            match = pattern.search(text, at)
        out.append(text[at:])
        return "".join(out)


_HEX = frozenset("0123456789abcdefABCDEF")


def _inside_escape(text: str, start: int) -> bool:
    """Whether `start` falls among the hex digits of a `\\uXXXX` (or `\\xXX`) escape, at any depth."""
    for at in range(max(0, start - 5), start - 1):  # `at`: the escape's backslash, its letter at at + 1
        if text[at] == "\\" and text[at + 1] in "ux":
            width = 4 if text[at + 1] == "u" else 2
            digits = text[at + 2:at + 2 + width]
            if start < at + 2 + width and len(digits) == width and all(d in _HEX for d in digits):
                return True
    return False
