"""The Agentflow library's side of bench_agentflow_agreement.py: run with an interpreter that has
10xscale-agentflow (import `agentflow`) or 10xgraph installed, never imported by evalrun or its tests.

    PYTHON agentflow_library.py write JOBS.json    # each job's eval set and config written by the library's to_file
    PYTHON agentflow_library.py oracle JOBS.json   # the library's AgentEvaluator verdicts, one JSON document on stdout

JOBS.json: [{"key", "folder", "eval_set": dict, "config": dict, "to_file": bool, "actuals": {eval_id: [turn...]}}];
a turn is {"tool_calls": [{"name", "args", "result"?}], "final_response": str, "node_visits": [str]}.

The oracle is the approach of the project's research notes (the r-agentflow oracle): no graph runs; a replay
graph stands in for the compiled graph and, turn by turn, feeds the recorded actuals into the library's own
TrajectoryCollector as its PublisherCallback would (a NODE_EXECUTION END event per node visit, the last one
carrying the final response; a TOOL_EXECUTION END event per call); the library's AgentEvaluator.evaluate() does
the rest (collector reset per turn, pooling, criteria, case verdict). Reporters are switched off in memory.
"""
from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any


def _lib() -> Any:
    try:
        import tenxgraph as lib  # 10xgraph
    except ImportError:
        import agentflow as lib  # 10xscale-agentflow
    return lib


def write(jobs: list[dict]) -> None:
    from agentflow.qa.evaluation import EvalConfig, EvalSet

    for job in jobs:
        folder = Path(job["folder"])
        folder.mkdir(parents=True, exist_ok=True)
        if job.get("to_file"):
            EvalSet.model_validate(job["eval_set"]).to_file(str(folder / "cases.evalset.json"))
            EvalConfig.model_validate(job["config"]).to_file(str(folder / "eval_config.json"))


class ReplayGraph:
    def __init__(self, collector: Any, actuals: dict[str, list[dict]], thread_to_case: dict[str, str]):
        self.collector, self.actuals, self.thread_to_case = collector, actuals, thread_to_case
        self.turn: dict[str, int] = {}

    async def ainvoke(self, input_data: dict, config: dict | None = None) -> dict:
        from agentflow.runtime.publisher.events import ContentType, Event, EventModel, EventType

        thread_id = (config or {}).get("thread_id", "")
        eval_id = self.thread_to_case.get(thread_id) or thread_id.split("_", 2)[2]
        turn = self.turn.get(thread_id, 0)
        self.turn[thread_id] = turn + 1
        inv = self.actuals[eval_id][turn]
        final = inv.get("final_response") or ""
        nodes = list(inv.get("node_visits") or [])
        for i, node in enumerate(nodes):
            await self.collector.on_event(EventModel(
                event=Event.NODE_EXECUTION, event_type=EventType.END, node_name=node,
                data={"input_messages": [], "response_text": final if i == len(nodes) - 1 else "",
                      "has_tool_calls": False, "tool_call_names": [], "is_final": True, "token_usage": {}},
                content_type=[ContentType.MESSAGE], thread_id=thread_id, run_id="", timestamp=time.time()))
        if final and not nodes:
            self.collector.final_response = final
        for call in inv.get("tool_calls") or []:
            await self.collector.on_event(EventModel(
                event=Event.TOOL_EXECUTION, event_type=EventType.END, node_name=call["name"],
                data={"function_name": call["name"], "args": dict(call.get("args") or {}),
                      "result": "" if call.get("result") is None else str(call["result"]), "tool_call_id": ""},
                content_type=[ContentType.TOOL_RESULT], thread_id=thread_id, run_id="", timestamp=time.time()))
        return {"messages": []}


async def _oracle_one(job: dict) -> dict:
    from agentflow.qa.evaluation import AgentEvaluator, EvalConfig, EvalSet, TrajectoryCollector

    folder = Path(job["folder"])
    try:
        eval_set = EvalSet.from_file(str(folder / "cases.evalset.json"))
        config = EvalConfig.from_file(str(folder / "eval_config.json"))
    except Exception as exc:  # the library refuses the file: its own words
        return {"key": job["key"], "refused": f"{type(exc).__name__}: {exc}"}
    config.reporter.enabled = False
    collector = TrajectoryCollector(capture_all_events=False)
    threads = {str(c.session_input.config["thread_id"]): c.eval_id for c in eval_set.eval_cases
               if c.session_input.config.get("thread_id") is not None}
    evaluator = AgentEvaluator(ReplayGraph(collector, job["actuals"], threads), collector, config=config)  # type: ignore[arg-type]
    report = await evaluator.evaluate(eval_set)
    return {"key": job["key"], "cases": {r.eval_id: {
        "passed": r.passed, "error": r.error,
        "criteria": [{"criterion": c.criterion, "score": c.score, "passed": c.passed, "error": c.error}
                     for c in r.criterion_results]} for r in report.results}}


def oracle(jobs: list[dict]) -> list[dict]:
    logging.disable(logging.WARNING)
    return [asyncio.run(_oracle_one(job)) for job in jobs]


def main(argv: list[str]) -> int:
    mode, path = argv
    jobs = json.loads(Path(path).read_text(encoding="utf-8"))
    if mode == "write":
        write(jobs)
        print(json.dumps({"library": _lib().__name__, "written": sum(bool(j.get("to_file")) for j in jobs)}))
    else:
        json.dump(oracle(jobs), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
