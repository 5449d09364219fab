"""Collect suite files and turn them into `Case`s, or into diagnostics that say exactly what is wrong.

Order of work for one file: read (YAML/JSON syntax, duplicate keys) -> schema (unknown keys, types,
enums) -> shape of a multi-case file -> semantic checks per case -> models. Every problem of a file is
reported at once; a file with errors yields no cases.

Beside it: collect (which files are read), file_cases (a file's cases split, checked and built),
file_outcome (what a file turned out to be, kept small), across_files (what the files say together).
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..checks.run import check_problem  # the check registry: suite models cannot import it (it reads them)
from ..util.diagnostics import Diagnostic, has_errors, sort_diagnostics
from ..util.files import SUITE_SIZE_LIMIT, InputFileError, RealPaths, display_path, read_bytes, real_path
from ..util.secrets import clip
from .across_files import duplicate_case_ids, folder_of, passed_over_notes, qualify_colliding_file_ids
from .checks import check_case
from .coerce import coerce_texts
from .collect import SUITE_SUFFIXES, Exclusion, collect_files  # noqa: F401 - SUITE_SUFFIXES: importers find it here
from .file_cases import build_case, check_transcripts, outlines, split_cases
from .file_outcome import CONVERSATION, CaseOutline, FileOutcome, compact
from .formats import read_foreign
from .models import Case, SourceRef
from .reader import read_document
from .schema_check import check_suite
from .shape import (
    SUITE_KEYS,
    conversation_shaped,
    is_report,
    looks_like_transcript,
    other_tools_file,
    suite_like_key,
    why_a_broken_suite,
)


@dataclass
class LoadResult:
    cases: list[Case] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    unbuilt: list[CaseOutline] = field(default_factory=list)  # cases of files with errors, never run

    @property
    def ok(self) -> bool:
        return not has_errors(self.diagnostics)


@dataclass
class FileReading:
    """How a run reads each of its files (see `load_suites`): what `read_files` hands to every process."""

    roots: Sequence[Path] | None
    eval_config: Path | None
    referenceless: bool
    keep: Callable[..., Any] | None
    real_paths: RealPaths = field(default_factory=RealPaths)  # each folder resolved once
    may_hold: bool = True  # False: `keep` may hold no case (see `load_suites`'s `hold_files`)

    def __call__(self, name: Path | str, explicit: bool, may_hold: bool = True) -> FileOutcome:
        """One file's outcome, `keep` applied. A JSON file found in a folder that is a recorded conversation
        is only parsed, quickly: it is most likely a suite's transcript, whose outcome is dropped (see
        `load_suites`, which reads it in full when no suite names it)."""
        path = Path(name)
        raw = None
        if not explicit and path.suffix.lower() == ".json":
            try:
                raw = read_bytes(path, SUITE_SIZE_LIMIT, "suites and configs")
            except InputFileError:
                pass  # `_load` reads it again and says why it cannot
            else:
                if conversation_shaped(path, raw):
                    return CONVERSATION
        outcome = self.full(path, explicit=explicit, raw=raw)
        if self.keep is not None and outcome.cases:
            outcome.cases = [self.keep(name, explicit, i, case, may_hold=may_hold and self.may_hold,
                                       fingerprint=outcome.fingerprint)
                             for i, case in enumerate(outcome.cases)]
        return compact(outcome, name)

    def full(self, path: Path | str, *, explicit: bool, raw: bytes | None = None) -> FileOutcome:
        return _load(Path(path), explicit=explicit, roots=self.roots, eval_config=self.eval_config,
                     referenceless=self.referenceless, raw=raw, resolve=self.real_paths)


def read_files(reading: FileReading, files: Sequence[tuple[Path | str, bool]], processes: int = 1,
               alone_first: int = 0) -> list[FileOutcome]:
    """The outcome of each file, in order. This process reads the files until it has `alone_first` cases (those
    `keep` may hold: they must be read here); the rest are shared with forked processes when they are many."""
    outcomes: list[FileOutcome] = []
    cases = 0
    for path, explicit in files:
        if processes > 1 and cases >= alone_first:
            break
        outcomes.append(reading(path, explicit))
        cases += len(outcomes[-1].cases)
    rest = files[len(outcomes):]
    if rest:
        from .read_pool import read_in_processes

        shared = read_in_processes(reading, rest, processes)
        outcomes.extend(shared if shared is not None else (reading(path, explicit) for path, explicit in rest))
    return outcomes


def load_suites(paths: Iterable[Path], exclude: Exclusion | None = None, *,
                roots: Sequence[Path] | None = None,
                keep: Callable[..., Any] | None = None,
                eval_config: Path | None = None, referenceless: bool = False, processes: int = 1,
                alone_first: int = 0, hold_files: int | None = None) -> LoadResult:
    """Every suite under `paths`. Files named on the command line are strict; files found in a folder
    are taken by their shape (see `load_file`), and those that are not suites are passed over with one
    note per folder. `roots`: where transcripts may live (`runner.config.load.suite_roots`); by default the
    folders of `paths` only.

    `keep(path, explicit, index, case, may_hold=True)` turns each case into what the result holds, as soon as
    its file is read (a run keeps small references, not 50,000 loaded cases); it must keep `.id` and `.source`.
    `processes` > 1: once the files of the first `alone_first` cases are read here, a long list of files left
    is read by that many processes, forked here (runner.suite.read_pool); `keep` is called in them with
    `may_hold=False` (what it holds would have to be sent back). The outcome is the same as with one.
    `hold_files`: when more files than this are collected, `keep` is always called with `may_hold=False`
    and the pool reads from the first file (a large run's memory goes to references, not loaded cases).
    `eval_config`: the ADK/Agentflow eval config for every eval set (--eval-config), instead of the one beside it.
    `referenceless` (evalrun quick): a case with nothing to check of its own is accepted."""
    paths = list(paths)
    roots = [real_path(r) for r in (_default_roots(paths) if roots is None else roots)]  # resolved once, not per file
    files, problems = collect_files(paths, exclude)
    result = LoadResult(diagnostics=problems)
    reading = FileReading(roots, eval_config, referenceless, keep)
    if hold_files is not None and len(files) > hold_files:
        reading.may_hold, alone_first = False, 0
    outcomes = list(zip([path for path, _ in files], read_files(reading, files, processes, alone_first), strict=True))
    used_as_transcripts = {t for _, outcome in outcomes for t in outcome.transcripts}
    for n, (path, outcome) in enumerate(outcomes):
        if outcome.conversation and os.fspath(reading.real_paths(path)) not in used_as_transcripts:  # not a suite's: read in full
            outcomes[n] = (path, reading.full(path, explicit=False))
    passed_over: dict[Path, list[str]] = {}
    qualify_colliding_file_ids(outcomes, paths)
    for path, outcome in outcomes:
        if not outcome.cases and os.fspath(reading.real_paths(path)) in used_as_transcripts:
            continue  # a suite's transcript: a broken one is that case's error at run time, not the folder's
        if outcome.passed_over is not None:
            passed_over.setdefault(folder_of(Path(path), paths), []).append(f"{display_path(path)} ({outcome.passed_over})")
            continue
        if outcome.is_suite:
            result.files.append(outcome.display or display_path(path))
        result.cases.extend(outcome.cases)
        result.unbuilt.extend(outcome.unbuilt)
        result.diagnostics.extend(outcome.diagnostics)
    result.diagnostics.extend(passed_over_notes(passed_over))
    result.diagnostics.extend(duplicate_case_ids([*result.cases, *result.unbuilt]))
    if has_errors(result.diagnostics):
        bad = {d.path for d in result.diagnostics if d.severity == "error"}
        result.cases = [c for c in result.cases if c.source.path not in bad]
    result.diagnostics = sort_diagnostics(result.diagnostics)
    return result


def _default_roots(paths: list[Path]) -> list[Path]:
    """Where transcripts may live when the caller does not say: the folders of `paths` (a file's own folder).
    The config's folder and `allowed_paths` are added by callers that read evalrun.yaml
    (runner.config.load.suite_roots): the suite layer reads no config."""
    return list(dict.fromkeys(p if p.is_dir() else p.parent for p in (real_path(p) for p in paths)))


def load_file(path: Path, *, explicit: bool = True, roots: Sequence[Path] | None = None,
              eval_config: Path | None = None, referenceless: bool = False
              ) -> tuple[list[Case], list[Diagnostic], bool]:
    """(cases, diagnostics, is_suite) for one file; see `_load`."""
    outcome = _load(path, explicit=explicit, roots=None if roots is None else [real_path(r) for r in roots],
                    eval_config=eval_config, referenceless=referenceless)
    if outcome.passed_over is not None:
        return [], [], False
    return outcome.cases, outcome.diagnostics, outcome.is_suite


def _load(path: Path, *, explicit: bool, roots: Sequence[Path] | None,
          eval_config: Path | None = None, referenceless: bool = False, raw: bytes | None = None,
          resolve: Callable[[Path], Path] = real_path) -> FileOutcome:
    """A file named on the command line must be a suite. A file found in a folder is a suite by its
    shape: a mapping with a suite key (goal_details, cases, story, ...). A recorded conversation (a
    JSON list, or an object with `messages`) is passed over quietly; anything else (an agent
    definition, another tool's config, a report, an unreadable file) is passed over with a reason.
    A file that cannot be parsed counts as a suite only when its text names a suite key."""
    doc = read_document(path, display_path(path), raw=raw)
    foreign = read_foreign(path, doc, eval_config=eval_config)  # Google ADK, Agentflow: before the rules below
    if foreign is not None:
        return FileOutcome(cases=foreign.cases, diagnostics=sort_diagnostics(foreign.diagnostics),
                           is_suite=foreign.is_suite, named_ids=foreign.named_ids, display=doc.path)
    if doc.diagnostics and doc.data is None:
        code = doc.diagnostics[0].code  # a suite saved in another encoding must not be passed over
        if explicit or code == "encoding" or (code != "io" and _mentions_suite_keys(path)):
            return FileOutcome(diagnostics=doc.diagnostics)
        return FileOutcome(is_suite=False, passed_over=_short(doc.diagnostics[0].message))
    data = doc.data
    if data is None and not doc.diagnostics:  # nothing but comments, `---` or `null`
        if not explicit:
            return FileOutcome(is_suite=False, passed_over="empty")
        doc.diagnostics.append(Diagnostic(doc.path, 1, 1, "error",
                                          "the file is empty: a suite needs at least `goal_details` or `cases`", "empty"))
        return FileOutcome(diagnostics=doc.diagnostics)
    if not explicit:
        if path.suffix.lower() == ".json" and looks_like_transcript(data):
            return FileOutcome(is_suite=False)
        if not isinstance(data, dict):
            return FileOutcome(is_suite=False, passed_over=f"{'a list' if isinstance(data, list) else 'a single value'}, "
                                                           "not a mapping of suite keys")
        if SUITE_KEYS & set(data):
            if is_report(data):
                return FileOutcome(is_suite=False, passed_over="an evalrun report")
        elif other_tools_file(path, data) is not None:
            return FileOutcome(is_suite=False, passed_over=other_tools_file(path, data))
        elif why_a_broken_suite(data) is None:
            return FileOutcome(is_suite=False, passed_over="no suite keys such as goal_details or cases")
        else:  # misspelt suite keys: checked as a suite, so that its errors are seen
            key, why = why_a_broken_suite(data)  # type: ignore[misc]  # not None: the test above
            doc.error((key,), f"this file is checked as a suite because {why}; if it is not one, list it under "
                              "`exclude` in evalrun.yaml", "broken-suite", key=True, severity="warning")
    if not isinstance(data, dict):
        doc.error((), "a suite file must be a mapping of keys (a case, or `cases:` with a list); "
                      f"this one is {'a list' if isinstance(data, list) else 'a single value'}", "not-a-mapping")
        return FileOutcome(diagnostics=doc.diagnostics)
    coerce_texts(doc)
    check_suite(doc, check_problem)
    raw_cases = split_cases(doc, data, path.stem)
    for case, at in raw_cases:
        check_case(doc, case, at, referenceless=referenceless)
    transcripts = check_transcripts(doc, raw_cases, path, roots, resolve)
    if has_errors(doc.diagnostics):
        return FileOutcome(diagnostics=sort_diagnostics(doc.diagnostics), transcripts=transcripts,
                           unbuilt=outlines(doc, data, raw_cases))
    cases = []
    for case, at in raw_cases:
        built = build_case(doc, case, at)
        if built is not None:
            cases.append(built)
    named = {case["id"] for case, at in raw_cases
             if "id" in (data if not at else data["cases"][at[1]]) and isinstance(case.get("id"), str)}
    return FileOutcome(cases=cases, diagnostics=sort_diagnostics(doc.diagnostics), transcripts=transcripts,
                       named_ids=named, display=doc.path,
                       fingerprint=doc.fingerprint if len(cases) == len(raw_cases) else None)


def rebuild_cases(path: Path, raw: bytes) -> list[Case]:
    """The cases of an evalrun suite file that collection read with no error, from the same bytes (the
    caller compares their fingerprint): built as `_load` builds them, without the checks that found
    nothing wrong in these bytes (the schema, the cases' semantics, where transcripts are). What a run
    reads again for each case it did not keep loaded (runner.run.case_index)."""
    doc = read_document(path, display_path(path), raw=raw)
    data = doc.data
    if has_errors(doc.diagnostics) or not isinstance(data, dict):  # cannot be: collection read these bytes
        raise ValueError(f"{doc.path} is not the suite collection read")
    coerce_texts(doc)
    cases = []
    for case, at in split_cases(doc, data, path.stem):
        line, column = doc.position(at)
        built = {k: v for k, v in case.items() if k not in ("cases", "$schema")}
        cases.append(Case.model_validate({**built, "source": SourceRef(path=doc.path, line=line, column=column)}))
    return cases


_KEY_TEXT = re.compile(r"""(?:^|[\s{,])["']?([A-Za-z_][\w-]*)["']?\s*:""", re.MULTILINE)


def _mentions_suite_keys(path: Path) -> bool:
    """A file that cannot be parsed is a suite when its text writes a suite key, or one misspelt."""
    try:
        text = read_bytes(path, SUITE_SIZE_LIMIT, "suites").decode("utf-8", "replace")
    except InputFileError:
        return False
    return any(suite_like_key(key) for key in _KEY_TEXT.findall(text))


def _short(message: str) -> str:
    """The first clause of a diagnostic, for the note that names passed-over files."""
    message = message.split("; ", 1)[0]
    return clip(message, 100, "...")


def case_entries(path: Path) -> list[tuple[dict, tuple[int, int]]]:
    """Each case of a suite file as written, with the file's shared keys applied (so that it stands
    alone), and the line and column where it starts: for tools that copy cases (--save-failures)."""
    doc = read_document(path, display_path(path))
    if not isinstance(doc.data, dict):
        return []
    return [(case, doc.position(at)) for case, at in split_cases(doc, doc.data, path.stem)]


