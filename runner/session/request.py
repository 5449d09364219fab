"""What a run is asked (RunRequest: every option of a run, the only carrier of them) and what it ends with
(RunOutcome: the exit code, the diagnostics, the summary, where the report went). Every front end builds a
RunRequest from its own input (argparse, keyword arguments, pytest options) and hands it to the session."""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..results.verdict import EXIT_INTERRUPTED, EXIT_NO_CASES

if TYPE_CHECKING:
    from ..config.load import LoadedConfig
    from ..results.auto_repeat import AutoRepeat
    from ..results.folder import RunFolder
    from ..results.models import CaseResult, Selection, Summary
    from ..results.verdict import Verdict
    from ..util.diagnostics import Diagnostic


@dataclass
class RunOutcome:
    exit_code: int
    diagnostics: list[Diagnostic] = field(default_factory=list)
    summary: Summary | None = None
    report_path: Path | None = None
    folder: RunFolder | None = None  # to read the saved results back (the console's failure section)
    notes: list[str] = field(default_factory=list)  # lines for people: where the results went, what was lost
    redact: Callable[[str], str] = str
    extra_reports: list[Path] = field(default_factory=list)  # the --format files written beside report.json
    matrix: dict | None = None  # a --matrix run: report.json's `matrix` (runner.session.matrix_summary)

    @property
    def verdict(self) -> Verdict:
        """The run's one verdict (runner.results.verdict): its exit code and why."""
        from ..results.verdict import Verdict

        if self.summary is not None:
            return Verdict(self.exit_code, self.summary.exit_reason)
        errors = [str(d) for d in self.diagnostics if d.severity == "error"]
        why = errors[0] if errors else {EXIT_NO_CASES: "no case to run", EXIT_INTERRUPTED: "interrupted"}.get(
            self.exit_code, "the run did not start")
        return Verdict(self.exit_code, f"{why}: exit {self.exit_code}")

    def results(self, *, only_problems: bool = False) -> Iterator[CaseResult]:
        """Every saved result (or only those that did not pass), in collection order, read back from
        the run's results.jsonl."""
        if self.folder is not None:
            for _, result in self.folder.saved_results(only_problems=only_problems):
                yield result


@dataclass(frozen=True)
class RunRequest:
    """A run's options, all of them (frozen: a front end builds it; the session only reads it)."""
    paths: Sequence[Path]
    config_path: Path | None = None
    replay_dir: Path | None = None
    filters: Sequence[str] = ()
    tags: Sequence[str] = ()
    output_dir: Path | None = None
    concurrency: int = 8
    no_cache: bool = False
    agent: str | None = None
    conversations_dir: Path | None = None  # rescore: score the conversations of a saved run
    formats: Sequence[str] = ()  # report formats (runner.report.formats) written beside report.json
    min_pass_rate: float | None = None  # overrides evalrun.yaml's min_pass_rate when set
    exitfirst: bool = False  # -x: stop after the first failed or errored case
    baseline: Path | None = None  # --baseline: a saved report this run must not fall behind
    max_regression: float = 0.0  # how far a metric mean may drop below the baseline's (a share, 0-1)
    # --repeat N: run every case N times. Also takes what --repeat takes, for every front end alike: "auto[:...]"
    # or an AutoRepeat, which __post_init__ moves to repeat_auto (repeats then holds its max)
    repeats: int = 1
    repeat_policy: str | None = None  # overrides evalrun.yaml's repeat_policy when set
    repeat_auto: AutoRepeat | None = None  # --repeat auto: repeat each case until settled (repeats is ignored)
    shard: str | None = None  # --shard I/N: run only the cases of this part of the suite
    last_failed: bool = False  # --last-failed: only the cases that did not pass in the latest report
    profile: str | None = None  # --profile: evalrun.yaml's `profiles:` entry selecting the checks to run
    saved_selection: Selection | None = None  # rescore: the saved run's -k/--tag/--last-failed, applied first
    eval_config: Path | None = None  # --eval-config: the ADK/Agentflow eval config for every eval set
    loaded: LoadedConfig | None = None  # a configuration given as an object (runner.frontends.python): no file is read
    quick: bool = False  # evalrun quick: cases need no reference; the referenceless checks score them
    executor: str = "auto"  # --executor: what runs the cases (runner.run.executors)
    # --matrix: every case once per variant (runner.session.matrix): the flags (["agent=a,b", "model=x,y"]) or
    # {axis: [values]}; overrides evalrun.yaml's `matrix:`
    matrix: Sequence[str] | Mapping[str, Sequence[str]] | None = None

    def __post_init__(self) -> None:
        from ..results.auto_repeat import AutoRepeat, parse_repeat

        repeats: object = self.repeats
        if isinstance(repeats, str):
            repeats = parse_repeat(repeats)  # RepeatSpecError, a ValueError, names the bad part and the forms
        if isinstance(repeats, AutoRepeat):
            object.__setattr__(self, "repeat_auto", repeats)
            object.__setattr__(self, "repeats", repeats.max)
        elif isinstance(repeats, bool) or not isinstance(repeats, int):
            raise TypeError(f"repeats must be a whole number, 'auto[:KEY=VALUE,...]' or an AutoRepeat, "
                            f"got {type(repeats).__name__} {repeats!r}")
        # a whole number below 1 is left to runner.session.usage: a usage error naming --repeat, as from the CLI

    @property
    def max_repeats(self) -> int:
        """The most runs a case may get: --repeat N's N, or --repeat auto's max."""
        return self.repeat_auto.max if self.repeat_auto is not None else self.repeats
