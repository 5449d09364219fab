"""The names every layer shares, defined once: what a suite file and a config file are called, where
reports go, and what each exit code means. Standard library only (tests/test_import_graph.py holds it
so): `evalrun --help`, the pytest plugin and `evalrun watch` import it without loading anything heavy."""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

SUITE_SUFFIXES = (".yaml", ".yml", ".json")  # the files a folder of suites is collected from
CONFIG_NAMES = ("evalrun.yaml", "evalrun.yml")  # the project's settings, never collected as a suite
REPORTS_ROOT = Path(".evalrun") / "reports"  # under the project's folder (runner.config.discovery.project_home)

EXIT_OK = 0  # every case that ran passed
EXIT_FAILED = 1  # a case failed, a gate (min_pass_rate, baseline, -x) was not met
EXIT_INTERRUPTED = 2  # a signal (Ctrl-C, SIGTERM, SIGHUP) stopped the run; what finished is reported
EXIT_ERRORS = 3  # internal error: a case in error or unscored, the report not written, a run fault
EXIT_USAGE = 4  # usage error: a bad option, suite or config; nothing ran
EXIT_NO_CASES = 5  # nothing collected, or every case skipped


class ExitCode(NamedTuple):
    code: int
    name: str  # a word or two, as report.json's schema lists them
    meaning: str  # one line for people: `evalrun --help` and the docs' exit-code reference print it as it is


# THE meaning of each exit code: `evalrun --help`, report.json's schema and docs/reference/exit-codes.md read it here.
EXIT_CODES: tuple[ExitCode, ...] = (
    ExitCode(EXIT_OK, "passed", "all cases passed (or the pass rate reached min_pass_rate)"),
    ExitCode(EXIT_FAILED, "failed", "some cases failed (below min_pass_rate), -x stopped the run at a failure, or the "
                                    "run fell behind its --baseline; for `evalrun mutate`, a kill rate below "
                                    "--min-kill-rate"),
    ExitCode(EXIT_INTERRUPTED, "interrupted", "interrupted (Ctrl-C, SIGTERM, SIGHUP); the finished cases are still "
                                              "reported"),
    ExitCode(EXIT_ERRORS, "errors", "errors kept cases from being run or scored (`error`, `unscored`), the run was "
                                    "stopped by a fault or its report could not be written, or an outcome rests on a "
                                    "verdict reached without the judge because the judge failed"),
    ExitCode(EXIT_USAGE, "usage error", "usage error or invalid suites"),
    ExitCode(EXIT_NO_CASES, "nothing checked", "nothing was checked: no cases collected, or every case was skipped"),
)
