"""Benchmark: time and peak memory of `evalrun` replay runs at 1k, 10k and 50k cases.

    python tests/bench/bench_scale.py                      # 1,000 / 10,000 / 50,000 cases
    python tests/bench/bench_scale.py --sizes 1000 10000   # a quicker look
    python tests/bench/bench_scale.py --keep /tmp/scale    # keep the generated suites

Each size runs the real CLI in a subprocess on cases shaped like bench_replay's (10 goals and 40
messages each) and prints wall time, CPU time (user + system of the child), peak resident memory
(ru_maxrss of the child) and the time per 1,000 cases. Results stream to disk as cases finish, so the
peak must not grow with the number of cases: target ≤ 300 MiB at 50,000, with time linear in the
count (the per-1,000 figure stays flat). Exits 1 when the memory target is missed.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_replay import REPO, make_case  # noqa: E402

TARGET_MIB = 300


def generate(root: Path, count: int) -> None:
    (root / "suites" / "t").mkdir(parents=True, exist_ok=True)
    (root / "evalrun.yaml").write_text("embeddings: {enabled: false}\n")
    for n in range(count):
        make_case(root / "suites", n)


def measure(root: Path) -> tuple[float, float, float, dict]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "runner", "suites", "-q", "--output-dir", "out"], cwd=root,
                            capture_output=True, text=True,
                            env={"PYTHONPATH": str(REPO), "PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise SystemExit(f"evalrun exited {result.returncode}:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    peak_mib = after.ru_maxrss / 1024  # ru_maxrss of children: the largest child so far, in KiB on Linux
    summary = json.loads((root / "out" / "report.json").read_text()[:4000].split(', "cases": [')[0] + "}")["summary"]
    return wall, cpu, peak_mib, summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 50000])
    parser.add_argument("--keep", type=Path, help="generate into this folder and keep it")
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="evalrun-scale-"))
    failed = False
    print(f"{'cases':>7} {'wall s':>8} {'cpu s':>8} {'peak MiB':>9} {'s / 1k':>7}")
    try:
        # Sizes run smallest first; ru_maxrss of children is a running maximum, so each size runs in a fresh
        # measuring process to keep the peaks apart.
        for size in sorted(args.sizes):
            root = base / str(size)
            if not (root / "suites").is_dir():
                generate(root, size)
            probe = subprocess.run([sys.executable, __file__, "--measure-one", str(root)], capture_output=True,
                                   text=True)
            if probe.returncode != 0:
                print(probe.stdout, probe.stderr)
                return 1
            wall, cpu, peak, passed, total = json.loads(probe.stdout)
            print(f"{size:>7} {wall:>8.2f} {cpu:>8.2f} {peak:>9.0f} {wall / size * 1000:>7.2f}   "
                  f"({passed} of {total} passed)")
            failed |= peak > TARGET_MIB
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    print(f"target: peak <= {TARGET_MIB} MiB at every size: {'missed' if failed else 'met'}")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--measure-one":
        wall, cpu, peak, summary = measure(Path(sys.argv[2]))
        print(json.dumps([wall, cpu, peak, summary["passed"], summary["total"]]))
        raise SystemExit(0)
    raise SystemExit(main())
