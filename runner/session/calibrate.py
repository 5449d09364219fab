"""`evalrun calibrate`'s run: the labels file's check played on every example with the project's judge (evalrun.yaml,
the model runtime, the scoring cascade), which only the session may put together. What a labels file is, agreement
and kappa are runner/checks/calibrate.py; the console lines are runner/frontends/cli/calibrate.py."""
from __future__ import annotations

from pathlib import Path

from ..checks.calibrate import Agreement, agreement_of, load_labels, spec_for
from ..checks.run import run_checks
from ..config.discovery import find_config
from ..config.load import load_config
from ..llm.runtime import configure
from ..run.execute import make_cascade
from ..suite.models import Case
from ..transcripts.read import build_trajectory
from ..util.diagnostics import Diagnostic


def calibrate(labels_path: Path, *, config_path: Path | None = None, no_cache: bool = False
              ) -> tuple[Agreement | None, list[Diagnostic]]:
    """Run the labels file's check on every example with evalrun.yaml's judge; the agreement, or problems."""
    labels, problems = load_labels(labels_path)
    loaded, config_problems = load_config(config_path or find_config([labels_path]), for_run=True)
    problems = [*config_problems, *problems]
    if labels is None or any(p.severity == "error" for p in problems):
        return None, problems
    configure(concurrency=4, cache_dir=loaded.resolve(loaded.config.cache_dir), no_cache=no_cache)
    cascade = make_cascade(loaded)
    results = []
    for example in labels.examples:
        case = Case.model_validate({"id": example.id, "source": {"path": str(labels_path)},
                                    "checks": [spec_for(labels, example)]})
        [result] = run_checks(case, build_trajectory(example.conversation()), cascade, base_dir=loaded.base_dir)
        results.append(result)
    return agreement_of(labels, results), problems
