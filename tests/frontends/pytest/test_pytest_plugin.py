"""The pytest plugin: `pytest` collects evalrun cases as tests, in projects that hold evalrun suites only.

Every test runs the real pytest in a project written to a temporary folder, with the plugin loaded as users get
it (the `pytest11` entry point of the installed package): in this process (pytest_here: pytest.main, as pytest's
own pytester does) unless the test is about what only a process shows (xdist's workers, a worker that dies, what a
fresh interpreter imports, this repository's own conftest), where it starts `python -m pytest` (pytest_in).
Both load only the plugins under test (evalrun's and xdist's; tests/helpers/pytest_plugin.py says why)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from runner import __version__
from tests.helpers.cli_helpers import REPO, cli_env, run_cli, saved_conversations, write
from tests.helpers.pytest_plugin import (  # noqa: F401 - AGENT and GOALS: shared with other test modules
    AGENT,
    GOALS,
    project,
    pytest_command,
    pytest_here,
    pytest_in,
)


def verdicts(report: Path) -> dict[str, str]:
    return {case["id"]: case["status"] for case in json.loads(report.read_text())["cases"]}


def outcomes(stdout: str) -> dict[str, str]:
    """`path::id STATUS` lines of `pytest -v` (with -n, the lines carry the worker first)."""
    found = re.findall(r"(\S+::\S+) (PASSED|FAILED|SKIPPED|ERROR)", stdout)
    found += [(node, status) for status, node in re.findall(r"\[gw\d+\] \[\s*\d+%\] (PASSED|FAILED|SKIPPED) (\S+)",
                                                            stdout)]
    return dict(found)


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """The default project played once by plain `pytest -v` into `single`: the first test reads that run, the
    xdist test compares its workers' run with it (one pytest run fewer than each playing its own)."""
    root = project(tmp_path_factory.mktemp("played") / "p")
    return root, pytest_here(root, "-v", "--evalrun-output-dir", "single")


def test_every_case_is_a_test_named_by_its_id_and_other_files_are_left_alone(played, tmp_path):
    root, done = played
    assert done.returncode == 1, done.stdout + done.stderr
    assert outcomes(done.stdout) == {
        **{f"suites/lookups.yaml::lookup-{n}": "PASSED" for n in range(5)},
        "suites/more.yaml::skipped-one": "SKIPPED", "suites/more.yaml::does-not-know": "FAILED"}
    assert "collected 7 items" in done.stdout  # not docker-compose.yaml, not suites/notes.json: evalrun passes
    assert ("passed over 2 files that are not a suite: docker-compose.yaml (no suite keys such as goal_details or "
            "cases); suites/notes.json") in done.stdout  # them over, and says so as `evalrun` does
    # the run folder is written as by the CLI, with the same verdicts
    assert verdicts(root / "single" / "report.json") == {
        **{f"lookup-{n}": "passed" for n in range(5)}, "skipped-one": "skipped", "does-not-know": "failed"}
    assert len((root / "single" / "results.jsonl").read_text().splitlines()) == 7
    assert saved_conversations(root / "single")["lookup-0"]["messages"]
    run_cli("suites", "--output-dir", str(tmp_path / "cli-out"), cwd=root)  # outside the shared project
    assert verdicts(tmp_path / "cli-out" / "report.json") == verdicts(root / "single" / "report.json")
    assert f"report: {root / 'single' / 'report.json'}" in done.stdout


def test_a_failing_case_shows_evalrun_s_explanation_not_a_traceback(tmp_path):
    root = project(tmp_path / "p")
    done = pytest_here(root, "suites/more.yaml", "--evalrun-output-dir", "out")
    failure = done.stdout.split("evalrun case does-not-know", 1)[1].split("=====", 1)[0]
    assert failure.strip("_ \n").splitlines() == [
        "goal 'get_id': not called: the agent never called get_assignment_id",
        "goal 'tell': not said: nothing in the assistant's messages contains all keywords; the closest (message 2) "
        "misses '15778303'",
        "FAIL  does-not-know [live]  completion 0.00, recall 0.00  (suites/more.yaml:7:5)"]
    assert "Traceback" not in done.stdout and "def runtest" not in done.stdout
    assert "FAILED suites/more.yaml::does-not-know - goal 'get_id': not called" in done.stdout


def test_tags_are_markers_and_k_selects_by_id_and_the_report_holds_what_ran(tmp_path):
    root = project(tmp_path / "p")
    done = pytest_here(root, "-v", "-m", "smoke", "--strict-markers", "--evalrun-output-dir", "out")
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(outcomes(done.stdout)) == ["suites/lookups.yaml::lookup-0", "suites/lookups.yaml::lookup-1"]
    assert "PytestUnknownMarkWarning" not in done.stdout
    report = json.loads((root / "out" / "report.json").read_text())
    assert (report["summary"]["total"], report["summary"]["not_run"]) == (2, [])
    done = pytest_here(root, "-v", "-k", "lookup-3 or does-not", "--evalrun-output-dir", "out2")
    assert sorted(outcomes(done.stdout)) == ["suites/lookups.yaml::lookup-3", "suites/more.yaml::does-not-know"]
    assert verdicts(root / "out2" / "report.json") == {"lookup-3": "passed", "does-not-know": "failed"}


def test_x_stops_at_the_first_failure_and_the_report_says_what_did_not_run(tmp_path):
    root = project(tmp_path / "p")
    done = pytest_here(root, "-x", "suites/more.yaml", "suites/lookups.yaml", "--evalrun-output-dir", "out")
    assert done.returncode == 1
    summary = json.loads((root / "out" / "report.json").read_text())["summary"]
    assert summary["not_run"] == [f"lookup-{n}" for n in range(5)]
    assert summary["stop_reason"] == "pytest -x/--maxfail: stopping after 1 failures"
    assert (summary["exit_code"], summary["exit_reason"]) == (  # as evalrun -x says it
        1, "stopped after the first failure (pytest -x/--maxfail: stopping after 1 failures), 5 case(s) not run; "
           "1 case(s) failed: exit 1")


def test_lf_reruns_only_the_cases_that_failed(tmp_path):
    root = project(tmp_path / "p")
    pytest_here(root, "-v", "--evalrun-output-dir", "first", cache=True)
    again = pytest_here(root, "-v", "--lf", "--evalrun-output-dir", "second", cache=True)
    assert outcomes(again.stdout) == {"suites/more.yaml::does-not-know": "FAILED"}
    assert verdicts(root / "second" / "report.json") == {"does-not-know": "failed"}


@pytest.mark.process
def test_xdist_workers_play_the_cases_and_one_process_writes_one_report(played):
    """One run under -n 2, into a folder that holds a run already (a copy of the plain run's): its workers' run
    is the plain one's, and the folder starts afresh (not the old run's lines and the new run's)."""
    root, single = played
    shutil.copytree(root / "single", root / "spread")
    assert len((root / "spread" / "conversations.jsonl").read_text().splitlines()) == 6
    spread = pytest_in(root, "-v", "-n", "2", "--evalrun-output-dir", "spread", "--evalrun-format", "junit")
    assert spread.returncode == single.returncode == 1, spread.stdout + spread.stderr
    assert outcomes(spread.stdout) == outcomes(single.stdout)
    assert verdicts(root / "spread" / "report.json") == verdicts(root / "single" / "report.json")
    report = json.loads((root / "spread" / "report.json").read_text())
    assert [c["id"] for c in report["cases"]] == [f"lookup-{n}" for n in range(5)] + ["skipped-one", "does-not-know"]
    assert report["summary"]["total"] == 7 and report["summary"]["not_run"] == []
    assert len((root / "spread" / "results.jsonl").read_text().splitlines()) == 7, "the reused folder starts afresh"
    assert len(saved_conversations(root / "spread")) == 6  # the skipped case says nothing; the workers' lines whole
    assert len((root / "spread" / "conversations.jsonl").read_text().splitlines()) == 6, \
        "the reused folder starts afresh: the old run's conversations are gone before the workers save theirs"
    assert (root / "spread" / "junit.xml").is_file()


@pytest.mark.process
def test_a_worker_that_dies_leaves_its_case_as_an_error_in_the_report(tmp_path):
    root = project(tmp_path / "p", failing=False, crash=True)
    done = pytest_in(root, "-n", "2", "--evalrun-output-dir", "out")
    assert done.returncode == 3, done.stdout + done.stderr  # a case in error: the run's verdict, as the CLI's
    assert "evalrun: run verdict exit 3: 1 case(s) ended in error" in done.stdout
    report = json.loads((root / "out" / "report.json").read_text())
    cases = {c["id"]: c for c in report["cases"]}
    assert cases["dies"]["status"] == "error"
    assert cases["dies"]["error"].startswith("pytest reported this case's test as failed before evalrun had its "
                                             "result: "), cases["dies"]["error"]
    assert "crashed" in cases["dies"]["error"]
    assert [cases[f"lookup-{n}"]["status"] for n in range(5)] == ["passed"] * 5


def test_suite_errors_are_collection_errors_in_the_compiler_s_words(tmp_path):
    root = project(tmp_path / "p")
    write(root / "suites" / "broken.yaml", """
        agent: bot
        cases:
          - id: typo
            starting_sentence: hi
            goal_detail: []
        """)
    done = pytest_here(root)
    assert done.returncode == 2  # pytest's own "interrupted: errors during collection"
    assert "ERROR collecting suites/broken.yaml" in done.stdout
    assert "suites/broken.yaml:5:5: error: unknown key 'goal_detail' in cases[0] (did you mean 'goal_details'?)" \
        in done.stdout
    (root / "suites" / "broken.yaml").unlink()
    write(root / "evalrun.yaml", "embedings: {enabled: false}\n")
    done = pytest_here(root)
    assert done.returncode == 2
    assert re.search(r"ERROR collecting evalrun.yaml _+\nevalrun.yaml:1:1: error: unknown key 'embedings' in the top "
                     r"level \(did you mean 'embeddings'\?\)\n", done.stdout), done.stdout


def test_only_projects_and_evalrun_paths_are_collected(tmp_path):
    write(tmp_path / "evals" / "case.yaml", "id: c\nstarting_sentence: hi\ntranscript: t.json\n"
                                            "goal_details: [{type: text, name: g, keywords: [hello]}]\n")
    write(tmp_path / "evals" / "t.json", json.dumps([{"role": "user", "content": "hi"},
                                                      {"role": "assistant", "content": "hello"}]))
    write(tmp_path / "test_plain.py", "def test_plain():\n    assert True\n")
    done = pytest_here(tmp_path, "-v")
    assert outcomes(done.stdout) == {"test_plain.py::test_plain": "PASSED"}  # no evalrun.yaml: left alone
    write(tmp_path / "pytest.ini", "[pytest]\nevalrun_paths = evals\n")
    done = pytest_here(tmp_path, "-v", "--evalrun-output-dir", "out")
    assert outcomes(done.stdout) == {"test_plain.py::test_plain": "PASSED", "evals/case.yaml::c": "PASSED"}
    assert verdicts(tmp_path / "out" / "report.json") == {"c": "passed"}


@pytest.mark.process
def test_a_project_without_evalrun_suites_does_not_import_evalrun(tmp_path):  # a fresh interpreter's modules
    write(tmp_path / "fixtures.yaml", "goal_details: []\n")  # looks like a suite, but no project holds it
    write(tmp_path / "data.json", "{}\n")
    write(tmp_path / "test_light.py", """
        import sys

        def test_evalrun_was_not_imported():
            assert sorted(m for m in sys.modules if m.startswith("runner.")) == [
                "runner.frontends", "runner.frontends.pytest", "runner.frontends.pytest.plugin",
                "runner.frontends.pytest.projects", "runner.layout"]  # light packages and the shared names only
        """)
    done = pytest_in(tmp_path, "-v")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"evalrun-{__version__}" in done.stdout  # the plugin was loaded


@pytest.mark.process
def test_evalrun_s_own_tests_collect_the_same_with_and_without_the_plugin():
    targets = ["tests/data", "tests/fakes", "tests/score/test_keywords.py"]
    ids = [subprocess.run(pytest_command("--collect-only", "-q", *plugin, *targets), cwd=REPO,
                          env=cli_env(), capture_output=True, text=True, timeout=300).stdout.splitlines()[:-1]
           for plugin in ([], ["-p", "no:evalrun"])]  # the last line says how long it took
    assert ids[0] == ids[1] and any("test_keywords.py::" in line for line in ids[0])


@pytest.mark.process
def test_an_evalrun_init_project_passes_under_pytest_as_under_evalrun_and_with_two_workers(tmp_path):
    assert run_cli("init", "starter", cwd=tmp_path).returncode == 0
    root = tmp_path / "starter"
    evalrun = run_cli("suites/", "--output-dir", "by-evalrun", cwd=root)
    plain = pytest_here(root, "--evalrun-output-dir", "by-pytest")
    spread = pytest_in(root, "-n", "2", "--evalrun-output-dir", "by-xdist")
    assert (evalrun.returncode, plain.returncode, spread.returncode) == (0, 0, 0), plain.stdout + spread.stdout
    expected = verdicts(root / "by-evalrun" / "report.json")
    assert expected == {"order-status": "passed"}
    assert verdicts(root / "by-pytest" / "report.json") == verdicts(root / "by-xdist" / "report.json") == expected


def test_the_plugin_and_the_collector_share_runner_layout_s_file_names():
    from runner import layout
    from runner.frontends.pytest import plugin, projects
    from runner.suite import collect

    names = (layout.SUITE_SUFFIXES, layout.CONFIG_NAMES)
    assert names == (plugin.SUITE_SUFFIXES, plugin.CONFIG_NAMES) and projects.CONFIG_NAMES is layout.CONFIG_NAMES
    assert plugin.SUITE_SUFFIXES is collect.SUITE_SUFFIXES is layout.SUITE_SUFFIXES  # one definition, no copy


def test_an_unknown_report_format_is_a_usage_error(tmp_path):
    done = pytest_here(tmp_path, "--evalrun-format", "pdf")
    assert done.returncode == 4
    assert "--evalrun-format pdf: not a report format (known: json, junit, md, html)" in done.stderr
