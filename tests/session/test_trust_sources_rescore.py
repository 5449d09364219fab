"""`evalrun rescore RUN_DIR` when the run folder lies inside the project, where people unpack a fork's CI artifact
(issue 26, item 8): whatever its report.json names or a link points at, nothing in the run folder is read as a
suite, an evalrun.yaml or code. Real processes: `python -m runner` puts the current folder on sys.path, and a
check's module is imported as a run would import it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli_helpers import cli_env, run_cli, tool_call_messages, write, write_json

# `python -m runner` itself puts the current folder on sys.path, which a call in this process would not: what is
# tested is that a process started there imports nothing from the run folder.
pytestmark = pytest.mark.process

EVIL = """
    import os, pathlib

    def pwn(final_text, options):
        pathlib.Path(os.environ["MARKER"]).write_text("ran")
        return True
    """


def evalrun(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "runner", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=cli_env(MARKER=str(cwd.parent / "pwned")))


def project(root: Path) -> Path:
    """The user's project (a repository) with one replayed case, and a finished run of it in `artifact/`."""
    proj = root / "proj"
    (proj / ".git").mkdir(parents=True)
    write(proj / "evalrun.yaml", "embeddings: {enabled: false}\n")
    write(proj / "suites" / "s.yaml", """
        id: lookup
        transcript: t.json
        goal_details: [{type: tool_call, name: look, tool_name: lookup, args: {q: x}}]
        """)
    write_json(proj / "suites" / "t.json", tool_call_messages("lookup", {"q": "x"}))
    # the finished run is only the setting: made in this process (the rescore under test gets its own)
    made = run_cli("run", "suites", "--output-dir", "artifact", cwd=proj)
    assert made.returncode == 0, made.stdout + made.stderr
    return proj


def plant(run: Path, recorded: list[str], module: str = "artifact.team.checks") -> None:
    """What the fork's artifact holds: a suite whose `python` check imports the artifact's own module, and a
    report.json naming that suite."""
    write(run / "team" / "__init__.py", "")
    write(run / "__init__.py", "")
    write(run / "team" / "checks.py", EVIL)
    write(run / "evil" / "s.yaml", f"""
        id: lookup
        transcript: t.json
        goal_details: [{{type: tool_call, name: look, tool_name: lookup, args: {{q: x}}}}]
        checks: [{{type: python, function: "{module}:pwn"}}]
        """)
    write_json(run / "evil" / "t.json", tool_call_messages("lookup", {"q": "x"}))
    report = json.loads((run / "report.json").read_text())
    report["paths"] = recorded
    (run / "report.json").write_text(json.dumps(report))


def last_line(done: subprocess.CompletedProcess) -> str:
    return done.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("recorded, why", [
    ("{proj}/artifact/evil", "inside the run folder"),  # the issue's own shape
    ("{proj}/suites/../artifact/evil", "inside the run folder"),  # `..` through a folder of the project
    ("artifact/evil", "inside the run folder"),  # relative: read from the current folder
    ("{proj}/linked", "inside the run folder"),  # a link in the project that leads into the run folder
])
def test_a_run_folder_inside_the_project_never_chooses_its_suites(tmp_path, recorded, why):
    proj = project(tmp_path)
    os.symlink(proj / "artifact" / "evil", proj / "linked")
    plant(proj / "artifact", [recorded.format(proj=proj)])
    done = evalrun(proj, "rescore", "artifact")
    assert done.returncode == 4, done.stdout + done.stderr
    assert why in last_line(done) and last_line(done).startswith(
        f"evalrun rescore: artifact/report.json names suites '{recorded.format(proj=proj)}'")
    assert "give suites that lie outside it, as in `evalrun rescore artifact suites/`" in last_line(done)
    assert not (tmp_path / "pwned").exists()  # on main: the artifact's check ran


def test_suites_given_on_the_command_line_are_held_to_the_same_rule(tmp_path):
    proj = project(tmp_path)
    plant(proj / "artifact", [str(proj / "suites")])
    inside = evalrun(proj, "rescore", "artifact", "artifact/evil")
    assert inside.returncode == 4 and last_line(inside).startswith(
        "evalrun rescore: the suites 'artifact/evil' inside the run folder artifact: a run folder is data")
    mine = evalrun(proj, "rescore", "artifact", "suites", "--output-dir", "again")
    assert mine.returncode == 0, mine.stdout + mine.stderr  # the project's own suites: scored
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("given", [[], ["."]])
def test_a_suite_folder_holding_the_run_folder_is_collected_without_it(tmp_path, given):
    """The run was of the whole project (recorded: the project) or is given so: the project's suites are scored,
    the run folder's suite (one more case with the same id, and a check that runs its module) is not collected."""
    proj = project(tmp_path)
    plant(proj / "artifact", [str(proj)])
    done = evalrun(proj, "rescore", "artifact", *given, "--output-dir", "again")
    assert done.returncode == 0, done.stdout + done.stderr
    cases = json.loads((proj / "again" / "report.json").read_text())["cases"]
    assert [(c["id"], c["source"], c["checks"]) for c in cases] == [("lookup", "suites/s.yaml:1:1", [])]
    assert not (tmp_path / "pwned").exists()  # on main: artifact/evil/s.yaml was collected (and its id clashed)


def test_a_run_folder_under_a_hidden_folder_is_passed_over_so_the_project_may_be_rescored(tmp_path):
    proj = project(tmp_path)
    assert evalrun(proj, "run", ".").returncode == 0  # recorded: the project; the run: .evalrun/reports/<id>
    done = evalrun(proj, "rescore", ".evalrun/reports/latest", "--output-dir", "again")
    assert done.returncode == 0, done.stdout + done.stderr


def test_an_evalrun_yaml_inside_the_run_folder_is_never_the_config(tmp_path):
    proj = project(tmp_path)
    plant(proj / "artifact", [str(proj / "suites")])
    write(proj / "artifact" / "evalrun.yaml", "embeddings: {enabled: false}\njudge: {model: openai/x, api_base: "
                                              "'http://127.0.0.1:9'}\n")
    from_inside = evalrun(proj / "artifact", "rescore", ".")
    assert from_inside.returncode == 4 and last_line(from_inside) == (
        "evalrun rescore: the current folder lies inside the run folder .: a run folder is data, and nothing in it "
        "is read as a suite, an evalrun.yaml or code; start evalrun rescore from your project")
    given = evalrun(proj, "rescore", "artifact", "suites", "--config", "artifact/evalrun.yaml")
    assert given.returncode == 4 and last_line(given).startswith(
        "evalrun rescore: the evalrun.yaml to use, artifact/evalrun.yaml, lies inside the run folder artifact")


def test_a_checks_module_that_resolves_into_the_run_folder_is_not_imported(tmp_path):
    """The user's own suite names `team.checks`; the artifact was unpacked as `team/` beside evalrun.yaml, so the
    name resolves into it. The check is unscored with the reason, and the artifact's code never runs."""
    proj = project(tmp_path)
    write(proj / "suites" / "s.yaml", """
        id: lookup
        transcript: t.json
        goal_details: [{type: tool_call, name: look, tool_name: lookup, args: {q: x}}]
        checks: [{type: python, function: "team.checks:pwn"}]
        """)
    made = evalrun(proj, "run", "suites", "--output-dir", "team")
    assert made.returncode == 3  # no module team.checks yet: the check is unscored
    write(proj / "team" / "__init__.py", "")
    write(proj / "team" / "checks.py", EVIL)
    done = evalrun(proj, "rescore", "team", "suites", "--output-dir", "again")
    assert done.returncode == 3, done.stdout + done.stderr
    check = json.loads((proj / "again" / "report.json").read_text())["cases"][0]["checks"][0]
    assert check["status"] == "unscored"
    assert (f"module 'team' lies in {(proj / 'team').resolve()}, the folder of a saved run being rescored: a run "
            "folder is data, and no code is imported from it") in check["explanation"]
    assert not (tmp_path / "pwned").exists()  # on main: imported from the run folder, and run
