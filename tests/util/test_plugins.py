"""Extensions from other packages (runner/util/extensions.py): the example plugin in tests/data/plugin_example, made
visible for real (its pyproject's entry points written as an installed distribution's *.dist-info on the path of
an `evalrun` subprocess), adds a check family, an agent kind, a report format and a transcript format that one run
uses; a broken plugin is one precise line on stderr and never replaces a built-in."""
from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli_helpers import REPO, cli_env, write, write_json

# the plugin is installed on PYTHONPATH, which only a new interpreter reads at start
pytestmark = pytest.mark.process

tomllib = pytest.importorskip("tomllib")  # Python 3.11+: the example's pyproject read as an installer reads it
EXAMPLE = REPO / "tests" / "data" / "plugin_example"
DIST = "evalrun_plugin_example-0.1.0.dist-info"


def install(site: Path, extra: dict[str, dict[str, str]] | None = None) -> Path:
    """The example as pip would leave it in `site`: its package and a dist-info whose entry_points.txt is the
    pyproject's `[project.entry-points]` (plus `extra`, for broken ones)."""
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    groups = {group: dict(points) for group, points in project["entry-points"].items()}
    for group, points in (extra or {}).items():
        groups.setdefault(group, {}).update(points)
    shutil.copytree(EXAMPLE / "evalrun_plugin_example", site / "evalrun_plugin_example")
    dist = site / DIST
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    (dist / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in points.items()) + "\n"
        for group, points in groups.items()))
    return site


def project(root: Path) -> Path:
    write(root / "evalrun.yaml", """
        embeddings: {enabled: false}
        agents:
          shouter: {type: echo, prefix: "you said: "}
        """)
    write(root / "suites" / "live.yaml", """
        agent: shouter
        cases:
          - {id: live, starting_sentence: hello there, goal_details: [], checks: [{type: shout}]}
        """)
    write_json(root / "suites" / "chat.json", {"dialogue": [{"speaker": "human", "text": "hi"},
                                                            {"speaker": "bot", "text": "HELLO!"}]})
    write(root / "suites" / "replayed.yaml", """
        id: replayed
        starting_sentence: hi
        transcript: chat.json
        goal_details: []
        checks: [{type: shout}]
        """)
    return root


def evalrun(root: Path, site: Path, *args: str) -> subprocess.CompletedProcess:
    env = cli_env(PYTHONPATH=f"{REPO}{os.pathsep}{site}")
    return subprocess.run([sys.executable, "-m", "runner", *args], cwd=root, env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_example_plugin_adds_a_check_an_agent_a_report_format_and_a_transcript_format(tmp_path):
    site = install(tmp_path / "site")
    root = project(tmp_path / "project")
    done = evalrun(root, site, "run", "suites", "--format", "csv", "--output-dir", str(tmp_path / "out"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "left out" not in done.stderr
    run_dir = tmp_path / "out"
    rows = sorted(csv.reader(io.StringIO((run_dir / "cases.csv").read_text())))
    assert rows == [["id", "status"], ["live", "passed"], ["replayed", "passed"]]
    report = json.loads((run_dir / "report.json").read_text())
    live = next(c for c in report["cases"] if c["id"] == "live")
    assert live["checks"][0]["explanation"] == "the last reply shouts (score 1 >= threshold 1)"
    saved = [json.loads(line) for line in (run_dir / "conversations.jsonl").read_text().splitlines()]
    assert [m["content"] for m in saved[0]["messages"] if m["role"] == "assistant"] == ["YOU SAID: HELLO THERE"]


def test_the_plugin_check_fails_what_it_should(tmp_path):
    site = install(tmp_path / "site")
    root = project(tmp_path / "project")
    write_json(root / "suites" / "chat.json", {"dialogue": [{"speaker": "human", "text": "hi"},
                                                            {"speaker": "bot", "text": "hello"}]})
    done = evalrun(root, site, "run", "suites/replayed.yaml")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the last reply does not shout: 'hello'" in done.stdout


def test_a_broken_plugin_is_left_out_with_a_line_naming_it_never_a_traceback(tmp_path):
    site = install(tmp_path / "site", {
        "evalrun.checks": {"boom": "evalrun_plugin_example.missing:FAMILY"},
        "evalrun.agents": {"wrong": "evalrun_plugin_example.report:FORMAT"},
        "evalrun.formats": {"json": "evalrun_plugin_example.report:FORMAT"},
        "evalrun.transcripts": {"misnamed": "evalrun_plugin_example.transcript:FORMAT"},
    })
    root = project(tmp_path / "project")
    done = evalrun(root, site, "run", "suites", "--format", "csv", "--output-dir", str(tmp_path / "out"))
    assert done.returncode == 0, done.stdout + done.stderr  # the good plugins still work
    assert "Traceback" not in done.stderr
    where = "of distribution evalrun-plugin-example 0.1.0 is left out: "
    assert ("evalrun: entry point evalrun.checks:boom (boom = evalrun_plugin_example.missing:FAMILY) " + where
            + "importing it failed: ModuleNotFoundError: No module named 'evalrun_plugin_example.missing' "
            "(fix or uninstall the distribution)") in done.stderr
    assert ("evalrun: entry point evalrun.agents:wrong (wrong = evalrun_plugin_example.report:FORMAT) " + where
            + "it has no KIND, Options, create (an agent kind is a module with KIND, Options and "
            "create(name, definition, env), as runner/run/agents/*.py)") in done.stderr
    assert ("evalrun: entry point evalrun.formats:json (json = evalrun_plugin_example.report:FORMAT) " + where
            + "the name 'json' is already taken (by evalrun itself or by another plugin); a plugin never replaces "
            "one: give the entry point another name") in done.stderr
    assert ("evalrun: entry point evalrun.transcripts:misnamed (misnamed = evalrun_plugin_example.transcript:FORMAT) "
            + where + "its format is named 'dialogue', not 'misnamed': name the entry point as the format"
            ) in done.stderr
    run_dir = tmp_path / "out"
    assert json.loads((run_dir / "report.json").read_text())["cases"]  # json is still evalrun's own
