"""The HTML page's cases made from report.json on every core: the file is cut into its cases at the
separators evalrun writes between them, and each part of the list is checked, indexed and compressed by
a process of its own (this one and forked children), reading the file's bytes, never parsing a case into
Python objects it would only serialise again.

evalrun writes every case as one compact JSON object (a results.jsonl line: `"id"` first, `"redteam"`
last) and joins them with "," (runner.results.folder.write_report), so a case ends where
`"redteam":...},{"id":"` is. That is only a guess about hostile bytes, and it is proved case by case:
every piece between two separators must be one whole valid case (pydantic parses it strictly, as the
streaming reader's check does, and a proper prefix of an object or two objects are never one object),
so when every piece is one, every separator was a real one. Whatever the proof does not cover is left
to saved_stream, the reader that parses as `load_report` does: text that may hold NaN, Infinity or a
number that overflows a float (a case `load_report` reads otherwise than a JSON parser), another
layout, a piece that is not a valid case, a case listed twice. `encode` then returns None and the page
is streamed instead; nothing has been written yet.

The page is the same, byte for byte, as the one saved_stream makes: the same chunks of the same texts,
the same index rows (tests/report/test_report_html_split.py).
"""
from __future__ import annotations

import os
import pickle
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..util.secrets import Redactor, redact
from . import html_data
from .case_check import flush_before_fork
from .html_data import INDEX_FIELDS, gzip_base64, index_json
from .saved import may_overflow, report_file
from .saved_stream import Unstreamable, plain_json_text, read_header

SPLIT_FROM_BYTES = 8 << 20  # smaller reports are made in this process: a fork would cost more than it saves
PART_BYTES = 4 << 20  # the least a process is given
MAX_PROCESSES = 8
_SEPARATOR = b'},{"id":"'
_END = b'"redteam":null}'  # how the case before a separator ends when it has no red-team entry
_READ = 1 << 20
_LOOK_BACK = 2048  # bytes kept from a block for the next: a red-team entry before a separator


@dataclass
class Encoded:
    """The page's data, ready to write: each chunk gzip+base64, the first case of each, the index rows."""

    chunks: list[str]
    starts: list[int]
    rows: list[bytes]


class _Doubt(Exception):
    """Something the split cannot prove: saved_stream reads the report instead."""


@dataclass
class _Part:
    """What one process made of its cases (and, appended, what its forked child made of the rest)."""

    chunks: list[str]
    starts: list[int]
    rows: list[bytes]
    keys: list[tuple]

    def extend(self, other: _Part) -> None:
        self.chunks += other.chunks
        self.starts += other.starts
        self.rows += other.rows
        self.keys += other.keys


def encode(path: Path) -> tuple[dict[str, Any], Encoded] | None:
    """(the report without its cases, its cases encoded for the page), or None when saved_stream must
    read it (see the module's notes). NotAReport when there is no report at `path`."""
    target = report_file(path)
    with target.open("rb") as source:
        try:
            header, first = read_header(source)
        except Unstreamable:
            return None
    size = target.stat().st_size
    end = _cases_end(target, first, size)
    if end is None:
        return None
    from ..results.models import CaseResult  # before any fork: the children inherit it

    try:
        part = _Cases(target, end, CaseResult).encode_from(first, 0, _processes(size))
    except _Doubt:
        return None
    if len(set(part.keys)) != len(part.keys):  # a case listed twice: saved_stream refuses it in load_report's words
        return None
    return header, Encoded(part.chunks, part.starts, part.rows)


def _cases_end(target: Path, first: int, size: int) -> int | None:
    """Where the last case ends: the file closes with `]` and `}` (spaces around them allowed); `first`
    when the list is empty."""
    with target.open("rb") as source:
        source.seek(max(first, size - 64))
        text = source.read()
    offset = max(first, size - 64)
    text = text.rstrip(b" \t\n\r")
    if not text.endswith(b"}"):
        return None
    text = text[:-1].rstrip(b" \t\n\r")
    if not text.endswith(b"]"):
        return None
    return max(first, offset + len(text[:-1].rstrip(b" \t\n\r")))


def _processes(size: int) -> int:
    """How many processes make the page: one per core for a large report, when forking is safe (a
    process running one thread: a fork copies no other thread, and a lock one held would stay held)."""
    if size < SPLIT_FROM_BYTES or not hasattr(os, "fork") or threading.active_count() != 1:
        return 1
    return max(1, min(MAX_PROCESSES, _cores(), size // PART_BYTES))


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class _Cases:
    """The cases of report.json between `first` and `end`, cut, checked and encoded by `processes`
    processes: each finds its own cases (a fair share of the bytes left, ended at a chunk's end), forks a
    child for the rest, and encodes its share while the child goes on."""

    def __init__(self, target: Path, end: int, model: Any):
        self.target, self.end, self.model = target, end, model

    def encode_from(self, start: int, case_number: int, processes: int) -> _Part:
        spans: list[tuple[int, int]] = []
        chunks: list[tuple[int, int]] = []  # [first, stop) in spans
        size, chunk_first, child = 0, 0, None
        share = (self.end - start) // processes
        for span in self._spans(start):
            spans.append(span)
            size += span[1] - span[0]
            if size >= html_data.CHUNK_BYTES:  # a chunk ends: cut as html_data.write_data cuts them
                chunks.append((chunk_first, len(spans)))
                chunk_first, size = len(spans), 0
                if processes > 1 and span[1] - start >= share and span[1] < self.end:
                    child = _fork(lambda: self.encode_from(span[1] + 1, case_number + len(spans), processes - 1))  # noqa: B023 - _fork calls it now
                    break
        else:
            if chunk_first < len(spans):
                chunks.append((chunk_first, len(spans)))
        try:
            part = _encode_part(self.target, spans, chunks, self.model)
            part.starts = [case_number + first for first, _ in chunks]
            if child is not None:
                part.extend(_collect(*child))
                child = None
            return part
        finally:
            if child is not None:  # a doubt, or an interruption: the rest is not needed
                _end(*child)

    def _spans(self, start: int) -> Iterator[tuple[int, int]]:
        """Each case's bytes [start, end) from `start` on, at the separators evalrun writes between them."""
        if start >= self.end:
            return
        with self.target.open("rb") as source:
            source.seek(start)
            offset, tail = start, b""
            while offset < self.end:
                block = source.read(min(_READ, self.end - offset))
                if not block:
                    raise _Doubt("the file changed while it was read")
                text, base = tail + block, offset - len(tail)
                # a separator that starts this far into the tail was cut by the last block's edge: not found yet
                at = text.find(_SEPARATOR, max(0, len(tail) - len(_SEPARATOR) + 1))
                while at >= 0:
                    if base + at + len(_SEPARATOR) > self.end:
                        break  # past the last case: its own text, checked whole below
                    if text.endswith(_END, 0, at + 1) or _ends_red_team(text, at):
                        yield start, base + at + 1
                        start = base + at + 2
                    at = text.find(_SEPARATOR, at + 1)
                tail, offset = text[-_LOOK_BACK:], offset + len(block)
        yield start, self.end


def _ends_red_team(text: bytes, at: int) -> bool:
    """`"redteam":{"attack":"...","category":"..."}}` ends at `at` (the red-team entry's two strings)."""
    if not text.endswith(b'"}}', 0, at + 1):
        return False
    start = text.rfind(b'"redteam":{"attack":"', max(0, at - _LOOK_BACK), at)
    return start >= 0 and b'","category":"' in text[start:at]


# ------------------------------------------------------------------ checking and encoding a share

def _encode_part(target: Path, spans: list[tuple[int, int]], chunks: list[tuple[int, int]], model: Any) -> _Part:
    part = _Part([], [], [], [])
    masking = bool(Redactor())
    with target.open("rb") as source:
        for first, stop in chunks:
            start, end = spans[first][0], spans[stop - 1][1]
            source.seek(start)
            text = source.read(end - start)
            if len(text) != end - start:
                raise _Doubt("the file changed while it was read")
            try:
                decoded = text.decode("utf-8")  # load_report refuses bytes that are not UTF-8, in its own words
            except UnicodeDecodeError:
                raise _Doubt("not UTF-8") from None
            if masking and redact(decoded) != decoded:  # copied as written, a secret would be too
                raise _Doubt("a secret of this process to mask: saved_stream masks it case by case")
            suspect = _may_read_otherwise(text)
            for case_start, case_end in spans[first:stop]:
                piece = text[case_start - start:case_end - start]
                if piece[:1] != b"{" or (suspect and not plain_json_text(piece.decode("utf-8"))):
                    raise _Doubt("a case saved_stream must read")
                try:
                    case = model.model_validate_json(piece, strict=True)
                except ValueError:  # not one whole valid case: saved_stream says which, or finds the real cases
                    raise _Doubt("not a valid case") from None
                part.rows.append(index_json(_index_row(case)))
                part.keys.append((case.id, case.run, case.repeat, case.variant))
            part.chunks.append(gzip_base64(b"[" + text + b"]"))  # the cases and the "," between them, as written
    return part


def _may_read_otherwise(text: bytes) -> bool:
    """Whether `text` may hold a number or constant parse_report_json keeps as text where a JSON parser
    (pydantic's, a browser's) reads a float: NaN, Infinity, or a number past a float's range. A superset
    (text in strings counts too): a case it finds is parsed to be sure."""
    return b"NaN" in text or b"Infinity" in text or may_overflow(text)


def _index_row(case: Any) -> dict[str, Any]:
    """html_data.index_row of the case's JSON, from the validated case (a field the JSON did not hold is
    left out, as there)."""
    present = case.model_fields_set
    row = {}
    for name in INDEX_FIELDS:
        if name in present:
            value = getattr(case, name)
            if value not in (None, [], ""):
                row[name] = value
    if case.metrics is not None:
        row["completion"] = case.metrics.journey_completion
    return row


# ------------------------------------------------------------------ the processes

def _fork(work: Callable[[], _Part]) -> tuple[int, int]:
    """(pid, the pipe its answer comes through) of a child running `work`."""
    read_fd, write_fd = os.pipe()
    flush_before_fork()
    pid = os.fork()
    if pid == 0:  # the child: do its work, send it, and leave without running anything of the parent's
        try:
            os.close(read_fd)
            try:
                answer = pickle.dumps(work(), pickle.HIGHEST_PROTOCOL)
            except BaseException:  # a doubt, or anything else: the parent hands the report to saved_stream
                answer = b""
            with os.fdopen(write_fd, "wb") as out:
                out.write(answer)
        finally:
            os._exit(0)
    os.close(write_fd)
    return pid, read_fd


def _collect(pid: int, fd: int) -> _Part:
    with os.fdopen(fd, "rb") as source:
        answer = source.read()
    _, status = os.waitpid(pid, 0)
    if not answer or status != 0:  # a doubt there, or the child was killed
        raise _Doubt("a part was not encoded")
    try:
        return pickle.loads(answer)
    except Exception:  # cut short
        raise _Doubt("a part was not encoded") from None


def _end(pid: int, fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:
        pass
