"""report.json read one case at a time, for a format that can be written as it reads (the HTML page):
memory stays flat however many cases the run has, where `saved.load_report` holds them all.

It reads the layout evalrun writes (`runner.results.folder.write_report`, `evalrun merge`): one object
whose last member is "cases", a list of case objects. Every part is checked as `load_report` checks it
(the same parsing of NaN and overflowing numbers, the same models, strictly, each case once; a large
report's cases in a forked child, case_check.py), so a file is accepted here only when `load_report`
accepts it. Anything else - another layout
(a hand-edited file with "cases" first), a case that is not valid, bytes that are not UTF-8 - raises
`Unstreamable` before the caller has lost anything but time: it then reads the file whole, which
either works or names the problem as `load_report` does. This process's secrets are masked in the header
and in each case as they are read, as `load_report` masks them.
"""
from __future__ import annotations

import codecs
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from ..util.secrets import Redactor, redact, redact_data
from .case_check import checker_for
from .saved import parse_report_json, report_file, report_problems

_READ = 1 << 22  # characters read at a time; doubled while one case is longer than the window
_HEADER_ATTEMPTS = 20  # places a "cases" key is tried as the top-level one before giving up
_SPACE = re.compile(r"[ \t\n\r]*")
_CASES_KEY = re.compile(r'"cases"[ \t\n\r]*:[ \t\n\r]*\[')


class Unstreamable(Exception):
    """The file is not a valid report in evalrun's own layout: read it whole (saved.load_report)."""


@dataclass
class SavedCase:
    """One case as plain data, and its JSON text for a reader that parses JSON as a browser does:
    the file's own bytes when they mean exactly `data` there, otherwise `data` written again."""

    data: dict[str, Any]
    text: bytes


@dataclass
class _Window:
    """The part of the file's text not consumed yet: text[at:]."""

    source: BinaryIO
    text: str = ""
    at: int = 0
    ended: bool = False
    _decoder: Any = field(default_factory=lambda: codecs.getincrementaldecoder("utf-8")())

    def read_more(self, size: int = _READ) -> bool:
        if self.ended:
            return False
        data = self.source.read(size)
        self.ended = not data
        try:
            added = self._decoder.decode(data, final=self.ended)
        except UnicodeDecodeError as exc:
            raise Unstreamable(str(exc)) from None
        self.text = self.text[self.at:] + added
        self.at = 0
        return True

    def skip_space(self) -> None:
        while True:
            self.at = _SPACE.match(self.text, self.at).end()  # type: ignore[union-attr]  # _SPACE (a starred class) always matches
            if self.at < len(self.text) or not self.read_more():
                return

    def expect(self, char: str) -> None:
        self.skip_space()
        if self.text[self.at:self.at + 1] != char:
            raise Unstreamable(f"expected {char!r} at character {self.at} of the window")
        self.at += 1


class _Reader:
    """Parses numbers and constants as parse_report_json does (NaN, Infinity and overflowing numbers
    kept as their text), and notes when it did: a browser's JSON.parse would read that text otherwise."""

    def __init__(self) -> None:
        self.rewritten = False
        self.decoder = json.JSONDecoder(parse_constant=self._constant, parse_float=self._float)

    def _constant(self, text: str) -> str:
        self.rewritten = True
        return text

    def _float(self, text: str) -> Any:
        value = float(text)
        if math.isfinite(value):
            return value
        self.rewritten = True
        return text

    def case(self, window: _Window) -> tuple[Any, str]:
        size = _READ
        while True:
            self.rewritten = False
            try:
                value, end = self.decoder.raw_decode(window.text, window.at)
            except json.JSONDecodeError as exc:
                if window.read_more(size):  # the case may go on past the window
                    size *= 2
                    continue
                raise Unstreamable(str(exc)) from None
            except RecursionError:
                raise Unstreamable("nested too deeply") from None
            text, window.at = window.text[window.at:end], end
            return value, text


def stream_report(path: Path) -> tuple[dict[str, Any], Iterator[SavedCase]]:
    """(the report without its cases, its cases one at a time). Unstreamable: read it whole instead;
    raised before the header is returned, or while the cases are read (the caller discards what it
    wrote). NotAReport when there is no report at `path`."""
    target = report_file(path)
    source = target.open("rb")
    try:
        window = _Window(source)
        header = _header(window)
    except BaseException:
        source.close()
        raise
    return header, _cases(window, source, target.stat().st_size)


def read_header(source: BinaryIO) -> tuple[dict[str, Any], int]:
    """(the report without its cases, where in the file its first case starts: the byte after "cases": [
    and any space). Unstreamable as stream_report raises it."""
    window = _Window(source)
    header = _header(window)  # the window holds the file from its first byte: nothing was consumed before
    spaces = _SPACE.match(window.text, window.at).end() - window.at  # type: ignore[union-attr]  # _SPACE (a starred class) always matches
    return header, len(window.text[:window.at].encode("utf-8")) + spaces


def plain_json_text(text: str) -> bool:
    """Whether `text` is one JSON value that parse_report_json reads as a JSON parser does (no NaN, no
    Infinity, no number past a float's range, which it keeps as their text)."""
    reader = _Reader()
    try:
        _, end = reader.decoder.raw_decode(text)
    except (ValueError, RecursionError):
        return False
    return end == len(text) and not reader.rewritten


def _header(window: _Window) -> dict[str, Any]:
    attempts = 0
    window.read_more()
    searched = 0
    while True:
        for found in _CASES_KEY.finditer(window.text, searched):
            attempts += 1
            if attempts > _HEADER_ATTEMPTS:
                raise Unstreamable("no top-level \"cases\" list near the start")
            try:  # the text before a top-level "cases" key, closed with an empty list, is the report's header
                header = parse_report_json(window.text[:found.start()] + '"cases":[]}')
            except (ValueError, RecursionError):
                continue
            if not isinstance(header, dict) or report_problems(header, with_cases=False):
                raise Unstreamable("the report's header is not valid")
            window.at = found.end()
            return redact_data(header) if Redactor() else header
        searched = max(0, len(window.text) - 64)  # a key cut by the window's end is found again
        if not window.read_more():
            raise Unstreamable("no top-level \"cases\" list")


def _cases(window: _Window, source: BinaryIO, size: int) -> Iterator[SavedCase]:
    reader = _Reader()
    masking = bool(Redactor())
    seen: set[tuple] = set()
    checker = None
    try:
        checker = checker_for(size)  # here, when the first case is asked for: forks before the caller's threads
        window.skip_space()
        if window.text[window.at:window.at + 1] == "]":
            window.at += 1
        else:
            while True:
                data, text = reader.case(window)
                if masking and (masked := redact(text)) != text:  # the case as JSON wrote it, a secret masked
                    data, text = parse_report_json(masked), masked
                key = _key(data)
                if key in seen:
                    raise Unstreamable("a case is listed twice")
                seen.add(key)
                plain = None if reader.rewritten else text.encode("utf-8")
                try:
                    checker.check(data, plain)
                except ValueError as exc:
                    raise Unstreamable(str(exc)) from None
                yield SavedCase(data, browser_json(data) if plain is None else plain)
                window.skip_space()
                if window.text[window.at:window.at + 1] == "]":
                    window.at += 1
                    break
                window.expect(",")
                window.skip_space()
        window.expect("}")  # "cases" was the last member
        window.skip_space()
        if window.at < len(window.text):
            raise Unstreamable("text after the report")
        try:
            checker.close()  # the verdict on the cases checked in another process
        except ValueError as exc:
            raise Unstreamable(str(exc)) from None
        checker = None
    finally:
        source.close()
        if checker is not None:
            checker.abandon()


def _key(data: Any) -> tuple:
    """A case's identity (id, run, repeat, variant), checked for the types the models allow before it is hashed."""
    if not isinstance(data, dict) or not isinstance(data.get("id"), str):
        raise Unstreamable("a case is not an object with an id")
    run, repeat, variant = data.get("run"), data.get("repeat"), data.get("variant")
    if not (isinstance(run, (int, type(None))) and isinstance(repeat, (int, type(None)))):
        raise Unstreamable("a case's run or repeat is not a number")
    variant = data.get("variant")  # a --matrix run: one case per variant
    if not isinstance(variant, (str, type(None))):
        raise Unstreamable("a case's variant is not a string")
    return data["id"], run, repeat, variant


def browser_json(data: Any) -> bytes:
    """`data` as JSON any JSON.parse reads back the same (no NaN, \\u escapes for lone surrogates)."""
    return json.dumps(data, ensure_ascii=True, separators=(",", ":")).encode("ascii")
