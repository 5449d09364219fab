"""One run's folder: results.jsonl grows as cases finish; report.json is assembled from it at the end; live
conversations are appended to conversations.jsonl (runner.transcripts.saved_conversations) as they end.

Nothing is lost: each result reaches the disk the moment its case finishes, so a run killed at any
point leaves every finished case in results.jsonl. report.json is written under a temporary name that
no other process uses and renamed into place only when complete, so a reader never sees half of one;
`latest` moves only after that. Two runs given the same `--output-dir` do not overwrite each other:
the second finds the folder locked and writes into a subfolder named after its run id.

Memory does not grow with the number of cases: results are not kept, only where each line starts.
"""
from __future__ import annotations

import datetime as _dt
import errno
import json
import os
import re
import secrets as _random
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from ..transcripts.saved_conversations import FILE_NAME as CONVERSATIONS_FILE, append_line, conversation_line
from ..util.atomic import open_atomically
from ..util.jsontext import replace_lone_surrogates
from .digest import ResultDigest
from .models import CaseResult, Summary
from .run_lock import try_lock

RESULTS_NAME = "results.jsonl"
CONVERSATIONS_NAME = "conversations"  # the folder of one file per conversation that earlier versions saved
REPORT_NAME = "report.json"
_COPY_CHUNK = 1 << 20


class ResultsNotSaved(Exception):
    """results.jsonl cannot be written (a full disk, a removed folder): the run must stop."""


def new_run_id(started: _dt.datetime) -> str:
    """Sortable and unique across processes: the start time, the process id and a random suffix."""
    stamp = started.astimezone().strftime("%Y%m%d-%H%M%S-%f")
    return f"{stamp}-{os.getpid()}-{_random.token_hex(3)}"


class ResultLines:
    """What makes a result its line of results.jsonl, secrets redacted: a RunFolder's `serialise`. It pickles (its
    redactor does), so a worker process, or a Ray worker on another node, makes the lines where results are made."""

    def __init__(self, redact: Callable[[str], str] = str):
        self._redact = redact

    def __call__(self, result: CaseResult) -> tuple[CaseResult, str]:
        """The result as it will be saved, and its line of results.jsonl (secrets redacted)."""
        try:
            return self._redacted(result)
        except Exception as exc:  # pydantic's depth limit, a value it cannot encode: keep the verdicts
            reason = f"{type(exc).__name__}: {exc}"
        try:  # a lone surrogate (in a judge's or a check's words) cannot be UTF-8: show it, drop nothing
            shown = CaseResult.model_validate(replace_lone_surrogates(result.model_dump(mode="json"), visible=True))
            return shown, self._redact(shown.model_dump_json())
        except Exception:
            pass
        slim = result.model_copy(update={"transcript": [], "calls": [c.model_copy(update={"arguments": None})
                                                                           for c in result.calls],
                                         "notes": [*result.notes, f"the conversation and call arguments were left "
                                                                  f"out of the report: they could not be saved ({reason})"]})
        try:
            return self._redacted(slim)
        except Exception as exc:
            bare = CaseResult(id=result.id, status="error", source=result.source, description=result.description,
                              tags=result.tags, duration_s=result.duration_s,
                              error=f"the result of this case could not be saved ({type(exc).__name__}: {exc}); "
                                    f"it had ended {result.status}")
            return self._redacted(bare)

    def digest(self, result: CaseResult) -> ResultDigest:
        """What a worker process sends the run's process for a result it made: the digest of the result as
        saved, which carries its line (runner.results.digest)."""
        return ResultDigest.of(*self(result))

    def _redacted(self, result: CaseResult) -> tuple[CaseResult, str]:
        """The result as saved, and its line. When redaction changed the line, the result is read back
        from it: everything downstream (the console's lines while the run goes on, -v included, the
        baseline gate) sees the redacted text, never the secret."""
        line = result.model_dump_json()
        redacted = self._redact(line)
        return (result if redacted == line else CaseResult.model_validate_json(redacted)), redacted


class RunFolder:
    def __init__(self, path: Path, run_id: str, lock_fd: int | None, *, redact: Callable[[str], str] = str):
        self.path = path
        self.run_id = run_id
        self._lock_fd = lock_fd
        self._redact = redact
        self.serialise = ResultLines(redact)  # a result -> (the result as saved, its line)
        self._results: BinaryIO | None = None
        # (case position, part) -> (offset, length, whether the console explains it: see `saved_results`)
        self._spans: dict[tuple[int, int], tuple[int, int, bool]] = {}
        self._size = 0
        self._conversations: int | None = None  # conversations.jsonl, opened for appending when first needed
        self._conversations_lock = threading.Lock()

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(cls, requested: Path, run_id: str, *, redact: Callable[[str], str] = str) -> tuple[RunFolder, str | None]:
        """The run's folder at `requested`, or inside it when another live run holds it (then a note
        says where this run's files went). OSError when the folder cannot be made."""
        requested.mkdir(parents=True, exist_ok=True)
        fd = try_lock(requested)
        if fd is not None:
            return cls(requested, run_id, fd, redact=redact), None
        own = requested / run_id
        own.mkdir(parents=True, exist_ok=True)
        note = (f"another run is writing to {requested}; this run's results go to {own} so that neither "
                "overwrites the other")
        return cls(own, run_id, try_lock(own), redact=redact), note

    @property
    def results_path(self) -> Path:
        return self.path / RESULTS_NAME

    @property
    def report_path(self) -> Path:
        return self.path / REPORT_NAME

    # ------------------------------------------------------------------ results as they come

    @property
    def conversations_path(self) -> Path:
        return self.path / CONVERSATIONS_FILE

    def start_results(self, *, keep_conversations: bool = False) -> None:
        """results.jsonl started afresh (a rerun into the same folder), and conversations.jsonl with it unless
        `keep_conversations` (pytest-xdist's workers append to it before the reporting process opens the run)."""
        try:
            self._results = open(self.results_path, "wb")  # noqa: SIM115 - open for the run; closed by finish()
        except OSError as exc:
            raise ResultsNotSaved(f"cannot write {self.results_path}: {describe_os_error(exc)}") from None
        if not keep_conversations:
            _remove_quietly(self.conversations_path)

    def add(self, position: int, part: int, result: CaseResult | ResultDigest) -> ResultDigest:
        """Write one finished case as a line of results.jsonl, flushed at once. Returns the digest of the
        result as saved (a result that cannot be serialised whole is saved without its conversation, or as
        an error saying why). `result`: a result, or the digest `serialise.digest` made of one elsewhere (a
        worker process), which carries its line."""
        if isinstance(result, ResultDigest):
            digest = result
        else:
            saved, line = self.serialise(result)
            digest = ResultDigest.of(saved, line, keep=True)
        data = (digest.line + "\n").encode("utf-8")
        try:
            assert self._results is not None, "start_results() first"
            self._results.write(data)
            self._results.flush()
        except OSError as exc:
            raise ResultsNotSaved(f"cannot write {self.results_path}: {describe_os_error(exc)}") from None
        problem = digest.status not in ("passed", "skipped") or bool(digest.judge_fallbacks)
        self._spans[(position, part)] = (self._size, len(data) - 1, problem)
        self._size += len(data)
        return digest

    def close_results(self) -> None:
        self._close_conversations()
        if self._results is not None:
            try:
                self._results.flush()
                os.fsync(self._results.fileno())
            except OSError:
                pass  # what was flushed is there; the report step says if it cannot read it back
            self._results.close()
            self._results = None

    def saved_results(self, *, only_problems: bool = False) -> Iterator[tuple[tuple[int, int], CaseResult]]:
        """((position, part), result) for every saved case, in collection order, read back from the disk.
        `only_problems`: only cases that did not pass or rest on a stand-in for the judge (what the
        console explains), known from their digests as they were saved: the others' lines are not read."""
        with open(self.results_path, "rb") as source:
            for position in sorted(self._spans):
                offset, length, problem = self._spans[position]
                if only_problems and not problem:
                    continue
                source.seek(offset)
                yield position, CaseResult.model_validate_json(source.read(length))

    # ------------------------------------------------------------------ live conversations

    def save_conversation(self, key: str, data: dict) -> str:
        """A live case's conversation, in the transcript format evalrun reads, appended to conversations.jsonl
        as one line under `key` (its case id): `evalrun rescore` scores it again without calling anything.
        Returns where it is, as `FILE#KEY`. OSError when it cannot be written."""
        # compact: json's C encoder writes it (an indent takes the pure-Python one, 4x the CPU of a live case's save)
        try:
            line = conversation_line(key, self._redact(json.dumps(data, ensure_ascii=False)))
        except UnicodeEncodeError:  # a lone surrogate cannot be UTF-8: shown as its escape, as the report shows it
            shown = replace_lone_surrogates(json.loads(json.dumps(data)), visible=True)
            line = conversation_line(key, self._redact(json.dumps(shown, ensure_ascii=False)))
        with self._conversations_lock:
            if self._conversations is None:
                self._conversations = _open_for_appending(self.conversations_path)
            append_line(self._conversations, line)
        return f"{self.conversations_path}#{key}"

    # ------------------------------------------------------------------ the report

    def write_report(self, header: dict[str, Any], summary: Summary) -> Path:
        """report.json: `header`, the summary, then every saved case in collection order, copied line by
        line from results.jsonl (never all in memory). Written atomically under a name of this run."""
        head = {**header, "summary": json.loads(summary.model_dump_json())}
        opening = json.dumps(head, ensure_ascii=False)[:-1] + ', "cases": ['
        with open_atomically(self.report_path, "wb", durable=True) as out, open(self.results_path, "rb") as source:
            out.write(self._redact(opening).encode("utf-8"))
            for n, position in enumerate(sorted(self._spans)):
                offset, length, _ = self._spans[position]
                source.seek(offset)
                if n:
                    out.write(b",")
                _copy(source, out, length)
            out.write(b"]}\n")
        return self.report_path

    def _close_conversations(self) -> None:
        with self._conversations_lock:
            if self._conversations is not None:
                os.close(self._conversations)
                self._conversations = None

    def release(self) -> None:
        self._close_conversations()
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing the descriptor drops the lock
            self._lock_fd = None


def _open_for_appending(path: Path) -> int:
    # read as well: a writer looks at the last byte before it appends (runner.transcripts.saved_conversations)
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        return os.open(path, flags, 0o644)
    except FileNotFoundError:  # pytest's processes save conversations before the run's folder is opened
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, flags, 0o644)


def conversation_file_name(case_id: str) -> str:
    """A file name for a case id that stays inside the folder whatever the id holds: the id itself
    when it is plain, else its plain characters plus a short hash (so two odd ids cannot collide)."""
    import hashlib

    plain = re.sub(r"[^A-Za-z0-9._-]", "_", case_id).lstrip(".") or "case"
    if plain == case_id and len(case_id) <= 150:
        return f"{case_id}.json"
    return f"{plain[:120]}-{hashlib.sha256(case_id.encode('utf-8', 'surrogatepass')).hexdigest()[:10]}.json"


def point_latest(reports_root: Path, run_path: Path) -> None:
    """`<reports_root>/latest` names the newest complete run: a symlink swapped in atomically (a
    concurrent reader sees the old or the new one), else a text file where symlinks are not allowed."""
    link = reports_root / "latest"
    temporary = reports_root / f".latest.{os.getpid()}.{_random.token_hex(3)}"
    try:
        temporary.symlink_to(run_path.resolve(), target_is_directory=True)
        os.replace(temporary, link)
    except OSError:
        _remove_quietly(temporary)
        (reports_root / "latest.txt").write_text(str(run_path.resolve()) + "\n", encoding="utf-8")


def describe_os_error(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "no space left on the device"
    reason = exc.strerror or str(exc)
    return f"{reason}: '{exc.filename}'" if exc.strerror and exc.filename is not None else reason


def _copy(source, out, length: int) -> None:
    while length > 0:
        chunk = source.read(min(length, _COPY_CHUNK))
        if not chunk:
            raise OSError(errno.EIO, "results.jsonl is shorter than what was written to it")
        out.write(chunk)
        length -= len(chunk)


def _remove_quietly(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass
