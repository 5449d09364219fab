"""Accepted replies on disk, keyed on everything that shapes the reply."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Optional

from ..atomic import write_text_atomically
from .calls import current_repeat
from .settings import ModelSettings


class DiskCache:
    """Accepted replies under `root`, one file per request key. Writes go through a uniquely named
    temporary file and os.replace, so concurrent tasks, threads and processes never see half an entry
    and a killed run leaves only whole entries (plus, at worst, a stray temporary file)."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Optional[dict]:
        try:
            value = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # absent or damaged: a miss
        return value if isinstance(value, dict) else None

    def put(self, key: str, value: dict) -> None:
        try:
            write_text_atomically(self._path(key), json.dumps(value, ensure_ascii=False))
        except OSError:
            pass  # a full or read-only disk costs a repeated call next run, never this run's answer


def cache_slot(repeat: int, sample: int) -> Any:
    """Which cached answer a request takes: its run repeat (the case's repeat_scope unless given), and
    within it the sample number when a check asks several times. Sample 0 keeps the plain repeat, so
    single answers are keyed as they always were."""
    repeat = repeat or current_repeat.get()
    return [repeat, sample] if sample else repeat


def request_key(settings: ModelSettings, messages: list[dict], tools: Optional[list[dict]],
                response_format: Any, params: dict, repeat: Any) -> str:
    """Everything that shapes the reply (and nothing else: not the key, not the timeout)."""
    material = {"model": settings.model, "api_base": settings.api_base, "messages": messages, "tools": tools,
                "response_format": response_format, "params": params, "repeat": repeat}
    text = json.dumps(material, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()

