"""Benchmark: the HTML report of 5,000 replay cases (bench_replay's cases: 10 goals, 40 messages each).

    python tests/bench/bench_html.py [--cases 5000] [--runs 5] [--keep DIR]

Writes the suites and transcripts, runs `evalrun` on them once for a real report.json (`--keep DIR`
keeps the run for the next call), then times `evalrun report RUN --format html` as a whole process
`--runs` times and prints the page's size, wall time, CPU time (user + system) and peak memory, each as
median (min-max). Targets (issue 16): <= 15 MB, <= 1 s, <= 200 MiB; exits 1 when one is missed.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_replay import make_case

REPO = Path(__file__).resolve().parents[2]
TARGET_MB, TARGET_S, TARGET_MIB = 15.0, 1.0, 200.0
ENV = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"}


def make_run(root: Path, cases: int) -> Path:
    """A real run of `cases` replay cases in root/out (made once: an existing report.json is reused)."""
    report = root / "out" / "report.json"
    # Never parsed here: a child's peak memory counts what this process held when it forked the child.
    if report.is_file() and len(list((root / "suites").glob("case-*.json"))) == cases:
        return report.parent
    (root / "suites" / "t").mkdir(parents=True, exist_ok=True)
    (root / "evalrun.yaml").write_text("embeddings: {enabled: false}\n")
    for n in range(cases):
        make_case(root / "suites", n)
    done = subprocess.run([sys.executable, "-m", "runner", "suites", "-q", "--output-dir", "out"], cwd=root,
                          env=ENV, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the run failed ({done.returncode}): {done.stdout[-2000:]} {done.stderr[-2000:]}")
    return report.parent


def measure(run: Path) -> tuple[float, float, float]:
    """(wall s, cpu s, peak MiB) of one `evalrun report RUN --format html`, from the kernel's accounting."""
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "runner", "report", str(run), "--format", "html"],
                             env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"evalrun report exited {child.returncode}: {child.stderr.read().decode()[-2000:]}")
    child.stderr.close()
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def spread(values: list[float], fmt: str) -> str:
    return f"{format(statistics.median(values), fmt)} ({format(min(values), fmt)}-{format(max(values), fmt)})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="make the run here, or reuse the one already there")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep.resolve() if args.keep else Path(tmp)
        run = make_run(root, args.cases)
        measure(run)  # warm-up: the file cache, .pyc files
        figures = [measure(run) for _ in range(args.runs)]
        walls, cpus, peaks = ([f[i] for f in figures] for i in range(3))
        page_mb = (run / "report.html").stat().st_size / 1e6
        source_mb = (run / "report.json").stat().st_size / 1e6
    print(f"HTML report of {args.cases} cases (report.json {source_mb:.1f} MB), {args.runs} runs of "
          f"`evalrun report RUN --format html`, median (min-max):")
    print(f"  size  {page_mb:.2f} MB             target <= {TARGET_MB:g} MB")
    print(f"  wall  {spread(walls, '.2f')} s   target <= {TARGET_S:g} s")
    print(f"  cpu   {spread(cpus, '.2f')} s   (user + system)")
    print(f"  peak  {spread(peaks, '.0f')} MiB    target <= {TARGET_MIB:g} MiB")
    missed = [name for name, ok in (("size", page_mb <= TARGET_MB), ("wall", statistics.median(walls) <= TARGET_S),
                                    ("peak", statistics.median(peaks) <= TARGET_MIB)) if not ok]
    if missed:
        print(f"missed: {', '.join(missed)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
