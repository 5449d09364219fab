"""`evalrun mutate` as one call: collect the suites (as a run collects them), mutate every selected case,
decide the exit code, and write the report files (mutate.json, mutate.md, mutate.html) into the run folder
convention (.evalrun/reports/mutate-<time>) or --output."""
from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..layout import EXIT_ERRORS, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_NO_CASES, EXIT_OK, EXIT_USAGE
from ..util.diagnostics import Diagnostic
from .case_run import CaseMutator, MutateOptions
from .outcome import MutateReport

# The run's exit codes (runner/layout.py), read for a suite's strength: 1 is a kill rate below --min-kill-rate.
EXIT_WEAK, EXIT_INTERNAL, EXIT_NOTHING = EXIT_FAILED, EXIT_ERRORS, EXIT_NO_CASES


@dataclass
class MutateOutcome:
    exit_code: int
    diagnostics: list[Diagnostic] = field(default_factory=list)
    report: MutateReport | None = None
    problem: str | None = None  # a usage problem or why nothing was mutated


def run_mutate(paths: Sequence[Path], options: MutateOptions, *, jobs: int = 1, filters: Sequence[str] = (),
               tags: Sequence[str] = (), config_path: Path | None = None, output: Path | None = None,
               min_kill_rate: float | None = None) -> MutateOutcome:
    from ..config import find_config, load_config, project_home, suite_roots
    from ..run.case_index import index_cases
    from ..session.lifecycle import DEFAULT_REPORTS_ROOT
    from ..suite.load import Exclusion
    from ..util.diagnostics import has_errors, sort_diagnostics
    from ..util.secrets import remember
    from .pool import mutate_cases

    loaded, problems = load_config(config_path or find_config(list(paths)))
    remember(loaded.config)  # its api_key_env values are masked in every file and line written
    home = project_home(list(paths), loaded.path)
    if loaded.path is None:
        loaded.home = home
    if options.judged and loaded.config.judge is None:
        return MutateOutcome(EXIT_USAGE, problem="--judged: evalrun.yaml configures no `judge:` to ask; add one, or "
                             "leave --judged out (judged checks are then left out)")
    roots = suite_roots(list(paths), loaded)
    exclusion = Exclusion(loaded.base_dir, loaded.config.exclude) if loaded.config.exclude else None
    index = index_cases(paths, exclusion, roots=roots, filters=filters, tags=tags, config=loaded.config)
    diagnostics = sort_diagnostics([*problems, *index.diagnostics])
    if has_errors(diagnostics):
        return MutateOutcome(EXIT_USAGE, diagnostics)
    if not index.refs:
        return MutateOutcome(EXIT_NOTHING, diagnostics, problem="no cases collected")
    from ..llm.runtime import configure  # cheap: litellm is imported only when a judge is asked (--judged)

    configure(concurrency=4, cache_dir=loaded.resolve(loaded.config.cache_dir), no_cache=options.no_cache)
    mutator = CaseMutator(loaded, roots, options)
    cases: list = []
    interrupted = False
    try:
        mutate_cases(index.refs, mutator, jobs, cases)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM (runner.util.signals): what finished is reported
        interrupted = True
    report = MutateReport(cases, options.seed, options.per_case, options.judged, min_kill_rate)
    if not options.judged:
        report.notes.append("offline: no judge was asked; checks that need a model were left out (--judged asks)")
    if interrupted:
        report.notes.append(f"interrupted: {len({c.source for c in cases})} of {len(index.refs)} cases were mutated "
                            "before the stop; the others were not")
    from ..results.folder import new_run_id

    folder = output or home / DEFAULT_REPORTS_ROOT / f"mutate-{new_run_id(_dt.datetime.now())}"
    _write(report, folder)
    report.folder = str(folder)
    if interrupted:
        return MutateOutcome(EXIT_INTERRUPTED, diagnostics, report, problem="interrupted")
    if any((c.reason or "").startswith("internal error") for c in cases):
        return MutateOutcome(EXIT_INTERNAL, diagnostics, report)
    if not report.mutated():
        return MutateOutcome(EXIT_NOTHING, diagnostics, report, problem="nothing to mutate: no selected case passes "
                             "on a recording (see each case's reason)")
    return MutateOutcome(EXIT_WEAK if report.gate_failed() else EXIT_OK, diagnostics, report)


def _write(report: MutateReport, folder: Path) -> None:
    import json

    from ..util.atomic import write_text_atomically
    from ..util.secrets import redact
    from .render import html_page, markdown

    folder.mkdir(parents=True, exist_ok=True)
    data = json.loads(redact(json.dumps(report.to_json(), ensure_ascii=False)))  # redacted before any escape
    write_text_atomically(folder / "mutate.json", json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    write_text_atomically(folder / "mutate.md", markdown(data))
    write_text_atomically(folder / "mutate.html", html_page(data))
