"""The third-party reference data beside the repository (`shared/data/`), found without a machine's path.

Looked up in $EVALRUN_SHARED_DATA, else in `shared/data` next to the repository or next to one of the
folders above it (a git worktree lives one level further down than its clone). When it is missing a
test skips with the reason (a bare clone has none), and fails where EVALRUN_REQUIRE_SHARED_DATA=1 says
the data must be there (tests/helpers/external.py).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.external import missing

REPO = Path(__file__).resolve().parents[2]


def shared_data_dir() -> Path | None:
    configured = os.environ.get("EVALRUN_SHARED_DATA")
    if configured:
        return Path(configured) if Path(configured).is_dir() else None
    for folder in REPO.parents:
        candidate = folder / "shared" / "data"
        if candidate.is_dir():
            return candidate
    return None


def require_shared(*parts: str) -> Path:
    """The path `parts` under the shared data folder; skips (or fails when insisted on) when it is absent."""
    __tracebackhide__ = True  # pytest reports the skip at the test that asked, not here
    base = shared_data_dir()
    target = base.joinpath(*parts) if base is not None else None
    if target is None or not target.exists():
        what = " ".join(["shared reference data", "/".join(parts)]).strip()
        missing(f"{what} not found (looked in $EVALRUN_SHARED_DATA and shared/data beside {REPO} and its parent "
                "folders)", "EVALRUN_REQUIRE_SHARED_DATA")
    return target


def shared_files(subfolder: str, pattern: str) -> list[Path]:
    """The files matching `pattern` in `subfolder`, at collection time; [] when the folder is missing."""
    base = shared_data_dir()
    folder = base / subfolder if base is not None else None
    return sorted(folder.glob(pattern)) if folder is not None and folder.is_dir() else []


def shared_params(subfolder: str, pattern: str) -> list[Any]:
    """`shared_files` for parametrize. With none, one parameter `None`, which `shared_file` turns into the skip
    with its reason (an empty list would skip with pytest's 'got empty parameter set' and no reason)."""
    return shared_files(subfolder, pattern) or [pytest.param(None, id=f"{subfolder}-missing")]


def shared_file(path: Path | None, subfolder: str, pattern: str) -> Path:
    """A test's `shared_params` parameter: the file, or the skip (or failure) saying what is missing."""
    __tracebackhide__ = True
    if path is None:
        require_shared(subfolder)
        missing(f"no {pattern} in the shared reference data {subfolder}", "EVALRUN_REQUIRE_SHARED_DATA")
    return path
