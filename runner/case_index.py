"""The cases a run will run, as small references; each case is read again from its file when it runs.

A loaded case (its goals, arguments and defaults as models) takes about 19 KiB; 50,000 of them would
hold a gigabyte for the whole run. Collection therefore checks every file (all diagnostics are known
before anything runs) and keeps only a `CaseRef` per case; `CaseLoader` reads a file again when one
of its cases is about to run, keeping the last few files so that the cases of one file are read once.
"""
from __future__ import annotations

import fnmatch
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Optional, Sequence

from .suite.diagnostics import Diagnostic, has_errors, sort_diagnostics
from .suite.load import Exclusion, _duplicate_case_ids, collect_files, load_file
from .suite.models import Case, SourceRef

if TYPE_CHECKING:
    from .config import Config

_FILES_KEPT = 32


@dataclass(frozen=True)
class CaseRef:
    """Where a selected case is: its file, its place among the file's cases, and what selection needs."""

    id: str
    path: Path
    explicit: bool  # named on the command line (read strictly) or found in a folder
    index: int  # position among the cases the file yields
    source: SourceRef
    tags: tuple[str, ...]
    skip: bool


@dataclass
class CaseIndex:
    refs: list[CaseRef] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def index_cases(paths: Sequence[Path], exclude: Optional[Exclusion], *, filters: Sequence[str] = (),
                tags: Sequence[str] = (), config: Optional["Config"] = None) -> CaseIndex:
    """Check every suite under `paths` and keep a reference to each case selected by `filters` and `tags`.
    A file with errors yields no case (its diagnostics say why). With `config`, the agent each case
    names is checked against the config's `agents` too."""
    from .agents import check_agent_names

    files, problems = collect_files(list(paths), exclude)
    index = CaseIndex(diagnostics=list(problems))
    every: list[CaseRef] = []
    for path, explicit in files:
        cases, diagnostics, is_suite = load_file(path, explicit=explicit)
        index.diagnostics.extend(diagnostics)
        if config is not None:
            index.diagnostics.extend(check_agent_names(cases, config))
        if is_suite:
            index.files.append(str(path))
        every.extend(CaseRef(id=case.id, path=path, explicit=explicit, index=i, source=case.source,
                             tags=tuple(case.tags), skip=bool(case.skip)) for i, case in enumerate(cases))
    index.diagnostics.extend(_duplicate_case_ids(every))  # needs only .id and .source
    if has_errors(index.diagnostics):
        bad = {d.path for d in index.diagnostics if d.severity == "error"}
        every = [ref for ref in every if ref.source.path not in bad]
    index.refs = [ref for ref in every if selected(ref.id, ref.tags, filters, tags)]
    index.diagnostics = sort_diagnostics(index.diagnostics)
    return index


def selected(case_id: str, case_tags: Iterable[str], filters: Sequence[str], tags: Sequence[str]) -> bool:
    """-k globs on the id (a plain word matches ids containing it) and --tag, as pytest users expect."""
    if filters and not any(fnmatch.fnmatchcase(case_id, f if any(ch in f for ch in "*?[") else f"*{f}*")
                           for f in filters):
        return False
    return not tags or bool(set(tags) & set(case_tags))


class CaseChanged(Exception):
    """The suite file changed between collection and the case's turn to run."""


class CaseLoader:
    """Reads a referenced case again; the last `_FILES_KEPT` files stay parsed."""

    def __init__(self) -> None:
        self._files: OrderedDict[Path, list[Case]] = OrderedDict()

    def load(self, ref: CaseRef) -> Case:
        cases = self._files.get(ref.path)
        if cases is None:
            cases, _, _ = load_file(ref.path, explicit=ref.explicit)
            self._files[ref.path] = cases
            if len(self._files) > _FILES_KEPT:
                self._files.popitem(last=False)
        else:
            self._files.move_to_end(ref.path)
        if ref.index >= len(cases) or cases[ref.index].id != ref.id:
            raise CaseChanged(f"{ref.source.path} changed while the run was going on; case '{ref.id}' is no "
                              "longer where it was (run again)")
        return cases[ref.index]
