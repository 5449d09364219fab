"""How close does evalrun come to watsonx Orchestrate's own metrics on its recorded runs? (a script, not a test)

    .venv/bin/python tests/bench/watsonx_agreement.py ../shared/data/watsonx-examples/
    .venv/bin/python tests/bench/watsonx_agreement.py DIR --keep /tmp/wx --config offline

DIR holds watsonx's recorded runs, `<name>.runN.messages.json` (watsonx's message format, passed to evalrun
unmodified but for tool names, below) with the metrics watsonx computed for them, `<name>.runN.metrics.json`,
and the datasets they were run from: `<name>.json`, or `evaluate__<name>.json` as the ADK examples name them.
Each run becomes one evalrun case: the dataset as it is (evalrun reads watsonx datasets unmodified) plus a
`transcript` key naming the run. The real evalrun CLI scores them in a subprocess and this script compares, per
run, what both sides report:

- journey success: watsonx `is_success` / evalrun `journey_success`;
- tool-call precision and recall: `tool_call_precision`, `tool_call_recall` (equal to 2 decimals; watsonx rounds);
- text match: watsonx `text_match` ("Summary Matched" or not) / evalrun `text_match` = 1.0;
- the counts behind them: total and correct tool calls.

The recorded runs call the tools `*_hr_usecase` where the datasets say `*_hr_agent` (the agent was renamed between
recording and publishing): `--rename SUFFIX=SUFFIX` (default `_hr_usecase=_hr_agent`) maps the names in the
copied transcripts, so evalrun itself needs no special case.

`--config` picks how text answers are compared: `default` (fuzzy matching with the offline embedding stage, as
a user without a judge runs it) or `offline` (keywords and strict comparison only, nothing to download).
watsonx decided text matches with an LLM judge, so without one the reference answers are the least comparable part.

Exit status: 0 whenever the comparison ran (disagreements included); 2 when the run itself broke.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from agreement import Broken, prepare_workspace, run_evalrun

RUN_MESSAGES = re.compile(r"^(?P<name>.+)\.run(?P<run>\d+)\.messages\.json$")
CONFIGS = {
    "default": {"enable_fuzzy_matching": True, "embeddings": {"enabled": True}, "cache_dir": ".evalrun/cache"},
    "offline": {"enable_fuzzy_matching": False, "embeddings": {"enabled": False}, "cache_dir": ".evalrun/cache"},
}
PRECISION = 2  # watsonx prints its ratios rounded to 2 decimals (0.67)


@dataclass
class Run:
    name: str
    run: int
    messages: Path
    metrics: dict
    dataset: Path

    @property
    def case_id(self) -> str:
        return f"{self.name}-run{self.run}"


def find_runs(root: Path) -> list[Run]:
    runs = []
    for messages in sorted(root.glob("*.messages.json")):
        found = RUN_MESSAGES.match(messages.name)
        if not found:
            continue
        name, number = found.group("name"), int(found.group("run"))
        metrics_path = messages.with_name(f"{name}.run{number}.metrics.json")
        if not metrics_path.is_file():
            raise Broken(f"{messages}: no {metrics_path.name} beside it")
        dataset = next((p for p in (root / f"{name}.json", root / f"evaluate__{name}.json") if p.is_file()), None)
        if dataset is None:
            raise Broken(f"{messages}: no dataset {name}.json or evaluate__{name}.json in {root}")
        try:
            metrics = json.loads(metrics_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise Broken(f"{metrics_path}: cannot read: {exc}") from None
        runs.append(Run(name, number, messages, metrics, dataset))
    if not runs:
        raise Broken(f"{root}: no <name>.runN.messages.json files")
    return runs


def renamed_transcript(path: Path, renames: list[tuple[str, str]]) -> list[dict]:
    """The recorded messages with tool names mapped (a tool call's content is a JSON string holding `name`)."""
    messages = json.loads(path.read_text(encoding="utf-8"))
    for message in messages:
        if message.get("type") not in ("tool_call", "tool_response") or not isinstance(message.get("content"), str):
            continue
        body = json.loads(message["content"])
        name = body.get("name")
        for old, new in renames:
            if isinstance(name, str) and name.endswith(old):
                body["name"] = name[: -len(old)] + new
        message["content"] = json.dumps(body, ensure_ascii=False)
    return messages


def write_cases(runs: list[Run], work: Path, mode: str, renames: list[tuple[str, str]]) -> None:
    suites = work / f"suites-{mode}"
    suites.mkdir(parents=True, exist_ok=True)
    for run in runs:
        transcript = suites / "runs" / run.messages.name
        transcript.parent.mkdir(parents=True, exist_ok=True)
        transcript.write_text(json.dumps(renamed_transcript(run.messages, renames), indent=1), encoding="utf-8")
        dataset = json.loads(run.dataset.read_text(encoding="utf-8"))
        dataset.update(id=run.case_id, transcript=f"runs/{run.messages.name}")
        (suites / f"{run.case_id}.json").write_text(json.dumps(dataset, indent=1), encoding="utf-8")
    (work / "evalrun.yaml").write_text(yaml.safe_dump(CONFIGS[mode], sort_keys=False), encoding="utf-8")


def comparisons(run: Run, case: dict) -> list[tuple[str, Any, Any, bool]]:
    """(metric, watsonx, evalrun, agree) for one run."""
    ours = case.get("metrics") or {}
    counts = ours.get("counts") or {}
    theirs = run.metrics
    text_ours = ours.get("text_match")
    rows = [
        ("journey success", theirs.get("is_success"), ours.get("journey_success"),
         theirs.get("is_success") == ours.get("journey_success")),
        ("tool-call precision", theirs.get("tool_call_precision"), ours.get("tool_call_precision"),
         _same_ratio(theirs.get("tool_call_precision"), ours.get("tool_call_precision"))),
        ("tool-call recall", theirs.get("tool_call_recall"), ours.get("tool_call_recall"),
         _same_ratio(theirs.get("tool_call_recall"), ours.get("tool_call_recall"))),
        ("text match", theirs.get("text_match"), text_ours,
         (theirs.get("text_match") == "Summary Matched") == (text_ours == 1.0)),
        ("tool calls", theirs.get("total_tool_calls"), counts.get("tool_calls"),
         theirs.get("total_tool_calls") == counts.get("tool_calls")),
        ("correct tool calls", theirs.get("correct_tool_calls"), counts.get("correct_calls"),
         theirs.get("correct_tool_calls") == counts.get("correct_calls")),
    ]
    return rows


def _same_ratio(theirs: float | None, ours: float | None) -> bool:
    if theirs is None or ours is None:
        return theirs is None and ours is None
    return round(float(theirs), PRECISION) == round(float(ours), PRECISION)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path, metavar="DIR", help="watsonx recorded runs with their metrics and datasets")
    parser.add_argument("--rename", action="append", metavar="OLD=NEW",
                        help="map tool names ending in OLD to end in NEW in the transcripts (default _hr_usecase=_hr_agent)")
    parser.add_argument("--config", choices=tuple(CONFIGS) + ("all",), default="all",
                        help="how text answers are compared (default: all, `default` first)")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep the generated suites and reports here")
    args = parser.parse_args(argv)
    renames = [tuple(r.split("=", 1)) for r in (args.rename or ["_hr_usecase=_hr_agent"])]
    if any(len(r) != 2 for r in renames):
        parser.error("--rename takes OLD=NEW")
    modes = list(CONFIGS) if args.config == "all" else [args.config]

    temporary = None
    try:
        if not args.path.is_dir():
            raise Broken(f"{args.path}: no such folder")
        runs = find_runs(args.path)
        work, temporary = prepare_workspace(args.keep, modes, "watsonx-agreement-")
        total_rows = total_agreed = 0
        for mode in modes:
            mode_work = work / mode
            mode_work.mkdir(parents=True, exist_ok=True)
            write_cases(runs, mode_work, mode, renames)
            outcome = run_evalrun(mode_work, mode)
            print(f"\n== config: {mode} ==" + (f"  (report: {outcome.report_path})" if args.keep else ""))
            agreed_here = rows_here = 0
            for run in runs:
                case = outcome.cases.get(run.case_id)
                if case is None:
                    raise Broken(f"{run.case_id} is missing from {outcome.report_path}")
                rows = comparisons(run, case)
                print(f"{run.case_id} ({run.dataset.name}): evalrun {case['status']}")
                print(f"  {'metric':22}{'watsonx':>18}{'evalrun':>18}  agree")
                for metric, theirs, ours, agree in rows:
                    print(f"  {metric:22}{_shown(theirs):>18}{_shown(ours):>18}  {'yes' if agree else 'NO'}")
                agreed_here += sum(r[3] for r in rows)
                rows_here += len(rows)
                if not all(r[3] for r in rows):
                    for line in outcome.failures.get(run.case_id) or []:
                        print(f"    evalrun: {line[:400]}")
            print(f"agreement ({mode}): {agreed_here}/{rows_here} metrics")
            total_agreed += agreed_here
            total_rows += rows_here
        print(f"\nsummary: {total_agreed}/{total_rows} metrics agree over {len(runs)} run(s) and {len(modes)} config(s)")
        if args.keep:
            print(f"kept: {work}")
        return 0
    except Broken as exc:
        print(f"watsonx_agreement: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        sys.stderr.close()
        return 0
    finally:
        if temporary:
            shutil.rmtree(temporary, ignore_errors=True)


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "—" if value is None else str(value)


if __name__ == "__main__":
    sys.exit(main())
