"""Shared by several test modules (once in tests/run/test_executor_ray.py): Cluster, RAY_BIN, RAY_CLI, KEYS, _cmdline,
_descendants, _free_port, short_dir."""
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

# Keys a Ray run must send its workers (a judge's api_key_env, the provider key of the models named) and keep out
# of every file of its cluster (tests/run/test_executor_ray.py's local-cluster run, tests/util/test_secrets_ray.py);
# no case asks the judge (fuzzy matching off), which answers nowhere
KEYS = {"MODEL_KEY": "sk-mdl-4d1f0c9a7b3e5d2c8a6f1e0b9d7c5a3e", "OPENAI_API_KEY": "sk-proj-9e8d7c6b5a4f3e2d1c0b"}
KEYED_CONFIG = """
    embeddings: {enabled: false}
    enable_fuzzy_matching: false
    judge: {model: openai/judge, api_base: "http://127.0.0.1:9/v1", api_key_env: MODEL_KEY}
    simulator: {model: openai/sim, api_base: "http://127.0.0.1:9/v1"}
    """


RAY_CLI = [str(RAY_BIN)] if RAY_BIN.exists() else [sys.executable, "-c", "from ray.scripts.scripts import main; main()"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _parents() -> dict[int, int]:
    """Every process's parent, from one pass over /proc (the tests poll for workers every few milliseconds: a
    pass per process asked about made the polling loop take a core from the run it watches)."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _read(f"/proc/{entry}/stat")
            if stat:
                table[int(entry)] = int(stat.rsplit(b")", 1)[1].split()[1])
    return table


def _read(path: str) -> bytes:
    """A /proc file's bytes, b"" once its process is gone (os.read: pathlib's reads cost 5 times as much)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return b""
    try:
        return os.read(fd, 1 << 16)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _descendants(pid: int, parents: dict[int, int] | None = None) -> list[int]:
    children: dict[int, list[int]] = {}
    for child, parent in (_parents() if parents is None else parents).items():
        children.setdefault(parent, []).append(child)
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _cmdline(pid: int) -> str:
    return _read(f"/proc/{pid}/cmdline").replace(b"\0", b" ").decode(errors="replace")


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
        self._raylets: list[int] = []
        self.address = f"127.0.0.1:{self.port}"
        self.env = cli_env(HOME=str(self.home), RAY_AUTH_MODE="disabled", RAY_TMPDIR=str(self.temp),
                           RAY_USAGE_STATS_ENABLED="0")
        started = subprocess.run(
            [*RAY_CLI, "start", "--head", "--num-cpus", "2", "--port", str(self.port), "--temp-dir",
             str(self.temp), "--include-dashboard=false", "--disable-usage-stats",
             # no log monitor: it forwards workers' prints to drivers, which evalrun's turn off (log_to_driver);
             # one Python process less to start, and no polling of the log folder for the whole session
             "--include-log-monitor=false",
             "--dashboard-agent-listen-port", str(_free_port()),
             "--metrics-export-port", str(_free_port()), "--node-ip-address", "127.0.0.1"],
            env=self.env, capture_output=True, text=True, timeout=120, start_new_session=True)
        assert started.returncode == 0, started.stdout + started.stderr

    def processes(self) -> list[int]:
        """Every process of this cluster: those naming its temp folder, and their descendants."""
        parents = _parents()
        mine = [pid for pid in parents if str(self.temp) in _cmdline(pid)]
        return sorted({*mine, *(d for pid in mine for d in _descendants(pid, parents))})

    def workers(self) -> list[int]:
        """The cluster's worker processes (`ray::...`, the raylet's descendants); the raylet is looked up once."""
        if not (self._raylets and all(Path(f"/proc/{pid}").exists() for pid in self._raylets)):
            self._raylets = [pid for pid in self.processes() if "raylet" in _cmdline(pid).split(" ")[0]]
        parents = _parents()
        return [pid for raylet in self._raylets for pid in _descendants(raylet, parents)
                if _cmdline(pid).startswith("ray::")]

    def run(self, *args: str, cwd: Path, **popen) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "runner", *args], cwd=cwd, capture_output=True, text=True,
                              timeout=600, env={**self.env, "RAY_ADDRESS": self.address}, **popen)

    def end(self) -> None:
        for pid in self.processes():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
