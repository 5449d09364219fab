"""Collect suite files and turn them into `Case`s, or into diagnostics that say exactly what is wrong.

Order of work for one file: read (YAML/JSON syntax, duplicate keys) -> schema (unknown keys, types,
enums) -> shape of a multi-case file -> semantic checks per case -> models. Every problem of a file is
reported at once; a file with errors yields no cases.
"""
from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional

from pydantic import ValidationError

from ..config import CONFIG_NAMES
from .checks import check_case
from .coerce import coerce_texts
from .diagnostics import Diagnostic, has_errors, sort_diagnostics
from .models import DEFAULTABLE_KEYS, Case, SourceRef
from .reader import Document, read_document
from .schema import check_suite

SUITE_SUFFIXES = (".yaml", ".yml", ".json")
_SKIPPED_DIRS = {"node_modules", "__pycache__"}
_RECORDING_SUFFIXES = (".messages.json", ".metrics.json")  # watsonx run outputs that live beside datasets


@dataclass
class LoadResult:
    cases: list[Case] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not has_errors(self.diagnostics)


def display_path(path: Path) -> str:
    """Paths in messages are relative to the working directory when possible (as compilers print them)."""
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)


def collect_files(paths: Iterable[Path], exclude: Optional[Exclusion] = None) -> tuple[list[tuple[Path, bool]], list[Diagnostic]]:
    """Suite files under `paths`: (file, given_explicitly). Folders are searched recursively, passing
    over hidden folders and what `exclude` names; a path given explicitly is always collected."""
    found: list[tuple[Path, bool]] = []
    problems: list[Diagnostic] = []
    excluded = exclude.matches if exclude else (lambda p: False)
    for path in paths:
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS
                                 and not excluded(Path(root) / d))
                for name in sorted(files):
                    if (name.endswith(SUITE_SUFFIXES) and name not in CONFIG_NAMES
                            and not name.endswith(_RECORDING_SUFFIXES) and not excluded(Path(root) / name)):
                        found.append((Path(root) / name, False))
        elif path.is_file():
            if path.name not in CONFIG_NAMES:  # an evalrun.yaml named explicitly is checked as the config
                found.append((path, True))
        else:
            problems.append(Diagnostic(display_path(path), 1, 1, "error", "no such file or folder", "not-found"))
    return found, problems


@dataclass
class Exclusion:
    """Globs relative to `base` (the config file's folder), as written in evalrun.yaml's `exclude`."""

    base: Path
    globs: list[str]

    def matches(self, path: Path) -> bool:
        try:
            relative = path.resolve().relative_to(self.base.resolve()).as_posix()
        except ValueError:
            return False
        return any(fnmatch.fnmatchcase(relative, g.rstrip("/")) for g in self.globs)


def load_suites(paths: Iterable[Path], exclude: Optional[Exclusion] = None) -> LoadResult:
    files, problems = collect_files(list(paths), exclude)
    result = LoadResult(diagnostics=problems)
    for path, explicit in files:
        cases, diagnostics, is_suite = load_file(path, explicit=explicit)
        if is_suite:
            result.files.append(display_path(path))
        result.cases.extend(cases)
        result.diagnostics.extend(diagnostics)
    result.diagnostics.extend(_duplicate_case_ids(result.cases))
    if has_errors(result.diagnostics):
        bad = {d.path for d in result.diagnostics if d.severity == "error"}
        result.cases = [c for c in result.cases if c.source.path not in bad]
    result.diagnostics = sort_diagnostics(result.diagnostics)
    return result


def load_file(path: Path, *, explicit: bool = True) -> tuple[list[Case], list[Diagnostic], bool]:
    """(cases, diagnostics, is_suite). A JSON file found in a folder that holds a recorded conversation
    (a list, or an object with `messages`) is not a suite and is passed over quietly."""
    doc = read_document(path, display_path(path))
    if doc.diagnostics and doc.data is None:
        return [], doc.diagnostics, True
    data = doc.data
    if data is None and not doc.diagnostics:  # nothing but comments, `---` or `null`
        doc.diagnostics.append(Diagnostic(doc.path, 1, 1, "error",
                                          "the file is empty: a suite needs at least `goal_details` or `cases`", "empty"))
        return [], doc.diagnostics, True
    if not explicit and path.suffix.lower() == ".json" and _looks_like_transcript(data):
        return [], [], False
    if not isinstance(data, dict):
        doc.error((), "a suite file must be a mapping of keys (a case, or `cases:` with a list); "
                      f"this one is {'a list' if isinstance(data, list) else 'a single value'}", "not-a-mapping")
        return [], doc.diagnostics, True
    coerce_texts(doc)
    check_suite(doc)
    raw_cases = _split_cases(doc, data, path.stem)
    for case, at in raw_cases:
        check_case(doc, case, at)
    _warn_missing_transcripts(doc, raw_cases, path.parent)
    if has_errors(doc.diagnostics):
        return [], sort_diagnostics(doc.diagnostics), True
    cases = []
    for case, at in raw_cases:
        built = _build_case(doc, case, at)
        if built is not None:
            cases.append(built)
    return cases, sort_diagnostics(doc.diagnostics), True


def _looks_like_transcript(data: Any) -> bool:
    return isinstance(data, list) or (isinstance(data, dict) and "messages" in data)


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
        for key in ("tool_outputs", "runtime_context"):
            if isinstance(defaults.get(key), dict) and isinstance(case.get(key), dict):
                merged[key] = {**defaults[key], **case[key]}
        merged.setdefault("id", f"{stem}-{i + 1}")
        out.append((merged, ("cases", i)))
    return out


def _warn_missing_transcripts(doc: Document, cases: list[tuple[dict, tuple]], folder: Path) -> None:
    for case, at in cases:
        transcript = case.get("transcript")
        if isinstance(transcript, str) and transcript.strip() and not (folder / transcript).is_file():
            doc.error(at + ("transcript",), f"transcript '{transcript}' does not exist (relative to {display_path(folder) or '.'}); "
                                            "the case will end in error when run", "missing-transcript", severity="warning")


def _build_case(doc: Document, case: dict, at: tuple) -> Optional[Case]:
    line, column = doc.position(at)
    data = {k: v for k, v in case.items() if k not in ("cases", "$schema")}
    try:
        return Case.model_validate({**data, "source": SourceRef(path=doc.path, line=line, column=column)})
    except ValidationError as exc:  # the schema should have caught it; never let it escape as a traceback
        for err in exc.errors():
            loc = at + tuple(err["loc"])
            doc.error(loc, f"{'.'.join(map(str, err['loc']))}: {err['msg']}", "model")
        return None


def _duplicate_case_ids(cases: list[Case]) -> list[Diagnostic]:
    by_id: dict[str, list[Case]] = {}
    for case in cases:
        by_id.setdefault(case.id, []).append(case)
    problems = []
    for case_id, same in by_id.items():
        if len(same) < 2:
            continue
        for case in same:
            others = ", ".join(str(o.source) for o in same if o is not case)
            problems.append(Diagnostic(case.source.path, case.source.line, case.source.column, "error",
                                       f"duplicate case id '{case_id}': also defined at {others}; set a unique `id`",
                                       "duplicate-case-id"))
    return problems
