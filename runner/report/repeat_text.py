"""The words every report format uses for --repeat auto (runner.results.auto_repeat): the rule, the runs it
made, how many runs each case needed and which cases were still in doubt at the maximum. From the saved
summary's `repeats` (a dict), so `evalrun report RUN_DIR` says the same as the run did."""
from __future__ import annotations

from collections import Counter


def auto_repeat_text(repeats: dict) -> str | None:
    """`--repeat auto (95% Wilson interval of each case's pass rate vs 0.5, 3 to 10 runs): 412 runs of at most
    2000 (21%); runs per case: 4 runs x 150, 10 runs x 50; settled 180 (passed 120, failed 60), in doubt 20`;
    None without --repeat auto."""
    rule = repeats.get("auto")
    if not rule:
        return None
    cases = repeats.get("per_case") or []
    most = rule["max"] * len(cases)
    share = f" ({rule['total_runs'] / most:.0%})" if most else ""
    needed = Counter(case["runs"] for case in cases)
    per_case = ", ".join(f"{runs} runs x {count}" for runs, count in sorted(needed.items()))
    settled = Counter(case.get("settled") for case in cases)
    return (f"--repeat auto ({rule['confidence']:.0%} Wilson interval of each case's pass rate vs "
            f"{rule['threshold']:g}, {rule['min']} to {rule['max']} runs): {rule['total_runs']} runs of at most "
            f"{most}{share}; runs per case: {per_case or 'none'}; settled {settled['passed'] + settled['failed']} "
            f"(passed {settled['passed']}, failed {settled['failed']}), in doubt {settled[None]}")


def in_doubt(repeats: dict) -> list[str]:
    """The cases --repeat auto left unsettled at its maximum (none without it)."""
    if not repeats.get("auto"):
        return []
    return [case["id"] for case in repeats.get("per_case") or [] if case.get("settled") is None]
