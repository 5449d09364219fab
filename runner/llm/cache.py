"""Accepted replies on disk, keyed on everything that shapes the reply.

One SQLite file per cache folder (cache_dir/llm/replies.sqlite, write-ahead log): an answer costs one small
append (tens of microseconds) where a file per answer cost a file creation (0.5-1 ms of system time here),
each insert is committed on its own, so a killed run keeps every answer it got, and concurrent runs on the
same folder share it (SQLite's locking). Answers cached by earlier versions, one JSON file per answer
(<key[:2]>/<key>.json), are still read. A damaged, full or read-only cache costs repeated calls, never a
run's answer. Each answer keeps when it was saved (`created`), so `evalrun cache clear --older-than` can drop
the old ones; answers saved before that column existed have none and count as older than any age.

How a run uses the cache is its mode (runner.llm.runtime.cache_mode): `on` reads and writes, `refresh` asks the
models again and saves their answers (so the next plain run reads those, not older ones), `off` neither.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path
from typing import Any

from .calls import current_repeat
from .settings import ModelSettings

DB_NAME = "replies.sqlite"
_shared: dict[Path, DiskCache] = {}
_shared_lock = threading.Lock()


class DiskCache:
    """Accepted replies under `root`. `DiskCache.at(root)` shares one per folder within a process."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._lock = threading.Lock()
        self._db: Any = None
        self._unusable = False
        self._legacy: bool | None = None  # whether root holds one-file-per-answer entries of earlier versions

    @classmethod
    def at(cls, root: Path) -> DiskCache:
        root = Path(root)
        with _shared_lock:
            cache = _shared.get(root)
            if cache is None:
                cache = _shared[root] = cls(root)
            return cache

    def get(self, key: str) -> dict | None:
        with self._lock:
            db = self._connection()
            row = None
            if db is not None:
                try:
                    row = db.execute("SELECT value FROM replies WHERE key = ?", (key,)).fetchone()
                except Exception:
                    row = None
        text = row[0] if row else self._legacy_entry(key)
        if text is None:
            return None
        try:
            value = json.loads(text)
        except ValueError:
            return None  # damaged: a miss
        return value if isinstance(value, dict) else None

    def put(self, key: str, value: dict) -> None:
        text = json.dumps(value, ensure_ascii=False)
        with self._lock:
            db = self._connection()
            if db is None:
                return
            try:
                db.execute("INSERT OR REPLACE INTO replies (key, value, created) VALUES (?, ?, ?)",
                           (key, text, time.time()))
            except Exception:
                pass  # a full or read-only disk costs a repeated call next run, never this run's answer

    def summary(self) -> tuple[int, float | None, float | None]:
        """(answers, when the oldest was saved, when the newest was) over the database and earlier versions'
        files; times None when unknown. OSError when the cache cannot be read."""
        count, oldest, newest = 0, None, None
        with self._lock:
            db = self._connection() if (self.root / DB_NAME).is_file() else None
            if db is not None:
                count, oldest, newest = db.execute("SELECT COUNT(*), MIN(created), MAX(created) FROM replies").fetchone()
        for _, mtime in self._legacy_files():
            count += 1
            oldest, newest = min(oldest or mtime, mtime), max(newest or mtime, mtime)
        return count, oldest, newest

    def clear(self, before: float | None = None) -> int:
        """Remove the answers saved before `before` (a time.time(); those of unknown age with them), or every
        answer; how many were removed. Rows are deleted, not the file: a run on the same folder keeps going."""
        removed = 0
        with self._lock:
            db = self._connection() if (self.root / DB_NAME).is_file() else None
            if db is not None:
                if before is None:
                    removed = db.execute("DELETE FROM replies").rowcount
                else:
                    removed = db.execute("DELETE FROM replies WHERE created IS NULL OR created < ?",
                                         (before,)).rowcount
        for path, mtime in self._legacy_files():
            if before is None or mtime < before:
                path.unlink(missing_ok=True)
                removed += 1
        return removed

    def _legacy_files(self) -> list[tuple[Path, float]]:
        """Earlier versions' answers, one file each (<key[:2]>/<key>.json), with their modification times."""
        found = []
        if self.root.is_dir():
            for folder in self.root.iterdir():
                if folder.is_dir() and len(folder.name) == 2:
                    found += [(path, path.stat().st_mtime) for path in folder.glob("*.json") if path.is_file()]
        return found

    def _connection(self) -> Any:
        if self._db is not None or self._unusable:
            return self._db
        import sqlite3

        path = self.root / DB_NAME
        for attempt in range(2):
            try:
                self.root.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(str(path), timeout=30, isolation_level=None, check_same_thread=False)
                db.execute("PRAGMA journal_mode=WAL")  # on a file system without it, SQLite keeps its default
                db.execute("PRAGMA synchronous=NORMAL")  # a killed process loses nothing; a power cut may lose the last answers
                db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, value TEXT NOT NULL, "
                           "created REAL) WITHOUT ROWID")
                _add_created(db)
                self._db = db
                return db
            except sqlite3.DatabaseError:
                if attempt == 0 and path.is_file():  # not a database (damaged): keep it aside, start a new one
                    try:
                        path.rename(path.with_name(f"{DB_NAME}.damaged-{int(time.time())}"))
                        continue
                    except OSError:
                        pass
                break
            except (OSError, sqlite3.Error):
                break
        self._unusable = True
        return None

    def _legacy_entry(self, key: str) -> str | None:
        if self._legacy is None:
            try:
                self._legacy = any(p.is_dir() and len(p.name) == 2 for p in self.root.iterdir())
            except OSError:
                self._legacy = False
        if not self._legacy:
            return None
        try:
            return (self.root / key[:2] / f"{key}.json").read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None


def _add_created(db: Any) -> None:
    """A database of an earlier version has no `created` column: add it (its rows keep none)."""
    import sqlite3

    if "created" not in {row[1] for row in db.execute("PRAGMA table_info(replies)")}:
        try:
            db.execute("ALTER TABLE replies ADD COLUMN created REAL")
        except sqlite3.OperationalError:  # another process added it first
            pass


def cache_slot(repeat: int, sample: int) -> Any:
    """Which cached answer a request takes: its run repeat (the case's repeat_scope unless given), and
    within it the sample number when a check asks several times. Sample 0 keeps the plain repeat, so
    single answers are keyed as they always were."""
    repeat = repeat or current_repeat.get()
    return [repeat, sample] if sample else repeat


def request_key(settings: ModelSettings, messages: list[dict], tools: list[dict] | None,
                response_format: Any, params: dict, repeat: Any) -> str:
    """Everything that shapes the reply (and nothing else: not the key, not the timeout, not the path)."""
    material = {"model": settings.model, "api_base": settings.api_base, "messages": messages, "tools": tools,
                "response_format": response_format, "params": params, "repeat": repeat}
    text = json.dumps(material, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()
