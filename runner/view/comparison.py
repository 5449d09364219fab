"""Two runs side by side, as `evalrun compare` and the --baseline gate see them (runner.report.compare), and
for each case that changed, the first point where its two conversations part (divergence.py).

The runs' cases are read a chunk at a time; only what the comparison keeps (status, reason, metrics) and,
afterwards, the conversations of the cases that changed are held.
"""
from __future__ import annotations

from typing import Any

from ..report.compare import METRICS, compare_outcomes, outcomes
from .divergence import first_divergence
from .run_data import RunData

MAX_DIVERGENCES = 200  # changed cases whose conversations are compared; the rest are listed without
_EPSILON = 1e-9


def _slim(run: RunData) -> dict[str, Any]:
    """The report as outcomes() reads it, each case keyed as the app keys it (its variant in its id)."""
    cases = []
    for row, case in zip(run.rows, run.cases(), strict=False):
        metrics = found if isinstance(found := case.get("metrics"), dict) else {}
        cases.append({"id": row["key"], "status": case.get("status"), "repeat": case.get("repeat"),
                      "failures": case.get("failures"), "error": case.get("error"),
                      "unscored_reason": case.get("unscored_reason"), "skip_reason": case.get("skip_reason"),
                      "metrics": {n: metrics.get(n) for n in METRICS}})
    return {"summary": run.header.get("summary") or {}, "config": run.header.get("config") or {}, "cases": cases}


def compare_runs(old: RunData, new: RunData) -> dict[str, Any]:
    """The comparison page's data: flips, metric means, the gate's answer, the changed cases' divergences."""
    before, after = outcomes(_slim(old)), outcomes(_slim(new))
    c = compare_outcomes(before, after, old_label=old.run_id, new_label=new.run_id)
    settled_old, settled_new = before.settled(), after.settled()
    changed_scores = []
    for key, now in settled_new.items():
        was = settled_old.get(key)
        if was is None or was["status"] != now["status"]:
            continue
        deltas = {n: [was["metrics"][n], now["metrics"][n]] for n in METRICS
                  if n in was["metrics"] and n in now["metrics"]
                  and abs(was["metrics"][n] - now["metrics"][n]) > _EPSILON}
        if deltas:
            changed_scores.append({"case": key, "status": now["status"], "metrics": deltas})
    regressions = c.regressions(0.0)
    changed = [f.case for f in c.newly_failing] + [f.case for f in c.newly_passing] + \
        [s["case"] for s in changed_scores]
    divergences = _divergences(old, new, changed[:MAX_DIVERGENCES])
    flips = lambda found: [{"case": f.case, "old": f.old, "new": f.new, "reason": f.reason,  # noqa: E731
                            "divergence": divergences.get(f.case)} for f in found]
    for s in changed_scores:
        s["divergence"] = divergences.get(s["case"])
    return {"old": old.run_id, "new": new.run_id, "paired": c.paired,
            "newly_failing": flips(c.newly_failing), "newly_passing": flips(c.newly_passing),
            "changed_scores": changed_scores,
            "metrics": [{"name": m.name, "old": m.old, "new": m.new, "delta": m.delta, "cases": m.cases}
                        for m in c.metrics],
            "only_in_old": c.only_in_old, "only_in_new": c.only_in_new,
            "verdict": c.verdict(), "p_value": c.p_value, "bootstrap": c.bootstrap_text() or None,
            "gate": {"holds": not regressions, "regressions": regressions,
                     "said": "the new run holds the line against the old one (as --baseline OLD would decide)"
                     if not regressions else "the new run falls behind the old one: --baseline OLD would exit 1"},
            "divergences_left_out": max(0, len(changed) - MAX_DIVERGENCES)}


def _divergences(old: RunData, new: RunData, keys: list[str]) -> dict[str, Any]:
    """key -> the first divergence of its conversations (the first run of each side, for a repeated case), or
    {"same": True} when they do not part."""
    wanted = set(keys)
    first_old = _first_transcripts(old, wanted)
    first_new = _first_transcripts(new, wanted)
    out: dict[str, Any] = {}
    for key in keys:
        if key not in first_old or key not in first_new:
            continue
        found = first_divergence(first_old[key], first_new[key])
        out[key] = found if found is not None else {"same": True}
    return out


def _first_transcripts(run: RunData, wanted: set[str]) -> dict[str, list]:
    found: dict[str, list] = {}
    for i, row in enumerate(run.rows):
        if row["key"] in wanted and row["key"] not in found:
            transcript = run.case(i).get("transcript")
            found[row["key"]] = transcript if isinstance(transcript, list) else []
    return found
