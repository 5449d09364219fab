"""`evalrun watch`: a real process watching real files; each change reruns the cases it affects and says
what changed since the last run; Ctrl-C (SIGINT) stops it with exit 0."""
from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runner.frontends.watch import CaseInfo, Project, change_line, exact_glob, verdict_line
from tests.helpers.cli_helpers import REPO, cli_env, write

pytest.importorskip("watchfiles")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(REPO / "suites" / "live" / "hr_agent.py", tmp_path / "hr_agent.py")
    write(tmp_path / "evalrun.yaml", """
        embeddings: {enabled: false}
        agents:
          hr_agent: {type: python, entrypoint: hr_agent:respond}
        """)
    shutil.copy(REPO / "suites" / "live" / "timeoff.yaml", tmp_path / "live.yaml")
    shutil.copytree(REPO / "suites" / "hr" / "transcripts", tmp_path / "transcripts")
    write(tmp_path / "replayed.yaml", """
        id: replayed
        goal_details:
          - {type: text, name: answer, keywords: [January 5]}
        transcript: transcripts/hr-timeoff-basic.json
        """)
    return tmp_path


class Watcher:
    def __init__(self, project: Path):
        self.out = (project / "watch.out").open("w+")
        # stdout is a file, as in `evalrun watch suites | tee log` or a CI log: block-buffered, unless the machine
        # sets PYTHONUNBUFFERED (these do), which hid a verdict held back until the next change
        env = {k: v for k, v in cli_env().items() if k != "PYTHONUNBUFFERED"}
        self.process = subprocess.Popen([sys.executable, "-m", "runner", "watch", "."], cwd=project, env=env,
                                        stdout=self.out, stderr=subprocess.STDOUT, text=True)
        self.read = 0

    def wait_for(self, text: str, timeout: float = 60) -> str:
        """The output from the last wait up to and including `text`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.out.flush()
            whole = Path(self.out.name).read_text()
            at = whole.find(text, self.read)
            if at >= 0:
                chunk, self.read = whole[self.read:at + len(text)], at + len(text)
                return chunk
            assert self.process.poll() is None, whole
            time.sleep(0.1)
        raise AssertionError(f"{text!r} not printed; output so far:\n{Path(self.out.name).read_text()}")


@pytest.mark.process
def test_changes_rerun_the_affected_cases_and_say_what_changed(project: Path) -> None:
    watcher = Watcher(project)
    try:
        first = watcher.wait_for("(Ctrl-C stops)")
        assert "4 passed, 0 failed" in first

        suite = project / "live.yaml"
        suite.write_text(suite.read_text().replace("keywords: [January 5]", "keywords: [January 6]"))
        rerun = watcher.wait_for("since the last run: now failing: live-timeoff-scripted\n")
        assert "changed: live.yaml (a suite)" in rerun
        assert "2 passed, 1 failed" in rerun and "replayed" not in rerun  # only the suite's own cases

        suite.write_text(suite.read_text().replace("keywords: [January 6]", "keywords: [January 5]"))
        assert "since the last run: now passing: live-timeoff-scripted\n" in watcher.wait_for("scripted\n")

        agent = project / "hr_agent.py"
        agent.write_text(agent.read_text().replace('"20250105", ', ""))  # the agent loses a day off
        rerun = watcher.wait_for("since the last run:")
        assert "changed: hr_agent.py (agent hr_agent)" in rerun  # a fresh process: the new code runs
        assert "FAIL  live-timeoff-scripted" in rerun and "replayed" not in rerun
        watcher.wait_for("\n")

        transcript = project / "transcripts" / "hr-timeoff-basic.json"
        transcript.write_text(transcript.read_text().replace("January 5", "January 7"))
        rerun = watcher.wait_for("since the last run: now failing: replayed")
        assert "changed: transcripts/hr-timeoff-basic.json (a recorded conversation)" in rerun

        config = project / "evalrun.yaml"
        config.write_text(config.read_text() + "similarity_threshold: 0.8\n")
        rerun = watcher.wait_for("since the last run:")
        assert "changed: evalrun.yaml (the configuration)" in rerun
        assert "2 passed, 2 failed" in rerun  # every case ran again
    finally:
        watcher.process.send_signal(signal.SIGINT)
        assert watcher.process.wait(timeout=30) == 0
    assert Path(watcher.out.name).read_text().rstrip().endswith("stopped watching")


def test_what_a_change_affects() -> None:
    root = Path("/p")
    project = Project(config=root / "evalrun.yaml", prompts=root / "prompts", cases=[
        CaseInfo("a", root / "s.yaml", None, "bot"), CaseInfo("b", root / "s.yaml", root / "t" / "b.json", None),
        CaseInfo("c", root / "u.yaml", None, "other")], agent_sources={root / "bot.py": "bot"})
    assert project.affected([root / "s.yaml"])[0] == ["a", "b"]
    assert project.affected([root / "t" / "b.json"])[0] == ["b"]
    assert project.affected([root / "bot.py"])[0] == ["a"]
    assert project.affected([root / "helpers.py"])[0] == ["a", "c"]  # any live case may import it
    assert project.affected([root / "prompts" / "judge.j2"])[0] is None
    assert project.affected([root / "evalrun.yaml"])[0] is None
    assert project.affected([root / "notes.txt"]) == ([], [])


def test_an_exact_glob_selects_one_id_only() -> None:
    import fnmatch

    ids = ["a", "ab", "x-a", "a*b", "[x]", "!a", "--"]
    for case_id in ids:
        pattern = exact_glob(case_id)
        assert any(ch in pattern for ch in "*?["), pattern  # read as a glob by -k, so matched whole
        assert [i for i in ids if fnmatch.fnmatchcase(i, pattern)] == [case_id] or case_id == "--"


def test_the_change_line() -> None:
    assert change_line({"a": "passed", "b": "failed"}, {"a": "failed", "b": "passed", "c": "passed"}) == \
        "since the last run: now failing: a; now passing: b; new: c"
    assert change_line({"a": "passed"}, {"a": "passed"}) == "since the last run: no change (1 case(s) as before)"


def test_the_verdict_line_is_the_rerun_s_own() -> None:
    said = {"exit_code": 3, "exit_reason": "1 case(s) rest on verdicts reached without the judge, which failed "
                                          "(set judge.offline_fallback: true to accept them): exit 3"}
    assert verdict_line(3, said) == ("run verdict: 1 case(s) rest on verdicts reached without the judge, which "
                                     "failed (set judge.offline_fallback: true to accept them): exit 3")
    assert verdict_line(4, said) == "run verdict: exit 4"  # no report of its own: `latest` is an older run's
    assert verdict_line(4, None) == "run verdict: exit 4"
