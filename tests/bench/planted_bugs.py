"""Plant one-line bugs in the code that makes every verdict earned (issue 15: checks with no judge, nothing-checked
cases, skip words, broken suites, validate's warnings, tabs, extra calls; issue 28 added keyword and argument
matching, the pass-rate gates, JUnit counts and goal order), one at a time, and count how many the tests catch.
Not a test: a tool for the exercise, run by hand (each missed bug costs a full pass). Issue 28's audit: the
faster suite must catch at least as many of these 30 as the suite before it.

    .venv/bin/python tests/bench/planted_bugs.py            # every planted bug
    .venv/bin/python tests/bench/planted_bugs.py M3 M9      # some of them

Each bug is an exact one-line replacement in one file; the file is restored after its run, also when the
script is interrupted. A bug is caught when the tests below fail with it in place (`pytest -x`).
"""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ["tests/checks/test_nothing_unchecked_passes.py", "tests/score/test_skip_words.py", "tests/suite/test_broken_suites.py", "tests/run/test_story_without_simulator.py", "tests/session/test_validate_all_at_once.py", "tests/score/test_extra_calls.py", "tests/suite/test_schema_language_server.py", "tests/checks/test_checks_text.py", "tests/checks/test_checks_compose.py", "tests/checks/test_checks_judged.py", "tests/checks/test_checks_profiles.py", "tests/checks/test_checks_graded.py", "tests/suite/test_reader.py", "tests/suite/test_load.py", "tests/results/test_folder_shape.py", "tests/score/test_score_case.py", "tests/suite/test_schema.py", "tests/checks/test_checks.py", "tests/frontends/cli/test_cli_validate.py", "tests/frontends/cli/test_checks_cli.py", "tests/report/test_report_formats.py", "tests/frontends/cli/test_cli_run.py", "tests/checks/test_calibrate.py", "tests/score/test_normalize.py"]
MUTANTS = [
    ("M1 no-judge skip not turned unscored", "runner/checks/run.py", "    if verdict.skipped == NO_JUDGE:", "    if verdict.unscored == NO_JUDGE:"),
    ("M2 fuzzy-off reason flipped", "runner/checks/run.py", "settings is not None and not settings.enable_fuzzy_matching", "settings is not None and settings.enable_fuzzy_matching"),
    ("M3 termination not a criterion", "runner/checks/run.py", "case.tool_goals() or case.text_goals() or case.forbid_extra_calls or case.termination", "case.tool_goals() or case.text_goals() or case.forbid_extra_calls"),
    ("M4 non-gating check counts as checked", "runner/checks/run.py", 'if any(c.gate and c.status in ("passed", "failed") for c in result.checks):', 'if any(c.status in ("passed", "failed") for c in result.checks):'),
    ("M5 settle rule inverted", "runner/checks/run.py", "    if only_checks:\n", "    if not only_checks:\n"),
    ("M6 apply rule inverted", "runner/checks/run.py", "        if not criteria_besides_checks(case):", "        if criteria_besides_checks(case):"),
    ("M7 all-skipped exits 0", "runner/results/verdict.py", '    if not counts["passed"]:  #', '    if not counts["passed"] and not counts["skipped"]:  #'),
    ("M8 'Off' dropped from false words", "runner/suite/models.py", '"off", "Off", "OFF")', '"off", "OFF")'),
    ("M9 transposition of non-neighbours", "runner/suite/shape.py", "diffs[1] == diffs[0] + 1", "diffs[1] >= diffs[0] + 1"),
    ("M10 first key never looked at", "runner/suite/shape.py", "    for key in data:\n        if not isinstance(key, str):", "    for key in list(data)[1:]:\n        if not isinstance(key, str):"),
    ("M11 *.test.json not recognised", "runner/suite/shape.py", r'r".*\.(evalset|test)\.json$"', r'r".*\.(evalset)\.json$"'),
    ("M13 encoding errors passed over", "runner/suite/load.py", 'if explicit or code == "encoding" or (code != "io"', 'if explicit or (code != "io"'),
    ("M14 outlines only for cases with an agent", "runner/suite/file_cases.py", 'if "id" in written and isinstance(case.get("id"), str):', 'if "id" in written and isinstance(case.get("agent"), str):'),
    ("M15 unbuilt cases left out of duplicates", "runner/suite/load.py", "duplicate_case_ids([*result.cases, *result.unbuilt])", "duplicate_case_ids(result.cases)"),
    ("M16 not-UTF-8 line off by one", "runner/util/files.py", 'line = raw.count(b"\\n", 0, exc.start) + 1', 'line = raw.count(b"\\n", 0, exc.start)'),
    ("M17 tab position off by one", "runner/suite/yaml_errors.py", 'return text[start + column - 1:start + column] == "\\t"', 'return text[start + column:start + column + 1] == "\\t"'),
    ("M18 judged checks gating by default forgotten", "runner/config/", 'spec.get("gate", True) is not False', 'spec.get("gate", False) is not False'),
    ("M19 story warning without agents", "runner/config/", "config.simulator is None and config.agents:", "config.simulator is None:"),
    ("M20 project default overrides the case's own", "runner/config/", 'if "forbid_extra_calls" in case.model_fields_set or not', 'if "forbid_extra_calls" not in case.model_fields_set or not'),
    ("M21 unreadable-argument calls not extra", "runner/score/case.py", '_EXTRA_ROLES = ("extra", "wrong_arguments", "invalid_arguments")', '_EXTRA_ROLES = ("extra", "wrong_arguments")'),
    ("M22 unplayed story added to passing cases", "runner/score/case.py", "    if failures and unplayed:", "    if unplayed:"),
    ("M23 '1 extra calls'", "runner/report/saved.py", "extra call{'s' if len(names) > 1 else ''}", "extra call{'s' if len(names) >= 1 else ''}"),
    ("M24 extra calls left off the case line", "runner/report/console.py", "    if result.extra_calls:  #", "    if result.extra_calls and result.status != 'passed':  #"),
    ("M25 a check's own judge ignored", "runner/config/", 'isinstance(own, dict) and own.get("model")', 'isinstance(own, dict) and own.get("judge")'),
    ("M12 capitalised suite keys missed", "runner/suite/shape.py", "    lowered = key.lower()", "    lowered = key"),
    ("M26 keywords matched case-sensitively", "runner/score/keywords.py", "    needle = keyword.casefold()\n", "    needle = keyword\n"),
    ("M27 a longer list accepted for the expected one", "runner/score/normalize.py",
     'def _multiset_difference(expected: list, actual: list, extra_args: str, where: str) -> Difference | None:\n    if len(expected) != len(actual):',
     'def _multiset_difference(expected: list, actual: list, extra_args: str, where: str) -> Difference | None:\n    if len(expected) > len(actual):'),
    ("M28 min_pass_rate reached 5 points short", "runner/results/verdict.py", "rate is not None and rate >= min_pass_rate:", "rate is not None and rate >= min_pass_rate - 0.05:"),
    ("M29 JUnit suites count no failures", "runner/report/junit.py", 'failures="{counts["failed"]}"', 'failures="0"'),
    ("M30 goal order edges read backwards", "runner/score/assign.py", "        elif ia < ib:\n", "        elif ia > ib:\n"),
]


def _file_of(relative: str, old: str) -> Path:
    """The file the bug goes in: `relative` itself, or (a folder, or a module the tree has since moved) the one
    file under it, or under runner/, that holds the line once."""
    path = ROOT / relative
    if path.is_file():
        return path
    where = path if path.is_dir() else ROOT / "runner"
    found = [f for f in where.rglob("*.py") if f.read_text(encoding="utf-8").count(old) == 1]
    return found[0] if len(found) == 1 else path


def main(only: list[str]) -> int:
    caught = total = 0
    for name, relative, old, new in MUTANTS:
        if only and name.split()[0] not in only:
            continue
        path = _file_of(relative, old)
        original = path.read_text(encoding="utf-8") if path.is_file() else ""
        if original.count(old) != 1:
            print(f"STALE   {name}: the line to change is not in {relative} once; update this script")
            continue
        previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # restore the file on SIGTERM too
        path.write_text(original.replace(old, new), encoding="utf-8")
        try:
            started = time.monotonic()
            done = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *TESTS],
                                  cwd=ROOT, capture_output=True, text=True)
            # the failure that caught it, or the error: an error unrelated to the bug (a missing tool, a test's own
            # fault) would pass for a catch, and the line shows it
            first = next((line for line in done.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))), "")
            total += 1
            caught += done.returncode != 0
            print(f"{'CAUGHT' if done.returncode else 'MISSED'}  {name}  {first}  ({time.monotonic() - started:.0f} s)",
                  flush=True)
        finally:
            path.write_text(original, encoding="utf-8")
            signal.signal(signal.SIGTERM, previous)
    print(f"caught {caught} of {total}")
    return 0 if caught == total else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
