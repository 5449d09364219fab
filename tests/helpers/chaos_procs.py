"""What the chaos tests of the executors share: a recorded project of any size, and the processes of a run as
/proc shows them (children, the system call each is blocked in), to kill a worker at a chosen stage of its work
and to find any left behind."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import jsonschema

from tests.helpers.cli_helpers import REPO, cli_env, write

REPORT_SCHEMA = json.loads((REPO / "schemas" / "report.schema.json").read_text())

# x86-64 and arm64 numbers of the calls a worker blocks in (read, write; sleeping in a check)
READS = {"0", "63"}
WRITES = {"1", "64"}
SLEEPS = {"35", "230", "101", "115"}  # nanosleep, clock_nanosleep


def recorded_project(root: Path, count: int, *, pad: int = 0, padded_from: int = 0, tag_pad: int = 0,
                     sleep_s: float = 0.0, first_case_marker: bool = False, log_scorers: bool = False) -> list[str]:
    """`count` recorded cases that pass, each with a python check that sleeps `sleep_s` (a worker caught in it is
    computing); `pad` characters in the conversation of each case from the `padded_from`th on (a batch's results
    then outgrow a socket's buffer) and `tag_pad` in each case's tags (so do a suite reader's). With `first_case_marker`, the first case scored
    writes the file `first-case` and sleeps a second first (the pool scores it before its workers start). With
    `log_scorers`, each check appends its case's id and its process's pid to `scored-by` (see `scorers`)."""
    write(root / "evalrun.yaml", "embeddings: {enabled: false}\n")
    write(root / "team" / "__init__.py", "")
    write(root / "team" / "checks.py", f"""
        import os, time

        def check(case):
            if {log_scorers!r}:  # one write of one short line to a file opened to append: lines never interleave
                fd = os.open({str(root / "scored-by")!r}, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
                os.write(fd, f"{{case.id}} {{os.getpid()}}\\n".encode())
                os.close(fd)
            if {first_case_marker!r} and case.id == "case-0000":
                open("first-case", "w").close()
                time.sleep(1.0)
            time.sleep({sleep_s!r})
            return True
        """)
    (root / "suites" / "t").mkdir(parents=True)
    ids = [f"case-{n:04d}" for n in range(count)]
    for n, case_id in enumerate(ids):
        case = {"id": case_id, "transcript": f"t/{n}.json", "goals": {"cancel": []},
                "tags": [f"t{n}-{i}-" + "x" * tag_pad for i in range(20)] if tag_pad else [],
                "goal_details": [{"type": "tool_call", "name": "cancel", "tool_name": "cancel_booking",
                                  "args": {"booking": "B1"}}],
                "checks": [{"type": "python", "function": "team.checks:check"}]}
        (root / "suites" / f"{case_id}.json").write_text(json.dumps(case))
        messages = [{"role": "user", "content": "Please cancel my booking." + " pad" * (pad // 4 if n >= padded_from else 0)},
                    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
                        "name": "cancel_booking", "arguments": json.dumps({"booking": "B1"})}}]},
                    {"role": "tool", "tool_call_id": "c1", "content": "{}"},
                    {"role": "assistant", "content": "done"}]
        (root / "suites" / "t" / f"{n}.json").write_text(json.dumps(messages))
    return ids


def scorers(root: Path) -> list[tuple[str, int]]:
    """(case id, pid of the process whose check scored it), in the order scored, from a `log_scorers` project."""
    path = root / "scored-by"
    text = path.read_text() if path.exists() else ""
    return [(case_id, int(pid)) for case_id, pid in (line.split() for line in text[:text.rfind("\n") + 1].splitlines())]


def start_run(root: Path, *args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "runner", "suites", "-q", "--output-dir", "out", *args], cwd=root,
                            env=env or cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == pid and stat[0] != "Z":
                found.append(int(entry))
    return found


def blocked_in(pid: int) -> set[str]:
    """The numbers of the system calls `pid`'s threads are blocked in ('running' for one that runs); empty once
    it is gone. A python check may run in a thread of its own."""
    calls = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return calls
    for task in tasks:
        try:
            calls.add(Path(f"/proc/{pid}/task/{task}/syscall").read_text().split()[0])
        except (OSError, IndexError):
            pass
    return calls


def wait_for(condition: Callable[[], object], timeout: float, what: str, process: subprocess.Popen) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        if process.poll() is not None:
            break
        time.sleep(0.005)
    raise AssertionError(f"{what}: not seen within {timeout} s (the run's exit code: {process.poll()})")


def results_count(root: Path) -> int:
    path = root / "out" / "results.jsonl"
    return path.read_bytes().count(b"\n") if path.exists() else 0


def kill_child_while(process: subprocess.Popen, calls: set[str], *, parent_stopped: bool, timeout: float = 30.0) -> int:
    """SIGKILL a child of the run blocked in one of `calls`; with `parent_stopped`, the run's process is stopped
    (SIGSTOP) meanwhile, so that its children block on it (writing what it does not read, or waiting for work),
    and continued after. The pid killed."""
    if parent_stopped:
        process.send_signal(signal.SIGSTOP)
    try:
        victim = wait_for(lambda: next((pid for pid in children(process.pid) if blocked_in(pid) & calls), None),
                          timeout, f"a child of the run blocked in {sorted(calls)}", process)
        os.kill(victim, signal.SIGKILL)
    finally:
        if parent_stopped:
            process.send_signal(signal.SIGCONT)
    return int(victim)


def valid_report(root: Path) -> dict:
    report = json.loads((root / "out" / "report.json").read_text())
    jsonschema.validate(report, REPORT_SCHEMA)
    return report


def accounted(root: Path, ids: list[str]) -> dict:
    """The report, checked: valid, every case finished or listed as not run (once), results.jsonl holding each
    finished case once, the tallies matching the cases."""
    report = valid_report(root)
    finished = [case["id"] for case in report["cases"]]
    assert sorted(finished + report["summary"]["not_run"]) == sorted(ids)
    lines = (root / "out" / "results.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["id"] for line in lines) == sorted(finished)
    counts = {s: sum(c["status"] == s for c in report["cases"]) for s in ("passed", "failed", "error", "unscored")}
    assert {s: report["summary"][s] for s in counts} == counts
    return report


def nothing_left_in(root: Path) -> None:
    """Once the run ended: no process of it (a worker, a reader, forked with its command line; orphans included)
    still runs in `root`. (A Ray cluster's own workers outlive a run: they are the cluster's.)"""
    def left() -> list[int]:
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) != os.getpid():
                try:
                    here = (os.readlink(f"/proc/{entry}/cwd") == str(root)
                            and b"--output-dir" in Path(f"/proc/{entry}/cmdline").read_bytes())
                    state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
                except OSError:
                    continue
                if here and state != "Z":
                    found.append(int(entry))
        return found

    deadline = time.monotonic() + 5
    while left() and time.monotonic() < deadline:
        time.sleep(0.05)
    remaining = left()
    for pid in remaining:  # a failing test leaves nothing behind
        os.kill(pid, signal.SIGKILL)
    assert not remaining, remaining
