"""The secrets sweep (issue 26): every way a secret enters a run (an `api_key_env`, `${NAME}` in an http agent's
headers and body and a command agent's env, a key a provider reads on its own), said back by every agent kind
(python, http, command, model, replay; an http agent whose error repeats its Authorization header), in every
form (raw, cut, `\\u`- and `\\/`-escaped in a tool call's argument text, JSON in JSON, percent-encoded, on
stderr), through every command (run, simulate, record, generate, redteam, rescore, merge, report) and every
executor (local, processes, ray): no canary, nor any piece of one, in any output file, log, stdout or stderr
(tests/helpers/secrets_sweep_project.py has the project and the grep).

The commands run in this process (runner.frontends.cli.main), as a user's shell would start them; the process pool
(which forks only a process without threads) and Ray in a real subprocess. The model cache (.evalrun/cache)
is not an output: it keeps a model's answers to give them again, as they were.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from runner.frontends.cli import main
from runner.util.secrets import MASK
from tests.fakes.agent_server import AgentServer
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers.cli_helpers import cli_env
from tests.helpers.secrets_sweep_project import (
    CANARIES,
    echo_messages,
    leaks,
    leaks_in_tree,
    model_reply,
    write_project,
)

pytestmark = pytest.mark.process  # every test here starts evalrun or pytest in a process of its own


@dataclass
class Done:
    code: int
    out: str
    err: str
    folders: list[Path] = field(default_factory=list)

    def leaks(self) -> list[str]:
        return leaks("stdout", self.out) + leaks("stderr", self.err) + [
            found for folder in self.folders for found in leaks_in_tree(folder)]

    def masked(self) -> int:
        """How many masks the outputs hold: the canaries were there, and were masked (not merely absent)."""
        texts = [self.out, self.err] + [p.read_text(errors="replace") for folder in self.folders
                                        for p in folder.rglob("*") if p.is_file()]
        return sum(text.count(MASK) for text in texts)


class Project:
    def __init__(self, root: Path):
        self.root = root
        self._runs: dict[str, Done] = {}

    def cli(self, *args: str, stdin: str = "", folders: tuple[str, ...] = ()) -> Done:
        """`evalrun ARGS` in this process, in the project folder, with the canaries in the environment."""
        out, err = io.StringIO(), io.StringIO()
        with pytest.MonkeyPatch.context() as patch:
            patch.chdir(self.root)
            for name in [n for n in os.environ if n.startswith(("OPENAI", "ANTHROPIC"))]:
                patch.delenv(name)
            for name, value in {**CANARIES, "NO_COLOR": "1"}.items():
                patch.setenv(name, value)
            patch.setattr(sys, "stdin", io.StringIO(stdin))
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(list(args))
        return Done(code, out.getvalue(), err.getvalue(), [self.root / f for f in folders])

    def subprocess(self, *args: str, folders: tuple[str, ...] = (), **env: str) -> Done:
        done = subprocess.run([sys.executable, "-m", "runner", *args], cwd=self.root, capture_output=True, text=True,
                              env=cli_env(**CANARIES, **env), timeout=600, start_new_session=True)
        return Done(done.returncode, done.stdout, done.stderr, [self.root / f for f in folders])

    def run_once(self, name: str, *args: str) -> Done:
        """A run (kept: rescore, report and merge read its folder)."""
        if name not in self._runs:
            self._runs[name] = self.cli("run", "suites", "-v", "--output-dir", f"out/{name}", "--format", "html",
                                        "--format", "md", "--format", "junit", *args, folders=(f"out/{name}",))
        return self._runs[name]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    with FakeOpenAI(default=model_reply) as fake, AgentServer() as agents:
        agents.reply_text = json.dumps({"messages": echo_messages(CANARIES.values())})
        root = tmp_path_factory.mktemp("sweep")
        write_project(root, fake.base_url, agents.url(""))
        yield Project(root)


def _run(p: Project) -> Done:
    done = p.run_once("run")
    report = json.loads((p.root / "out" / "run" / "report.json").read_text())
    statuses = {case["id"]: case["status"] for case in report["cases"]}
    assert statuses == {"echo-web": "failed", "echo-web_error": "error", "echo-cmd": "failed", "echo-llm": "failed",
                        "echo-py": "failed", "echo-rec": "failed"}, done.out + done.err
    return done


def _rescore(p: Project) -> Done:
    p.run_once("run")
    return p.cli("rescore", "out/run", "suites", "--output-dir", "out/rescored", "--format", "md", "--format", "junit",
                 "--format", "html", folders=("out/rescored",))


def _report(p: Project) -> Done:
    p.run_once("run")
    return p.cli("report", "out/run", "--format", "html", "--format", "md", "--format", "junit", folders=("out/run",))


def _merge(p: Project) -> Done:
    shards = [p.run_once("shard1", "--shard", "1/2"), p.run_once("shard2", "--shard", "2/2")]
    merged = p.cli("merge", "out/shard1", "out/shard2", "-o", "out/merged", "--format", "html", "--format", "md",
                   "--format", "junit", folders=("out/merged",))
    return Done(merged.code, "".join(d.out for d in [*shards, merged]), "".join(d.err for d in [*shards, merged]),
                [folder for d in [*shards, merged] for folder in d.folders])


def _processes(p: Project) -> Done:
    return p.subprocess("run", "suites/rec", "-v", "--executor", "processes", "--output-dir", "out/processes",
                        "--format", "md", "--format", "junit", folders=("out/processes",))


def _simulate(p: Project) -> Done:
    return p.cli("simulate", "suites/live", "-o", "out/simulated", folders=("out/simulated",))


def _record_from(p: Project) -> Done:
    if not (p.root / "out" / "simulated").exists():
        _simulate(p)
    sources = [str(p.root / "suites/rec/transcripts/rec.json"), *map(str, sorted((p.root / "out/simulated").glob("*")))]
    return p.cli("record", "--from", *sources, "-o", "out/drafts", folders=("out/drafts",))


def _record_chat(p: Project) -> Done:
    return p.cli("record", "--agent", "py", "-o", "out/chat", stdin="What were you given?\n/save\n",
                 folders=("out/chat",))


def _generate(p: Project) -> Done:
    return p.cli("generate", "--stories", "stories.csv", "--tools", "tools.json", "-o", "out/generated",
                 folders=("out/generated",))


def _redteam(p: Project) -> Done:
    return p.cli("redteam", "plan", "suites/live", "-o", "out/redteam", "--attacks", "system_prompt_extraction",
                 "--generate", folders=("out/redteam",))


LEGS = {"run": (_run, 3), "rescore": (_rescore, 1), "report": (_report, 0), "merge": (_merge, 3),
        "run --executor processes": (_processes, 1), "simulate": (_simulate, 3), "record --from": (_record_from, 0),
        "record (chat)": (_record_chat, 0), "generate": (_generate, 0), "redteam plan --generate": (_redteam, 0)}


@pytest.mark.parametrize("leg", list(LEGS))
def test_no_secret_reaches_any_output_of_a_command(project, leg):
    play, code = LEGS[leg]
    done = play(project)
    assert done.code == code, done.out[-3000:] + done.err[-3000:]
    found = done.leaks()
    assert found == [], "\n".join(found)
    assert done.masked() > 0, "no canary reached the outputs to be masked: the sweep swept nothing"


def test_no_secret_reaches_ray_logs_or_outputs_and_the_workers_still_get_them(project, cluster):
    """On a Ray cluster started apart (the session's, tests/conftest.py: its workers have none of the canaries in
    their environment), the live cases play (the python agent reads every canary from its environment: evalrun
    sent them) and the recorded one is scored, and no canary is in any file under the cluster's temp folder (its
    logs: runtime_env_agent.log among them; the other tests' runs on it hold no canary either), in the run folder,
    or on stdout and stderr."""
    done = subprocess.run([sys.executable, "-m", "runner", "run", "suites", "-v", "--executor", "ray",
                           "--output-dir", "out/ray", "--format", "md", "--format", "junit"],
                          cwd=project.root, capture_output=True, text=True, timeout=600,
                          env={**cluster.env, **CANARIES, "RAY_ADDRESS": cluster.address})
    found = leaks("stdout", done.stdout) + leaks("stderr", done.stderr)
    found += leaks_in_tree(project.root / "out" / "ray") + leaks_in_tree(cluster.temp)
    assert found == [], "\n".join(found)
    assert list(cluster.temp.rglob("runtime_env_agent.log")), "the logs this test reads are not where it looks"
    report = json.loads((project.root / "out" / "ray" / "report.json").read_text())
    statuses = {case["id"]: case["status"] for case in report["cases"]}
    assert statuses == {"echo-web": "failed", "echo-web_error": "error", "echo-cmd": "failed", "echo-llm": "failed",
                        "echo-py": "failed", "echo-rec": "failed"}, done.stdout + done.stderr  # none lacked a key
    assert done.returncode == 3, done.stdout[-3000:] + done.stderr[-3000:]
