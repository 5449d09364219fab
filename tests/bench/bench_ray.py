"""Benchmark: a replay run and a live run on this machine with the local executors beside `--executor ray`.

    python tests/bench/bench_ray.py                    # 20,000 recorded cases, 160 live ones, each route 3 times
    python tests/bench/bench_ray.py --cases 2000 --runs 1
    python tests/bench/bench_ray.py --cases 0 --live 160 --latency 0.1 --runs 3    # the live run only

The cases are bench_replay's (10 goals and 40 messages each). Routes, each the real CLI in a subprocess:
    local       --executor local: one process (threads)
    processes   --executor processes: one process per core (fork)
    ray warm    --executor ray on a cluster already running (`ray start --head` in a temporary folder,
                RAY_ADDRESS set): what a team with a standing cluster pays
    ray cold    --executor ray with no RAY_ADDRESS: the run starts a local cluster and stops it
Prints each route's wall time (median, min-max) and, for the routes whose work runs in the CLI's own
process tree, its CPU time; a warm cluster's workers are not children of the run, so their CPU is not
counted. The cluster is ended by killing its processes (never `ray stop`).

The live run is bench_wire's weather shape: a `model` agent asks, the fake server (weather_server.py, a
process of its own) calls get_weather after --latency seconds, the agent answers: two model calls per case,
-j 8. Its routes: local, and ray warm (the cluster's live worker, the limiter actor).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_replay import REPO, make_case
from bench_wire import evalrun_project, start_server

RAY = Path(sys.executable).with_name("ray")


def generate(root: Path, count: int) -> None:
    (root / "suites" / "t").mkdir(parents=True, exist_ok=True)
    (root / "evalrun.yaml").write_text("embeddings: {enabled: false}\n")
    for n in range(count):
        make_case(root / "suites", n)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(root: Path, **extra: str) -> dict[str, str]:
    return {"PYTHONPATH": str(REPO), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HF_HUB_OFFLINE": "1",
            "HOME": str(root / "home"), "RAY_AUTH_MODE": "disabled", "RAY_TMPDIR": str(root / "rt"),
            "RAY_USAGE_STATS_ENABLED": "0", **extra}


def run_once(root: Path, executor: str, env: dict[str, str], *extra: str) -> tuple[float, float, int]:
    shutil.rmtree(root / "out", ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "runner", "suites", "-q", "--output-dir", str(root / "out"),
                             "--executor", executor, *extra], cwd=root, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode not in (0, 1):
        raise SystemExit(f"evalrun exited {result.returncode}:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    total = json.loads((root / "out" / "report.json").read_text()[:4000].split(', "cases": [')[0] + "}")["summary"]["total"]
    return wall, cpu, total


def start_cluster(root: Path) -> tuple[str, Path]:
    temp = root / "cluster"
    port = _free_port()
    started = subprocess.run([str(RAY), "start", "--head", "--num-cpus", str(os.cpu_count() or 1), "--port", str(port),
                              "--temp-dir", str(temp), "--include-dashboard=false", "--disable-usage-stats",
                              "--node-ip-address", "127.0.0.1",
                              "--dashboard-agent-listen-port", str(_free_port()),
                              "--metrics-export-port", str(_free_port())],
                             env=_env(root), capture_output=True, text=True, start_new_session=True)
    if started.returncode != 0:
        raise SystemExit(started.stdout + started.stderr)
    return f"127.0.0.1:{port}", temp


def end_cluster(temp: Path) -> None:
    """Kill every process whose command line names this cluster's temp folder."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if str(temp).encode() in cmdline:
            try:
                os.kill(int(entry), signal.SIGKILL)  # its workers end with their raylet
            except OSError:
                pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=20000, help="recorded cases (0: no replay run)")
    parser.add_argument("--live", type=int, default=160, help="live cases (0: no live run)")
    parser.add_argument("--latency", type=float, default=0.1, help="the fake model's seconds per answer")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    tables = []
    with tempfile.TemporaryDirectory(prefix="bench-ray-") as folder:
        root = Path(folder)
        (root / "home").mkdir()
        address, temp = start_cluster(root)
        try:
            if args.cases:
                replay = root / "replay"
                generate(replay, args.cases)
                routes = {"local": ("local", _env(root)), "processes": ("processes", _env(root)),
                          "ray warm": ("ray", _env(root, RAY_ADDRESS=address)), "ray cold": ("ray", _env(root))}
                tables.append((f"{args.cases} recorded cases", measure(replay, routes, args.runs, args.cases)))
            if args.live:
                server, base_url = start_server(args.latency)
                try:
                    live = root / "live"
                    evalrun_project(live, base_url, args.live)
                    routes = {"local": ("local", _env(root)), "ray warm": ("ray", _env(root, RAY_ADDRESS=address))}
                    tables.append((f"{args.live} live cases ({args.latency:g} s a model answer, 2 per case, -j 8)",
                                   measure(live, routes, args.runs, args.live, "--no-cache")))
                finally:
                    server.kill()
                    server.wait()
        finally:
            end_cluster(temp)
    for title, figures in tables:
        print(f"{title}, {args.runs} runs each, {os.cpu_count()} CPUs "
              f"(wall: median [min-max]; CPU of the run's own process tree)")
        base = statistics.median(w for w, _ in figures["local"])
        for name, runs in figures.items():
            walls = [w for w, _ in runs]
            cpu = statistics.median(c for _, c in runs)
            print(f"  {name:<10} {statistics.median(walls):7.2f} s [{min(walls):.2f}-{max(walls):.2f}]  "
                  f"CPU {cpu:7.2f} s  x{base / statistics.median(walls):.2f} of local")
    return 0


def measure(root: Path, routes: dict, runs: int, cases: int, *extra: str) -> dict[str, list[tuple[float, float]]]:
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in routes}
    run_once(root, "local", routes["local"][1], *extra)  # a first run warms the file cache for all routes
    for _ in range(runs):
        for name, (executor, env) in routes.items():  # interleaved: the machine's load hits every route
            wall, cpu, total = run_once(root, executor, env, *extra)
            assert total == cases, (name, total)
            figures[name].append((wall, cpu))
    return figures


if __name__ == "__main__":
    raise SystemExit(main())
