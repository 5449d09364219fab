"""A secret as evalrun may find it written, and masking every such form (the engine of runner/secrets.py).

An agent says a token back raw, or inside a tool call's argument text, which is JSON: any character there may
be written as a `\\uXXXX` escape (`sk-ab\\u0063def`), a slash as `\\/`, a quote as `\\"`. evalrun then saves that
argument text as a JSON string inside JSON (results.jsonl, conversations.jsonl), which doubles each backslash,
and a string inside that doubles them again. A URL carries it percent-encoded. So each character of a secret
is looked for in all of these forms at once: raw; `\\uXXXX` behind 1 to 8 backslashes (hex digits in either
case; a surrogate pair above U+FFFF); `\\xXX`; `\\"`, `\\/` and `\\\\` at any depth; `%XX` per UTF-8 byte.

Masking keeps JSON valid: a match that starts on the letter of an escape (`\\n` before a secret starting
with `n`) takes the escape's backslash with it, and a run of backslashes is taken whole or in escaped pairs.

Looking for every form with one regular expression costs ~0.5 µs per character of text; a plain search
costs ~1 % of that. So the expression runs only where a cheap test says a secret may be there: the secret
raw in the text, or in the text with its escapes decoded and its backslashes dropped (`normal_form`).
"""
from __future__ import annotations

import re
from typing import Iterable

MIN_SECRET_LENGTH = 4  # shorter values would mask ordinary words; no real key is this short
_SHORT_ESCAPES = {"\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t"}
# (starting with a literal backslash, the search jumps from backslash to backslash)
_ESCAPED_UNIT = re.compile(r"\\\\*(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2}))")
_PRINTABLE_UNIT = re.compile(r"\\\\*(?:u(00[2-7][0-9a-fA-F])|x([2-7][0-9a-fA-F]))")


def _hex(number: int, width: int) -> str:
    return "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in f"{number:0{width}x}")


def _char_pattern(ch: str) -> str:
    if ch == "\\":
        forms = [r"\\{8}|\\{4}|\\{2}|\\"]  # raw, or escaped once, twice, three times: never half of a pair
    elif ch in "\"/":
        forms = [r"\\{0,7}" + re.escape(ch)]
    elif ch in _SHORT_ESCAPES:
        forms = [re.escape(ch), r"\\{1,8}" + _SHORT_ESCAPES[ch]]
    else:
        forms = [re.escape(ch)]
    code = ord(ch)
    units = [code] if code <= 0xFFFF else [0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)]
    forms.append("".join(r"\\{1,8}u" + _hex(unit, 4) for unit in units))
    if code < 0x100:
        forms.append(r"\\{1,8}x" + _hex(code, 2))
    forms.append("".join("%" + _hex(byte, 2) for byte in ch.encode("utf-8", "surrogatepass")))
    return "(?:" + "|".join(forms) + ")"


def pattern_of(secret: str) -> "re.Pattern[str]":
    """The expression matching `secret` in any of its forms."""
    return re.compile("".join(_char_pattern(ch) for ch in secret))


def _unit(match: "re.Match[str]") -> str:
    return chr(int(match.group(1) or match.group(2), 16))


def normal_form(text: str, units: "re.Pattern[str]" = _ESCAPED_UNIT) -> str:
    """`text` with its `\\uXXXX`/`\\xXX` escapes decoded (those `units` matches), percent-encoding decoded and
    every backslash dropped: any form of a secret in `text` holds the secret's own normal form."""
    if "\\" in text:
        text = units.sub(_unit, text)
    if "%" in text:
        from urllib.parse import unquote

        text = unquote(text, errors="replace")
    return text.replace("\\", "")


class Matcher:
    """Masks every form of `secrets` (each at least MIN_SECRET_LENGTH long) with `mask`. Pickles (a Ray worker
    gets one inside a run's result serialiser); compiles a secret's expression the first time it is seen."""

    def __init__(self, secrets: Iterable[str], mask: str):
        self.secrets = sorted({s for s in secrets if len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True)
        self.mask = mask
        self._normal = [normal_form(s) for s in self.secrets]
        # Decoding every escape of a JSON line written with ensure_ascii costs a call each: decode only those
        # that can stand for a character of a secret (printable ASCII, for the keys and tokens of real life).
        plain = all(" " <= ch <= "~" for s in self.secrets for ch in s)
        self._units = _PRINTABLE_UNIT if plain else _ESCAPED_UNIT
        self._patterns: dict[str, "re.Pattern[str]"] = {}

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
        normal: "str | None" = None
        for secret, secret_normal in zip(self.secrets, self._normal):  # the longest first
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
        for match in pattern.finditer(text):
            start = match.start()
            before = start
            while before > at and text[before - 1] == "\\":
                before -= 1
            if (start - before) % 2 == 1 and text[start] != "\\":  # the secret's first letter ends an escape
                start -= 1
            out += (text[at:start], self.mask)
            at = match.end()
        out.append(text[at:])
        return "".join(out)
