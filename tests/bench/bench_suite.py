"""Benchmark: how long the whole test suite takes, and where the time goes.

    .venv/bin/python tests/bench/bench_suite.py                 # pytest -n 2, as CI and issue 28 measure it
    .venv/bin/python tests/bench/bench_suite.py --workers 0     # serial (-p no:xdist)
    .venv/bin/python tests/bench/bench_suite.py --workers 2 --dist worksteal -- -m "not process"

Runs pytest in a process of its own with the per-test plugin tests/bench/suite_cpu.py and prints: the outcome
line, the wall time, the CPU time of pytest and every process it waited for, the sum of the tests' own times,
the slowest 20 tests (wall, CPU in the test process, CPU of the processes it started) and the 15 costliest
files. Everything is also written to --out (summary.md, tests.jsonl, pytest.log). Targets (issue 28): the
whole suite <= 5 min at -n 2 and <= 9 min serial; exit 1 when the measured run misses its target, 2 when
pytest itself failed. The machine is shared: compare runs made one after the other, CPU beside wall.
Not collected by pytest (the name has no test_ prefix). Arguments after `--` go to pytest.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TARGETS_S = {"parallel": 5 * 60, "serial": 9 * 60}  # issue 28: -n 2, and -p no:xdist


def run_suite(workers: int, dist: str | None, extra: list[str], out: Path) -> tuple[int, float, float, str]:
    """(pytest's exit code, wall seconds, CPU seconds of pytest and its waited-for children, its last line)."""
    spread = ["-p", "no:xdist"] if workers == 0 else ["-n", str(workers)] + (["--dist", dist] if dist else [])
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.bench.suite_cpu",
               *spread, *extra]
    env = {**os.environ, "EVALRUN_SUITE_CPU_OUT": str(out / "tests.jsonl")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with (out / "pytest.log").open("w") as log:
        code = subprocess.run(command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = (out / "pytest.log").read_text(errors="replace").strip().splitlines()
    outcome = next((line for line in reversed(lines) if re.search(r"\d+ (passed|failed|error)", line)), "(no outcome)")
    return code, wall, cpu, outcome.strip("= ")


def summary(rows: list[dict], workers: int, code: int, wall: float, cpu: float, outcome: str) -> str:
    mode = "serial (-p no:xdist)" if workers == 0 else f"-n {workers}"
    total = sum(r["wall"] for r in rows)
    target = TARGETS_S["serial" if workers == 0 else "parallel"]
    lines = [f"# The test suite, {mode}", "",
             f"- outcome: {outcome} (pytest exit {code})",
             f"- wall: {int(wall // 60)} min {int(wall % 60):02d} s (target {target // 60} min: "
             f"{'met' if wall <= target else 'missed'})",
             f"- CPU, pytest and the processes it waited for: {cpu:.0f} s ({cpu / wall:.2f} cores on average)",
             f"- the tests' own times added up: {total:.0f} s over {len(rows)} tests; in the test processes "
             f"{sum(r['cpu'] for r in rows):.0f} s CPU, in processes they started {sum(r['children'] for r in rows):.0f} s",
             f"- tests marked `process`: {sum(r['process'] for r in rows)}, "
             f"{sum(r['wall'] for r in rows if r['process']):.0f} s of the sum",
             *workers_lines(rows), "",
             "## Slowest 20 tests", "", "| wall s | CPU s here | CPU s children | test |", "|---:|---:|---:|---|"]
    for r in sorted(rows, key=lambda r: -r["wall"])[:20]:
        lines.append(f"| {r['wall']:.1f} | {r['cpu']:.1f} | {r['children']:.1f} | `{r['id']}` |")
    files: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for r in rows:
        entry = files[r["id"].split("::")[0]]
        entry[0] += r["wall"]
        entry[1] += r["cpu"]
        entry[2] += r["children"]
        entry[3] += 1
    lines += ["", "## Costliest 15 files", "", "| wall s | CPU s here | CPU s children | tests | file |",
              "|---:|---:|---:|---:|---|"]
    for name, (w, c, k, n) in sorted(files.items(), key=lambda item: -item[1][0])[:15]:
        lines.append(f"| {w:.0f} | {c:.0f} | {k:.0f} | {n} | `{name}` |")
    return "\n".join(lines) + "\n"


def workers_lines(rows: list[dict]) -> list[str]:
    """Each worker's busy time (its tests' times added up) and when its last test ended, from the first test's
    start: a worker that ends early left the other alone with the rest."""
    if not rows:
        return []
    start = min(r["started"] for r in rows)
    by_worker: dict[str, list[dict]] = collections.defaultdict(list)
    for r in rows:
        by_worker[r.get("worker", "main")].append(r)
    return [f"- worker {name}: {len(found)} tests, busy {sum(r['wall'] for r in found):.0f} s, last test ended at "
            f"{max(r['started'] + r['wall'] for r in found) - start:.0f} s" for name, found in sorted(by_worker.items())]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2, help="pytest-xdist workers; 0 runs serially (default 2)")
    parser.add_argument("--dist", help="xdist's --dist mode (default: pytest-xdist's own, load)")
    parser.add_argument("--out", type=Path, help="where the summary and per-test lines go (default: a new temp folder)")
    parser.add_argument("pytest_args", nargs="*", help="after --: more pytest arguments")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="evalrun-bench-suite-"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "tests.jsonl").unlink(missing_ok=True)
    code, wall, cpu, outcome = run_suite(args.workers, args.dist, args.pytest_args, out)
    rows = [json.loads(line) for line in (out / "tests.jsonl").read_text().splitlines()] \
        if (out / "tests.jsonl").is_file() else []
    text = summary(rows, args.workers, code, wall, cpu, outcome)
    (out / "summary.md").write_text(text)
    print(text + f"\n(written to {out})")
    if code != 0:
        return 2
    return 0 if wall <= TARGETS_S["serial" if args.workers == 0 else "parallel"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
