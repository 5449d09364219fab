"""The third-party reference data beside the repository (`shared/data/`), found without a machine's path.

Looked up in $EVALRUN_SHARED_DATA, else in `shared/data` next to the repository or next to one of the
folders above it (a git worktree lives one level further down than its clone). When it is missing a
test skips with the reason (a bare clone has none), and fails where EVALRUN_REQUIRE_SHARED_DATA=1 says
the data must be there (tests/external.py).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from tests.external import missing

REPO = Path(__file__).resolve().parent.parent


def shared_data_dir() -> Optional[Path]:
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
    base = shared_data_dir()
    target = base.joinpath(*parts) if base is not None else None
    if target is None or not target.exists():
        missing(f"shared reference data {'/'.join(parts) or '.'} not found (looked in $EVALRUN_SHARED_DATA and "
                f"shared/data beside {REPO} and its parent folders)", "EVALRUN_REQUIRE_SHARED_DATA")
    return target


def shared_files(subfolder: str, pattern: str) -> list[Path]:
    """Files for parametrize, at collection time; [] when the folder is missing (a test using
    `require_shared` then reports why)."""
    base = shared_data_dir()
    folder = base / subfolder if base is not None else None
    return sorted(folder.glob(pattern)) if folder is not None and folder.is_dir() else []
