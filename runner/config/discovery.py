"""Where evalrun.yaml is and where a project's folder is: path logic only.

Standard library only (tests/test_import_graph.py holds it so): the pytest plugin and `evalrun watch`
use it before anything heavy is imported, and the file names come from runner/layout.py."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..layout import CONFIG_NAMES

__all__ = ["ConfigSearch", "config_search", "find_config", "project_home", "real_path"]


def real_path(path: Path | str) -> Path:
    """As runner.util.files.real_path (kept here so that this module imports the standard library only)."""
    return Path(os.path.realpath(os.path.abspath(path)))


@dataclass
class ConfigSearch:
    """Where evalrun looked for evalrun.yaml and what it found."""

    path: Path | None = None
    searched: list[Path] = field(default_factory=list)  # the folders looked in, nearest first, for the first suite path


def config_search(paths: list[Path], cwd: Path | None = None) -> ConfigSearch:
    """The first evalrun.yaml next to or above the given paths (the first path wins), looking no higher
    than the repository root (the nearest folder above holding `.git`) or, outside a repository, than
    the current folder. A config in a parent folder such as /tmp must never redirect a run (and its
    judge, with the user's API key) without the user knowing."""
    cwd = real_path(cwd or Path.cwd())
    first: list[Path] = []
    for start in paths:
        folder = real_path(start)
        folder = folder if folder.is_dir() else folder.parent
        searched = _search_folders(folder, cwd)
        first = first or searched
        for candidate_dir in searched:
            for name in CONFIG_NAMES:
                candidate = candidate_dir / name
                if os.path.lexists(candidate):  # a FIFO or a dangling link is found, then refused with the reason
                    return ConfigSearch(path=candidate, searched=searched)
    return ConfigSearch(searched=first)


def _search_folders(folder: Path, cwd: Path) -> list[Path]:
    chain = [folder, *folder.parents]
    for i, candidate in enumerate(chain):
        if os.path.lexists(candidate / ".git"):  # a worktree holds a .git file, a clone a .git folder
            return chain[: i + 1]
    if folder == cwd or cwd in folder.parents:
        return chain[: chain.index(cwd) + 1]
    return [folder]  # outside both a repository and the current folder: the suites' own folder only


def find_config(paths: list[Path], cwd: Path | None = None) -> Path | None:
    """The evalrun.yaml that applies to `paths` (see `config_search`), or None."""
    return config_search(paths, cwd).path


def project_home(paths: list[Path], config_path: Path | None = None) -> Path:
    """The project's folder, where its `.evalrun/` (reports, `latest`, caches, the --last-failed
    history) lives whatever folder evalrun is started from: the folder of its evalrun.yaml; without
    one, the repository the first suite path is in (the nearest folder above it holding `.git`); else
    that path's own folder."""
    if config_path is not None:
        return real_path(config_path).parent
    if not paths:
        return real_path(Path.cwd())
    first = real_path(paths[0])
    folder = first if first.is_dir() else first.parent
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return folder


