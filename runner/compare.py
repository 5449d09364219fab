"""Two runs side by side: which cases flipped, how the metric means moved, and whether it is more than chance.

Used by `evalrun compare OLD NEW` and by the `--baseline` gate of a run. Both read saved reports
(report.json as plain dicts, runner.report.saved): nothing here scores or runs anything.

Cases are paired by id (and by recorded run, for watsonx's <id>.runN files). A case counts as passing
only with status `passed`; failed, error and unscored all count as not passing (a case that now errors
is a regression too). Skipped cases and cases present in one run only are not compared, and are listed.

Metric means are compared over the cases scored in both runs, so a run narrowed with -k is compared with
the same cases of the baseline. A drop is in the metric's own unit: the metrics are shares in [0, 1], so
`max_regression` 0.05 allows a mean to fall by five percentage points.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from .stats import mcnemar_exact

METRICS = ("journey_completion", "tool_call_precision", "tool_call_recall")
SIGNIFICANCE = 0.05
_LISTED = 10  # ids named in a one-line reason before "and N more"


@dataclass
class Flip:
    case: str
    old: str
    new: str
    reason: str = ""  # why the case does not pass now (or did not before), one line


@dataclass
class MetricDelta:
    name: str
    old: float
    new: float
    cases: int  # scored in both runs

    @property
    def delta(self) -> float:
        return self.new - self.old


@dataclass
class Comparison:
    old_label: str
    new_label: str
    paired: int = 0  # cases compared (in both runs, skipped in neither)
    newly_failing: list[Flip] = field(default_factory=list)
    newly_passing: list[Flip] = field(default_factory=list)
    metrics: list[MetricDelta] = field(default_factory=list)
    only_in_old: list[str] = field(default_factory=list)
    only_in_new: list[str] = field(default_factory=list)

    @property
    def p_value(self) -> float:
        """Exact McNemar: could this many flips, split this way, happen by chance?"""
        return mcnemar_exact(len(self.newly_failing), len(self.newly_passing))

    def verdict(self) -> str:
        failing, passing = len(self.newly_failing), len(self.newly_passing)
        if failing + passing == 0:
            return "no case changed outcome: nothing to test"
        p = self.p_value
        flips = f"exact McNemar test on the {failing + passing} case(s) that flipped ({failing} newly failing, " \
                f"{passing} newly passing): p = {p:.3g}"
        if p < SIGNIFICANCE:
            direction = "worse" if failing > passing else "better"
            return f"{flips}: the new run is {direction}, more than chance (p < {SIGNIFICANCE})"
        return f"{flips}: the difference could be chance (p >= {SIGNIFICANCE})"

    def metric_drops(self, max_regression: float) -> list[MetricDelta]:
        # a tiny tolerance: means of the same cases summed in another order differ in the last bits
        return [m for m in self.metrics if m.delta < -max_regression - 1e-12]

    def regressions(self, max_regression: float) -> list[str]:
        """What fails the --baseline gate, one phrase each; empty when the new run holds the line."""
        problems = []
        if self.newly_failing:
            problems.append(f"{len(self.newly_failing)} case(s) that passed in the baseline now fail "
                            f"({_ids([f.case for f in self.newly_failing])})")
        for m in self.metric_drops(max_regression):
            problems.append(f"mean {m.name} dropped {-m.delta:.3f} ({m.old:.3f} → {m.new:.3f}, allowed "
                            f"{max_regression:.3f})")
        return problems


def _ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:_LISTED])
    return shown + (f" and {len(ids) - _LISTED} more" if len(ids) > _LISTED else "")


def case_key(case: dict) -> str:
    run = case.get("run")
    return str(case.get("id")) if run is None else f"{case.get('id')} (run {run})"


def outcomes(report: dict) -> dict[str, dict]:
    """key -> the case's status, one-line reason and metrics; only what a comparison needs is kept."""
    from .report.saved import one_line_reason

    kept = {}
    for case in report.get("cases") or []:
        if not isinstance(case, dict):
            continue
        metrics = case.get("metrics") if isinstance(case.get("metrics"), dict) else {}
        kept[case_key(case)] = {"status": case.get("status"), "reason": one_line_reason(case),
                                "metrics": {n: metrics.get(n) for n in METRICS if isinstance(metrics.get(n), (int, float))}}
    return kept


def compare_outcomes(old: dict[str, dict], new: dict[str, dict], *, old_label: str = "old",
                     new_label: str = "new") -> Comparison:
    result = Comparison(old_label, new_label)
    result.only_in_old = [k for k in old if k not in new]
    result.only_in_new = [k for k in new if k not in old]
    sums = {name: [0.0, 0.0, 0] for name in METRICS}
    for key, after in new.items():
        before = old.get(key)
        if before is None or "skipped" in (before["status"], after["status"]):
            continue
        result.paired += 1
        was, now = before["status"] == "passed", after["status"] == "passed"
        if was and not now:
            result.newly_failing.append(Flip(key, before["status"], after["status"], after["reason"]))
        elif now and not was:
            result.newly_passing.append(Flip(key, before["status"], after["status"], before["reason"]))
        for name in METRICS:
            a, b = before["metrics"].get(name), after["metrics"].get(name)
            if a is not None and b is not None:
                sums[name][0] += a
                sums[name][1] += b
                sums[name][2] += 1
    result.metrics = [MetricDelta(name, s_old / n, s_new / n, n) for name, (s_old, s_new, n) in sums.items() if n]
    return result


def compare_reports(old_path: Path, new_path: Path) -> Comparison:
    """Compare two saved runs (each a run folder or a report.json). NotAReport when one is not a report."""
    from .report.saved import load_report

    return compare_outcomes(outcomes(load_report(old_path)), outcomes(load_report(new_path)),
                            old_label=str(old_path), new_label=str(new_path))


# ---------------------------------------------------------------------- rendering

def visible(text: str) -> str:
    from .report.console import visible as shown

    return shown(text)


def as_text(c: Comparison, max_regression: float = 0.0) -> str:
    lines = [f"compared {c.paired} case(s): {c.old_label} → {c.new_label}"]
    for title, flips, when in (("newly failing", c.newly_failing, "now"), ("newly passing", c.newly_passing, "was")):
        lines.append(f"{title}: {len(flips)}")
        for flip in flips:
            lines.append(f"  {visible(flip.case)}: {flip.old} → {flip.new}" +
                         (f" ({when}: {visible(flip.reason)})" if flip.reason else ""))
    if c.metrics:
        lines.append("metric means (cases scored in both):")
        for m in c.metrics:
            flag = "  (regression)" if m in c.metric_drops(max_regression) else ""
            lines.append(f"  {m.name}: {m.old:.3f} → {m.new:.3f} ({m.delta:+.3f}, {m.cases} cases){flag}")
    for title, ids in (("only in old", c.only_in_old), ("only in new", c.only_in_new)):
        if ids:
            lines.append(f"{title} (not compared): {len(ids)}: {visible(_ids(ids))}")
    lines.append(c.verdict())
    return "\n".join(lines) + "\n"


def _md(text: Any) -> str:
    """A table cell from hostile text: one line, pipes and markup characters escaped."""
    from .report.console import visible

    cell = " ".join(visible(str(text)).split())
    for ch in "\\`*_[]<>|#":
        cell = cell.replace(ch, "\\" + ch)
    return cell


def as_markdown(c: Comparison, max_regression: float = 0.0) -> str:
    lines = ["## evalrun: comparison with the baseline", "",
             f"{c.paired} case(s) compared; **{len(c.newly_failing)} newly failing**, "
             f"**{len(c.newly_passing)} newly passing**.", "", f"{_md(c.verdict())}", ""]
    for title, flips, why in (("Newly failing", c.newly_failing, "why it fails now"),
                              ("Newly passing", c.newly_passing, "why it failed before")):
        if flips:
            lines += [f"### {title}", "", f"| case | was | now | {why} |", "|---|---|---|---|"]
            lines += [f"| {_md(f.case)} | {f.old} | {f.new} | {_md(f.reason)} |" for f in flips]
            lines.append("")
    if c.metrics:
        lines += ["### Metric means", "", "| metric | old | new | change | cases |", "|---|---:|---:|---:|---:|"]
        for m in c.metrics:
            flag = " ⚠" if m in c.metric_drops(max_regression) else ""
            lines.append(f"| {m.name} | {m.old:.3f} | {m.new:.3f} | {m.delta:+.3f}{flag} | {m.cases} |")
        lines.append("")
    for title, ids in (("Only in the old run", c.only_in_old), ("Only in the new run", c.only_in_new)):
        if ids:
            lines += [f"{title} (not compared): {_md(_ids(ids))}", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


# ---------------------------------------------------------------------- the --baseline gate of a run

class Baseline:
    """A saved run that a new run must not fall behind. Read before the run starts (so a wrong path is
    a usage error, not a wasted run); the new run's outcomes are added as its results are saved."""

    def __init__(self, path: Path, max_regression: float):
        from .report.saved import load_report

        self.path = path
        self.max_regression = max_regression
        self.old = outcomes(load_report(path))  # NotAReport when it is not one
        self.new: dict[str, dict] = {}

    def add(self, result) -> None:
        """One saved CaseResult of the new run."""
        metrics = result.metrics
        self.new[case_key({"id": result.id, "run": result.run})] = {
            "status": result.status, "reason": _first_reason(result),
            "metrics": {n: getattr(metrics, n) for n in METRICS if metrics is not None and getattr(metrics, n) is not None}}

    def check(self, summary) -> None:
        """Record the comparison in `summary` and, when the run fell behind, make it exit 1 and say why."""
        from .results import BaselineCheck

        c = compare_outcomes(self.old, self.new, old_label=str(self.path), new_label="this run")
        regressions = c.regressions(self.max_regression)
        summary.baseline = BaselineCheck(
            baseline=str(self.path), max_regression=self.max_regression, compared=c.paired,
            newly_failing=[f.case for f in c.newly_failing], newly_passing=[f.case for f in c.newly_passing],
            metric_deltas={m.name: round(m.delta, 6) for m in c.metrics}, p_value=c.p_value, regressions=regressions)
        before = summary.exit_reason.rsplit(": exit ", 1)[0]
        if summary.exit_code not in (0, 1):  # interrupted or errors: that is the verdict that matters
            return
        if regressions:
            summary.exit_code = 1
            summary.exit_reason = f"baseline {self.path}: " + "; ".join(regressions) + \
                                  (f"; {before}" if before and not before.startswith(("all cases passed", "nothing failed")) else "") + \
                                  ": exit 1"
        else:
            summary.exit_reason = f"{before}; no regression against baseline {self.path} " \
                                  f"({len(c.newly_passing)} newly passing, {c.paired} compared): exit {summary.exit_code}"


def _first_reason(result) -> str:
    for line in (result.failures or []) + [result.error or "", result.unscored_reason or ""]:
        if line:
            return " ".join(str(line).split())
    return ""
