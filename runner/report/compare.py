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
from typing import Any

from ..results.stats import mcnemar_exact

METRICS = ("journey_completion", "tool_call_precision", "tool_call_recall")
SIGNIFICANCE = 0.05
BOOTSTRAP_RESAMPLES = 2000
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
    # with repeats: (mean difference of the per-case pass shares new - old, 95% low, high), paired bootstrap
    bootstrap: tuple[float, float, float] | None = None

    def bootstrap_text(self) -> str:
        if self.bootstrap is None:
            return ""
        mean, low, high = self.bootstrap
        verdict = "excludes 0: more than chance" if low > 0 or high < 0 else "includes 0: could be chance"
        return (f"pass-rate difference over runs (new - old): {mean * 100:+.1f} points, 95% paired bootstrap interval "
                f"{low * 100:+.1f} to {high * 100:+.1f} ({BOOTSTRAP_RESAMPLES} resamples of the {self.paired} cases, "
                f"seed 0): {verdict}")

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
    run, variant = case.get("run"), case.get("variant")  # a --matrix run compares per (case, variant)
    key = str(case.get("id")) if run is None else f"{case.get('id')} (run {run})"
    return key if variant is None else f"{key} [{variant}]"


class Outcomes:
    """Each case's outcome, gathered row by row (a repeated case has one row per run) and settled by the
    run's repeat_policy: its status, a one-line reason, its metrics (averaged over its runs) and its
    pass share (passed runs / runs; 0 or 1 without repeats)."""

    def __init__(self, policy: str = "all"):
        self.policy = policy
        self.rows: dict[str, dict] = {}
        self.repeated = False

    def add(self, key: str, status: str, reason: str, metrics: dict[str, float], repeat: int | None) -> None:
        row = self.rows.setdefault(key, {"statuses": [], "reason": "", "sums": {}, "ns": {}})
        row["statuses"].append(status)
        self.repeated = self.repeated or repeat is not None
        if status != "passed" and reason and not row["reason"]:
            row["reason"] = reason if repeat is None else f"repeat {repeat}: {reason}"
        for name, value in metrics.items():
            row["sums"][name] = row["sums"].get(name, 0.0) + value
            row["ns"][name] = row["ns"].get(name, 0) + 1

    def settled(self) -> dict[str, dict]:
        from ..results.summary import repeated_status

        out = {}
        for key, row in self.rows.items():
            runs = [s for s in row["statuses"] if s != "skipped"]
            out[key] = {"status": repeated_status(row["statuses"], self.policy) if len(row["statuses"]) > 1
                        else row["statuses"][0],
                        "reason": row["reason"],
                        "share": runs.count("passed") / len(runs) if runs else None,
                        "metrics": {n: row["sums"][n] / row["ns"][n] for n in row["sums"]}}
        return out


def outcomes(report: dict) -> Outcomes:
    """The outcomes of a saved report (plain dicts); only what a comparison needs is kept."""
    from .saved import one_line_reason

    repeats = (report.get("summary") or {}).get("repeats") or {}
    policy = repeats.get("policy") or (report.get("config") or {}).get("repeat_policy") or "all"
    kept = Outcomes(policy)
    for case in report.get("cases") or []:
        if not isinstance(case, dict):
            continue
        metrics = given if isinstance(given := case.get("metrics"), dict) else {}
        kept.add(case_key(case), str(case.get("status")), one_line_reason(case),
                 {n: v for n in METRICS if isinstance(v := metrics.get(n), (int, float))}, case.get("repeat"))
    return kept


def compare_outcomes(old_outcomes: Outcomes, new_outcomes: Outcomes, *, old_label: str = "old",
                     new_label: str = "new", seed: int = 0) -> Comparison:
    old, new = old_outcomes.settled(), new_outcomes.settled()
    result = Comparison(old_label, new_label)
    shares: list[tuple[float, float]] = []
    result.only_in_old = [k for k in old if k not in new]
    result.only_in_new = [k for k in new if k not in old]
    sums = {name: [0.0, 0.0, 0] for name in METRICS}
    for key, after in new.items():
        before = old.get(key)
        if before is None or "skipped" in (before["status"], after["status"]):
            continue
        result.paired += 1
        if before["share"] is not None and after["share"] is not None:
            shares.append((before["share"], after["share"]))
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
    result.metrics = [MetricDelta(name, s_old / n, s_new / n, int(n)) for name, (s_old, s_new, n) in sums.items() if n]
    if (old_outcomes.repeated or new_outcomes.repeated) and shares:
        from ..results.stats import paired_bootstrap_interval

        result.bootstrap = paired_bootstrap_interval([a for a, _ in shares], [b for _, b in shares],
                                                     resamples=BOOTSTRAP_RESAMPLES, seed=seed)
    return result


def compare_reports(old_path: Path, new_path: Path) -> Comparison:
    """Compare two saved runs (each a run folder or a report.json). NotAReport when one is not a report."""
    from .saved import load_report

    return compare_outcomes(outcomes(load_report(old_path)), outcomes(load_report(new_path)),
                            old_label=str(old_path), new_label=str(new_path))


# ---------------------------------------------------------------------- rendering

def visible(text: str) -> str:
    from .console import visible as shown

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
    if c.bootstrap is not None:
        lines.append(c.bootstrap_text())
    return "\n".join(lines) + "\n"


def _md(text: Any) -> str:
    """A table cell from hostile text: one line, pipes and markup characters escaped."""
    from .console import visible

    cell = " ".join(visible(str(text)).split())
    for ch in "\\`*_[]<>|#":
        cell = cell.replace(ch, "\\" + ch)
    return cell


def as_markdown(c: Comparison, max_regression: float = 0.0) -> str:
    lines = ["## evalrun: comparison with the baseline", "",
             f"{c.paired} case(s) compared; **{len(c.newly_failing)} newly failing**, "
             f"**{len(c.newly_passing)} newly passing**.", "", f"{_md(c.verdict())}", ""]
    if c.bootstrap is not None:
        lines += [_md(c.bootstrap_text()), ""]
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
        from .saved import load_report

        self.path = path
        self.max_regression = max_regression
        self.old = outcomes(load_report(path))  # NotAReport when it is not one
        self.new = Outcomes()
        self._saved: list[tuple] = []  # (where the result sits in the run, its row), as results arrive

    def add(self, result, where: tuple = ()) -> None:
        """One saved result of the new run (a CaseResult or its digest); `where`: its (case position, part) in
        the run. Rows are counted in that order at `check`, not in the order a process pool saves them, so the
        comparison's lists and sums are those of a run in one process."""
        metrics = result.metrics
        values = {n: getattr(metrics, n) for n in METRICS if metrics is not None and getattr(metrics, n) is not None}
        self._saved.append((where, case_key({"id": result.id, "run": result.run, "variant": getattr(result, "variant", None)}), result.status,
                            _first_reason(result), values, result.repeat))

    def count_saved(self) -> None:
        """The rows added so far, into `new`, in their order in the run."""
        for _, *row in sorted(self._saved, key=lambda saved: saved[0]):
            self.new.add(*row)
        self._saved = []

    def compare(self, policy: str = "all"):
        """The new run against the baseline: (the gate's finding for runner.results.verdict, the record for the
        summary's `baseline`)."""
        from ..results.models import BaselineCheck
        from ..results.verdict import BaselineGate

        self.count_saved()
        self.new.policy = policy
        c = compare_outcomes(self.old, self.new, old_label=str(self.path), new_label="this run")
        regressions = c.regressions(self.max_regression)
        record = BaselineCheck(
            baseline=str(self.path), max_regression=self.max_regression, compared=c.paired,
            newly_failing=[f.case for f in c.newly_failing], newly_passing=[f.case for f in c.newly_passing],
            metric_deltas={m.name: round(m.delta, 6) for m in c.metrics}, p_value=c.p_value, regressions=regressions)
        return BaselineGate(str(self.path), regressions, len(c.newly_passing), c.paired), record

    def check(self, summary, policy: str = "all") -> None:
        """On a summary already decided (a merged report): record the comparison and let the verdict say
        whether the run fell behind (runner.results.verdict.with_baseline)."""
        from ..results.verdict import Verdict, with_baseline

        gate, summary.baseline = self.compare(policy)
        verdict = with_baseline(Verdict(summary.exit_code, summary.exit_reason), gate)
        summary.exit_code, summary.exit_reason = verdict.exit_code, verdict.reason


def _first_reason(result) -> str:
    for line in (result.failures or []) + [result.error or "", result.unscored_reason or ""]:
        if line:
            return " ".join(str(line).split())
    return ""
