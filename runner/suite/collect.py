"""Which files a run reads as suites: the files named, and the suite files found in the folders named.

Hidden folders, node_modules, __pycache__, evalrun.yaml and the recordings watsonx keeps beside its
datasets are passed over; so is what evalrun.yaml's `exclude` names. Symlinked folders are not followed.
"""
from __future__ import annotations

import errno
import fnmatch
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..layout import CONFIG_NAMES, SUITE_SUFFIXES
from ..util.diagnostics import Diagnostic
from ..util.files import display_path, real_path

_SKIPPED_DIRS = {"node_modules", "__pycache__"}
_RECORDING_SUFFIXES = (".messages.json", ".metrics.json")  # watsonx run outputs that live beside datasets


def collect_files(paths: Iterable[Path], exclude: Exclusion | None = None
                  ) -> tuple[list[tuple[Path | str, bool]], list[Diagnostic]]:
    """Suite files under `paths`: (file, given_explicitly). Folders are searched recursively, passing
    over hidden folders and what `exclude` names; a path given explicitly is always collected. A file
    found in a folder is given as text: a run may collect 100,000 of them, and a Path costs four times
    the memory (each is made a Path when it is read)."""
    found: list[tuple[Path | str, bool]] = []
    problems: list[Diagnostic] = []
    excluded = exclude.matches if exclude else (lambda p: False)
    for path in paths:
        try:
            info = os.stat(path)
        except OSError as exc:
            reason = "no such file or folder" if not os.path.lexists(path) else f"cannot read it: {_os_reason(exc)}"
            problems.append(Diagnostic(display_path(path), 1, 1, "error", reason, "not-found"))
            continue
        if stat.S_ISDIR(info.st_mode):
            for root, dirs, files in os.walk(path):  # symlinked folders are not followed: no loops
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS
                                 and not excluded(Path(root) / d))
                for name in sorted(files):
                    if (name.endswith(SUITE_SUFFIXES) and name not in CONFIG_NAMES
                            and not name.endswith(_RECORDING_SUFFIXES)
                            and (exclude is None or not excluded(Path(root) / name))):
                        found.append((os.path.join(root, name), False))
        elif path.name not in CONFIG_NAMES:  # an evalrun.yaml named explicitly is checked as the config
            found.append((path, True))  # a FIFO or device named explicitly is refused when read, with the reason
    return found, problems


def _os_reason(exc: OSError) -> str:
    return "it is a symlink loop" if exc.errno == errno.ELOOP else (exc.strerror or str(exc)).lower()


@dataclass
class Exclusion:
    """Globs relative to `base` (the config file's folder), as written in evalrun.yaml's `exclude`."""

    base: Path
    globs: list[str]

    def matches(self, path: Path) -> bool:
        try:  # real_path never raises on a symlink loop (Path.resolve does)
            relative = real_path(path).relative_to(real_path(self.base)).as_posix()
        except ValueError:
            return False
        return any(fnmatch.fnmatchcase(relative, g.rstrip("/")) for g in self.globs)
