"""Facts about input files that every reader shares: the config file names, how paths are shown, and
how a file is read without trusting it.

Nothing here imports another evalrun module, so config.py, the loader and the schema checker can all
depend on it (arrows point down, no import circle).

A file named by a suite or found in a folder may be anything: a FIFO (opening it blocks for ever), a
device (`/dev/zero` never ends), a socket, a symlink loop, or something huge. `read_bytes` looks with
`os.stat` before opening, opens without blocking, checks again on the open file (it may have been
swapped in between) and never reads past the size limit.
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ..layout import CONFIG_NAMES  # noqa: F401 - importers find it here too

MiB = 1024 * 1024
SUITE_SIZE_LIMIT = 10 * MiB  # suites and evalrun.yaml: far above any hand-written file
TRANSCRIPT_SIZE_LIMIT = 50 * MiB  # a recorded conversation, tool results included


class InputFileError(Exception):
    """A file that cannot or must not be read; the message says why in a user's words (no path in it)."""


def display_path(path: Path | str) -> str:
    """Paths in messages are relative to the working directory when possible (as compilers print them)."""
    text = os.fspath(path)
    if _already_relative(text):
        return text  # what relpath gives, without asking for the working directory (collection shows 100,000 paths)
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)


def _already_relative(text: str) -> bool:
    """`relpath` would give it back as it is: relative, normalized, not climbing out of the working directory."""
    return (not os.path.isabs(text) and not os.path.splitdrive(text)[0] and os.path.normpath(text) == text
            and text != os.pardir and not text.startswith(os.pardir + os.sep))


def real_path(path: Path | str) -> Path:
    """The absolute path with symlinks followed as far as they go; never raises on a symlink loop
    (Path.resolve does, as RuntimeError or OSError depending on the Python version)."""
    return Path(os.path.realpath(os.path.abspath(path)))


class RealPaths:
    """`real_path` for many files of few folders (collection): each folder is resolved once, and a file
    that is not itself a symlink is its resolved folder joined with its name, as `real_path` would give."""

    def __init__(self) -> None:
        self._folders: dict[str, str] = {}

    def __call__(self, path: Path | str) -> Path:
        absolute = os.path.abspath(path)
        folder, name = os.path.split(absolute)
        if not name or os.path.islink(absolute):
            return real_path(absolute)
        real = self._folders.get(folder)
        if real is None:
            real = self._folders[folder] = os.path.realpath(folder)
        return Path(os.path.join(real, name))


def size_text(size: int) -> str:
    return f"{size / MiB:g} MiB" if size >= MiB else f"{size:,} bytes"


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def check_regular(path: Path | str, limit: int, what: str) -> os.stat_result:
    """The file's stat when it is a regular file of at most `limit` bytes, else InputFileError."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise InputFileError(_os_reason(exc)) from None
    _check_stat(info, limit, what)
    return info


def _check_stat(info: os.stat_result, limit: int, what: str) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise InputFileError(f"it is {_kind(info.st_mode)}, not a regular file; evalrun reads {what} only from regular files")
    if info.st_size > limit:
        raise InputFileError(f"it is {size_text(info.st_size)}, above the {size_text(limit)} limit for {what}")


def read_bytes(path: Path | str, limit: int, what: str) -> bytes:
    """The content of a regular file of at most `limit` bytes; InputFileError otherwise."""
    check_regular(path, limit, what)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise InputFileError(_os_reason(exc)) from None
    try:
        info = os.fstat(fd)
        _check_stat(info, limit, what)  # the path may have been swapped for a FIFO since the stat
        chunks, total = [], 0
        # First the size it has and one byte more (a read of 1 MiB into a buffer cut down after costs more than
        # reading a small suite), then 1 MiB at a time for as long as it grows, or says a size it has not (procfs).
        wanted = min(info.st_size + 1, limit + 1)
        while True:
            chunk = os.read(fd, wanted)
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # grew while being read
                raise InputFileError(f"it is larger than the {size_text(limit)} limit for {what}")
            if len(chunk) < wanted:  # a regular file's read stops short only at its end: no read to learn it
                break
            wanted = min(1 * MiB, limit + 1 - total)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    except OSError as exc:
        raise InputFileError(_os_reason(exc)) from None
    finally:
        os.close(fd)


def not_utf8(raw: bytes, exc: UnicodeDecodeError) -> tuple[int, int, str]:
    """(line, column, message) for text that is not UTF-8: which byte, where, and what to do."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return 1, 1, "the file is UTF-16 text, not UTF-8; save it as UTF-8"
    start = raw.rfind(b"\n", 0, exc.start) + 1
    line = raw.count(b"\n", 0, exc.start) + 1
    column = len(raw[start:exc.start].decode("utf-8", "replace")) + 1
    byte = raw[exc.start]
    legacy = bytes([byte]).decode("cp1252", "replace") if byte >= 0xA0 else ""
    guess = f" (in Latin-1 it would be {legacy!r}: the file may have been saved as Latin-1)" if legacy.isprintable() and legacy else ""
    return line, column, (f"the file is not UTF-8 text: byte 0x{byte:02X} at line {line}, column {column} is not "
                          f"valid UTF-8{guess}; save the file as UTF-8")


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "it is a symlink loop (too many levels of symbolic links)"
    if exc.errno == errno.ENOENT:
        return "no such file"
    return (exc.strerror or str(exc)).lower() if exc.strerror else str(exc)


def split_selection(path: Path | str) -> tuple[Path, str | None]:
    """A transcript path and the conversation it names: `traces.jsonl#ID` -> (traces.jsonl, ID), for a
    file that holds many conversations (a trace file, a live run's conversations.jsonl). A path that exists
    as written, '#' and all, is the file itself; else it is cut at the first '#' before which a file exists
    (a case id, and so a key, may hold '/' and '#'; give the path as text to keep such a key whole: a Path
    folds `a//b`), else at the last '#' of its file name."""
    text = os.fspath(path)
    if "#" not in text or os.path.lexists(text):
        return Path(text), None
    at = text.find("#", 1)
    while at > 0:
        if os.path.isfile(text[:at]):
            return Path(text[:at]), text[at + 1:]
        at = text.find("#", at + 1)
    if "#" not in Path(text).name:
        return Path(text), None
    file, _, selection = text.rpartition("#")
    return Path(file), selection
