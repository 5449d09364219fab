"""`evalrun convert FILE… [-o DIR]`: an ADK or Agentflow eval set (with its eval config) as an evalrun YAML suite.

The YAML holds what the loader read from the file, in the suite language: each eval case a case with
`turns:` (user message, expected calls, expected answer), its session_input, and the criteria of the eval
config as `checks:` under their ADK names. Loading the YAML gives the same cases as loading the original
(tests/authoring/test_adk_convert.py checks it on every eval file it is given), so both give the same verdicts on the
same conversations; the YAML can then grow what JSON could not say: fuzzy, optional, one_of or regex
arguments per turn, per-turn checks, comments.

A folder is searched for `*.test.json` and `*.evalset.json`, and each YAML keeps its place under the output
folder (ids taken from file names stay the same). Nothing is overwritten.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..suite.formats import EVAL_SET_SUFFIXES, read_foreign
from ..suite.formats.adk import file_stem
from ..suite.formats.adk_config import config_beside
from ..suite.models import DEFAULTABLE_KEYS, Case
from ..suite.reader import read_document, reads_as_text
from ..util.diagnostics import Diagnostic, has_errors, sort_diagnostics
from ..util.files import display_path
from ..util.secrets import redact_data

# What a converted case writes, in this order. starting_sentence and user_prompts are derived from turns,
# and runtime_context from the session's state, unless the file is a conversation scenario.
_CASE_KEYS = ("id", "description", "tags", "starting_sentence", "story", "max_user_turns", "session_input",
              "runtime_context", "turns", "final_session_state", "rubrics", "checks")


@dataclass
class Converted:
    source: Path
    target: Path
    cases: int
    note: str


@dataclass
class ConvertResult:
    written: list[Converted] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not has_errors(self.diagnostics)


def convert(paths: list[Path], output_dir: Path | None = None, eval_config: Path | None = None) -> ConvertResult:
    """Convert every eval file under `paths`; a file with errors is reported and not written."""
    result = ConvertResult()
    jobs: list[tuple[Path, Path]] = []  # (eval file, YAML to write)
    for path in paths:
        if path.is_dir():
            for file in _eval_files(path):
                relative = file.parent.relative_to(path)
                jobs.append((file, (output_dir or path) / relative / f"{file_stem(file)}.yaml"))
        elif path.is_file():
            jobs.append((path, (output_dir or path.parent) / f"{file_stem(path)}.yaml"))
        else:
            result.diagnostics.append(Diagnostic(display_path(path), 1, 1, "error", "no such file or folder", "not-found"))
    if not jobs and not result.diagnostics:
        result.diagnostics.append(Diagnostic(", ".join(map(display_path, paths)), 1, 1, "error",
                                             "no eval files (*.test.json, *.evalset.json) found", "nothing-to-convert"))
    targets: dict[Path, Path] = {}
    for source, target in jobs:
        if target in targets:
            result.diagnostics.append(Diagnostic(display_path(source), 1, 1, "error",
                                                 f"{display_path(targets[target])} converts to the same file "
                                                 f"{display_path(target)}; convert them into different folders", "clash"))
            continue
        targets[target] = source
        _convert_one(source, target, eval_config, result)
    result.diagnostics = sort_diagnostics(result.diagnostics)
    return result


def _eval_files(folder: Path) -> list[Path]:
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [Path(root) / f for f in sorted(files) if f.lower().endswith(EVAL_SET_SUFFIXES)]
    return found


def _convert_one(source: Path, target: Path, eval_config: Path | None, result: ConvertResult) -> None:
    doc = read_document(source, display_path(source))
    foreign = read_foreign(source, doc, eval_config=eval_config)
    if foreign is None or not foreign.is_suite:
        result.diagnostics.append(Diagnostic(display_path(source), 1, 1, "error", "not an ADK or Agentflow eval set; "
                                             "evalrun convert reads those (and leaves its own YAML as it is)",
                                             "not-an-eval-set"))
        return
    result.diagnostics.extend(foreign.diagnostics)
    if has_errors(foreign.diagnostics):
        return
    if target.exists():
        result.diagnostics.append(Diagnostic(display_path(target), 1, 1, "error",
                                             "exists already; evalrun convert never overwrites a file", "exists"))
        return
    config = eval_config if eval_config is not None else config_beside(source)[0]
    said = f"with {display_path(config)}" if config is not None else "with ADK's default criteria (no eval config)"
    agentflow = any(str(spec.get("type", "")).startswith("agentflow_") for case in foreign.cases for spec in case.checks)
    meaning = ("# meaning: Agentflow's criteria, scored per case as Agentflow's evaluator scores them (agentflow_* checks).\n"
               if agentflow else
               "# meaning. Arguments compare as ADK compares them (exactly) unless `arg_matching` says otherwise.\n")
    header = (f"# Converted by `evalrun convert` from {display_path(source)} ({foreign.kind}) {said}.\n"
              "# The same cases as the original, in evalrun's language: each turn is one user message with the calls\n"
              f"# and the answer expected before the next one; the checks are the eval config's criteria, with "
              f"{'Agentflow' if agentflow else 'ADK'}'s\n" + meaning)
    body = suite_of(foreign.cases, foreign.named_ids, stem=target.stem)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(header + dump_yaml(body), encoding="utf-8")
    result.written.append(Converted(source, target, len(foreign.cases), said))


def suite_of(cases: list[Case], named_ids: set[str], stem: str) -> dict[str, Any]:
    """The suite document for `cases`: one case at the top level, or shared keys plus `cases:`."""
    entries = [_case_entry(case, keep_id=case.id in named_ids or len(cases) > 1 or case.id != stem)
               for case in cases]
    if len(entries) == 1:
        return entries[0]
    shared = {}
    for key in DEFAULTABLE_KEYS:
        values = [e.get(key, _MISSING) for e in entries]
        if values[0] is not _MISSING and all(v == values[0] for v in values):
            shared[key] = values[0]
    for entry in entries:
        for key in shared:
            del entry[key]
    return {**shared, "cases": entries}


_MISSING = object()


def _case_entry(case: Case, keep_id: bool) -> dict[str, Any]:
    data = case.model_dump(exclude_none=True, exclude_defaults=True, exclude={"source"})
    entry: dict[str, Any] = {}
    for key in _CASE_KEYS:
        if key == "id" and not keep_id:
            continue
        if key in ("starting_sentence",) and case.turns:
            continue  # played from the turns
        if key == "runtime_context" and case.session_input is not None:
            continue  # made from the session's state (an Agentflow case keeps its user_id and run config here)
        if key in data:
            entry[key] = data[key]
    if "turns" in entry:
        entry["turns"] = [_turn_entry(turn) for turn in entry["turns"]]
    return entry


def _turn_entry(turn: dict[str, Any]) -> dict[str, Any]:
    ordered: dict[str, Any] = {key: turn[key] for key in ("id", "user", "calls", "response", "intermediate_responses",
                                                          "rubrics", "checks") if key in turn}
    if "calls" in ordered:
        ordered["calls"] = [{"tool_name": c["tool_name"], "args": c.get("args", {}),
                             **{k: c[k] for k in ("arg_matching", "extra_args") if k in c}} for c in ordered["calls"]]
    if "response" not in ordered and turn.get("response") == "":
        ordered["response"] = ""
    return ordered


class _Dumper(yaml.SafeDumper):
    """Block style, keys in the order written, multi-line texts as literal blocks."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if any(c in _BREAKS or (not c.isprintable() and c not in "\n\t") for c in value):
        style: str | None = '"'  # escaped: a reader would take these for line breaks, or drop them
    elif "\n" in value and value.strip():
        style = "|"
    else:  # quoted when evalrun would read it unquoted as something else (`0E0` is a number to it, not to PyYAML)
        style = None if reads_as_text(value) else "'"
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BREAKS = frozenset("\r\x85\u2028\u2029\ufeff")


_Dumper.add_representer(str, _text)


def dump_yaml(data: Any) -> str:
    """`data` as YAML, every secret of this process masked (the suites written from it are committed)."""
    return yaml.dump(redact_data(data), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=110,
                     default_flow_style=False)
