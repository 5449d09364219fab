"""`evalrun calibrate`: Cohen's kappa against known values, the labels file's errors with positions, the
shipped semantic_match set, and the command end to end through the fake OpenAI-compatible server."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from runner.checks.calibrate import cohen_kappa, load_labels
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers.cli_helpers import run_cli, write

SHIPPED = Path(__file__).resolve().parents[2] / "calibration" / "semantic_match.yaml"


def pairs(yes_yes: int, yes_no: int, no_yes: int, no_no: int) -> list[tuple[str, str]]:
    return ([("pass", "pass")] * yes_yes + [("pass", "fail")] * yes_no + [("fail", "pass")] * no_yes
            + [("fail", "fail")] * no_no)


@pytest.mark.parametrize("table, kappa", [
    ((20, 5, 10, 15), 0.4),  # po 0.7, pe 0.5
    ((45, 15, 25, 15), (0.6 - 0.54) / (1 - 0.54)),  # po 0.6, pe 0.54
    ((10, 0, 0, 10), 1.0),
    ((0, 10, 10, 0), -1.0),
    ((10, 0, 10, 0), 0.0),  # a judge that passes everything: chance agreement only
])
def test_cohen_kappa_known_values(table, kappa):
    assert cohen_kappa(pairs(*table)) == pytest.approx(kappa)


def test_cohen_kappa_is_exact_where_floats_would_not_be():
    # po 0.7, pe 0.5: (0.7 - 0.5) / 0.5 is 0.3999999999999999 in floats; a --min-kappa of 0.4 must be met
    assert cohen_kappa(pairs(20, 5, 10, 15)) == 0.4
    assert repr(cohen_kappa(pairs(45, 15, 25, 15))) == repr(3 / 23)


def test_cohen_kappa_is_undefined_when_every_label_and_verdict_is_the_same():
    assert cohen_kappa(pairs(7, 0, 0, 0)) is None
    assert cohen_kappa([]) is None


def test_the_shipped_semantic_match_set_is_valid_and_balanced():
    labels, problems = load_labels(SHIPPED)
    assert problems == [] and labels.check == {"type": "semantic_match"}
    assert len(labels.examples) == 20 and sum(e.label == "pass" for e in labels.examples) == 10


def test_labels_file_errors_have_positions(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # paths in diagnostics are shown relative to the working folder
    write(tmp_path / "labels.yaml", """
        check: {type: semantic_mach}
        examples:
          - {id: a, answer: x, label: yes}
          - {id: a, answer: x, messages: [], label: pass}
          - {id: b, answer: x, label: pass, options: {samples: 0}}
        """)
    labels, problems = load_labels(Path("labels.yaml"))
    assert labels is None
    shown = [str(p) for p in problems]
    assert shown[0] == ("labels.yaml:1:8: error: check: unknown check type 'semantic_mach' (did you mean "
                        "'semantic_match'?)")
    assert shown[1].startswith("labels.yaml:3:31: error: examples.0.label: Input should be 'pass' or 'fail'")
    assert shown[2] == ("labels.yaml:4:5: error: examples.1: give either `answer` (with an optional `question`) or "
                        "`messages`, not both")
    write(tmp_path / "labels.yaml", """
        check: {type: semantic_match}
        examples:
          - {id: b, answer: x, label: pass, options: {samples: 0}}
        """)
    _, problems = load_labels(Path("labels.yaml"))
    assert [str(p) for p in problems] == [
        "labels.yaml:3:5: error: examples[0] ('b'): the check with this example's options is invalid: samples: "
        "Input should be greater than or equal to 1"]


DISAGREE = {"Bring a proof of address and your passport.": False,  # labelled pass
            "The office opens at 9 am every day, weekends included.": True}  # labelled fail


def scripted_judge(labels):
    """Agrees with the people except on two examples, and answers one with no verdict at all."""
    by_answer = {e.answer: e.label == "pass" for e in labels.examples}

    def judge(request):
        import re

        prompt = request["messages"][0]["content"]
        token = re.search(r"BEGIN-(V[0-9A-F]{20})", prompt).group(1)
        data = json.loads(prompt.split(f"BEGIN-{token}\n", 1)[1].split(f"\nEND-{token}", 1)[0])
        if data["actual"] == "It's probably around 50 euros, I think.":
            return "I would rather not say."
        match = DISAGREE.get(data["actual"], by_answer[data["actual"]])
        return json.dumps({"reason": "as scripted", "match": match, "score": float(match), "verdict_id": token})
    return judge


def test_calibrate_command_through_the_fake_judge(tmp_path):
    labels, _ = load_labels(SHIPPED)
    shutil.copy(SHIPPED, tmp_path / "labels.yaml")
    with FakeOpenAI(default=scripted_judge(labels)) as fake:
        write(tmp_path / "evalrun.yaml", f"""
            embeddings: {{enabled: false}}
            judge: {{model: openai/fake-judge, api_base: "{fake.base_url}", max_retries: 0, cache: false}}
            """)
        result = run_cli("calibrate", "labels.yaml", cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        assert len(fake.requests) == 22  # 20 questions; the one with no verdict is asked twice more (reply_retries)
        as_json = run_cli("calibrate", "labels.yaml", "--format", "json", "--min-kappa", "0.8", cwd=tmp_path)
    lines = result.stdout.splitlines()
    # 19 decided: 9+1 labelled pass, 1+8 labelled fail; po = 17/19, pe = (10/19)^2 + (9/19)^2 -> kappa 142/180
    assert lines[:7] == [
        "calibrating semantic_match on 20 labelled example(s); the check decided 19",
        "agreement: 0.895",
        "Cohen's kappa: 0.789",
        "",
        "                 check pass  check fail",
        "labelled pass             9           1",
        "labelled fail             1           8"]
    assert "  reordered-list: labelled pass, the check said fail: the judge said no: as scripted (score 0, threshold 0)" \
        in lines
    assert any(line.startswith("  hedged-wrong-amount: unscored: the judge gave no usable answer: ") for line in lines)
    assert as_json.returncode == 1  # kappa 0.789 < 0.8
    report = json.loads(as_json.stdout)
    assert report["kappa"] == pytest.approx(142 / 180) and report["agreement"] == pytest.approx(17 / 19)
    assert report["confusion"] == {"pass": {"pass": 9, "fail": 1}, "fail": {"pass": 1, "fail": 8}}
    assert as_json.stderr.splitlines()[-1] == "Cohen's kappa 0.789 is below --min-kappa 0.8: exit 1"


def test_calibrate_on_an_invalid_file_exits_4(tmp_path):
    (tmp_path / "labels.yaml").write_text(yaml.safe_dump({"check": {"type": "contains", "value": "x"},
                                                          "examples": []}))
    result = run_cli("calibrate", "labels.yaml", cwd=tmp_path)
    assert result.returncode == 4
    assert "labels.yaml:4:11: error: examples: List should have at least 1 item after validation, not 0" in \
        result.stderr.splitlines()


def test_calibrate_without_a_judge_decides_nothing_and_exits_3(tmp_path):
    shutil.copy(SHIPPED, tmp_path / "labels.yaml")
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\n")
    result = run_cli("calibrate", "labels.yaml", cwd=tmp_path)
    assert result.returncode == 3
    lines = result.stdout.splitlines()
    assert lines[:3] == ["calibrating semantic_match on 20 labelled example(s); the check decided 0", "agreement: n/a",
                         "Cohen's kappa: undefined (nothing decided)"]
    assert "  date-other-format: unscored: no judge model is configured: add `judge:` to evalrun.yaml, or give this " \
        "check `judge: {model: ...}` (a --profile with `judged: false` leaves judged checks out on purpose)" in lines
    assert result.stderr.splitlines()[-1] == "the check decided none of the examples (see why above): exit 3"
