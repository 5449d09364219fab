"""`evalrun convert evals/ --from agentflow-python -o DIR`: a 10xGraph project's Python evals (`*_eval.py` /
`eval_*.py` with get_eval_set(), EVAL_CONFIG / get_eval_config(), a global confeval.py) written as Agentflow's own
JSON files, which evalrun then runs as they are (and `evalrun convert` turns into YAML).

Reading them means running the project's Python, which may do anything; evalrun does that only when asked with
this explicit option, never while collecting a run or validating (a suite folder of a pull request must not be
able to run code by being looked at). The modules run in a subprocess with the project's interpreter (`--python`,
default this one), which needs Agentflow or 10xGraph; agentflow/export.py is the script it runs.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ...util.diagnostics import Diagnostic, Severity
from ...util.files import display_path

SCRIPT = Path(__file__).with_name("export.py")


def export_python_evals(target: Path, output_dir: Path, python: str | None = None
                        ) -> tuple[list[tuple[Path, int, str]], list[Diagnostic]]:
    """(written eval sets with their case counts and where their config came from, problems)."""
    if not target.exists():
        return [], [Diagnostic(display_path(target), 1, 1, "error", "no such file or folder", "not-found")]
    try:
        done = subprocess.run([python or sys.executable, str(SCRIPT), str(target)], capture_output=True, text=True)
    except OSError as exc:  # no such interpreter
        return [], [Diagnostic(display_path(target), 1, 1, "error", f"the project's Python evals could not be read "
                               f"with {python or sys.executable}: {exc.strerror or exc}", "python-evals")]
    try:
        found = json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else None
    except ValueError:
        found = None
    if done.returncode != 0 or not isinstance(found, dict) or "files" not in found:
        why = found.get("fatal") if isinstance(found, dict) else (done.stderr.strip().splitlines() or ["no output"])[-1]
        return [], [Diagnostic(display_path(target), 1, 1, "error", f"the project's Python evals could not be read "
                               f"with {python or sys.executable}: {why}", "python-evals")]
    written: list[tuple[Path, int, str]] = []
    problems: list[Diagnostic] = []
    base = target if target.is_dir() else target.parent
    for entry in found["files"]:
        source = Path(entry["file"])
        where = display_path(source)
        if entry.get("error") or entry.get("skipped"):
            severity: Severity = "error" if entry.get("error") else "warning"
            problems.append(Diagnostic(where, 1, 1, severity, entry.get("error") or f"skipped: {entry['skipped']}",
                                       "python-evals"))
            continue
        folder = output_dir / source.relative_to(base.resolve() if source.is_absolute() else base).with_suffix("")
        config_path = folder / "eval_config.json"
        many = len(entry["eval_sets"]) > 1  # eval set ids are often uuids: the module's name reads better
        sets = [(folder / f"{source.stem}{f'-{i + 1}' if many else ''}.evalset.json", s)
                for i, s in enumerate(entry["eval_sets"])]
        clash = next((p for p in [config_path, *(p for p, _ in sets)] if p.exists()), None)
        if clash is not None:
            problems.append(Diagnostic(display_path(clash), 1, 1, "error", "exists already; evalrun convert never "
                                       "overwrites a file", "exists"))
            continue
        folder.mkdir(parents=True, exist_ok=True)
        config_path.write_text(json.dumps(entry["config"], indent=2), encoding="utf-8")
        for path, eval_set in sets:
            path.write_text(json.dumps(eval_set, indent=2), encoding="utf-8")
            written.append((path, len(eval_set.get("eval_cases") or []), str(entry.get("config_from"))))
    return written, problems
