"""A saved result's digest (runner.results.digest) reads as the result itself for everything the run's own
process reads of it (the tally, the --baseline gate, the console's line and stage notes, -x); saving a digest a
worker made validates nothing; a python `on_result` still gets each whole CaseResult."""
from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from runner.report.compare import METRICS, Baseline, Outcomes
from runner.report.console import StageNotes, case_line
from runner.results.digest import MetricMeans, ResultDigest
from runner.results.folder import ResultLines
from runner.results.models import CaseResult
from runner.results.summary import Tally
from runner.session.events import CallbackEvents
from tests.helpers.cli_helpers import REPO, run_cli, write


def _hand_made() -> list[CaseResult]:
    """Results with what the bundled suites lack: checks skipped for two reasons, extra calls, judge fallbacks,
    a red-team case, repeats and recorded runs, an error, an unscored case, and decisions with stage notes."""
    metrics = {"journey_success": False, "journey_completion": 0.5, "tool_call_precision": None,
               "tool_call_recall": 0.25, "tool_parameter_f1": None, "text_match": 0.9, "turns": 3, "counts": {}}
    verdict = {"path": "city", "mode": "fuzzy", "matched": True, "decided_by": "rapidfuzz",
               "notes": ["embedding: the model is not installed", "llm: judge failed: timed out"]}
    goals = [{"name": "book", "type": "tool_call", "status": "achieved", "achieved": True, "explanation": "achieved",
              "attempts": [{"call_index": 0, "message": 2, "matched": True, "arguments": [verdict, verdict]}]},
             {"name": "say", "type": "text", "status": "not_said", "achieved": False, "explanation": "not said",
              "text_decision": {"matched": False, "decided_by": "rapidfuzz",
                                "notes": ["embedding: the model is not installed"]}}]
    checks = [{"name": "a", "type": "regex", "status": "passed"},
              {"name": "b", "type": "judged", "status": "skipped", "explanation": "skipped: no judge"},
              {"name": "c", "type": "judged", "status": "skipped", "explanation": "skipped: no judge"},
              {"name": "d", "type": "python", "status": "skipped", "explanation": "skipped: \x1b[2Kno code"}]
    made = [
        {"id": "full", "status": "failed", "source": "s.yaml:1:1", "metrics": metrics, "goals": goals, "checks": checks,
             "extra_calls": ["lookup", "lookup", "cancel"], "failures": ["goal 'say' not said", "second"],
             "judge_fallbacks": ["arg city: rapidfuzz decided: the judge timed out"], "repeat": 2, "run": 1},
        {"id": "red", "status": "passed", "source": "s.yaml:9:1", "tags": ["redteam", "attack:leak", "category:privacy"]},
        {"id": "gone", "status": "error", "source": "s.yaml:20:1", "error": "agent timed out\nafter 30 s"},
        {"id": "unsure", "status": "unscored", "source": "s.yaml:30:1", "unscored_reason": "the judge said nothing usable"},
        {"id": "later", "status": "skipped", "source": "s.yaml:40:1", "skip_reason": "not today"},
    ]
    return [CaseResult.model_validate(case) for case in made]


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> list[CaseResult]:
    """Every result of the bundled recorded suites (passing and failing), and the hand-made ones."""
    out = tmp_path_factory.mktemp("bundled")
    found = []
    for folder in ("airline", "hr", "bank", "failing", "adk_weather"):
        run_cli(folder, "-q", "-j", "1", "--output-dir", str(out / folder), cwd=REPO / "suites")
        found += [CaseResult.model_validate_json(line)
                  for line in (out / folder / "results.jsonl").read_text().splitlines()]
    assert len(found) >= 15 and {r.status for r in found} == {"passed", "failed"}
    return found + _hand_made()


def _digest(result: CaseResult) -> ResultDigest:
    """As the run's process receives it from a worker: made there, then pickled across."""
    return pickle.loads(pickle.dumps(ResultLines().digest(result)))


def test_a_digest_reads_as_its_result_for_every_field_it_carries(results):
    for result in results:
        digest = _digest(result)
        for name in ("id", "status", "run", "repeat", "skip_reason", "extra_calls", "judge_fallbacks", "failures",
                     "error", "unscored_reason", "redteam"):
            assert getattr(digest, name) == getattr(result, name), (result.id, name)
        if result.metrics is None:
            assert digest.metrics is None
        else:
            assert all(getattr(digest.metrics, name) == getattr(result.metrics, name) for name in MetricMeans._fields)
        assert [(c.name, c.status, c.explanation) for c in digest.checks] == \
            [(c.name, c.status, c.explanation) for c in result.checks]
        assert digest.line == result.model_dump_json()
        assert digest.whole() == result  # read back from its line, once asked
        for color in (False, True):
            assert case_line(digest, color) == case_line(result, color)


def test_the_means_a_run_reads_are_all_in_a_digest():
    from runner.results.summary import _MEANS

    assert set(METRICS) <= set(MetricMeans._fields) and set(_MEANS) <= set(MetricMeans._fields)


def test_the_tally_and_the_baseline_gate_count_digests_as_they_count_results(results):
    def tallied(items):
        tally = Tally([r.id for r in results], repeats=1)
        outcomes = Outcomes("all")
        gate = Baseline.__new__(Baseline)  # its saved run is not read here: only what `add` gathers
        gate.new, gate._saved = outcomes, []
        for n, item in reversed(list(enumerate(items))):  # saved in any order, counted in the run's
            tally.add(item)
            gate.add(item, (n, 0))
        gate.count_saved()
        summary = tally.summary(min_pass_rate=None, judge_may_fall_back=False, stop_reason=None, interrupted=False,
                                elapsed_s=1.0)
        return summary.model_dump(), outcomes.__dict__

    assert tallied(_digest(r) for r in results) == tallied(results)


def test_stage_notes_count_the_notes_of_every_decision_a_digest_carries():
    notes = StageNotes()
    for result in _hand_made():
        notes.add(_digest(result))
    # two arguments with two notes each, and the text decision's one
    assert notes.lines() == [
        "note: the embedding stage could not decide 3 comparison(s); later stages did (first reason: the model is "
        "not installed)",
        "note: the llm stage could not decide 2 comparison(s); later stages did (first reason: judge failed: timed out)"]


def _prepared(tmp_path: Path, exitfirst: bool = False):
    from runner.api import RunOutcome, RunRequest, prepare_run
    from tests.helpers.cli_helpers import tool_call_messages

    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\n")
    for n, tool in enumerate(["cancel", "cancel", "refund", "cancel"]):  # case 2 calls the wrong tool: it fails
        (tmp_path / "suites" / "t").mkdir(parents=True, exist_ok=True)
        (tmp_path / "suites" / f"c{n}.json").write_text(json.dumps({
            "id": f"c{n}", "transcript": f"t/{n}.json", "goals": {"g": []},
            "goal_details": [{"type": "tool_call", "name": "g", "tool_name": "cancel", "args": {"n": n}}]}))
        (tmp_path / "suites" / "t" / f"{n}.json").write_text(json.dumps(tool_call_messages(tool, {"n": n})))
    prepared = prepare_run(RunRequest([tmp_path / "suites"], output_dir=tmp_path / "out", exitfirst=exitfirst,
                                      config_path=tmp_path / "evalrun.yaml"))
    assert not isinstance(prepared, RunOutcome) and len(prepared.index.refs) == 4, prepared
    return prepared


def _played(prepared, opened) -> list[CaseResult]:
    runner = prepared.work(opened).runner
    return [result for ref in prepared.index.refs for result in runner.run_recorded(ref)]


def test_saving_the_digests_workers_send_validates_no_line(tmp_path, monkeypatch):
    prepared = _prepared(tmp_path)
    seen: list[ResultDigest] = []
    opened = prepared.open(events=CallbackEvents(on_saved=seen.append))
    results = _played(prepared, opened)
    digests = [pickle.loads(pickle.dumps(opened.folder.serialise.digest(r))) for r in results]
    validated = []
    real = CaseResult.model_validate_json
    monkeypatch.setattr(CaseResult, "model_validate_json",
                        classmethod(lambda cls, *a, **k: validated.append(1) or real(*a, **k)))
    for position, digest in enumerate(digests):
        opened.save(position, 0, digest)
    assert validated == []  # nothing read a line back: the tally, the gate and events.saved read the digests
    assert seen == digests
    assert opened.tally.counts == {"passed": 3, "failed": 1, "error": 0, "unscored": 0, "skipped": 0}
    outcome = opened.finish()
    lines = (tmp_path / "out" / "results.jsonl").read_text().splitlines()
    assert lines == [r.model_dump_json() for r in results]
    assert [c["id"] for c in json.loads(outcome.report_path.read_text())["cases"]] == ["c0", "c1", "c2", "c3"]
    assert outcome.exit_code == 1


def test_a_python_on_result_gets_each_whole_result_from_a_workers_digest(tmp_path):
    prepared = _prepared(tmp_path)
    got: list = []
    opened = prepared.open(events=CallbackEvents(on_result=got.append))
    results = _played(prepared, opened)
    for position, result in enumerate(results):
        opened.save(position, 0, pickle.loads(pickle.dumps(opened.folder.serialise.digest(result))))
    opened.finish()
    assert all(type(r) is CaseResult for r in got) and got == results


def test_exitfirst_stops_on_the_first_failing_digest(tmp_path):
    prepared = _prepared(tmp_path, exitfirst=True)
    opened = prepared.open()
    for position, result in enumerate(_played(prepared, opened)):
        opened.save(position, 0, pickle.loads(pickle.dumps(opened.folder.serialise.digest(result))))
    assert opened.stop.reason == "-x/--exitfirst: 'c2' failed"
    outcome = opened.finish()
    assert outcome.exit_code == 1 and outcome.summary.not_run == ["c3"]


def test_a_digest_travels_without_the_result_it_holds():
    result = _hand_made()[0]
    lines = ResultLines()
    kept = ResultDigest.of(*lines(result), keep=True)
    assert kept.whole() is result
    travelled = pickle.loads(pickle.dumps(kept))
    assert travelled._whole is None and travelled.line == kept.line
    assert len(pickle.dumps(kept)) < len(kept.line) + 1500  # the line and a few fields, not the models
    assert travelled.whole() == result and travelled.whole() is travelled.whole()  # validated once
    assert repr(travelled) == "ResultDigest(id='full', status='failed', run=1, repeat=2)"


def test_the_failure_section_reads_back_only_the_results_that_need_explaining(results, tmp_path):
    """Which saved results the console explains (not passed or skipped, or judged in part without the judge) is
    known as each is saved: the others' lines are never read back. Collection order, whatever the saving order."""
    from runner.results.folder import RunFolder

    with_fallback = results[0].model_copy(update={"judge_fallbacks": ["arg x: rapidfuzz decided: judge down"]})
    assert results[0].status == "passed" and not results[0].judge_fallbacks
    every = [with_fallback, *results]
    folder, _ = RunFolder.open(tmp_path / "out", "run-1")
    folder.start_results()
    for position in reversed(range(len(every))):  # the pool saves batches as they come back
        folder.add(position, 0, _digest(every[position]))
    folder.close_results()
    explained = [(position, result) for position, result in folder.saved_results(only_problems=True)]
    expected = [(n, r) for n, r in enumerate(every) if r.status in ("failed", "error", "unscored") or r.judge_fallbacks]
    assert [p for p, _ in explained] == [(n, 0) for n, _ in expected]
    assert [r for _, r in explained] == [r for _, r in expected]
    assert {r.status for _, r in explained} == {"passed", "failed", "error", "unscored"}
    assert [r for _, r in folder.saved_results()] == every
