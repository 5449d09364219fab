"""Agentflow's own AgentEvaluator on the weather graph (run with the library's interpreter): the oracle of
tests/run/test_agentflow_agent.py. Its TrajectoryCollector is attached the library's way that works on a graph compiled
at import time: the library's PublisherCallback registered on the CallbackManager compile() bound.

    python own_evaluator.py EVALSET CONFIG   -> {eval_id: {"passed", "error", "scores": {criterion: score}}}
"""
from __future__ import annotations

import asyncio
import importlib
import json
import logging
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
lib = os.environ.get("AGENTFLOW_IMPORT", "agentflow")
evaluation = importlib.import_module(f"{lib}.qa.evaluation")
callbacks = importlib.import_module(f"{lib}.utils.callbacks")
import weather_graph  # noqa: E402
from injectq import InjectQ  # noqa: E402


async def main(eval_set_path: str, config_path: str) -> dict:
    collector = evaluation.TrajectoryCollector(capture_all_events=False)
    manager = InjectQ.get_instance().try_get(callbacks.CallbackManager)
    publisher = evaluation.PublisherCallback(collector)
    for kind in (callbacks.InvocationType.AI, callbacks.InvocationType.TOOL, callbacks.InvocationType.MCP):
        manager.register_after_invoke(kind, publisher)
    config = evaluation.EvalConfig.from_file(config_path)
    config.reporter.enabled = False
    evaluator = evaluation.AgentEvaluator(weather_graph.app, collector, config=config)
    report = await evaluator.evaluate(evaluation.EvalSet.from_file(eval_set_path))
    return {r.eval_id: {"passed": r.passed, "error": r.error,
                        "scores": {c.criterion: c.score for c in r.criterion_results}} for r in report.results}


if __name__ == "__main__":
    logging.disable(logging.WARNING)
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2]))))
