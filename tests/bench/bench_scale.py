"""Benchmark: time and peak memory of `evalrun` replay runs at 1k, 10k and 50k cases, and of a warm
`evalrun suites/` on the bundled examples.

    python tests/bench/bench_scale.py                      # 1,000 / 10,000 / 50,000 cases, then suites/
    python tests/bench/bench_scale.py --sizes 1000 10000   # a quicker look
    python tests/bench/bench_scale.py --keep /tmp/scale    # keep the generated suites
    python tests/bench/bench_scale.py --executor local     # one process (threads), to compare
    python tests/bench/bench_scale.py --runs 5             # the median of 5 runs a size (below 50,000)

Each size runs the real CLI in a subprocess on cases shaped like bench_replay's (10 goals and 40
messages each) and prints wall time, CPU time (user + system of the run and its worker processes),
peak resident memory (ru_maxrss: the largest single process) and the time per 1,000 cases: the median of
`--runs` runs (3 by default; 50,000 cases run once), with the fastest and slowest beside it. The first run
after an install or a code change also compiles the package's bytecode, once: it is the slowest. Targets
(issue 16): 1,000 cases <= 1.2 s, 10,000 <= 10 s, peak <= 150 MiB at 50,000, and a warm run of the
bundled suites <= 0.6 s. Exits 1 when a target of a size that ran is missed. Wall time depends on
how busy the machine is: the CPU column is the steadier figure on a shared machine.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_replay import REPO, make_case

TARGET_MIB = 150  # at 50,000 cases
TARGET_WALL_S = {1000: 1.2, 10000: 10.0}
TARGET_WARM_SUITES_S = 0.6


def generate(root: Path, count: int) -> None:
    (root / "suites" / "t").mkdir(parents=True, exist_ok=True)
    (root / "evalrun.yaml").write_text("embeddings: {enabled: false}\n")
    for n in range(count):
        make_case(root / "suites", n)


def measure(root: Path, executor: str = "auto", suites: str = "suites") -> tuple[float, float, float, dict]:
    shutil.rmtree(root / "out", ignore_errors=True)  # a report left by an earlier run must not be read as this one's
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "runner", suites, "-q", "--output-dir", str(root / "out"),
                             "--executor", executor], cwd=root, capture_output=True, text=True,
                            env={"PYTHONPATH": str(REPO), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                                 "HF_HUB_OFFLINE": "1"})
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode not in (0, 1) or not (root / "out" / "report.json").is_file():
        raise SystemExit(f"evalrun exited {result.returncode}:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    peak_mib = after.ru_maxrss / 1024  # ru_maxrss of children: the largest child so far, in KiB on Linux
    summary = json.loads((root / "out" / "report.json").read_text()[:4000].split(', "cases": [')[0] + "}")["summary"]
    return wall, cpu, peak_mib, summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 50000])
    parser.add_argument("--keep", type=Path, help="generate into this folder and keep it")
    parser.add_argument("--executor", default="auto", choices=("auto", "local", "processes"))
    parser.add_argument("--no-suites", action="store_true", help="skip the warm run of the bundled suites")
    parser.add_argument("--runs", type=int, default=3, help="runs of each size below 50,000 (the median is judged)")
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="evalrun-scale-"))
    missed = []
    print(f"{'cases':>7} {'wall s':>8} {'cpu s':>8} {'peak MiB':>9} {'s / 1k':>7}   (--executor {args.executor}; "
          f"medians of {args.runs} runs below 50,000 cases, wall min-max beside)")
    try:
        # Sizes run smallest first; ru_maxrss of children is a running maximum, so each size runs in a fresh
        # measuring process to keep the peaks apart.
        for size in sorted(args.sizes):
            root = base / str(size)
            if not (root / "suites").is_dir():
                generate(root, size)
            runs = [_probe(root, args.executor) for _ in range(args.runs if size < 50000 else 1)]
            wall, cpu, peak = (statistics.median(run[k] for run in runs) for k in range(3))
            passed, total = runs[-1][3], runs[-1][4]
            spread = f"{min(r[0] for r in runs):.2f}-{max(r[0] for r in runs):.2f} s; " if len(runs) > 1 else ""
            print(f"{size:>7} {wall:>8.2f} {cpu:>8.2f} {peak:>9.0f} {wall / size * 1000:>7.2f}   "
                  f"({spread}{passed} of {total} passed)")
            if size in TARGET_WALL_S and wall > TARGET_WALL_S[size]:
                missed.append(f"{size:,} cases in {wall:.2f} s (target {TARGET_WALL_S[size]} s)")
            if size >= 50000 and peak > TARGET_MIB:
                missed.append(f"peak {peak:.0f} MiB at {size:,} cases (target {TARGET_MIB} MiB)")
        if not args.no_suites:
            _probe(REPO, args.executor, suites="suites")  # the first run fills the similarity cache
            wall, cpu, peak, passed, total = _probe(REPO, args.executor, suites="suites")
            print(f"warm `evalrun suites/`: {wall:.2f} s wall, {cpu:.2f} s cpu, {peak:.0f} MiB "
                  f"({passed} of {total} passed)")
            if wall > TARGET_WARM_SUITES_S:
                missed.append(f"warm suites/ in {wall:.2f} s (target {TARGET_WARM_SUITES_S} s)")
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    print("targets: " + ("missed: " + "; ".join(missed) if missed else "met"))
    return 1 if missed else 0


def _probe(root: Path, executor: str, suites: str = "suites") -> tuple[float, float, float, int, int]:
    """One run measured in a fresh process (so that ru_maxrss is this run's alone)."""
    probe = subprocess.run([sys.executable, __file__, "--measure-one", str(root), executor, suites],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        raise SystemExit(probe.stdout + probe.stderr)
    return tuple(json.loads(probe.stdout))  # type: ignore[return-value]


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--measure-one":
        root, executor, suites = Path(sys.argv[2]), sys.argv[3], sys.argv[4]
        if root == REPO:  # the bundled suites: run from suites/ with the run folder outside the checkout
            with tempfile.TemporaryDirectory() as out:
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.perf_counter()
                done = subprocess.run([sys.executable, "-m", "runner", ".", "-q", "--output-dir", out,
                                       "--executor", executor], cwd=REPO / "suites", capture_output=True, text=True,
                                      env={"PYTHONPATH": str(REPO), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                                           "HF_HUB_OFFLINE": "1"})
                wall = time.perf_counter() - started
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                summary = json.loads((Path(out) / "report.json").read_text()[:4000].split(', "cases": [')[0] + "}")["summary"]
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            print(json.dumps([wall, cpu, after.ru_maxrss / 1024, summary["passed"], summary["total"]]))
            raise SystemExit(0 if done.returncode in (0, 1) else done.returncode)
        wall, cpu, peak, summary = measure(root, executor, suites)
        print(json.dumps([wall, cpu, peak, summary["passed"], summary["total"]]))
        raise SystemExit(0)
    raise SystemExit(main())
