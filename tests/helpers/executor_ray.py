"""Shared by several test modules (once in tests/run/test_executor_ray.py): Cluster, RAY_BIN, RAY_CLI, _cmdline, _descendants, _free_port, short_dir."""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from tests.helpers.cli_helpers import cli_env

RAY_BIN = Path(sys.executable).with_name("ray")


RAY_CLI = [str(RAY_BIN)] if RAY_BIN.exists() else [sys.executable, "-c", "from ray.scripts.scripts import main; main()"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@contextlib.contextmanager
def short_dir() -> Iterator[Path]:
    """A folder for Ray's files: its socket paths under it must fit in 107 bytes, and pytest's tmp paths
    (more so under xdist, or for a long user name) may not leave room for them."""
    path = Path(tempfile.mkdtemp(prefix="evr-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


class Cluster:
    def __init__(self, root: Path, temp: Path):
        self.root = root
        self.temp = temp
        self.home = root / "home"
        self.home.mkdir()
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.env = cli_env(HOME=str(self.home), RAY_AUTH_MODE="disabled", RAY_TMPDIR=str(self.temp),
                           RAY_USAGE_STATS_ENABLED="0")
        started = subprocess.run(
            [*RAY_CLI, "start", "--head", "--num-cpus", "2", "--port", str(self.port), "--temp-dir",
             str(self.temp), "--include-dashboard=false", "--disable-usage-stats",
             "--dashboard-agent-listen-port", str(_free_port()),
             "--metrics-export-port", str(_free_port()), "--node-ip-address", "127.0.0.1"],
            env=self.env, capture_output=True, text=True, timeout=120, start_new_session=True)
        assert started.returncode == 0, started.stdout + started.stderr

    def processes(self) -> list[int]:
        """Every process of this cluster: those naming its temp folder, and their descendants."""
        mine = [int(p) for p in os.listdir("/proc") if p.isdigit() and str(self.temp) in _cmdline(int(p))]
        return sorted({*mine, *(d for pid in mine for d in _descendants(pid))})

    def workers(self) -> list[int]:
        raylets = [pid for pid in self.processes() if "raylet" in _cmdline(pid).split(" ")[0]]
        return [pid for raylet in raylets for pid in _descendants(raylet) if _cmdline(pid).startswith("ray::")]

    def run(self, *args: str, cwd: Path, **popen) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "runner", *args], cwd=cwd, capture_output=True, text=True,
                              timeout=600, env={**self.env, "RAY_ADDRESS": self.address}, **popen)

    def end(self) -> None:
        for pid in self.processes():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
