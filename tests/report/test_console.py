"""The console's own lines, as a person reads them: the progress line, -v goal lines, grouped repeats."""
from __future__ import annotations

import io

from runner.report.console import Console, Progress


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_the_progress_line_names_only_the_outcomes_that_happened():
    clock = Clock()
    progress = Progress(Console(io.StringIO()), 10, clock=clock)
    for _ in range(4):
        progress.case(None, "passed")
    clock.now = 2.0
    assert progress.status_line() == "[4/10] 4 passed, 2s elapsed, about 3s left"  # never "0 not passed"
    progress.case(None, "failed")
    progress.case(None, "unscored")
    progress.case(None, "skipped")
    clock.now = 7.0
    assert progress.status_line() == "[7/10] 4 passed, 1 failed, 1 unscored, 1 skipped, 7s elapsed, about 3s left"
    for _ in range(3):
        progress.case(None, "error")
    assert progress.status_line() == "[10/10] 4 passed, 1 failed, 3 error, 1 unscored, 1 skipped, 7s elapsed"


def _result(case_id, status, repeat=None, failures=(), error=None):
    from runner.results.models import CaseResult

    return CaseResult(id=case_id, status=status, repeat=repeat, source="suites/s.yaml:3:1", failures=list(failures),
                      error=error)


def test_the_failures_of_a_repeated_case_are_explained_once_with_the_repeats_named():
    from runner.report.console import print_failures

    same = "goal 'look': called lookup 1 time(s), never with matching arguments"
    results = [_result("a", "failed", 0, [same]), _result("a", "passed", 1),
               _result("a", "failed", 2, [same, "extra call: cancel_order"]),
               _result("a", "error", 3, error="agent timed out"),
               _result("b", "failed", None, [same]), _result("c", "failed", 0, [same])]
    stream = io.StringIO()
    print_failures(Console(stream), results)
    assert stream.getvalue().splitlines() == [
        "", "=" * 30 + " failures " + "=" * 30,
        "ERROR a (repeats 0, 2, 3)",
        "  suites/s.yaml:3:1",
        f"  - {same}  [repeat 0, 2]",
        "  - extra call: cancel_order  [repeat 2]",
        "  error: agent timed out  [repeat 3]",
        "",
        "FAIL b", "  suites/s.yaml:3:1", f"  - {same}", "",
        "FAIL c (repeat 0)", "  suites/s.yaml:3:1", f"  - {same}", "",
    ]
