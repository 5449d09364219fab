"""The cases of one suite file: each case's data with the file's shared keys applied, where its transcript
lies, and the `Case` it builds (or, in a file with errors, the outline the checks across files read).
"""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import ValidationError

from ..checks.run import check_problem  # the check registry: suite models cannot import it (it reads them)
from ..util.files import display_path, real_path, split_selection
from .containment import inside, outside_message, transcript_location
from .file_outcome import CaseOutline
from .models import DEFAULTABLE_KEYS, Case, SourceRef
from .reader import Document


def split_cases(doc: Document, data: dict, stem: str) -> list[tuple[dict, tuple]]:
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


def check_transcripts(doc: Document, cases: list[tuple[dict, tuple]], path: Path,
                      roots: Sequence[Path] | None, resolve: Callable[[Path], Path] = real_path) -> list[str]:
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


def build_case(doc: Document, case: dict, at: tuple) -> Case | None:
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


def outlines(doc: Document, data: dict, raw_cases: list[tuple[dict, tuple]]) -> list[CaseOutline]:
    """The cases of a file with errors whose id is written in the file (an id taken from the file's name
    may yet be qualified by its folder, see runner.suite.across_files.qualify_colliding_file_ids)."""
    found = []
    for case, at in raw_cases:
        written = data if not at else data["cases"][at[1]]
        agent = case.get("agent")
        if "id" in written and isinstance(case.get("id"), str):
            line, column = doc.position(at)
            found.append(CaseOutline(case["id"], agent if isinstance(agent, str) else None,
                                     SourceRef(path=doc.path, line=line, column=column)))
    return found
