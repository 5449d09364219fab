"""The disk cache folder as a whole (evalrun.yaml's `cache_dir`, default .evalrun/cache beside evalrun.yaml, or
in the project's folder without one): what it holds and clearing it (`evalrun cache`); where it is, which
evalrun.yaml decides, is runner.config.load.cache_folder (the llm layer reads no config).

It holds the models' accepted answers (llm/replies.sqlite: the judge's, the simulated user's, model agents',
the generator's; runner.llm.cache) and the similarity scores of the embedding stage (similarity/, one file per
pair of texts; runner.score.cascade). A run on `--cache on` answers from the first: `--cache refresh` asks the
models again and overwrites, `evalrun cache clear` forgets.
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

LLM_FOLDER, SIMILARITY_FOLDER = "llm", "similarity"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


@dataclass
class CacheContents:
    folder: Path
    answers: int = 0
    oldest: float | None = None  # when the oldest answer of known age was saved (time.time())
    newest: float | None = None
    similarities: int = 0
    size: int = 0  # bytes on disk, every file of the folder


def contents(folder: Path) -> CacheContents:
    """What the cache folder holds. OSError or sqlite3.Error when it cannot be read."""
    from .cache import DiskCache

    found = CacheContents(folder)
    if not folder.is_dir():
        return found
    found.answers, found.oldest, found.newest = DiskCache.at(folder / LLM_FOLDER).summary()
    found.similarities = len(_similarity_files(folder))
    found.size = sum(path.stat().st_size for path in folder.rglob("*") if path.is_file() and not path.is_symlink())
    return found


def clear(folder: Path, older_than: float | None = None) -> tuple[int, int]:
    """Forget what the folder holds, or only what was saved more than `older_than` seconds ago: (answers,
    similarity scores) removed. OSError or sqlite3.Error when it cannot be written."""
    from .cache import DiskCache

    if not folder.is_dir():
        return 0, 0
    before = None if older_than is None else time.time() - older_than
    answers = DiskCache.at(folder / LLM_FOLDER).clear(before)
    scores = 0
    for path, mtime in _similarity_files(folder):
        if before is None or mtime < before:
            path.unlink(missing_ok=True)
            scores += 1
    return answers, scores


def age(text: str) -> float:
    """`--older-than`: a number and a unit (s, m, h, d, w), such as 30d or 12h, as seconds. ValueError."""
    number, unit = text.strip()[:-1], text.strip()[-1:].lower()
    try:
        value = float(number)
    except ValueError:
        value = -1.0
    if unit not in _UNITS or not math.isfinite(value) or value < 0:
        raise ValueError(f"not an age: '{text}'; give a number and a unit: 90s, 30m, 12h, 7d or 2w")
    return value * _UNITS[unit]


def _similarity_files(folder: Path) -> list[tuple[Path, float]]:
    root = folder / SIMILARITY_FOLDER
    found = []
    if root.is_dir():
        for base, _, names in os.walk(root):
            for name in names:
                if name.endswith(".json"):
                    path = Path(base) / name
                    found.append((path, path.stat().st_mtime))
    return found
