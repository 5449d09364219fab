"""A live run's conversations: one file, one conversation per line (RUN_DIR/conversations.jsonl).

Each line is a JSON object that begins with the conversation's key, then holds the transcript evalrun reads:

    {"conversation": "lookup", "messages": [...], "termination_reason": "user_stop", "state": {...}}

The key is the case id (`<id> repeat N` for --repeat). `FILE#KEY` names one conversation wherever a transcript
is read (`transcript:`, `--replay FILE`, `evalrun rescore`, `evalrun import`). One appended file instead of a file
per case: creating a file costs the kernel far more than appending a line (0.5-1 ms a file on this machine's
disk after earlier runs were deleted, against tens of microseconds), and a CI artifact of one file uploads as one.

A line is written with one `write` to a file opened for appending, so a killed run keeps every conversation it
finished and at worst half of the last line, and processes that share a run folder (pytest-xdist's workers)
never interleave; a writer that finds the file not ending in a newline (a process killed mid-line, a write cut
by a full disk) starts its line on a new one, so a torn line never swallows the next. This module knows the layout; reading a conversation's messages is runner.transcripts.transcript_file's.
A key saved twice reads as its last line, the newest, as a file per case was overwritten. A run folder is data from
anywhere: lines are found by offset without reading the file whole, a line above the transcript size limit is
refused, a file of more than MAX_LINES lines is not indexed, and a line read is checked to start with the key asked
for (a file rewritten in place since it was indexed is indexed again).
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

FILE_NAME = "conversations.jsonl"
KEY = "conversation"
_OPENING = b'{"' + KEY.encode() + b'": '
_HEAD = 8 << 10  # a line's key is read from its first 8 KiB; a longer key (escaped) from up to KEY_LIMIT bytes
KEY_LIMIT = 1 << 20
MAX_LINES = 2_000_000  # about 0.5 GB of index; a real run saves one line per live case and repeat
_CHUNK = 1 << 20
_LOOKS_SAVED = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"' + KEY.encode() + rb'"\s*:')


def conversation_line(key: str, transcript_json: str) -> bytes:
    """The line that saves a conversation: its key first (so the file can be indexed without parsing
    whole lines), then the fields of `transcript_json` (a JSON object's text)."""
    body = transcript_json.strip()
    if not body.startswith("{"):
        raise ValueError("a saved conversation is a JSON object")
    rest = body[1:].lstrip()
    joined = "}" if rest.startswith("}") else ", " + rest
    # the key in ASCII escapes: any id, a lone surrogate included, is a valid line and reads back the same
    return _OPENING + json.dumps(key).encode("ascii") + joined.encode("utf-8") + b"\n"


def append_line(fd: int, line: bytes) -> None:
    """`line` appended whole to a saved-conversations file open for appending (O_APPEND): with one write for
    any line a local disk takes whole; after a newline first when the file does not end in one (a writer killed
    mid-line, a write cut short by a full disk), so that a torn line is closed off, never glued to this one."""
    with _exclusive(fd):  # another writer's line is whole while we look, unless its process died mid-line
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line
        view = memoryview(line)
        while view:
            view = view[os.write(fd, view):]


@contextlib.contextmanager
def _exclusive(fd: int) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # no advisory locks: each line is still one write
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:  # a file system without locks (NFS without lockd: ENOLCK): each line is still one write
        yield
        return
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def looks_saved(path: Path) -> bool:
    """Whether `path` is a file of saved conversations (its first line starts with the key), read from
    its first bytes only. False for anything that cannot be read: the reader then says why."""
    try:  # not blocking on a FIFO, and no more than a regular file's first bytes
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and bool(_LOOKS_SAVED.match(os.read(fd, 256)))
    except OSError:
        return False
    finally:
        os.close(fd)


@dataclass
class SavedIndex:
    """Where each conversation's line is: key -> (offset, length, line number) of its last line; the
    lines whose key could not be read."""

    lines: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    unreadable: list[int] = field(default_factory=list)


_indexes: dict[tuple, SavedIndex | NotSaved] = {}  # a file that cannot be indexed is not scanned once a case
_indexes_lock = threading.Lock()
_KEPT = 2  # indexes kept per process (a rescore reads one file); each at most ~0.5 GB (MAX_LINES)


def index_of(path: Path) -> SavedIndex:
    """The index of a saved-conversations file, made by one pass over it and kept while the file stays
    as it was (same inode, size and modification time). OSError when it cannot be read."""
    info = os.stat(path)
    signature = (os.fspath(path), info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    with _indexes_lock:
        found = _indexes.get(signature)
        if found is None:
            try:
                found = _scan(path)
            except NotSaved as exc:
                found = exc
            if len(_indexes) >= _KEPT:
                _indexes.pop(next(iter(_indexes)))
            _indexes[signature] = found
    if isinstance(found, NotSaved):
        raise NotSaved(str(found))
    return found


def forget_index(path: Path) -> None:
    with _indexes_lock:
        for signature in [s for s in _indexes if s[0] == os.fspath(path)]:
            del _indexes[signature]


def _scan(path: Path) -> SavedIndex:
    index = SavedIndex()
    with open(path, "rb") as source:
        def take(head: bytes, offset: int, length: int, number: int) -> None:
            if len(index.lines) + len(index.unreadable) >= MAX_LINES:
                raise NotSaved(f"the file has more than {MAX_LINES:,} lines; evalrun indexes no more (a run saves a "
                               "line per live case and repeat)")
            if len(head) >= _HEAD and length > _HEAD and _key_of(head) is None:  # a long key: read on, within limits
                head = os.pread(source.fileno(), min(length, KEY_LIMIT), offset)
            _take(index, head, offset, length, number)

        offset = start = number = 0
        head = b""
        while True:
            chunk = source.read(_CHUNK)
            if not chunk:
                break
            at = 0
            while True:
                newline = chunk.find(b"\n", at)
                end = len(chunk) if newline < 0 else newline
                if len(head) < _HEAD:
                    head += chunk[at:min(end, at + _HEAD - len(head))]
                if newline < 0:
                    break
                number += 1
                take(head, start, offset + newline - start, number)
                start, head, at = offset + newline + 1, b"", newline + 1
            offset += len(chunk)
        if offset > start:  # a last line with no newline: a run killed while saving it, or a hand-made file
            take(head, start, offset - start, number + 1)
    return index


def _take(index: SavedIndex, head: bytes, offset: int, length: int, number: int) -> None:
    if not head.strip():
        return  # a blank line
    key = _key_of(head)
    if key is None:
        index.unreadable.append(number)
    else:
        index.lines.pop(key, None)  # the newest line last, in the order of the keys too
        index.lines[key] = (offset, length, number)


def _key_of(head: bytes) -> str | None:
    """The key a line starts with, from its first bytes; None when it starts otherwise."""
    text = head.decode("utf-8", "replace").lstrip("\ufeff")
    match = re.match(r'\s*\{\s*"' + KEY + r'"\s*:\s*', text)
    if match is None:
        return None
    try:
        key, _ = json.JSONDecoder().raw_decode(text, match.end())
    except ValueError:
        return None
    return key if isinstance(key, str) else None


class NotSaved(LookupError):
    """The file has no usable line for the key; the message says why and what it holds."""


def saved_line(path: Path, key: str | None, limit: int) -> tuple[bytes, str]:
    """The line of `key` in a saved-conversations file, and the key (`key` None: the file's only
    conversation). NotSaved when the key is absent or its line is above `limit` bytes."""
    try:
        return _saved_line(index_of(path), path, key, limit)
    except _Moved:  # rewritten in place since it was indexed (same size and time): indexed again, once
        forget_index(path)
    try:
        return _saved_line(index_of(path), path, key, limit)
    except _Moved:
        raise NotSaved(f"the line of conversation '{shown_key(key or '')}' changed while it was read") from None


class _Moved(Exception):
    pass


def _saved_line(index: SavedIndex, path: Path, key: str | None, limit: int) -> tuple[bytes, str]:
    if key is None:
        if len(index.lines) != 1:
            raise NotSaved(f"the file holds {len(index.lines)} conversations; name one as FILE#KEY "
                           f"(keys: {_keys(index)})")
        key = next(iter(index.lines))
    if key not in index.lines:
        unreadable = f"; lines {_numbers(index.unreadable)} do not start with a key" if index.unreadable else ""
        raise NotSaved(f"no conversation '{shown_key(key)}' in the file (it holds {len(index.lines)}: "
                       f"{_keys(index)}{unreadable})")
    offset, length, number = index.lines[key]
    if length > limit:
        raise NotSaved(f"line {number} (conversation '{shown_key(key)}') is {length:,} bytes, above the "
                       f"{limit:,}-byte limit for a transcript")
    with open(path, "rb") as source:
        source.seek(offset)
        line = source.read(length)
    if len(line) != length or _key_of(line[:KEY_LIMIT]) != key:
        raise _Moved()
    return line, key


def saved_keys(path: Path) -> list[str]:
    """Every key of a saved-conversations file, in the order of their (last) lines."""
    return list(index_of(path).lines)


def holds(path: Path, key: str) -> bool:
    """Whether the file saves a conversation under `key` (False when it cannot be read: reading it says why).
    NotSaved when the file is too large to index."""
    try:
        return key in index_of(path).lines
    except OSError:
        return False


def keys_like(path: Path, key: str, shown: int = 3) -> list[str]:
    """Keys that begin with `key` and a space (a --repeat run's `<id> repeat N`): what a message suggests."""
    try:
        return sorted(k for k in index_of(path).lines if k.startswith(key + " "))[:shown]
    except (OSError, NotSaved):
        return []


def shown_key(key: str, limit: int = 120) -> str:
    """A key as messages quote it: a case id of thousands of characters is cut."""
    return key if len(key) <= limit else f"{key[:limit]}… ({len(key):,} characters)"


def _keys(index: SavedIndex, shown: int = 10) -> str:
    keys = [shown_key(key, 60) for key in index.lines]
    more = len(keys) - shown
    return (", ".join(keys[:shown]) or "none") + (f" and {more} more" if more > 0 else "")


def _numbers(numbers: list[int], shown: int = 5) -> str:
    more = len(numbers) - shown
    return ", ".join(map(str, numbers[:shown])) + (f" and {more} more" if more > 0 else "")
