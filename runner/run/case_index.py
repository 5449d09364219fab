"""The cases a run will run, as small references; each case is read again from its file when it runs.

A loaded case (its goals, arguments and defaults as models) takes about 19 KiB; 50,000 of them would
hold a gigabyte for the whole run. Collection therefore checks every file (all diagnostics are known
before anything runs) and keeps a `CaseRef` per case (~350 bytes with its id and its file's details:
tests/run/test_case_index_memory.py). The first `KEEP_LOADED` cases keep their loaded case too (at most
~45 MiB: most runs are this small and read each file once), unless the run collects more than
`HOLD_FILES` files: there those megabytes would be a third of the run's memory, and rebuilding 2,000
cases costs ~0.35 s of CPU (0.17 ms each, bench_scale's cases) in a run of more than a minute. Past that, `CaseLoader` reads a file again when
one of its cases is about to run, keeping the last few files parsed. A file whose bytes are still those
collection checked (their fingerprint is in the ref) is only rebuilt, not checked again: the checks are
half the time of reading a suite.
"""
from __future__ import annotations

import fnmatch
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..suite.load import Exclusion, load_file, load_suites, rebuild_cases
from ..suite.models import Case, SourceRef
from ..suite.reader import fingerprint
from ..util.diagnostics import Diagnostic, sort_diagnostics
from ..util.files import SUITE_SIZE_LIMIT, read_bytes

if TYPE_CHECKING:
    from ..config.model import Config

_FILES_KEPT = 32
KEEP_LOADED = 2000
HOLD_FILES = 30_000  # past this many files, no case is kept loaded: ~45 MiB that a large run needs for its refs


class CaseFile:
    """A collected suite file, shared by the refs of its cases: its path as collected and as messages show it
    (most often the same string), how it was named, and the fingerprint of the bytes its cases were built from."""

    __slots__ = ("explicit", "fingerprint", "name", "shown")

    def __init__(self, name: str, shown: str, explicit: bool, fingerprint: bytes | None) -> None:
        self.name = name
        self.shown = name if shown == name else shown  # one string where they are equal
        self.explicit = explicit
        self.fingerprint = fingerprint

    def __getstate__(self) -> tuple:  # pickled small (the read pool sends refs back, Ray ships them)
        return self.name, self.shown, self.explicit, self.fingerprint

    def __setstate__(self, state: tuple) -> None:
        self.name, self.shown, self.explicit, self.fingerprint = state
        if self.shown == self.name:
            self.shown = self.name


class CaseRef:
    """Where a selected case is: its file, its place among the file's cases, and what selection needs.

    50,000 of them are held for the whole run, so a ref is small (~350 bytes with its id and file): the
    file's details are shared by its cases (`CaseFile`), equal tag tuples are one tuple, and `path` and
    `source` are made when asked for rather than held."""

    __slots__ = ("_column", "_file", "_file_id", "_line", "agent", "id", "index", "loaded", "recorded", "tags")

    def __init__(self, id: str, file: CaseFile, index: int, line: int, column: int, tags: tuple[str, ...],
                 agent: str | None, loaded: Case | None = None, recorded: bool = False,
                 file_id: str | None = None) -> None:
        self.id = id  # as the run names it (a file-name id may be qualified by its folder when two collide)
        self._file_id = None if file_id is None or file_id == id else file_id
        self._file = file
        self.index = index  # position among the cases the file yields
        self._line, self._column = line, column
        self.tags = tags
        self.agent = agent
        self.loaded = loaded  # kept while few cases are collected
        self.recorded = recorded  # names its own `transcript:`: scored without playing anything (runner.run.executors)

    @property
    def file_id(self) -> str:
        """The id as its file yields it."""
        return self.id if self._file_id is None else self._file_id

    @property
    def path(self) -> Path:
        return Path(self._file.name)

    @property
    def explicit(self) -> bool:
        """Named on the command line (read strictly) or found in a folder."""
        return self._file.explicit

    @property
    def fingerprint(self) -> bytes | None:
        """Of its file's bytes, as collected."""
        return self._file.fingerprint

    @property
    def source(self) -> SourceRef:
        return SourceRef(path=self._file.shown, line=self._line, column=self._column)

    def renamed(self, new_id: str) -> CaseRef:
        """The same case named otherwise (a file-name id qualified by its folder)."""
        return CaseRef(new_id, self._file, self.index, self._line, self._column, self.tags, self.agent,
                       self.loaded, self.recorded, file_id=self.file_id)

    def _key(self) -> tuple:
        return (self.id, self.file_id, self._file.name, self._file.explicit, self.index, self._file.shown,
                self._line, self._column, self.tags, self.agent, self.recorded)

    def __eq__(self, other: object) -> bool:
        return self._key() == other._key() if isinstance(other, CaseRef) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"CaseRef(id={self.id!r}, path={self._file.name!r}, index={self.index}, source={str(self.source)!r})"

    def __getstate__(self) -> tuple:
        return tuple(getattr(self, name) for name in CaseRef.__slots__)

    def __setstate__(self, state: tuple) -> None:
        for name, value in zip(CaseRef.__slots__, state, strict=True):
            object.__setattr__(self, name, value)


class _Referencer:
    """Makes the refs while files are read: the first KEEP_LOADED keep their case, the rest only where it is.
    Equal tag tuples and agent names are kept once."""

    def __init__(self) -> None:
        self.kept = 0
        self._shared: dict = {}
        self._file: CaseFile | None = None

    def __call__(self, path: Path, explicit: bool, index: int, case: Case, *, may_hold: bool = True,
                 fingerprint: bytes | None = None) -> CaseRef:
        keep = may_hold and self.kept < KEEP_LOADED
        self.kept += keep
        name = str(path)
        file = self._file
        if file is None or file.name != name or file.fingerprint != fingerprint or file.explicit != explicit:
            file = self._file = CaseFile(name, case.source.path, explicit, fingerprint)  # the file's first case
        tags = tuple(case.tags)
        return CaseRef(case.id, file, index, case.source.line, case.source.column, self._shared.setdefault(tags, tags),
                       self._shared.setdefault(case.agent, case.agent), loaded=case if keep else None,
                       recorded=bool(case.transcript))


@dataclass
class CaseIndex:
    refs: list[CaseRef] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def index_cases(paths: Sequence[Path], exclude: Exclusion | None, *, roots: Sequence[Path] | None = None,
                filters: Sequence[str] = (), tags: Sequence[str] = (), config: Config | None = None,
                eval_config: Path | None = None, referenceless: bool = False, processes: int = 1) -> CaseIndex:
    """Check every suite under `paths` and keep a reference to each case selected by `filters` and `tags`.
    A file with errors yields no case (its diagnostics say why). With `config`, the agent each case
    names is checked against the config's `agents` too. `processes`: how many may read the files."""
    from .agent_choice import check_agent_names
    from .sources import replayed_agent_warnings

    loaded = load_suites(paths, exclude, roots=roots, keep=_Referencer(), eval_config=eval_config,
                         referenceless=referenceless, processes=processes, alone_first=KEEP_LOADED,
                         hold_files=HOLD_FILES)
    diagnostics = list(loaded.diagnostics)
    if config is not None:
        diagnostics.extend(check_agent_names([*loaded.cases, *loaded.unbuilt], config))  # reads .agent, .id, .source
        diagnostics.extend(replayed_agent_warnings(loaded.cases, config))  # and .recorded
    refs = [ref for ref in loaded.cases if selected(ref.id, ref.tags, filters, tags)]
    return CaseIndex(refs=refs, diagnostics=sort_diagnostics(diagnostics), files=loaded.files)  # type: ignore[arg-type]  # keep= made them CaseRefs


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

    def __init__(self, roots: Sequence[Path] | None = None, eval_config: Path | None = None, *,
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
