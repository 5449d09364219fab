"""RunEvents (runner.session.events): one protocol for what a front end hears of a run, replacing the loose
on_start/on_result/on_saved/on_notice callbacks; run_request and arun (the one play loop) take it."""
from __future__ import annotations

import asyncio
import inspect
import json
from pathlib import Path

from runner.session.events import RunEvents
from runner.session.request import RunRequest
from runner.session.run import arun, run_request
from tests.helpers.cli_helpers import tool_call_messages, write, write_json


def project(root: Path) -> RunRequest:
    write(root / "evalrun.yaml", "embeddings: {enabled: false}\n")
    for case_id, username in (("a", "nwaters"), ("b", "someone-else")):
        write(root / "suites" / f"{case_id}.yaml", f"""
            id: {case_id}
            goal_details:
              - {{type: tool_call, name: get_id, tool_name: get_assignment_id, args: {{username: {username}}}}}
            transcript: t/{case_id}.json
            """)
        write_json(root / "suites" / "t" / f"{case_id}.json",
                   [{"role": "user", "content": "hi"}, *tool_call_messages("get_assignment_id", {"username": "nwaters"})])
    return RunRequest([root / "suites"], output_dir=root / "out", executor="local", concurrency=1)


class Heard(RunEvents):
    def __init__(self):
        self.heard: list = []

    def started(self, total):
        self.heard.append(("started", total))

    def saved(self, digest):
        self.heard.append(("saved", digest.id, digest.status))


class HeardWhole(Heard):
    def result(self, result):
        self.heard.append(("result", result.id, type(result).__name__))


def test_a_front_end_hears_the_run_through_one_protocol_and_whole_results_only_when_it_asks(tmp_path):
    events = Heard()
    outcome = run_request(project(tmp_path), events, handle_signals=False)
    assert outcome.exit_code == 1
    assert events.heard == [("started", 2), ("saved", "a", "passed"), ("saved", "b", "failed")]
    assert not events.wants_results  # result() not overridden: no result is validated whole for it
    whole = HeardWhole()
    run_request(project(tmp_path / "again"), whole, handle_signals=False)
    assert whole.wants_results
    assert whole.heard == [("started", 2), ("saved", "a", "passed"), ("result", "a", "CaseResult"),
                           ("saved", "b", "failed"), ("result", "b", "CaseResult")]


def test_arun_plays_the_same_run_on_the_caller_s_loop(tmp_path):
    events = Heard()
    outcome = asyncio.run(arun(project(tmp_path), events))
    assert (outcome.exit_code, outcome.verdict.reason) == (1, "1 case(s) failed: exit 1")
    assert events.heard == [("started", 2), ("saved", "a", "passed"), ("saved", "b", "failed")]
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert {c["id"]: c["status"] for c in report["cases"]} == {"a": "passed", "b": "failed"}


def test_the_session_takes_a_request_and_its_events_nothing_else(tmp_path):
    assert list(inspect.signature(run_request).parameters) == ["request", "events", "handle_signals"]
    assert list(inspect.signature(arun).parameters) == ["request", "events"]


def test_runner_api_run_still_takes_the_loose_callbacks_of_code_written_before(tmp_path):
    from runner.api import run

    project(tmp_path)
    started, saved = [], []
    outcome = run([tmp_path / "suites"], output_dir=tmp_path / "out", on_start=started.append,
                  on_saved=lambda digest: saved.append(digest.id), handle_signals=False)
    assert (outcome.exit_code, started, sorted(saved)) == (1, [2], ["a", "b"])  # saved as each finishes
