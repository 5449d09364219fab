"""The cases inside the HTML report: gzip-compressed JSON, base64 in the page, decoded by the browser's
own DecompressionStream (no network, no library). Two parts:

- the index: one small row per case (what the list, the filters and the search need: id, status,
  file, reasons, completion, time), decoded when the page opens;
- the details: the whole cases, in chunks of about CHUNK_BYTES of JSON, each decoded only when one of
  its cases is opened. A 5,000-case report opens on its index and never holds every case at once.

Base64 has no <, > or &: nothing in a case can close its <script> element or become markup, whatever
the agent wrote; the page's script shows case text with textContent only. Chunks are compressed on a
second thread (zlib releases the GIL) while the next cases are read and checked.
"""
from __future__ import annotations

import base64
import json
import queue
import threading
import zlib
from collections.abc import Iterable
from typing import Any, TextIO

from .saved_stream import SavedCase

CHUNK_BYTES = 512 * 1024
LEVEL = 6  # on reports (repetitive JSON) 3x smaller than level 1 for ~0.1 s more per 100 MB
INDEX_FIELDS = ("id", "run", "repeat", "status", "source", "description", "tags", "failures", "error",
                "unscored_reason", "skip_reason", "extra_calls", "duration_s", "conversation_source", "variant")
_FLOATS = ("duration_s", "completion")
_QUEUED_CHUNKS = 4  # chunks waiting for the compressing thread: bounds memory when it falls behind


def index_row(case: dict[str, Any]) -> dict[str, Any]:
    """The fields of a case the list shows, searches and sorts by; empty ones left out."""
    row = {name: case[name] for name in INDEX_FIELDS if case.get(name) not in (None, [], "")}
    metrics = case.get("metrics")
    if isinstance(metrics, dict) and metrics.get("journey_completion") is not None:
        row["completion"] = metrics["journey_completion"]
    for name in _FLOATS:  # a whole number in a float field is the float the model holds (1 -> 1.0)
        if type(row.get(name)) is int:
            row[name] = float(row[name])
    return row


def gzip_base64(data: bytes) -> str:
    packer = zlib.compressobj(LEVEL, zlib.DEFLATED, 31)  # wbits 31: a gzip member, as DecompressionStream("gzip") reads
    return base64.b64encode(packer.compress(data) + packer.flush()).decode("ascii")


_OPENING = '<script type="application/json" id="evalrun-data">{"encoding":"gzip+base64","chunks":['


def write_data(cases: Iterable[SavedCase], out: TextIO, extra: dict[str, str]) -> int:
    """The page's <script type="application/json" id="evalrun-data"> element: {"chunks": [...], "starts":
    [first case of each chunk], "index": ..., "total": N} plus `extra` (member name -> JSON text that is
    already inert in a script element). Returns the number of cases."""
    out.write(_OPENING)
    writer = _ChunkWriter(out)
    index = _Index()
    starts: list[int] = []
    chunk: list[bytes] = []
    size = total = 0
    try:
        for case in cases:
            if not chunk:
                starts.append(total)
            chunk.append(case.text)
            size += len(case.text)
            index.add(index_json(index_row(case.data)))
            total += 1
            if size >= CHUNK_BYTES:
                writer.put(chunk)
                chunk, size = [], 0
        if chunk:
            writer.put(chunk)
    finally:
        writer.close()
    _close(out, starts, total, index, extra)
    return total


def write_encoded(chunks: list[str], starts: list[int], rows: list[bytes], out: TextIO,
                  extra: dict[str, str]) -> int:
    """The same element from chunks already compressed (gzip_base64 of each chunk's JSON list) and the
    index rows (index_json); returns the number of cases."""
    out.write(_OPENING)
    out.write(",".join(f'"{chunk}"' for chunk in chunks))
    index = _Index()
    for row in rows:
        index.add(row)
    _close(out, starts, len(rows), index, extra)
    return len(rows)


def _close(out: TextIO, starts: list[int], total: int, index: _Index, extra: dict[str, str]) -> None:
    out.write(f'],"starts":{json.dumps(starts)},"total":{total},"index":"{index.finish()}"')
    for name, text in extra.items():
        out.write(f',"{name}":{text}')
    out.write("}</script>\n")


def index_json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode("ascii")


class _Index:
    """The index rows as one gzip-compressed JSON list, compressed in batches: a call into zlib per row
    would hand the GIL to the chunk thread and wait to get it back, every row."""

    BATCH = 256 * 1024

    def __init__(self) -> None:
        self.packer = zlib.compressobj(LEVEL, zlib.DEFLATED, 31)
        self.parts: list[bytes] = []
        self.pending: list[bytes] = []
        self.size = 0

    def add(self, row: bytes) -> None:
        self.pending.append(row)
        self.size += len(row) + 1
        if self.size >= self.BATCH:
            self._compress()

    def _compress(self) -> None:
        text = b",".join(self.pending)
        self.parts.append(self.packer.compress((b"," if self.parts else b"[") + text))
        self.pending, self.size = [], 0

    def finish(self) -> str:
        if self.pending or not self.parts:
            self._compress()
        self.parts += [self.packer.compress(b"]"), self.packer.flush()]
        return base64.b64encode(b"".join(self.parts)).decode("ascii")


class _ChunkWriter:
    """Compresses chunks of cases (each a JSON list) on its own thread and writes them to `out`, in order."""

    def __init__(self, out: TextIO):
        self.out = out
        self.written = 0
        self.failure: BaseException | None = None
        self.queue: queue.Queue = queue.Queue(maxsize=_QUEUED_CHUNKS)
        self.thread: threading.Thread | None = None  # started with the first chunk: after the reader's fork

    def put(self, chunk: list[bytes]) -> None:
        if self.failure is not None:
            raise self.failure
        if self.thread is None:
            self.thread = threading.Thread(target=self._work, name="evalrun-html-chunks", daemon=True)
            self.thread.start()
        self.queue.put(chunk)

    def close(self) -> None:
        if self.thread is not None:
            self.queue.put(None)
            self.thread.join()
        if self.failure is not None:
            raise self.failure

    def _work(self) -> None:
        while True:
            chunk = self.queue.get()
            if chunk is None:
                return
            if self.failure is not None:
                continue  # keep draining so that put() never blocks on a dead writer
            try:
                encoded = gzip_base64(b"[" + b",".join(chunk) + b"]")
                self.out.write(("," if self.written else "") + '"' + encoded + '"')
                self.written += 1
            except BaseException as exc:  # a full disk: reported by put() or close() on the reading thread
                self.failure = exc
