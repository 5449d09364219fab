"""The names every layer shares, defined once: what a suite file and a config file are called, where
reports go, and what each exit code means. Standard library only (tests/test_import_graph.py holds it
so): `evalrun --help`, the pytest plugin and `evalrun watch` import it without loading anything heavy."""
from __future__ import annotations

from pathlib import Path

SUITE_SUFFIXES = (".yaml", ".yml", ".json")  # the files a folder of suites is collected from
CONFIG_NAMES = ("evalrun.yaml", "evalrun.yml")  # the project's settings, never collected as a suite
REPORTS_ROOT = Path(".evalrun") / "reports"  # under the project's folder (runner.config.discovery.project_home)

EXIT_OK = 0  # every case that ran passed
EXIT_FAILED = 1  # a case failed, a gate (min_pass_rate, baseline, -x) was not met
EXIT_INTERRUPTED = 2  # a signal (Ctrl-C, SIGTERM, SIGHUP) stopped the run; what finished is reported
EXIT_ERRORS = 3  # internal error: a case in error or unscored, the report not written, a run fault
EXIT_USAGE = 4  # usage error: a bad option, suite or config; nothing ran
EXIT_NO_CASES = 5  # nothing collected, or every case skipped

EXIT_MEANINGS = {EXIT_OK: "passed", EXIT_FAILED: "failed", EXIT_INTERRUPTED: "interrupted",
                 EXIT_ERRORS: "internal error", EXIT_USAGE: "usage error", EXIT_NO_CASES: "nothing collected"}
