"""What a run's suite files say only together: ids that collide across files, files passed over (one
note per folder), and case ids defined twice.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..util.diagnostics import Diagnostic
from ..util.files import display_path
from .file_outcome import CaseOutline, FileOutcome
from .models import Case

_LISTED = 5  # passed-over files named in the note


def qualify_colliding_file_ids(outcomes: list[tuple[Path | str, FileOutcome]], given: list[Path]) -> None:
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
            folder = folder_of(path, given)
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


def folder_of(path: Path, given: list[Path]) -> Path:
    """The folder named on the command line that holds `path` (else its own folder)."""
    for folder in given:
        if folder in path.parents:
            return folder
    return path.parent


def passed_over_notes(passed_over: dict[Path, list[str]]) -> list[Diagnostic]:
    """One warning per folder naming the files in it that are not suites (the first few, then how many more)."""
    notes_of_folders = []
    for folder, notes in passed_over.items():
        notes.sort()
        listed = "; ".join(notes[:_LISTED]) + (f"; and {len(notes) - _LISTED} more" if len(notes) > _LISTED else "")
        notes_of_folders.append(Diagnostic(
            display_path(folder), 1, 1, "warning",
            f"passed over {len(notes)} file{'s' if len(notes) > 1 else ''} that {'are' if len(notes) > 1 else 'is'} "
            f"not a suite: {listed}", "not-a-suite"))
    return notes_of_folders


def duplicate_case_ids(cases: list[Case | CaseOutline]) -> list[Diagnostic]:
    first: dict[str, Case | CaseOutline] = {}
    again: dict[str, list[Case | CaseOutline]] = {}  # a list only for an id seen twice: 50,000 lists of one are 3 MiB
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
