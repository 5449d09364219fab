"""Collect suite files and turn them into `Case`s, or into diagnostics that say exactly what is wrong.

Order of work for one file: read (YAML/JSON syntax, duplicate keys) -> schema (unknown keys, types,
enums) -> shape of a multi-case file -> semantic checks per case -> models. Every problem of a file is
reported at once; a file with errors yields no cases.
"""
from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence

from pydantic import ValidationError

from .checks import check_case
from .coerce import coerce_texts
from .containment import inside, outside_message, transcript_location
from .diagnostics import Diagnostic, has_errors, sort_diagnostics
from .files import (CONFIG_NAMES, SUITE_SIZE_LIMIT, InputFileError, RealPaths, display_path, read_bytes, real_path,
                    split_selection)
from .formats import read_foreign
from .models import DEFAULTABLE_KEYS, Case, SourceRef
from .reader import Document, read_document
from ..secrets import clip
from ..checks.run import check_problem  # the check registry: suite models cannot import it (it reads them)
from .schema_check import check_suite
from .shape import (SUITE_KEYS, conversation_shaped, is_report, looks_like_transcript, other_tools_file,
                    suite_like_key, why_a_broken_suite)

SUITE_SUFFIXES = (".yaml", ".yml", ".json")
_SKIPPED_DIRS = {"node_modules", "__pycache__"}
_RECORDING_SUFFIXES = (".messages.json", ".metrics.json")  # watsonx run outputs that live beside datasets
_LISTED = 5  # passed-over files named in the note


@dataclass(frozen=True)
class CaseOutline:
    """A case whose file has errors, so it is not built: what the checks across cases read (its id, its
    agent, where it is), so a duplicate id or an undeclared agent is reported with the file's other errors."""

    id: str
    agent: Optional[str]
    source: SourceRef


@dataclass
class LoadResult:
    cases: list[Case] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    unbuilt: list[CaseOutline] = field(default_factory=list)  # cases of files with errors, never run

    @property
    def ok(self) -> bool:
        return not has_errors(self.diagnostics)


def collect_files(paths: Iterable[Path], exclude: Optional[Exclusion] = None
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


@dataclass
class FileReading:
    """How a run reads each of its files (see `load_suites`): what `read_files` hands to every process."""

    roots: Optional[Sequence[Path]]
    eval_config: Optional[Path]
    referenceless: bool
    keep: Optional[Callable[..., Any]]
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
                    return _CONVERSATION
        outcome = self.full(path, explicit=explicit, raw=raw)
        if self.keep is not None and outcome.cases:
            outcome.cases = [self.keep(name, explicit, i, case, may_hold=may_hold and self.may_hold,
                                       fingerprint=outcome.fingerprint)
                             for i, case in enumerate(outcome.cases)]
        return _compact(outcome, name)

    def full(self, path: Path | str, *, explicit: bool, raw: Optional[bytes] = None) -> FileOutcome:
        return _load(Path(path), explicit=explicit, roots=self.roots, eval_config=self.eval_config,
                     referenceless=self.referenceless, raw=raw, resolve=self.real_paths)


def read_files(reading: FileReading, files: Sequence[tuple[Path, bool]], processes: int = 1,
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


@dataclass(slots=True)  # one per collected file: 100,000 of them at once in a run of 50,000 recorded cases
class FileOutcome:
    """What one collected file turned out to be."""

    cases: list[Case] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    is_suite: bool = True
    passed_over: Optional[str] = None  # why a file found in a folder is not taken as a suite (None: it is one, or a recording)
    transcripts: list[str] = field(default_factory=list)  # the files its cases name as transcripts, resolved
    named_ids: set[str] = field(default_factory=set)  # ids written in the file (the others come from its name)
    display: str = ""  # the path as messages show it
    unbuilt: list[CaseOutline] = field(default_factory=list)  # its cases with an id written, when it has errors
    conversation: bool = False  # a recorded conversation, only parsed: its outcome is known once suites name theirs
    fingerprint: Optional[bytes] = None  # an evalrun suite with no error: of the bytes its cases were built from


_CONVERSATION = FileOutcome(is_suite=False, conversation=True)  # shared: the outcome is never changed, only replaced


def _compact(outcome: FileOutcome, name: Path | str) -> FileOutcome:
    """The outcome in less memory: a run holds 100,000 outcomes at once (and the read pool's readers send
    them back), most with no diagnostic, no outline, one id and one or no transcript. Its collections are
    only read from here on: empty ones become the one empty tuple, short ones tuples (a set of one id
    takes 216 bytes, a tuple 48, and a search of a few is as quick)."""
    if not outcome.diagnostics:
        outcome.diagnostics = ()  # type: ignore[assignment]
    if not outcome.unbuilt:
        outcome.unbuilt = ()  # type: ignore[assignment]
    outcome.transcripts = tuple(outcome.transcripts)  # type: ignore[assignment]
    if len(outcome.named_ids) <= 8:
        outcome.named_ids = tuple(outcome.named_ids)  # type: ignore[assignment]
    if outcome.display == name:  # as messages show it: most often as it was found, one string for both
        outcome.display = name  # type: ignore[assignment]
    return outcome


def load_suites(paths: Iterable[Path], exclude: Optional[Exclusion] = None, *,
                roots: Optional[Sequence[Path]] = None,
                keep: Optional[Callable[..., Any]] = None,
                eval_config: Optional[Path] = None, referenceless: bool = False, processes: int = 1,
                alone_first: int = 0, hold_files: Optional[int] = None) -> LoadResult:
    """Every suite under `paths`. Files named on the command line are strict; files found in a folder
    are taken by their shape (see `load_file`), and those that are not suites are passed over with one
    note per folder. `roots`: where transcripts may live (`runner.config.suite_roots`); by default the
    folders of `paths` and of the evalrun.yaml that applies to them.

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
    outcomes = list(zip([path for path, _ in files], read_files(reading, files, processes, alone_first)))
    used_as_transcripts = {t for _, outcome in outcomes for t in outcome.transcripts}
    for n, (path, outcome) in enumerate(outcomes):
        if outcome.conversation and os.fspath(reading.real_paths(path)) not in used_as_transcripts:  # not a suite's: read in full
            outcomes[n] = (path, reading.full(path, explicit=False))
    passed_over: dict[Path, list[str]] = {}
    _qualify_colliding_file_ids(outcomes, paths)
    for path, outcome in outcomes:
        if not outcome.cases and os.fspath(reading.real_paths(path)) in used_as_transcripts:
            continue  # a suite's transcript: a broken one is that case's error at run time, not the folder's
        if outcome.passed_over is not None:
            passed_over.setdefault(_folder_of(Path(path), paths), []).append(f"{display_path(path)} ({outcome.passed_over})")
            continue
        if outcome.is_suite:
            result.files.append(outcome.display or display_path(path))
        result.cases.extend(outcome.cases)
        result.unbuilt.extend(outcome.unbuilt)
        result.diagnostics.extend(outcome.diagnostics)
    for folder, notes in passed_over.items():
        notes.sort()
        listed = "; ".join(notes[:_LISTED]) + (f"; and {len(notes) - _LISTED} more" if len(notes) > _LISTED else "")
        result.diagnostics.append(Diagnostic(
            display_path(folder), 1, 1, "warning",
            f"passed over {len(notes)} file{'s' if len(notes) > 1 else ''} that {'are' if len(notes) > 1 else 'is'} "
            f"not a suite: {listed}", "not-a-suite"))
    result.diagnostics.extend(_duplicate_case_ids([*result.cases, *result.unbuilt]))
    if has_errors(result.diagnostics):
        bad = {d.path for d in result.diagnostics if d.severity == "error"}
        result.cases = [c for c in result.cases if c.source.path not in bad]
    result.diagnostics = sort_diagnostics(result.diagnostics)
    return result


def _qualify_colliding_file_ids(outcomes: list[tuple[Path | str, FileOutcome]], given: list[Path]) -> None:
    """Cases whose id comes from their file's name and collides with another such case (watsonx keeps
    `data_simple.json` and `data_no_summary/data_simple.json` side by side) get the file's folder in
    front: `data_no_summary/data_simple`. An id written in a file is never changed."""
    by_id: dict[str, list[tuple[Path | str, int, FileOutcome]]] = {}
    for path, outcome in outcomes:
        for i, case in enumerate(outcome.cases):
            if case.id not in outcome.named_ids:
                by_id.setdefault(case.id, []).append((path, i, outcome))
    for same in by_id.values():
        if len(same) < 2:
            continue
        for name, i, outcome in same:
            path = Path(name)
            folder = _folder_of(path, given)
            try:
                relative = path.parent.relative_to(folder).as_posix()
            except ValueError:
                continue
            if relative != ".":
                outcome.cases[i] = _renamed(outcome.cases[i], f"{relative}/{outcome.cases[i].id}")


def _renamed(item: Any, new_id: str) -> Any:
    """A case (a model) or what `keep` made of it (which says how: `renamed`) with another id."""
    renamed = getattr(item, "renamed", None)
    if renamed is not None:
        return renamed(new_id)
    return item.model_copy(update={"id": new_id})


def _default_roots(paths: list[Path]) -> list[Path]:
    from ..config import find_config, load_config, suite_roots

    loaded, _ = load_config(find_config(paths))
    return suite_roots(paths, loaded)


def _folder_of(path: Path, given: list[Path]) -> Path:
    for folder in given:
        if folder in path.parents:
            return folder
    return path.parent


def load_file(path: Path, *, explicit: bool = True, roots: Optional[Sequence[Path]] = None,
              eval_config: Optional[Path] = None, referenceless: bool = False
              ) -> tuple[list[Case], list[Diagnostic], bool]:
    """(cases, diagnostics, is_suite) for one file; see `_load`."""
    outcome = _load(path, explicit=explicit, roots=None if roots is None else [real_path(r) for r in roots],
                    eval_config=eval_config, referenceless=referenceless)
    if outcome.passed_over is not None:
        return [], [], False
    return outcome.cases, outcome.diagnostics, outcome.is_suite


def _load(path: Path, *, explicit: bool, roots: Optional[Sequence[Path]],
          eval_config: Optional[Path] = None, referenceless: bool = False, raw: Optional[bytes] = None,
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
            key, why = why_a_broken_suite(data)
            doc.error((key,), f"this file is checked as a suite because {why}; if it is not one, list it under "
                              "`exclude` in evalrun.yaml", "broken-suite", key=True, severity="warning")
    if not isinstance(data, dict):
        doc.error((), "a suite file must be a mapping of keys (a case, or `cases:` with a list); "
                      f"this one is {'a list' if isinstance(data, list) else 'a single value'}", "not-a-mapping")
        return FileOutcome(diagnostics=doc.diagnostics)
    coerce_texts(doc)
    check_suite(doc, check_problem)
    raw_cases = _split_cases(doc, data, path.stem)
    for case, at in raw_cases:
        check_case(doc, case, at, referenceless=referenceless)
    transcripts = _check_transcripts(doc, raw_cases, path, roots, resolve)
    if has_errors(doc.diagnostics):
        return FileOutcome(diagnostics=sort_diagnostics(doc.diagnostics), transcripts=transcripts,
                           unbuilt=_outlines(doc, data, raw_cases))
    cases = []
    for case, at in raw_cases:
        built = _build_case(doc, case, at)
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
    for case, at in _split_cases(doc, data, path.stem):
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
    return [(case, doc.position(at)) for case, at in _split_cases(doc, doc.data, path.stem)]


def _split_cases(doc: Document, data: dict, stem: str) -> list[tuple[dict, tuple]]:
    """Each case's merged data and its location in the file."""
    cases = data.get("cases")
    if not isinstance(cases, list):
        return [({**data, "id": data.get("id", stem)}, ())]
    allowed = set(DEFAULTABLE_KEYS) | {"cases", "$schema", "description"}
    for key in data:
        if key not in allowed:
            doc.error((key,), f"'{key}' cannot be shared by all cases; move it into each case under `cases` "
                              f"(keys that can be shared: {', '.join(DEFAULTABLE_KEYS)})", "not-defaultable", key=True)
    defaults = {k: v for k, v in data.items() if k in DEFAULTABLE_KEYS}
    out = []
    for i, case in enumerate(cases):
        if not isinstance(case, dict):
            continue  # the schema already reported it
        merged = {**defaults, **case}
        if isinstance(defaults.get("tags"), list) and isinstance(case.get("tags"), list):
            merged["tags"] = list(dict.fromkeys([*defaults["tags"], *case["tags"]]))
        for key in ("tool_outputs", "runtime_context", "final_state_matching", "tool_effects"):
            if isinstance(defaults.get(key), dict) and isinstance(case.get(key), dict):
                merged[key] = {**defaults[key], **case[key]}
        merged.setdefault("id", f"{stem}-{i + 1}")
        out.append((merged, ("cases", i)))
    return out


def _check_transcripts(doc: Document, cases: list[tuple[dict, tuple]], path: Path,
                       roots: Optional[Sequence[Path]], resolve: Callable[[Path], Path] = real_path) -> list[str]:
    """Each case's transcript: an error when it lies outside the roots (resolved), a warning when it is
    missing. Returns the transcripts' resolved paths (as text: a run of 50,000 cases holds them all at once)."""
    folder = path.parent
    found = []
    for case, at in cases:
        transcript = case.get("transcript")
        if not (isinstance(transcript, str) and transcript.strip()):
            continue
        target = transcript_location(path, transcript)
        file = split_selection(target)[0]  # `link.jsonl#ID`: the link is what must resolve inside the roots
        resolved = resolve(file)  # once: symlinks followed, then compared with the (resolved) roots
        found.append(os.fspath(resolved))
        if roots is not None and not inside(resolved, roots):
            doc.error(at + ("transcript",), outside_message(transcript, roots or []), "transcript-outside")
        elif not file.is_file():
            doc.error(at + ("transcript",), f"transcript '{transcript}' does not exist (relative to {display_path(folder) or '.'}); "
                                            "the case will end in error when run", "missing-transcript", severity="warning")
    return found


def _build_case(doc: Document, case: dict, at: tuple) -> Optional[Case]:
    line, column = doc.position(at)
    data = {k: v for k, v in case.items() if k not in ("cases", "$schema")}
    problems = [(at + ("checks", i), check_problem(entry)) for i, entry in enumerate(data.get("checks") or ())]
    problems += [(at + ("turns", t, "checks", i), check_problem(entry))
                 for t, turn in enumerate(data.get("turns") or ()) for i, entry in enumerate(turn.get("checks") or ())]
    for where, problem in problems:  # what the schema cannot see: a composition's nested checks, run-level ones
        if problem:
            doc.error(where, problem, "check")
    if any(problem for _, problem in problems):
        return None
    try:
        return Case.model_validate({**data, "source": SourceRef(path=doc.path, line=line, column=column)})
    except ValidationError as exc:  # the schema should have caught it; never let it escape as a traceback
        for err in exc.errors():
            loc = at + tuple(err["loc"])
            doc.error(loc, f"{'.'.join(map(str, err['loc']))}: {err['msg']}", "model")
        return None


def _outlines(doc: Document, data: dict, raw_cases: list[tuple[dict, tuple]]) -> list[CaseOutline]:
    """The cases of a file with errors whose id is written in the file (an id taken from the file's name
    may yet be qualified by its folder, see `_qualify_colliding_file_ids`)."""
    outlines = []
    for case, at in raw_cases:
        written = data if not at else data["cases"][at[1]]
        agent = case.get("agent")
        if "id" in written and isinstance(case.get("id"), str):
            line, column = doc.position(at)
            outlines.append(CaseOutline(case["id"], agent if isinstance(agent, str) else None,
                                        SourceRef(path=doc.path, line=line, column=column)))
    return outlines


def _duplicate_case_ids(cases: list[Case]) -> list[Diagnostic]:
    first: dict[str, Case] = {}
    again: dict[str, list[Case]] = {}  # a list only for an id seen twice: 50,000 lists of one are 3 MiB
    for case in cases:
        seen = first.setdefault(case.id, case)
        if seen is not case:
            again.setdefault(case.id, [seen]).append(case)
    problems = []
    for case_id in first:
        same = again.get(case_id)
        if same is None:
            continue
        for case in same:
            others = ", ".join(str(o.source) for o in same if o is not case)
            problems.append(Diagnostic(case.source.path, case.source.line, case.source.column, "error",
                                       f"duplicate case id '{case_id}': also defined at {others}; set a unique `id`",
                                       "duplicate-case-id"))
    return problems
