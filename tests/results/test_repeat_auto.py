"""`--repeat auto`: each case repeated until the Wilson interval of its pass rate lies above or below the
threshold, or at max. The stated error rate checked exactly; the rounds of repeats never run more than a
one-at-a-time rule would (brute force over every outcome sequence); the spec's usage errors; the report in every
format; the same runs whatever -j; rescore; and the issue's criterion against --repeat 10 on a seeded fake agent."""
from __future__ import annotations

import html
import itertools
import json
import random
import sys

import jsonschema
import pytest

from runner.frontends.cli import main
from runner.results.auto_repeat import AutoRepeat, RepeatSpecError, parse_repeat, wrong_side_chance
from runner.results.stats import wilson_interval
from runner.run.auto_schedule import RepeatRounds
from runner.util.resources import schema_path
from tests.helpers.cli_helpers import write

# ---------------------------------------------------------------------------------------------- the rule


def test_the_error_rate_stated_in_help_is_the_exact_one():
    rule = AutoRepeat()
    assert round(wrong_side_chance(rule, 0.5), 3) == 0.078  # the worst: a rate just off the threshold
    assert max(wrong_side_chance(rule, p / 100) for p in range(1, 100)) <= 0.0782
    assert round(wrong_side_chance(rule, 0.45), 3) == round(wrong_side_chance(rule, 0.55), 3) == 0.049
    assert round(wrong_side_chance(rule, 0.4), 3) == 0.030
    assert wrong_side_chance(rule, 0.3) < 0.01 and wrong_side_chance(rule, 0.7) < 0.01


def test_four_agreeing_runs_are_the_fewest_that_settle_and_min_keeps_lucky_passes_from_settling():
    rule = AutoRepeat()
    assert [rule.verdict(n, n) for n in (1, 2, 3, 4)] == [None, None, None, "passed"]
    assert rule.verdict(0, 4) == "failed" and rule.verdict(3, 4) is None and rule.verdict(7, 8) == "passed"
    loose = AutoRepeat(confidence=0.5)  # its interval would settle 2 of 2; min=3 does not let it
    assert loose.verdict(2, 2) is None and loose.verdict(3, 3) == "passed"


def _one_at_a_time(rule: AutoRepeat, outcomes: tuple) -> int:
    for n in range(1, rule.max + 1):
        if rule.verdict(sum(outcomes[:n]), n) is not None:
            return n
    return rule.max


def _in_rounds(rule: AutoRepeat, outcomes: tuple) -> int:
    class Run:
        def __init__(self, passed: bool):
            self.status = "passed" if passed else "failed"

    rounds = RepeatRounds(1, rule)
    queue = rounds.first_jobs()
    while queue:  # each round's runs finish in reverse order: the order must not matter
        round_, queue = queue, []
        for _, repeat in reversed(round_):
            queue += rounds.finish(0, [Run(outcomes[repeat])])
    return rounds.finished[0]


@pytest.mark.parametrize("rule", [AutoRepeat(), AutoRepeat(max=8, confidence=0.9, min=2),
                                  AutoRepeat(max=12, threshold=0.8), AutoRepeat(max=6, min=6)])
def test_rounds_make_exactly_the_runs_a_one_at_a_time_rule_makes(rule):
    for outcomes in itertools.product((False, True), repeat=rule.max):
        assert _in_rounds(rule, outcomes) == _one_at_a_time(rule, outcomes), outcomes


@pytest.mark.parametrize("text, rule", [
    ("auto", AutoRepeat()),
    ("auto:max=8,confidence=0.95", AutoRepeat(max=8)),
    (" auto: max = 6 , min=2,threshold=0.8 ", AutoRepeat(max=6, min=2, threshold=0.8)),
    ("7", 7),
])
def test_a_repeat_spec_is_read(text, rule):
    assert parse_repeat(text) == rule


@pytest.mark.parametrize("text, message", [
    ("auto:maxx=3", "unknown key 'maxx' in 'auto:maxx=3' (did you mean 'max'?); the keys are max, confidence, min, "
                    "threshold"),
    ("auto:confidense=0.9", "unknown key 'confidense' in 'auto:confidense=0.9' (did you mean 'confidence'?); the keys "
                            "are max, confidence, min, threshold"),
    ("auto:speed=3", "unknown key 'speed' in 'auto:speed=3'; the keys are max, confidence, min, threshold"),
    ("auto:confidence=95", "confidence: must lie strictly between 0 and 1, got 95"),
    ("auto:max=ten", "max: not a whole number: 'ten'"),
    ("auto:max", "'max' needs a value in 'auto:max', e.g. max=10"),
    ("auto:min=5,max=4", "min=5 is more than max=4 in 'auto:min=5,max=4'"),
    ("automatic", "'automatic': write auto or auto:KEY=VALUE,... (keys: max, confidence, min, threshold)"),
    ("often", "'often' is neither a whole number nor auto[:KEY=VALUE,...] (keys: max, confidence, min, threshold), "
              "e.g. 5 or auto:max=8,confidence=0.95"),
])
def test_a_bad_repeat_spec_is_a_usage_error_naming_the_key(tmp_path, capsys, text, message):
    with pytest.raises(RepeatSpecError) as raised:
        parse_repeat(text)
    assert str(raised.value) == message
    write(tmp_path / "s.yaml", "cases: []\n")
    assert main(["run", str(tmp_path / "s.yaml"), "--output-dir", str(tmp_path / "out"), "--repeat", text]) == 4
    assert f"evalrun run: error: argument --repeat: {message}" in capsys.readouterr().err.splitlines()
    assert not (tmp_path / "out").exists()


def test_the_cli_maps_the_spec_onto_the_run_request():
    from runner.frontends.cli import build_parser
    from runner.frontends.cli.run import request_from_args

    args = build_parser(only="run").parse_args(["run", "s.yaml", "--repeat", "auto:max=8,confidence=0.9"])
    request = request_from_args(args)
    assert request.repeat_auto == AutoRepeat(max=8, confidence=0.9) and request.max_repeats == 8
    fixed = request_from_args(build_parser(only="run").parse_args(["run", "s.yaml", "--repeat", "4"]))
    assert (fixed.repeat_auto, fixed.repeats, fixed.max_repeats) == (None, 4, 4)


# ---------------------------------------------------------------------------------------------- a whole run

AGENT = """
import random

from runner.llm.calls import current_repeat

RATES = {rates!r}


def respond(messages, context):
    \"\"\"Case i's run r passes with probability RATES[i], fixed by (seed, i, r): every run of the same
    repeat number sees the same outcome, whichever --repeat made it.\"\"\"
    i, r = int(context.case_id[1:]), current_repeat.get()
    return "done" if random.Random(f"{seed}:{{i}}:{{r}}").random() < RATES[i] else "not yet"
"""


def seeded_project(root, rates: list[float], seed: int = 7) -> None:
    module = f"auto_agent_{abs(hash((str(root), seed)))}"
    write(root / f"{module}.py", AGENT.format(rates=rates, seed=seed))
    write(root / "evalrun.yaml", f"""
        embeddings: {{enabled: false}}
        agents:
          fake: {{type: python, entrypoint: "{module}:respond"}}
        """)
    cases = "".join(f"  - id: c{i:03d}\n    starting_sentence: case {i}\n"
                    f"    goal_details: [{{type: text, name: ok, keywords: [done]}}]\n" for i in range(len(rates)))
    (root / "suites").mkdir(exist_ok=True)
    (root / "suites" / "s.yaml").write_text("cases:\n" + cases)
    sys.path.insert(0, str(root))


def run(root, folder: str, *args: str) -> dict:
    code = main(["run", str(root / "suites"), "-c", str(root / "evalrun.yaml"), "--output-dir", str(root / folder),
                 "-q", *args])
    data = json.loads((root / folder / "report.json").read_text())
    jsonschema.validate(data, json.loads(schema_path("report").read_text()))
    assert code == data["summary"]["exit_code"]
    return data


def runs_of(report: dict) -> dict[str, list[bool]]:
    """Each case's outcomes by repeat number."""
    runs: dict[str, dict[int, bool]] = {}
    for case in report["cases"]:
        runs.setdefault(case["id"], {})[case["repeat"]] = case["status"] == "passed"
    return {case: [by_repeat[r] for r in sorted(by_repeat)] for case, by_repeat in runs.items()}


def classification(outcomes: list[bool]) -> str:
    """The classification the issue's criterion compares: `stable pass` when the 95% Wilson interval of the
    case's pass rate over its runs lies entirely above 0.5, `stable fail` when entirely below, `flaky` when it
    straddles 0.5 (the runs do not settle whether the case passes more often than not)."""
    low, high = wilson_interval(sum(outcomes), len(outcomes))
    return "stable pass" if low > 0.5 else "stable fail" if high < 0.5 else "flaky"


def spread(cases: int = 200) -> list[float]:
    """Pass probabilities from 0 to 1 as a suite has them: most cases always pass or always fail (40% at 0, 40%
    at 1), the rest spread evenly over (0, 1). On an even spread of all cases over [0, 1] the criterion cannot
    hold (flaky cases are meant to get more runs); tests/bench/bench_repeat_auto.py reports both."""
    fixed = cases * 2 // 5
    middle = cases - 2 * fixed
    return [0.0] * fixed + [1.0] * fixed + [(j + 0.5) / middle for j in range(middle)]


def test_auto_classifies_as_repeat_10_does_on_95_percent_of_cases_with_at_most_half_the_runs(tmp_path):
    """60 seeded cases keep every kind the spread has (always fail, always pass, flaky across (0, 1)); with this
    seed auto agrees on 59 of 60 and makes 45% of the runs. The 200-case, five-seed figure of the issue is
    tests/bench/bench_repeat_auto.py's."""
    rates = spread(60)
    random.Random(3).shuffle(rates)
    seeded_project(tmp_path, rates)
    fixed, auto = runs_of(run(tmp_path, "ten", "--repeat", "10")), run(tmp_path, "auto", "--repeat", "auto:max=10")
    adaptive = runs_of(auto)
    assert all(len(outcomes) == 10 for outcomes in fixed.values()) and len(fixed) == len(adaptive) == 60
    for case, outcomes in adaptive.items():  # the same agent: auto's runs are the first of --repeat 10's
        assert outcomes == fixed[case][:len(outcomes)]
    same = sum(classification(adaptive[case]) == classification(fixed[case]) for case in fixed)
    runs = sum(len(outcomes) for outcomes in adaptive.values())
    assert same / 60 >= 0.95, same
    assert runs <= 0.5 * 600, runs
    summary = auto["summary"]["repeats"]
    assert summary["auto"] == {"max": 10, "min": 3, "confidence": 0.95, "threshold": 0.5, "total_runs": runs}
    assert {c["id"]: c["runs"] for c in summary["per_case"]} == {case: len(o) for case, o in adaptive.items()}
    assert {c["id"]: c["settled"] for c in summary["per_case"]} == {
        case: {"stable pass": "passed", "stable fail": "failed", "flaky": None}[classification(o)]
        for case, o in adaptive.items()}


def test_the_same_runs_whatever_j_and_every_format_says_what_auto_did(tmp_path, capsys):
    seeded_project(tmp_path, [1.0, 0.0, 0.5, 0.9], seed=11)
    one = run(tmp_path, "one", "--repeat", "auto", "-j", "1")
    out = capsys.readouterr().out
    many = run(tmp_path, "many", "--repeat", "auto", "-j", "8", "--format", "md", "--format", "html")
    assert runs_of(one) == runs_of(many)
    per_case = {c["id"]: (c["runs"], c["settled"]) for c in many["summary"]["repeats"]["per_case"]}
    assert per_case["c000"] == (4, "passed") and per_case["c001"] == (4, "failed")
    assert per_case["c002"] == (10, None)  # a coin is still in doubt at the maximum
    total = sum(runs for runs, _ in per_case.values())
    line = (f"--repeat auto (95% Wilson interval of each case's pass rate vs 0.5, 3 to 10 runs): {total} runs of at "
            f"most 40 ({total / 40:.0%}); runs per case: ")
    assert any(text.startswith(line) for text in out.splitlines()), out
    assert "--repeat auto (policy all): pass@1 " in out and "pass@3 " in out
    assert line in (tmp_path / "many" / "summary.md").read_text()
    assert "in doubt: c002" in (tmp_path / "many" / "summary.md").read_text()
    assert html.escape(line) in (tmp_path / "many" / "report.html").read_text()
    assert set(many["summary"]["repeats"]["pass_at_k"]) == {"1", "2", "3"}  # k up to min: every case made them


def test_an_executor_that_cannot_decide_runs_as_they_finish_is_refused(tmp_path, capsys):
    seeded_project(tmp_path, [1.0], seed=1)
    code = main(["run", str(tmp_path / "suites"), "-c", str(tmp_path / "evalrun.yaml"), "--repeat", "auto",
                 "--executor", "processes", "--output-dir", str(tmp_path / "out")])
    assert code == 4
    assert ("--executor processes cannot run --repeat auto, whose next runs of a case are decided as its runs "
            "finish, in this process; use --executor local (or auto), or a fixed --repeat N") in capsys.readouterr().err


def test_rescore_of_an_auto_run_scores_the_same_runs_again(tmp_path):
    seeded_project(tmp_path, [1.0, 0.3, 0.6], seed=5)
    first = run(tmp_path, "out", "--repeat", "auto:max=6")
    code = main(["rescore", str(tmp_path / "out"), str(tmp_path / "suites"), "-c", str(tmp_path / "evalrun.yaml"),
                 "--output-dir", str(tmp_path / "again"), "-q"])
    again = json.loads((tmp_path / "again" / "report.json").read_text())
    assert code == again["summary"]["exit_code"]
    assert runs_of(again) == runs_of(first)
    assert again["summary"]["repeats"]["auto"] == first["summary"]["repeats"]["auto"]
