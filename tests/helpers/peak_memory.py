"""Run a command in a subprocess and measure its peak memory, for resource tests.

The peak (ru_maxrss from wait4) of a child forked from the test process counts the test process's own peak:
Linux carries the old memory's high-water mark across exec. So the command is started by a small launcher
(a fresh interpreter, a few MB), which waits for it and reports its peak; the launcher and the command run in
a process group of their own, killed whole when the command outlives its time.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

_LAUNCHER = r"""
import json, os, resource, subprocess, sys
limit, out, err, args = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
with open(out, "w") as stdout, open(err, "w") as stderr:
    process = subprocess.Popen(args, stdout=stdout, stderr=stderr)
    if limit:
        resource.prlimit(process.pid, resource.RLIMIT_AS, (limit, limit))
    _, status, usage = os.wait4(process.pid, 0)
print(json.dumps({"code": os.waitstatus_to_exitcode(status), "peak": usage.ru_maxrss * 1024}))
"""


def run_measured(args: list[str], cwd: Path, env: dict[str, str], *, timeout: float = 300,
                 address_space: int | None = None) -> tuple[subprocess.CompletedProcess, int]:
    """`args` run in `cwd`: its result and its peak resident memory in bytes. `address_space` caps what it may
    map, so that an unbounded allocation fails fast instead of taking the machine's memory."""
    out, err = cwd / "stdout.txt", cwd / "stderr.txt"
    launcher = subprocess.Popen([sys.executable, "-c", _LAUNCHER, str(address_space or 0), str(out), str(err), *args],
                                cwd=cwd, env=env, stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        report, _ = launcher.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(launcher.pid, signal.SIGKILL)  # the group this function started: the launcher and the command
        launcher.communicate()
        raise
    measured = json.loads(report)
    done = subprocess.CompletedProcess(args, measured["code"], out.read_text(), err.read_text())
    return done, measured["peak"]
