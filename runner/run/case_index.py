"""The cases a run will run, as small references; each case is read again from its file when it runs.

A loaded case (its goals, arguments and defaults as models) takes about 19 KiB; 50,000 of them would
hold a gigabyte for the whole run. Collection therefore checks every file (all diagnostics are known
before anything runs) and keeps a `CaseRef` per case. The first `KEEP_LOADED` cases keep their loaded
case too (at most ~40 MiB: most runs are this small and read each file once); past that, `CaseLoader`
reads a file again when one of its cases is about to run, keeping the last few files parsed. A file
whose bytes are still those collection checked (their fingerprint is in the ref) is only rebuilt, not
checked again: the checks are half the time of reading a suite.
"""
from __future__ import annotations

import fnmatch
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Optional, Sequence

from ..suite.diagnostics import Diagnostic, sort_diagnostics
from ..suite.files import SUITE_SIZE_LIMIT, read_bytes
from ..suite.load import Exclusion, load_file, load_suites, rebuild_cases
from ..suite.reader import fingerprint
from ..suite.models import Case, SourceRef

if TYPE_CHECKING:
    from ..config import Config

_FILES_KEPT = 32
KEEP_LOADED = 2000


@dataclass(frozen=True, slots=True)  # slots: 50,000 of them are held for the whole run
class CaseRef:
    """Where a selected case is: its file, its place among the file's cases, and what selection needs."""

    id: str  # as the run names it (a file-name id may be qualified by its folder when two collide)
    file_id: str  # as its file yields it
    path: Path
    explicit: bool  # named on the command line (read strictly) or found in a folder
    index: int  # position among the cases the file yields
    source: SourceRef
    tags: tuple[str, ...]
    agent: Optional[str]
    loaded: Optional[Case] = field(default=None, compare=False, repr=False)  # kept while few cases are collected
    recorded: bool = False  # names its own `transcript:`: scored without playing anything (runner.run.executors)
    fingerprint: Optional[bytes] = field(default=None, compare=False, repr=False)  # of its file's bytes, as collected


class _Referencer:
    """Makes the refs while files are read: the first KEEP_LOADED keep their case, the rest only where it is."""

    def __init__(self) -> None:
        self.kept = 0

    def __call__(self, path: Path, explicit: bool, index: int, case: Case, *, may_hold: bool = True,
                 fingerprint: Optional[bytes] = None) -> CaseRef:
        keep = may_hold and self.kept < KEEP_LOADED
        self.kept += keep
        return CaseRef(id=case.id, file_id=case.id, path=path, explicit=explicit, index=index, source=case.source,
                       tags=tuple(case.tags), agent=case.agent, loaded=case if keep else None,
                       recorded=bool(case.transcript), fingerprint=fingerprint)


@dataclass
class CaseIndex:
    refs: list[CaseRef] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def index_cases(paths: Sequence[Path], exclude: Optional[Exclusion], *, roots: Optional[Sequence[Path]] = None,
                filters: Sequence[str] = (), tags: Sequence[str] = (), config: Optional["Config"] = None,
                eval_config: Optional[Path] = None, referenceless: bool = False, processes: int = 1) -> CaseIndex:
    """Check every suite under `paths` and keep a reference to each case selected by `filters` and `tags`.
    A file with errors yields no case (its diagnostics say why). With `config`, the agent each case
    names is checked against the config's `agents` too. `processes`: how many may read the files."""
    from .agent_choice import check_agent_names

    loaded = load_suites(paths, exclude, roots=roots, keep=_Referencer(), eval_config=eval_config,
                         referenceless=referenceless, processes=processes, alone_first=KEEP_LOADED)
    diagnostics = list(loaded.diagnostics)
    if config is not None:
        diagnostics.extend(check_agent_names([*loaded.cases, *loaded.unbuilt], config))  # reads .agent, .id, .source
    refs = [ref for ref in loaded.cases if selected(ref.id, ref.tags, filters, tags)]
    return CaseIndex(refs=refs, diagnostics=sort_diagnostics(diagnostics), files=loaded.files)


def selected(case_id: str, case_tags: Iterable[str], filters: Sequence[str], tags: Sequence[str]) -> bool:
    """-k globs on the id (a plain word matches ids containing it) and --tag, as pytest users expect.
    Tags are words people type in two places: `--tag smoke` selects a case tagged `Smoke`."""
    if filters and not any(fnmatch.fnmatchcase(case_id, f if any(ch in f for ch in "*?[") else f"*{f}*")
                           for f in filters):
        return False
    return not tags or not {t.casefold() for t in tags}.isdisjoint(t.casefold() for t in case_tags)


class CaseChanged(Exception):
    """The suite file changed between collection and the case's turn to run."""


class CaseLoader:
    """Reads a referenced case again; the last `_FILES_KEPT` files stay parsed. Not thread-safe."""

    def __init__(self, roots: Optional[Sequence[Path]] = None, eval_config: Optional[Path] = None, *,
                 referenceless: bool = False) -> None:
        self.roots = roots
        self.eval_config = eval_config
        self.referenceless = referenceless  # evalrun quick: read as collection read it
        self._files: OrderedDict[Path, list[Case]] = OrderedDict()

    def load(self, ref: CaseRef) -> Case:
        if ref.loaded is not None:
            return ref.loaded if ref.id == ref.file_id else ref.loaded.model_copy(update={"id": ref.id})
        cases = self._files.get(ref.path)
        if cases is None:
            cases = self._read(ref)
            self._files[ref.path] = cases
            if len(self._files) > _FILES_KEPT:
                self._files.popitem(last=False)
        else:
            self._files.move_to_end(ref.path)
        if ref.index >= len(cases) or cases[ref.index].id != ref.file_id:
            raise CaseChanged(f"{ref.source.path} changed while the run was going on; case '{ref.id}' is no "
                              "longer where it was (run again)")
        case = cases[ref.index]
        return case if ref.id == ref.file_id else case.model_copy(update={"id": ref.id})

    def _read(self, ref: CaseRef) -> list[Case]:
        """The cases of the ref's file: rebuilt from its bytes when they are the ones collection checked (the
        checks would find what they found then: nothing), else read and checked again as collection does."""
        if ref.fingerprint is not None:
            try:
                raw = read_bytes(ref.path, SUITE_SIZE_LIMIT, "suites and configs")
                if fingerprint(raw) == ref.fingerprint:
                    return rebuild_cases(ref.path, raw)
            except Exception:  # the file went away, or changed in a way the full read will say
                pass
        cases, _, _ = load_file(ref.path, explicit=ref.explicit, roots=self.roots, eval_config=self.eval_config,
                                referenceless=self.referenceless)
        return cases
