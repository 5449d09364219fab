"""--matrix: one suite across agents and models, in one run (runner.session.matrix, runner.report.grid)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from runner.results.verdict import decide
from tests.helpers.cli_helpers import REPO, write
from tests.helpers.matrix_project import CONFIG, project


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# ----------------------------------------------------------------------------- the bundled examples

def test_a_matrix_over_two_bundled_agents_equals_two_separate_runs(tmp_path, evalrun):
    """The Done-when line: `--matrix agent=hr_agent,hr_agent_terse` over the bundled live suite gives, per variant,
    what `--agent hr_agent` and `--agent hr_agent_terse` give run apart; in one report."""
    root = tmp_path / "suites"
    shutil.copytree(REPO / "suites" / "live", root / "live")
    shutil.copy(REPO / "suites" / "evalrun.yaml", root / "evalrun.yaml")
    code, out, err = evalrun(tmp_path, "run", "suites/live", "--matrix", "agent=hr_agent,hr_agent_terse",
                             "--output-dir", "m")
    assert code == 1, err
    matrix_cases = lines(tmp_path / "m" / "results.jsonl")
    report = json.loads((tmp_path / "m" / "report.json").read_text())
    for agent in ("hr_agent", "hr_agent_terse"):
        code, _, err = evalrun(tmp_path, "run", "suites/live", "--agent", agent, "--output-dir", agent)
        apart = {case["id"]: case for case in lines(tmp_path / agent / "results.jsonl")}
        assert "variant" not in next(iter(apart.values()))  # a run without a matrix has no variant key
        mine = {case["id"]: case for case in matrix_cases if case["variant"] == f"agent={agent}"}
        assert {i: c["status"] for i, c in mine.items()} == {i: c["status"] for i, c in apart.items()}
        assert {i: (c["metrics"], c["failures"]) for i, c in mine.items()} == \
               {i: (c["metrics"], c["failures"]) for i, c in apart.items()}
        variant = next(v for v in report["matrix"]["variants"] if v["id"] == f"agent={agent}")
        separate = json.loads((tmp_path / agent / "report.json").read_text())["summary"]
        assert variant["counts"] == {s: separate[s] for s in ("passed", "failed", "error", "unscored", "skipped")}
        assert variant["verdict"]["exit_code"] == separate["exit_code"] == (0 if agent == "hr_agent" else 1)
    assert report["matrix"]["disagreements"] == ["live-timeoff-one-message"]
    assert report["summary"]["total"] == 6 and len(report["cases"]) == 6
    assert "matrix: 2 variant(s), 1 case(s) where they disagree" in out
    assert "live-timeoff-one-message  PASS      FAIL  <- differs" in out


# ----------------------------------------------------------------------------- the contract and every format

def test_report_json_results_jsonl_and_every_format_show_the_grid(tmp_path, evalrun):
    root = project(tmp_path)
    code, out, err = evalrun(root, "run", "suite.yaml", "--matrix", "agent=polite,terse", "--output-dir", "run",
                             "--format", "md", "--format", "junit", "--format", "html")
    assert code == 1, err
    report = json.loads((root / "run" / "report.json").read_text())
    matrix = report["matrix"]
    assert matrix["axes"] == {"agent": ["polite", "terse"]}
    assert [v["id"] for v in matrix["variants"]] == ["agent=polite", "agent=terse"]
    polite, terse = matrix["variants"]
    assert polite["assignments"] == {"agent": "polite"}
    assert polite["counts"] == {"passed": 3, "failed": 0, "error": 0, "unscored": 0, "skipped": 0}
    assert terse["counts"]["passed"] == 2 and terse["counts"]["failed"] == 1 and terse["total"] == 3
    assert terse["pass_rate"] == pytest.approx(2 / 3) and len(terse["pass_rate_interval"]) == 2
    assert terse["verdict"] == {"exit_code": 1, "reason": "1 case(s) failed: exit 1"}
    assert polite["verdict"] == {"exit_code": 0, "reason": "all cases passed: exit 0"}
    assert terse["cost_usd"] is None and terse["tokens"] is None  # python agents call no model
    assert matrix["disagreements"] == ["balance"]
    assert sorted((c["id"], c["variant"]) for c in report["cases"]) == sorted(
        (i, v) for i in ("greets", "balance", "amount") for v in ("agent=polite", "agent=terse"))
    assert all("variant" in line for line in lines(root / "run" / "results.jsonl"))
    assert report["summary"]["exit_reason"] == "1 case(s) failed (by variant: 'agent=terse' 1): exit 1"
    # console: the case lines name the variant, the grid puts the disagreement first
    assert "FAIL  balance [agent=terse] [live]" in out
    grid = out[out.index("matrix: 2 variant(s)"):].splitlines()
    assert grid[1:3] == ["  [1] agent=polite: pass rate 100.0% (3/3), cost n/a",
                         "  [2] agent=terse: pass rate 66.7% (2/3), cost n/a"]
    assert grid[4] == "  balance  PASS      FAIL  <- differs"
    # Markdown: the grid, the disagreement first
    md = (root / "run" / "summary.md").read_text()
    assert "| case | agent=polite | agent=terse |\n|---|---|---|\n| *pass rate* | 100.0% (3/3) | 66.7% (2/3) |" in md
    assert md.index("| balance ≠ | PASS | FAIL |") < md.index("| greets | PASS | PASS |")
    # JUnit: a testcase per (case, variant), named by both; each variant's pass rate a property
    junit = (root / "run" / "junit.xml").read_text()
    assert '<testcase name="balance [agent=terse]"' in junit and '<testcase name="balance [agent=polite]"' in junit
    assert ('<property name="matrix[agent=terse]" value="pass rate 66.7% (2/3), cost n/a, 1 case(s) failed: '
            'exit 1"/>') in junit
    # HTML: the grid as a table
    page = (root / "run" / "report.html").read_text()
    assert ('<tr class="differs"><th scope="row">balance <span title="the variants disagree">≠</span></th>'
            '<td class="s-passed">PASS</td><td class="s-failed">FAIL</td></tr>') in page
    # `evalrun report` redraws them from the saved run alone
    code, _, err = evalrun(root, "report", "run", "--format", "md", "-o", "again.md")
    assert code == 0, err
    assert (root / "again.md").read_text() == md


def test_a_run_without_a_matrix_has_no_matrix_and_no_variant(tmp_path, evalrun):
    root = project(tmp_path)
    code, _, err = evalrun(root, "run", "suite.yaml", "--output-dir", "run", "--format", "md")
    assert code == 0, err
    report = json.loads((root / "run" / "report.json").read_text())
    assert "matrix" not in report and all("variant" not in case for case in report["cases"])
    assert "Matrix" not in (root / "run" / "summary.md").read_text()


def test_evalrun_yaml_matrix_applies_and_the_flag_overrides_it(tmp_path, evalrun):
    root = project(tmp_path, CONFIG + "matrix:\n  agent: [polite, terse]\n")
    code, _, err = evalrun(root, "run", "suite.yaml", "--output-dir", "a")
    assert code == 1, err
    assert [v["id"] for v in json.loads((root / "a" / "report.json").read_text())["matrix"]["variants"]] == \
           ["agent=polite", "agent=terse"]
    code, _, err = evalrun(root, "run", "suite.yaml", "--matrix", "agent=polite", "--output-dir", "b")
    assert code == 0, err
    assert json.loads((root / "b" / "report.json").read_text())["matrix"]["axes"] == {"agent": ["polite"]}


# ----------------------------------------------------------------------------- gates per variant

def test_min_pass_rate_holds_for_each_variant_and_names_the_one_below(tmp_path, evalrun):
    root = project(tmp_path)  # the run's 5/6 = 0.83 reaches 0.8; variant terse's 2/3 does not
    code, out, err = evalrun(root, "run", "suite.yaml", "--matrix", "agent=polite,terse", "--min-pass-rate", "0.8",
                             "--output-dir", "run")
    assert code == 1, err
    assert ("variant 'agent=terse': pass rate 0.67 is below min_pass_rate 0.80 (min_pass_rate 0.80 reached (0.83) "
            "although 1 case(s) failed): exit 1") in out
    code, _, err = evalrun(root, "run", "suite.yaml", "--matrix", "agent=polite,terse", "--min-pass-rate", "0.6",
                           "--output-dir", "run2")
    assert code == 0, err


def test_decide_gates_each_variant():
    class Tally:
        counts = {"passed": 5, "failed": 1, "error": 0, "unscored": 0, "skipped": 0}
        finished, selected, judge_fallback_cases, pass_rate = {1}, [1], 0, 5 / 6

    held = decide(Tally(), min_pass_rate=0.5, variants=[("agent=a", 1.0, 0), ("agent=b", 2 / 3, 1)])
    assert held.exit_code == 0
    fell = decide(Tally(), min_pass_rate=0.7, variants=[("agent=a", 1.0, 0), ("agent=b", 2 / 3, 1)])
    assert fell.exit_code == 1 and fell.reason.startswith("variant 'agent=b': pass rate 0.67 is below min_pass_rate")


def test_baseline_compares_per_case_and_variant(tmp_path, evalrun):
    root = project(tmp_path)
    evalrun(root, "run", "suite.yaml", "--matrix", "agent=polite,terse", "--output-dir", "base")
    evalrun(root, "run", "suite.yaml", "--matrix", "agent=terse,polite", "--output-dir", "now",
                             "--baseline", "base")
    baseline = json.loads((root / "now" / "report.json").read_text())["summary"]["baseline"]
    assert baseline["compared"] == 6 and baseline["newly_failing"] == [] and baseline["newly_passing"] == []
    evalrun(root, "run", "suite.yaml", "--matrix", "agent=terse", "--output-dir", "m2", "--baseline", "base")
    baseline = json.loads((root / "m2" / "report.json").read_text())["summary"]["baseline"]
    assert baseline["compared"] == 3 and baseline["newly_failing"] == []


# ----------------------------------------------------------------------------- usage errors

@pytest.mark.parametrize("flags, message", [
    (["agent=polite,polit"], "evalrun run: error: --matrix: agent: 'polit' is not declared in evalrun.yaml's agents "
                             "(did you mean 'polite'?) (declared: polite, terse)"),
    (["agent=polite,"], "evalrun run: error: --matrix: agent: an empty value in polite,; give each agent by name "
                        "(for example --matrix agent=hr_v1,hr_v2 or --matrix model=openai/a,openai/b)"),
    (["agent=polite,polite"], "evalrun run: error: --matrix: agent: 'polite' is listed twice (a variant runs once "
                              "per case)"),
    (["agnet=polite"], "evalrun run: error: --matrix: unknown axis 'agnet' (did you mean 'agent'?); the axes are "
                       "agent, model"),
    (["polite"], "evalrun run: error: --matrix: 'polite' is not AXIS=VALUE,VALUE (for example --matrix "
                 "agent=hr_v1,hr_v2 or --matrix model=openai/a,openai/b)"),
    (["agent=polite", "agent=terse"], "evalrun run: error: --matrix: axis 'agent' is given twice; give its values "
                                      "once, separated by commas"),
    (["model=openai/a,openai/b"], "evalrun run: error: --matrix: model: agent 'polite' (type python) takes no "
                                  "model, so the model axis cannot apply to it; the model axis sets the `model` of "
                                  "agents of type model (drop the axis, or play these cases with such an agent)"),
])
def test_matrix_usage_errors_are_precise_and_run_nothing(tmp_path, evalrun, flags, message):
    root = project(tmp_path)
    args = [arg for flag in flags for arg in ("--matrix", flag)]
    code, _out, err = evalrun(root, "run", "suite.yaml", *args, "--output-dir", "run")
    assert code == 4
    assert message in err.splitlines(), err
    assert not (root / "run").exists()


def test_repeat_auto_with_a_matrix_is_refused_rather_than_settled_on_mixed_variants(tmp_path, evalrun):
    root = project(tmp_path)
    code, _, err = evalrun(root, "run", "suite.yaml", "--matrix", "agent=polite,terse", "--repeat", "auto",
                           "--output-dir", "run")
    assert code == 4
    assert "--repeat auto cannot run a --matrix run yet; use --repeat N" in err, err
    assert not (root / "run").exists()


def test_the_agent_axis_and_agent_flag_conflict(tmp_path, evalrun):
    code, _, err = evalrun(project(tmp_path), "run", "suite.yaml", "--agent", "terse", "--matrix", "agent=polite")
    assert code == 4
    assert ("evalrun run: error: --matrix: agent: --agent terse and the agent axis both choose the agent; drop "
            "--agent (the axis plays every case with each of its agents)") in err


def test_a_bad_matrix_in_evalrun_yaml_points_at_its_line(tmp_path, evalrun):
    root = project(tmp_path, CONFIG + "matrix:\n  agent: [polite, politee]\n")
    code, _, err = evalrun(root, "run", "suite.yaml")
    assert code == 4
    assert (f"{root / 'evalrun.yaml'}:5:1: error: matrix: agent: 'politee' is not declared in evalrun.yaml's agents "
            "(did you mean 'polite'?) (declared: polite, terse)") in err


def test_executor_processes_is_refused_with_a_matrix(tmp_path, evalrun):
    code, _, err = evalrun(project(tmp_path), "run", "suite.yaml", "--matrix", "agent=polite,terse",
                           "--executor", "processes")
    assert code == 4
    assert "--executor processes cannot run a --matrix run (its variants play in this process); use --executor " \
           "local" in err


def test_repeat_and_shard_keep_working_with_a_matrix(tmp_path, evalrun):
    root = project(tmp_path)
    code, _, err = evalrun(root, "run", "suite.yaml", "--matrix", "agent=polite,terse", "--repeat", "2",
                           "--output-dir", "rep")
    assert code == 1, err
    report = json.loads((root / "rep" / "report.json").read_text())
    assert report["summary"]["total"] == 6 and len(report["cases"]) == 12
    assert [v["counts"]["failed"] for v in report["matrix"]["variants"]] == [0, 1]
    assert len(report["summary"]["repeats"]["per_case"]) == 6  # each (case, variant) settled on its own runs
    code, _, err = evalrun(root, "run", "suite.yaml", "--matrix", "agent=polite,terse", "--shard", "1/2",
                           "--output-dir", "shard")
    cases = json.loads((root / "shard" / "report.json").read_text())["cases"]
    assert {c["id"] for c in cases if c["variant"] == "agent=polite"} == \
           {c["id"] for c in cases if c["variant"] == "agent=terse"}  # a case's variants stay in one shard


# ----------------------------------------------------------------------------- the model axis, over real HTTP

def test_the_model_axis_sets_the_model_of_model_agents_and_caches_per_variant(tmp_path, evalrun):
    from tests.fakes.openai_server import FakeOpenAI

    def answer(request: dict) -> str:
        return "It is 21 degrees." if request["model"].endswith("good") else "No idea."

    with FakeOpenAI(default=answer) as fake:
        write(tmp_path / "evalrun.yaml", f"""
            embeddings: {{enabled: false}}
            cache_dir: cache
            agents: {{bot: {{type: model, model: openai/good, api_base: "{fake.base_url}"}}}}
            """)
        write(tmp_path / "suite.yaml", """
            id: weather
            starting_sentence: Weather?
            goal_details: [{type: text, name: answer, keywords: ['21']}]
            """)
        for attempt in ("first", "cached"):
            code, _out, err = evalrun(tmp_path, "run", "suite.yaml", "--matrix", "model=openai/good,openai/bad",
                                     "--output-dir", attempt)
            assert code == 1, err
            report = json.loads((tmp_path / attempt / "report.json").read_text())
            assert {(c["variant"], c["status"]) for c in report["cases"]} == {("model=openai/good", "passed"),
                                                                            ("model=openai/bad", "failed")}
            assert sorted(r["model"].rsplit("/", 1)[-1] for r in fake.requests) == ["bad", "good"]  # then cached
        tokens = [v["tokens"] for v in json.loads((tmp_path / "first" / "report.json").read_text())["matrix"]["variants"]]
        assert all(isinstance(n, int) and n > 0 for n in tokens)


def test_exitfirst_and_last_failed_name_and_keep_the_variants(tmp_path, evalrun):
    root = project(tmp_path)
    code, _out, err = evalrun(root, "run", "suite.yaml", "--matrix", "agent=polite,terse", "-x", "-j", "1",
                             "--output-dir", "x")
    summary = json.loads((root / "x" / "report.json").read_text())["summary"]
    assert code == 1, err
    assert summary["stop_reason"] == "-x/--exitfirst: 'balance [agent=terse]' failed"
    assert summary["not_run"] == ["amount [agent=polite]", "amount [agent=terse]"]
    code, _, err = evalrun(root, "run", "suite.yaml", "--matrix", "agent=polite,terse")
    code, _, err = evalrun(root, "run", "suite.yaml", "--matrix", "agent=polite,terse", "--lf", "--output-dir", "lf")
    cases = json.loads((root / "lf" / "report.json").read_text())["cases"]
    assert code == 1, err  # the case that failed in a variant, played again in every variant
    assert sorted((c["id"], c["variant"], c["status"]) for c in cases) == [
        ("balance", "agent=polite", "passed"), ("balance", "agent=terse", "failed")]


def test_pytest_collects_a_test_per_case_and_variant(tmp_path):
    """evalrun.yaml's `matrix:` in a pytest run (in this process): one test per (case, variant), named by both;
    the run folder's report has the matrix, as the CLI's."""
    from tests.helpers.pytest_plugin import pytest_here
    root = project(tmp_path, CONFIG + "matrix:\n  agent: [polite, terse]\n")
    done = pytest_here(root, "-v", "--evalrun-output-dir", "out", "suite.yaml")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "suite.yaml::balance [agent=terse] FAILED" in done.stdout
    assert "suite.yaml::balance [agent=polite] PASSED" in done.stdout
    assert "collected 6 items" in done.stdout
    report = json.loads((root / "out" / "report.json").read_text())
    assert report["matrix"]["disagreements"] == ["balance"]


def test_merge_refuses_the_shards_of_a_matrix_run_saying_why(tmp_path, evalrun):
    root = project(tmp_path)
    for part in ("1/2", "2/2"):
        evalrun(root, "run", "suite.yaml", "--matrix", "agent=polite,terse", "--shard", part,
                "--output-dir", f"s{part[0]}")
    code, _, err = evalrun(root, "merge", "s1", "s2", "--output-dir", "merged")
    assert code == 4
    assert "is a shard of a --matrix run, which `evalrun merge` cannot join yet: run the matrix without --shard, " \
           "or each variant as a run of its own (--agent)" in err


def test_rescore_refuses_a_matrix_run_saying_why(tmp_path, evalrun):
    root = project(tmp_path)
    evalrun(root, "run", "suite.yaml", "--matrix", "agent=polite,terse", "--output-dir", "run")
    code, _, err = evalrun(root, "rescore", "run")
    assert code == 4
    assert "is a --matrix run, which `evalrun rescore` cannot score again yet: run the matrix again (each " \
           "variant's model answers come from the cache)" in err


def test_evaluate_takes_the_matrix_as_a_mapping(tmp_path):
    from runner import evaluate

    root = project(tmp_path)
    report = evaluate([root / "suite.yaml"], matrix={"agent": ["polite", "terse"]}, output_dir=root / "out")
    assert report.passed is False
    saved = json.loads((root / "out" / "report.json").read_text())
    assert saved["matrix"]["disagreements"] == ["balance"] and len(saved["cases"]) == 6
