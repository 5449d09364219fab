"""Compositions (`all`, `any`, `average`, `weighted`) over nested checks, on concrete conversations:
what each does with passing, failing, skipped and unscored children, and how nested checks validate."""
from __future__ import annotations

import pytest

from runner.checks import registry
from runner.checks.run import run_checks
from runner.checks.select import Selection
from runner.config.model import CheckProfile
from tests.helpers.checks_text import case_with, texts

ANSWER = "Your id is 15778303."
PASS = {"type": "contains", "value": "15778303", "name": "has id"}
FAIL = {"type": "contains", "value": "January", "name": "has month"}
SKIP = {"type": "response_match", "name": "no reference"}  # the case has no reference answer: skipped
NO_JUDGE = {"type": "semantic_match", "reference": "x", "name": "judged"}  # no judge configured: unscored
UNSCORED = {"type": "regex", "pattern": "(a|aa)+$", "name": "slow"}  # stopped after 1 s: unscored
SLOW_ANSWER = "a" * 5000 + "b"


def one(spec, answer=ANSWER, selection=None):
    [result] = run_checks(case_with(spec), texts(answer), selection=selection)
    return result


@pytest.mark.parametrize("kind, children, status, score", [
    ("all", [PASS, PASS], "passed", 1.0),
    ("all", [PASS, FAIL], "failed", 0.5),
    ("all", [PASS, SKIP], "passed", 1.0),  # a skipped child is not counted
    ("any", [FAIL, PASS], "passed", 0.5),
    ("any", [FAIL, FAIL], "failed", 0.0),
    ("any", [FAIL, SKIP], "failed", 0.0),
    ("any", [NO_JUDGE, PASS], "passed", 0.5),  # a judged child without a judge is unscored, not left out
    ("average", [PASS, FAIL], "passed", 0.5),  # default threshold 0.5
    ("average", [PASS, FAIL, FAIL], "failed", 1 / 3),
])
def test_combinators(kind, children, status, score):
    result = one({"type": kind, "checks": children})
    assert (result.status, result.score) == (status, pytest.approx(score))
    assert [c["name"] for c in result.evidence["checks"]] == [c["name"] for c in children]


def test_weighted_uses_each_childs_weight_and_explains_the_parts():
    result = one({"type": "weighted", "threshold": 0.7,
                  "checks": [{**PASS, "weight": 3}, {**FAIL, "weight": 1}]})
    assert (result.status, result.score) == ("passed", 0.75)
    assert result.explanation.startswith("weighted score 0.75 of has id 1×3, has month 0×1; 1 of 2 nested check(s) "
                                         "passed: [passed] has id: ")
    assert "[failed] has month: the final answer (message 2) does not contain 'January'" in result.explanation
    assert result.explanation.endswith("(score 0.75 >= threshold 0.7)")


def test_weighted_with_zero_weights_is_unscored():
    result = one({"type": "weighted", "checks": [{**PASS, "weight": 0}, {**FAIL, "weight": 0}]})
    assert result.status == "unscored"
    assert result.explanation.startswith("unscored: the weights of the nested checks sum to 0: ")


def test_all_fails_on_a_failure_even_with_an_unscored_child():
    result = one({"type": "all", "checks": [PASS, NO_JUDGE]})
    assert result.status == "unscored"  # the other child passes: the unscored one decides
    result = one({"type": "all", "checks": [FAIL, NO_JUDGE]})
    assert (result.status, result.score) == ("failed", 0.0)


def test_any_passes_on_a_pass_even_with_an_unscored_child_and_is_unscored_otherwise():
    assert one({"type": "any", "checks": [NO_JUDGE, PASS]}).status == "passed"
    result = one({"type": "any", "checks": [NO_JUDGE, FAIL]})
    assert result.status == "unscored"
    assert result.explanation.startswith("unscored: 0 of 2 nested check(s) passed, and 1 unscored could decide it: "
                                         "[unscored] judged: unscored: ")


def test_average_with_an_unscored_child_is_unscored():
    """The unscored child here is a pattern stopped at its time limit (the others use a judged check without a
    judge): a child that runs away is unscored inside a composition too."""
    result = one({"type": "average", "checks": [{**PASS, "value": "b"}, UNSCORED]}, answer=SLOW_ANSWER)
    assert result.status == "unscored"
    assert result.explanation.startswith("unscored: 1 nested check(s) unscored, so there is no average score: ")


def test_every_child_skipped_skips_the_composition():
    result = one({"type": "all", "checks": [SKIP]})
    assert result.status == "skipped"
    assert result.explanation.startswith("skipped: every nested check was skipped: [skipped] no reference: skipped: "
                                         "no reference answer")


def test_compositions_nest_and_the_profile_reaches_nested_checks():
    spec = {"type": "any", "name": "outer", "checks": [{"type": "all", "checks": [PASS, FAIL]}, FAIL]}
    assert one(spec).status == "failed"
    ci = Selection("ci", CheckProfile(exclude=["has month"]))
    result = one(spec, selection=ci)
    assert result.status == "passed"  # the inner all keeps only "has id"; the outer any keeps only the inner all
    inner = result.evidence["checks"][0]
    assert [c["explanation"] for c in inner["evidence"]["checks"]][1] == \
        "skipped: left out by profile ci (its exclude has 'has month')"


def test_nested_checks_are_validated_with_positions(tmp_path):
    from tests.helpers.cli_helpers import run_cli, write

    write(tmp_path / "s.yaml", """
        id: c1
        starting_sentence: hi
        checks:
          - type: all
            checks:
              - {type: contains, valeu: x}
              - type: any
                checks: [{type: latency, max_s: 1}, {type: regx, pattern: x}]
          - {type: average, checks: []}
        """)
    result = run_cli("validate", "s.yaml", cwd=tmp_path)
    assert result.returncode == 4
    assert result.stdout.splitlines() == [
        "s.yaml:6:9: error: checks[0].checks[0] is missing the required key 'value'",
        "s.yaml:6:26: error: unknown key 'valeu' in checks[0].checks[0] (did you mean 'value'?)",
        "s.yaml:8:52: error: checks[0].checks[1].checks[1].type: 'regx' is not one of "
        + ", ".join(registry()) + " (did you mean 'regex'?)",
        "s.yaml:9:29: error: checks[1].checks needs at least 1 item(s)"]


def test_a_budget_check_on_the_run_cannot_be_nested(tmp_path):
    from tests.helpers.cli_helpers import run_cli, write

    write(tmp_path / "s.yaml", """
        id: c1
        starting_sentence: hi
        checks:
          - type: all
            checks: [{type: contains, value: x}, {type: latency, max_s: 1}]
        """)
    result = run_cli("validate", "s.yaml", cwd=tmp_path)
    assert result.returncode == 4
    assert "nested check 2 (latency) is decided on the finished run (its time or cost) and cannot be nested: " \
        "list it on its own" in result.stdout.splitlines()[0]
    assert result.stdout.startswith("s.yaml:4:5: error: ")  # at the check that holds it
