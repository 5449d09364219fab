"""runner.api: the compatibility facade of the run session (runner.session), kept so that code written
against it goes on working. A package (runner/'s root holds packages, and __init__, __main__ and layout only);
nothing inside runner/ imports it; new code imports runner.session's modules.

    collect(paths)   -> the suites' cases and diagnostics               (runner.session.collect)
    validate(paths)  -> diagnostics only                                  (runner.session.collect)
    run(paths, ...)  -> a RunOutcome: the summary, the exit code, the report (runner.session.run)
    prepare_run(...) -> the parts of one run, for drivers that play cases their own way (runner.session.lifecycle)

People call runner.evaluate, aevaluate and evaluate_file (runner.frontends.python), built on the session.
"""
from __future__ import annotations

from ..results.verdict import EXIT_ERRORS, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_NO_CASES, EXIT_OK, EXIT_USAGE
from ..session.collect import ListedCase, Listing, collect, list_cases, validate
from ..session.ended import RunEnded
from ..session.events import RunEvents
from ..session.lifecycle import DEFAULT_REPORTS_ROOT, REPORT_FORMAT_VERSION, OpenRun, PreparedRun, prepare_run
from ..session.request import RunOutcome, RunRequest
from ..session.run import arun, run, run_request

__all__ = ["DEFAULT_REPORTS_ROOT", "EXIT_ERRORS", "EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_NO_CASES", "EXIT_OK",
           "EXIT_USAGE", "REPORT_FORMAT_VERSION", "ListedCase", "Listing", "OpenRun", "PreparedRun", "RunEnded",
           "RunEvents", "RunOutcome", "RunRequest", "arun", "collect", "list_cases", "prepare_run", "run",
           "run_request", "validate"]
