"""`evalrun mutate`'s engine: mutants are scored by the case's own rules through the one scoring path (a mutant and
the same conversation played live get the same verdict), seeded, the same on any number of cores, cached;
equivalent mutants are named and not counted; judged checks are left out offline and said so."""
from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from runner.frontends.cli import main
from runner.mutate.case_run import CaseMutator, MutateOptions
from runner.mutate.generate import case_mutants
from runner.mutate.mutant import call_sites
from runner.mutate.values import wrong_dates, wrong_id, wrong_in_text, wrong_numbers
from tests.helpers.cli_helpers import write

DATA = Path(__file__).parents[1] / "data" / "mutate"


def _copy(tmp_path: Path, folder: str = "weak") -> Path:
    target = tmp_path / folder
    shutil.copytree(DATA / folder, target)
    return target


def _mutate(tmp_path: Path, *args: str) -> tuple[int, dict]:
    out = tmp_path / "report"
    code = main(["mutate", *args, "-o", str(out), "-j", "1"])
    return code, json.loads((out / "mutate.json").read_text(encoding="utf-8"))


def _collected(paths: list[Path]):
    from runner.config.discovery import find_config
    from runner.config.load import load_config, suite_roots
    from runner.run.case_index import index_cases

    loaded, _ = load_config(find_config(paths))
    roots = suite_roots(paths, loaded)
    return loaded, roots, index_cases(paths, None, roots=roots, config=loaded.config).refs


def test_a_mutant_and_the_same_conversation_played_live_get_the_same_verdict(tmp_path, monkeypatch):
    """Every mutant of a case, played live by a python agent that says exactly the mutant's messages, gets the
    status and the failures that mutate scored it with: no special path scores a mutant."""
    folder = _copy(tmp_path)
    transcript = json.loads((folder / "transfer.json").read_text(encoding="utf-8"))
    transcript["messages"] = transcript["messages"][1:]  # no system message: a live conversation has none
    (folder / "transfer.json").write_text(json.dumps(transcript), encoding="utf-8")
    suite = folder / "missing_order.yaml"
    loaded, roots, refs = _collected([suite])
    mutator = CaseMutator(loaded, roots, MutateOptions(seed=3, per_case=40, no_cache="off"))
    [outcome] = mutator.mutate(refs[0])
    case = mutator.runner.load(refs[0])
    from runner.transcripts.transcript_file import read_recording

    recording = read_recording(folder / "transfer.json")
    original = mutator.runner.score_recording(case, recording, {"id": case.id, "source": "x"}, transcript_path=None)
    mutants = case_mutants(case, recording.messages, original, seed=3, limit=40)
    assert [m.change for m in mutants] == [m.change for m in outcome.mutants]
    assert {m.status for m in outcome.mutants} == {"killed", "survived"}
    scripts, cases = {}, []
    text = suite.read_text(encoding="utf-8").replace("transcript: transfer.json\n", "")
    body = text[text.index("goal_details:"):]
    for number, mutant in enumerate(mutants):
        if mutant.family == "turns":
            continue  # cut before the agent's reply: a live agent that says nothing is an error of its own kind
        scripts[f"m{number}"] = mutant.messages[1:]
        write(folder / "live" / f"m{number}.yaml", f"id: m{number}\nagent: scripted\nstarting_sentence: "
              f"\"{recording.messages[0]['content']}\"\n{body}")
        cases.append(number)
    (folder / "scripts.json").write_text(json.dumps(scripts), encoding="utf-8")
    write(folder / "scripted.py", """
        import json, pathlib

        SCRIPTS = json.loads((pathlib.Path(__file__).parent / "scripts.json").read_text())

        def respond(messages, context):
            return SCRIPTS[context.case_id]
        """)
    (folder / "evalrun.yaml").write_text((folder / "evalrun.yaml").read_text(encoding="utf-8") + (
        "agents:\n  scripted: {type: python, entrypoint: \"scripted:respond\"}\n"), encoding="utf-8")
    monkeypatch.chdir(folder)
    main(["run", "live", "--output-dir", str(tmp_path / "live-run"), "-q"])
    live = {}
    for line in (tmp_path / "live-run" / "results.jsonl").read_text(encoding="utf-8").splitlines():
        result = json.loads(line)
        if "id" in result and "status" in result:
            live[result["id"]] = result
    assert len(live) == len(cases) > 10
    for number in cases:
        scored, played = outcome.mutants[number], live[f"m{number}"]
        assert (scored.status == "survived") == (played["status"] == "passed"), scored.change
        if scored.status == "killed":
            assert scored.detail == f"{played['status']}: {played['failures'][0]}", scored.change


def test_the_same_seed_gives_the_same_report_on_one_core_or_two_and_another_seed_other_mutants(tmp_path):
    folder = _copy(tmp_path)
    reports = []
    for seed, jobs in ((7, "1"), (7, "2"), (8, "1")):
        out = tmp_path / f"r-{seed}-{jobs}"
        assert main(["mutate", str(folder), "--seed", str(seed), "-j", jobs, "-o", str(out), "--no-cache"]) == 0
        reports.append(json.loads((out / "mutate.json").read_text(encoding="utf-8")))
    changes = [[[m["change"] for m in case["mutants"]] for case in report["cases"]] for report in reports]
    assert reports[0] == reports[1]
    assert changes[0] != changes[2]


def test_a_second_run_answers_from_the_cache_without_scoring(tmp_path, monkeypatch):
    folder = _copy(tmp_path)
    first_code, first = _mutate(tmp_path, str(folder))
    from runner.run.execute import CaseRunner

    scored = []
    original = CaseRunner.score_recording
    monkeypatch.setattr(CaseRunner, "score_recording", lambda self, *a, **k: scored.append(1) or original(self, *a, **k))
    second_code, second = _mutate(tmp_path, str(folder))
    assert (first_code, second_code) == (0, 0) and first["cases"] == second["cases"]
    assert scored == []
    (folder / "loose_keywords.yaml").write_text((folder / "loose_keywords.yaml").read_text(encoding="utf-8")
                                                .replace("keywords: [done]", "keywords: [done, T-9]"), encoding="utf-8")
    _mutate(tmp_path, str(folder))
    assert len(scored) == 21  # the changed case only: its recording, then its 20 mutants


def test_equivalent_mutants_are_named_and_not_counted(tmp_path):
    folder = _copy(tmp_path)
    suite = folder / "missing_order.yaml"
    suite.write_text(suite.read_text(encoding="utf-8").replace(
        "      date: 2025-03-01\n", "      date: 2025-03-01\n    arg_matching:\n      date: ignore\n"
        "      currency: optional\n"), encoding="utf-8")
    code, report = _mutate(tmp_path, str(suite), "--mutants-per-case", "200")
    [case] = report["cases"]
    equivalent = {m["change"]: m["detail"] for m in case["mutants"] if m["status"] == "equivalent"}
    assert equivalent == {
        'transfer_funds: `date` "2025-03-01" -> "2025-03-02" (date moved by a day)':
            "goal 'transfer' has `date: ignore`: declared irrelevant",
        'transfer_funds: `date` ("2025-03-01") dropped': "goal 'transfer' has `date: ignore`: declared irrelevant",
        'transfer_funds: `currency` ("EUR") dropped': "goal 'transfer' has `currency` optional: it may be absent",
        **{m["change"]: "goal 'transfer' has `date: ignore`: declared irrelevant" for m in case["mutants"]
           if m["change"].startswith("transfer_funds: `date` \"2025-03-01\" -> ") and "another value" in m["change"]},
    }
    assert case["equivalent"] == len(equivalent) and case["kill_rate"] == case["killed"] / (
        case["killed"] + case["survived"])
    assert code == 0


def test_judged_checks_are_left_out_offline_and_the_report_says_so(tmp_path):
    folder = _copy(tmp_path)
    suite = folder / "loose_keywords.yaml"
    suite.write_text(suite.read_text(encoding="utf-8") + "checks:\n  - {type: semantic_match, name: same_meaning, "
                     "reference: \"50 EUR go to B-2 on 2025-03-01.\"}\n", encoding="utf-8")
    code, report = _mutate(tmp_path, str(suite))
    assert code == 0
    assert report["cases"][0]["notes"] == ["judged checks left out (offline; --judged asks the judge): same_meaning"]
    assert main(["mutate", str(suite), "--judged", "-o", str(tmp_path / "j")]) == 4


@pytest.mark.parametrize("value, expected", [
    ("2025-03-01", [("date_shift", "2025-03-02")]), ("2025-12-31T10:00", [("date_shift", "2026-01-01T10:00")]),
    ("March 1, 2025", [("date_shift", "March 02, 2025")]), ("hello", [])])
def test_a_date_moves_a_day_in_the_format_it_was_written_in(value, expected):
    assert wrong_dates(value) == expected


def test_numbers_ids_and_facts_in_text_change_as_an_agent_would_get_them_wrong():
    assert wrong_numbers(50) == [("number_plus_one", 51), ("number_10_percent", 55), ("number_sign", -50)]
    assert wrong_numbers(True) == [] and wrong_numbers(0) == [("number_plus_one", 1)]
    [(operator, changed)] = wrong_id("Q69X3R", random.Random(1))
    assert operator == "id_character" and len(changed) == 6 and sum(a != b for a, b in zip(changed, "Q69X3R", strict=True)) == 1
    assert wrong_id("a plain phrase", random.Random(1)) == []
    assert wrong_in_text("Your time off is on January 5, 2025.") == (
        "date 'January 5' changed to 'January 6'", "Your time off is on January 6, 2025.")
    assert wrong_in_text("The refund is $327.") == ("number 327 changed to 328", "The refund is $328.")


def test_every_mutant_changes_the_conversation_in_one_place_and_never_the_recording(tmp_path):
    folder = _copy(tmp_path)
    loaded, roots, refs = _collected([folder / "missing_order.yaml"])
    mutator = CaseMutator(loaded, roots, MutateOptions(no_cache="off"))
    case = mutator.runner.load(refs[0])
    from runner.transcripts.transcript_file import read_recording

    recording = read_recording(folder / "transfer.json")
    before = json.dumps(recording.messages)
    original = mutator.runner.score_recording(case, recording, {"id": case.id, "source": "x"}, transcript_path=None)
    mutants = case_mutants(case, recording.messages, original, seed=0, limit=500)
    assert json.dumps(recording.messages) == before
    assert {m.family for m in mutants} == {"calls", "arguments", "answer", "turns"}
    assert {m.operator for m in mutants} >= {"drop_call", "duplicate_call", "swap_calls", "sibling_tool",
                                            "extra_write", "date_shift", "number_plus_one", "number_10_percent",
                                            "number_sign", "id_character", "other_value", "drop_key", "negate",
                                            "change_fact", "drop_keyword", "empty", "cut_last_turn"}
    texts = [json.dumps(m.messages, sort_keys=True) for m in mutants]
    assert len(set(texts)) == len(texts) and before not in texts
    assert [len(call_sites(m.messages)) for m in mutants if m.operator == "duplicate_call"] == [3, 3]


def test_judged_asks_the_configured_judge_through_real_http_and_caches_its_outcome(tmp_path):
    """With --judged, a judged check of the case is asked (the fake OpenAI-compatible server on 127.0.0.1) and kills
    the negated answer that the case's loose keyword let through; a second run asks nothing."""
    from tests.fakes.llm import token_of, verdict
    from tests.fakes.openai_server import FakeOpenAI

    def judge(request: dict) -> str:
        negated = "will not go" in json.dumps(request["messages"])
        return verdict(token_of(request), not negated, score=0.0 if negated else 1.0)

    folder = _copy(tmp_path)
    suite = folder / "loose_keywords.yaml"
    suite.write_text(suite.read_text(encoding="utf-8") + "checks:\n  - {type: semantic_match, name: same_meaning, "
                     "reference: \"50 EUR will go from A-1 to B-2 on 2025-03-01.\"}\n", encoding="utf-8")
    with FakeOpenAI(default=judge) as fake:
        (folder / "evalrun.yaml").write_text((folder / "evalrun.yaml").read_text(encoding="utf-8") + (
            f"judge: {{model: openai/fake-judge, api_base: \"{fake.base_url}\", max_retries: 0}}\n"), encoding="utf-8")
        offline_code, offline = _mutate(tmp_path, str(suite))
        assert fake.requests == []
        code, judged = _mutate(tmp_path, str(suite), "--judged")
        asked = len(fake.requests)
        again_code, again = _mutate(tmp_path, str(suite), "--judged")
        assert len(fake.requests) == asked > 0
    negation = {report_name: next(m for m in report["cases"][0]["mutants"] if m["operator"] == "negate")
                for report_name, report in (("offline", offline), ("judged", judged))}
    assert negation["offline"]["status"] == "survived"
    assert negation["judged"]["status"] == "killed" and "same_meaning" in negation["judged"]["detail"]
    assert judged["cases"][0]["notes"] == [] and again["cases"] == judged["cases"]
    assert (offline_code, code, again_code) == (0, 0, 0)


def test_mutate_exits_with_the_run_s_codes_from_runner_layout():
    """One definition of the exit codes (runner/layout.py): mutate's 1 is the run's 'failed', read as a kill rate
    below --min-kill-rate, and the exit-code reference says so."""
    from runner import layout
    from runner.mutate import session

    assert (session.EXIT_OK, session.EXIT_WEAK, session.EXIT_INTERRUPTED, session.EXIT_INTERNAL, session.EXIT_USAGE,
            session.EXIT_NOTHING) == (layout.EXIT_OK, layout.EXIT_FAILED, layout.EXIT_INTERRUPTED, layout.EXIT_ERRORS,
                                      layout.EXIT_USAGE, layout.EXIT_NO_CASES)
    failed = next(code for code in layout.EXIT_CODES if code.code == layout.EXIT_FAILED)
    assert "for `evalrun mutate`, a kill rate below --min-kill-rate" in failed.meaning
