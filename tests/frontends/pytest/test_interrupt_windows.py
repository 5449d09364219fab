"""A Ctrl-C that lands while evalrun's own code runs a case on the main thread (here: while an agent's module is
imported, inside the guard that turns whatever an import raises into the case's error) stops the run: exit 2 and
a report saying interrupted, under pytest as on the CLI; never one case's error with the run going on."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli_helpers import cli_env, write
from tests.helpers.pytest_plugin import pytest_command

pytestmark = pytest.mark.process  # every test here starts evalrun or pytest in a process of its own


def project_interrupted_while_importing(root: Path) -> None:
    """Case a plays a quick agent (its result is saved); case b's agent sends SIGINT to the process while its
    module is imported, on the main thread, as a Ctrl-C during a slow import would come."""
    write(root / "evalrun.yaml", """
        embeddings: {enabled: false}
        agents:
          quick: {type: python, entrypoint: quick:respond}
          importing: {type: python, entrypoint: importing:respond}
        """)
    write(root / "quick.py", "def respond(messages, context):\n    return 'hello'\n")
    write(root / "importing.py", """
        import os
        import signal

        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):  # the handler runs at the next instruction: here, inside the import
            pass


        def respond(messages, context):
            return 'hello'
        """)
    write(root / "suites" / "s.yaml", "cases:\n" + "".join(
        f"  - id: {case_id}\n    agent: {agent}\n    starting_sentence: hi\n"
        f"    goal_details: [{{type: text, name: t, keywords: [hello]}}]\n"
        for case_id, agent in (("a", "quick"), ("b", "importing"), ("c", "quick"))))


@pytest.mark.parametrize("front_end", ["cli", "pytest"])
def test_a_signal_while_a_case_imports_its_agent_interrupts_the_run(front_end, tmp_path):
    project_interrupted_while_importing(tmp_path)
    command = [sys.executable, "-m", "runner", "suites", "--output-dir", "out", "-j", "1"] if front_end == "cli" else \
        pytest_command("suites", "--evalrun-output-dir", "out")
    done = subprocess.run(command, cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stdout + done.stderr
    summary = json.loads((tmp_path / "out" / "report.json").read_text())["summary"]
    assert summary["interrupted"] and summary["exit_code"] == 2, summary
    assert summary["exit_reason"].startswith("interrupted ("), summary
    assert summary["passed"] == 1 and summary["error"] == 0, summary  # b was cut short, not made an error
