"""Files that appear whole or not at all: written under a temporary name of their own, then renamed.

A reader (another run, a CI step, a concurrent task) never sees half a report or half a cache entry,
and a process killed mid-write leaves the previous file (or none) plus at worst a stray temporary.
The temporary's name carries the process, the thread and a random part, so concurrent writers of the
same file never share one.
"""
from __future__ import annotations

import contextlib
import os
import secrets
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, BinaryIO, Literal, TextIO, overload

__all__ = ["open_atomically", "write_text_atomically"]


@overload
def open_atomically(path: Path, mode: Literal["w"] = "w", *,
                    durable: bool = False) -> contextlib.AbstractContextManager[TextIO]: ...
@overload
def open_atomically(path: Path, mode: Literal["wb"], *,
                    durable: bool = False) -> contextlib.AbstractContextManager[BinaryIO]: ...
@overload
def open_atomically(path: Path, mode: str, *, durable: bool = False) -> contextlib.AbstractContextManager[IO]: ...


@contextlib.contextmanager  # type: ignore[misc]  # the overloads above say which stream each mode gives
def open_atomically(path: Path, mode: str = "w", *, durable: bool = False) -> Iterator[IO]:
    """A stream (text with mode "w", bytes with "wb") whose content replaces `path` when the block ends
    without an exception; on an exception `path` is untouched. `durable`: fsync before the rename (a
    report worth surviving a power cut), not needed for caches."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.{secrets.token_hex(4)}.tmp")
    text: dict[str, Any] = {"encoding": "utf-8", "newline": "\n"} if "b" not in mode else {}
    replaced = False
    try:
        try:
            stream = open(temporary, mode, **text)  # noqa: SIM115 - entered below, once either open succeeded
        except FileNotFoundError:  # the folder is made when first needed: no mkdir per file (a live run writes many)
            path.parent.mkdir(parents=True, exist_ok=True)
            stream = open(temporary, mode, **text)  # noqa: SIM115 - entered just below
        with stream:
            yield stream
            if durable:
                stream.flush()
                os.fsync(stream.fileno())
        os.replace(temporary, path)
        replaced = True
    finally:
        if not replaced:
            temporary.unlink(missing_ok=True)


def write_text_atomically(path: Path, text: str) -> None:
    with open_atomically(path) as stream:
        stream.write(text)
