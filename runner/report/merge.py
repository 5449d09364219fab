"""`evalrun merge REPORT... -o DIR`: the shards of a CI matrix (--shard I/N) joined into one report.

Each shard's report.json is read as plain data; the merged report holds every shard's cases (shard 1's
first) and a summary counted again from them, with one verdict and exit code decided as a single run
would (runner.results.summary). Shards that do not belong together are refused with the reason: a different
suite or configuration, a different N, the same shard twice, or a case in two shards.
"""
from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..results.models import CaseResult
from ..results.summary import Tally
from ..util.atomic import open_atomically


class MergeError(ValueError):
    """The reports cannot be merged; the message says which and why."""


def _same(what: str, values: dict[str, Any]) -> None:
    first_path, first = next(iter(values.items()))
    for path, value in values.items():
        if value != first:
            raise MergeError(f"{path} ran a different {what} than {first_path}: only shards of one run can be merged")


def merge_reports(sources: Sequence[Path], *, min_pass_rate: float | None = None) -> dict[str, Any]:
    """The merged report as plain data (the shape of report.json). NotAReport or MergeError."""
    from ..util.shard import parse_shard
    from .saved import load_report

    if not sources:
        raise MergeError("give the report.json (or run folder) of every shard")
    reports = {}
    for source in sources:
        if str(source) in reports:
            raise MergeError(f"{source} is given twice")
        reports[str(source)] = load_report(source)
    shards = {}
    for path, report in reports.items():
        if not report.get("shard"):
            raise MergeError(f"{path} is not a shard: it was not run with --shard I/N")
        shards[path] = parse_shard(str(report["shard"]))
    for path, report in reports.items():  # each variant's tally and the grid are not joined across shards yet
        if report.get("matrix"):
            raise MergeError(f"{path} is a shard of a --matrix run, which `evalrun merge` cannot join yet: run the "
                             "matrix without --shard, or each variant as a run of its own (--agent)")
    _same("suite (paths)", {p: r.get("paths") for p, r in reports.items()})
    _same("configuration", {p: r.get("config") for p, r in reports.items()})
    _same("number of shards", {p: s.count for p, s in shards.items()})
    _same("--agent", {p: r.get("agent") for p, r in reports.items()})
    _same("selection (-k, --tag)", {p: ((r.get("selection") or {}).get("filters"), (r.get("selection") or {}).get("tags"))
                                    for p, r in reports.items()})
    _same("--repeat", {p: ((r["summary"].get("repeats") or {}).get("runs"), (r["summary"].get("repeats") or {})
                           .get("policy")) for p, r in reports.items()})
    seen_shard: dict[int, str] = {}
    for path, shard in shards.items():
        if shard.index in seen_shard:
            raise MergeError(f"{path} and {seen_shard[shard.index]} are both shard {shard}")
        seen_shard[shard.index] = path
    ordered = sorted(reports, key=lambda p: shards[p].index)

    first = reports[ordered[0]]
    repeats = first["summary"].get("repeats") or {}
    tally = Tally([], repeats=int(repeats.get("runs") or 1), policy=repeats.get("policy") or "all")
    owner: dict[str, str] = {}
    cases: list[dict] = []
    interrupted, stops = False, []
    for path in ordered:
        report, summary = reports[path], reports[path]["summary"]
        ids = []
        for case in report["cases"]:
            result = CaseResult.model_validate(case)
            case_id = str(case.get("id"))
            if case_id in owner and owner[case_id] != path:
                raise MergeError(f"case '{case_id}' is in both {owner[case_id]} and {path}: shards must not overlap")
            owner[case_id] = path
            tally.add(result, case_id)
            if case_id not in ids:
                ids.append(case_id)
            cases.append(case)
        tally.selected += ids + [i for i in summary.get("not_run") or [] if i not in ids]
        if summary.get("interrupted") or summary.get("stop_reason"):
            interrupted = interrupted or bool(summary.get("interrupted"))
            stops.append(f"shard {shards[path]}: {summary.get('stop_reason') or 'stopped'}")
    missing = sorted(set(range(1, shards[ordered[0]].count + 1)) - set(seen_shard))
    config = first.get("config") or {}
    judge = config.get("judge") or {}
    gate = min_pass_rate if min_pass_rate is not None else config.get("min_pass_rate")
    merged = tally.summary(min_pass_rate=gate, judge_may_fall_back=bool(judge.get("offline_fallback")),
                           stop_reason="; ".join(stops) or None, interrupted=interrupted,
                           elapsed_s=max(float(r["summary"].get("duration_s") or 0) for r in reports.values()))
    if missing:
        # a missing shard is a run that did not finish: its cases are unknown, so the verdict cannot be a pass
        merged.stop_reason = f"shard(s) {', '.join(f'{m}/{shards[ordered[0]].count}' for m in missing)} missing"
        merged.exit_code = 3
        merged.exit_reason = f"{merged.stop_reason}: the merged report covers only part of the suite: exit 3"
    return {"version": first.get("version"), "evalrun_version": first.get("evalrun_version"),
            "run_id": "merged-" + "+".join(str(reports[p].get("run_id") or "") for p in ordered),
            "started_at": min(str(r.get("started_at") or "") for r in reports.values()) or
            _dt.datetime.now(_dt.timezone.utc).isoformat(),
            "paths": first.get("paths") or [], "selection": _merged_selection([reports[p] for p in ordered]),
            "agent": first.get("agent"), "merged_from": [str(Path(p)) for p in ordered],
            "config": config, "summary": json.loads(merged.model_dump_json()), "cases": cases}


def _merged_selection(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """The shards' -k and --tag (the same in each); --last-failed's ids of every shard together."""
    selections = [r.get("selection") or {} for r in reports]
    chosen = [only for s in selections if (only := s.get("only")) is not None]
    return {"filters": selections[0].get("filters") or [], "tags": selections[0].get("tags") or [],
            "only": [case_id for ids in chosen for case_id in ids] if chosen else None}


def check_baseline(report: dict[str, Any], baseline: Path, max_regression: float) -> None:
    """The --baseline gate on the merged report, as a single run would apply it (runner.report.compare.Baseline).
    NotAReport when `baseline` is not a report."""
    from ..results.models import Summary
    from .compare import Baseline, outcomes

    gate = Baseline(baseline, max_regression)
    gate.new = outcomes(report)
    summary = Summary.model_validate(report["summary"])
    gate.check(summary, gate.new.policy)
    report["summary"] = json.loads(summary.model_dump_json())


def write_merged(report: dict[str, Any], out_dir: Path) -> Path:
    """report.json in `out_dir`, written under a temporary name and renamed into place."""
    target = out_dir / "report.json"
    with open_atomically(target, durable=True) as out:
        json.dump(report, out, ensure_ascii=False)
        out.write("\n")
    return target
