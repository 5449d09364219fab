"""No code is imported from a folder of data: the run folder `evalrun rescore` reads.

A run folder may be a CI artifact of a fork's pull request, unpacked inside the project. rescore never takes
its suites or its evalrun.yaml from it (runner.session.rescore), but a module can still resolve into it: a `python`
check's `team.checks` when the folder was unpacked as `team/` beside evalrun.yaml, a namespace package with
a portion in it, a sys.path entry inside it. A finder placed first on sys.meta_path refuses every module whose
file or package folder lies in such a folder, with an ImportError saying why (a check that imports it is then
unscored with that reason, never run). evalrun's own package is exempt: it is already imported and cannot be
replaced from there. The guard is set where a run's case runner is built, so forked workers inherit it and
Ray workers set it again.
"""
from __future__ import annotations

import importlib.abc
import os
import sys
import threading
from pathlib import Path

_lock = threading.Lock()
_folders: list[Path] = []  # real paths
_OWN = Path(os.path.realpath(Path(__file__).resolve().parent.parent))  # the runner package


class _DataOnly(importlib.abc.MetaPathFinder):
    """Finds a module as the finders after it would, and refuses it when it lies in a folder of data."""

    def find_spec(self, name, path, target=None):
        folders = list(_folders)
        if not folders:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        places = [spec.origin] if spec.origin else []
        places += list(spec.submodule_search_locations or ())
        for place in places:
            folder = _data_folder(place, folders)
            if folder is not None:
                raise ImportError(f"module '{name}' lies in {folder}, the folder of a saved run being rescored: a run "
                                  "folder is data, and no code is imported from it (move the module out of it if "
                                  "it is yours)", name=name)
        return spec


_finder = _DataOnly()


def refuse_code_from(folder: Path) -> None:
    """From now on, in this process and the processes it forks, no module is imported from `folder`."""
    real = Path(os.path.realpath(os.path.abspath(folder)))
    with _lock:
        if real not in _folders:
            _folders.append(real)
        if _finder not in sys.meta_path:
            sys.meta_path.insert(0, _finder)


def data_folders() -> list[Path]:
    return list(_folders)


def _data_folder(place: str, folders: list[Path]) -> Path | None:
    if not os.path.isabs(place):  # "built-in", "frozen"
        return None
    real = Path(os.path.realpath(place))
    if real == _OWN or _OWN in real.parents:
        return None
    return next((folder for folder in folders if real == folder or folder in real.parents), None)
