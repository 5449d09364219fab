"""Where in a suite file something of a case was written (file:line), from the reader's positions, as
`validate` reports them: the case's own key when it has one, else the file's shared default, else the
case's first line (formats read from other tools' files keep no position of their parts)."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ..suite.models import Case
from ..suite.reader import Document, read_document


@lru_cache(maxsize=64)
def _document(path: str, stamp: tuple) -> Document:
    """The file read once per version (`stamp`: its size and modification time), for all its cases' survivors."""
    doc = read_document(Path(path))
    doc.position((), key=True)  # JSON positions are computed on first need: now, before looking keys up
    return doc


def _case_base(doc: Document, case: Case) -> tuple | None:
    cases = doc.data.get("cases") if isinstance(doc.data, dict) else None
    if not isinstance(cases, list):
        return ()
    for index, item in enumerate(cases):
        if isinstance(item, dict) and item.get("id") == case.id:
            return ("cases", index)
    for index in range(len(cases)):
        if doc.position(("cases", index))[0] == case.source.line:
            return ("cases", index)
    return None


class Locator:
    """file:line of a case's parts; `real_path` is the case's file as read, `shown` as messages show it."""

    def __init__(self, case: Case, real_path: Path) -> None:
        self.case = case
        self.shown = case.source.path
        try:
            stat = real_path.stat()
            self.doc: Document | None = _document(str(real_path), (stat.st_size, stat.st_mtime_ns))
        except Exception:  # a file gone since collection: the case's own line still says where
            self.doc = None
        self.base = None if self.doc is None else _case_base(self.doc, case)

    def line_of(self, *path: object) -> str:
        """The line of the longest prefix of `path` written in the case (or as the file's default)."""
        if self.doc is not None and self.base is not None:
            keys = self.doc.key_positions
            for length in range(len(path), 0, -1):
                for base in ((self.base, ()) if self.base else ((),)):
                    location = (*base, *path[:length])
                    if location in keys:
                        return f"{self.shown}:{keys[location][0]}"
        return f"{self.shown}:{self.case.source.line}"
