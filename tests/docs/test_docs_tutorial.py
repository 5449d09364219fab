"""The ten-minute tutorial (docs/tutorials/first-suite.md), followed word for word: its files written where
their titles say, in the order the page gives them, its commands run in a copy of the checkout, each printing
what the page shows (but for the time taken and the run folder's name); its install lines are the README's."""
from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from tests.helpers.cli_helpers import REPO, cli_env
from tests.helpers.docs_pages import code_blocks, page

TUTORIAL = page("tutorials/first-suite.md")
_STEP = re.compile(r'^```(?:yaml title="(?P<file>[^"]+)"|(?P<console>console))\n(?P<body>.*?)^```', re.S | re.M)


def steady(lines: list[str]) -> list[str]:
    """The lines with what changes on every run (the time taken, the run folder's name) made constant."""
    lines = [re.sub(r" in \d+\.\d+s$", " in TIME", line) for line in lines]
    return [re.sub(r"reports/\d{8}-\d{6}-[\w-]+/", "reports/RUN/", line) for line in lines]


def test_the_install_lines_are_the_readme_quick_start():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    quick_start = code_blocks(readme, "bash")[0].strip()
    install = [line for block in code_blocks(TUTORIAL, "bash")[:1] for line in block.splitlines()]
    assert install == ["python3 -m venv .venv", ".venv/bin/pip install -c .ci/constraints.txt '.[embeddings]'"]
    assert quick_start.startswith(" && ".join(install) + " && ")
    assert code_blocks(TUTORIAL, "bash")[1].strip() == "source .venv/bin/activate"


@pytest.mark.process
def test_the_tutorial_runs_as_written(tmp_path):
    shutil.copytree(REPO / "suites", tmp_path / "suites", ignore=shutil.ignore_patterns(".evalrun", "__pycache__"))
    (tmp_path / ".git").mkdir()  # the copy is a checkout of its own: the config search stops here
    steps = list(_STEP.finditer(TUTORIAL))
    assert [bool(s["file"]) for s in steps] == [False, True, False, False, True, False]  # --version, file, ...
    commands = 0
    for step in steps:
        if step["file"]:
            target = tmp_path / step["file"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(step["body"], encoding="utf-8")
            continue
        first, *shown = step["body"].rstrip("\n").split("\n")
        argv = shlex.split(first.removeprefix("$ "))
        assert argv[0] == "evalrun", first
        done = subprocess.run([sys.executable, "-m", "runner", *argv[1:]], cwd=tmp_path, env=cli_env(),
                              capture_output=True, text=True, timeout=300)
        printed = done.stderr.splitlines() + done.stdout.splitlines()  # the page shows stderr's config line first
        assert steady(printed) == steady(shown), (first, done.stdout, done.stderr)
        assert done.returncode == (1 if "FAIL" in step["body"] else 0), first
        commands += 1
    assert commands == 4
    latest = tmp_path / "suites" / ".evalrun" / "reports" / "latest"  # what step 6 opens
    assert (latest / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    [case] = json.loads((latest / "report.json").read_text(encoding="utf-8"))["cases"]
    assert (case["id"], case["status"]) == ("johndoe-time-off", "failed")


def test_the_agent_declaration_shown_is_the_bundled_one():
    shown = next(block for block in code_blocks(TUTORIAL, "yaml") if block.startswith("agents:"))
    assert shown.splitlines() == ["agents:",
                                  "  hr_agent:                          # suites/live/hr_agent.py: a small "
                                  "deterministic agent, no API key",
                                  "    type: python", "    entrypoint: live.hr_agent:respond"]
