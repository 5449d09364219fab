"""`--repeat auto:max=10` against `--repeat 10` on a seeded fake agent (issue 32 §2's criterion). A script, not a test.

    .venv/bin/python tests/bench/bench_repeat_auto.py                    # 200 cases, seeds 1-5, both spreads
    .venv/bin/python tests/bench/bench_repeat_auto.py --cases 500 --seeds 3

Case i's run r passes with probability p_i, fixed by (seed, i, r), so auto's runs are the first runs --repeat 10
makes (the agent is the one of tests/test_repeat_auto.py, a python agent in this process; the real CLI,
in-process, -j 8). Two spreads of p: `suite-like` (40% of cases at 0, 40% at 1, 20% evenly over (0, 1)) and
`uniform` (every case evenly over [0, 1]). For each: the share of cases auto classifies as --repeat 10 does, with
two definitions of the classification:
  verdict   stable pass / stable fail / flaky = the 95% Wilson interval of the pass rate over the case's runs lies
            above 0.5 / below 0.5 / straddles it (the one the criterion and the test use);
  mixed     flaky = the case's runs did not all end the same way (the report's `flaky` list);
and auto's runs as a share of --repeat 10's, with wall and CPU time of each run. Criterion: verdict agreement
>= 95% and runs <= 50% (on the suite-like spread; on uniform, where 60% of the cases are flaky by design and
get more runs, it cannot hold, and the figures say by how much).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.results.test_repeat_auto import classification, run, runs_of, seeded_project, spread


def uniform(cases: int) -> list[float]:
    return [i / (cases - 1) for i in range(cases)]


def timed(root: Path, folder: str, *args: str) -> tuple[dict, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        report = run(root, folder, *args)
    return report, time.perf_counter() - wall, time.process_time() - cpu


def one(rates: list[float], seed: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-repeat-auto-") as folder:
        root = Path(folder)
        seeded_project(root, rates, seed=seed)
        ten, ten_wall, ten_cpu = timed(root, "ten", "--repeat", "10")
        auto, auto_wall, auto_cpu = timed(root, "auto", "--repeat", "auto:max=10")
    fixed, adaptive = runs_of(ten), runs_of(auto)
    cases = len(fixed)
    return {"verdict": sum(classification(adaptive[c]) == classification(fixed[c]) for c in fixed) / cases,
            "mixed": sum((len(set(adaptive[c])) > 1) == (len(set(fixed[c])) > 1) for c in fixed) / cases,
            "runs": sum(map(len, adaptive.values())) / (10 * cases),
            "ten_wall": ten_wall, "ten_cpu": ten_cpu, "auto_wall": auto_wall, "auto_cpu": auto_cpu}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    held = True
    print(f"{'spread':<11} {'seed':>4} {'verdict':>8} {'mixed':>7} {'runs':>6}   --repeat 10 wall/cpu   auto wall/cpu")
    for name, make in (("suite-like", spread), ("uniform", uniform)):
        rows = []
        for seed in range(1, args.seeds + 1):
            rates = make(args.cases)
            random.Random(seed).shuffle(rates)
            row = one(rates, seed)
            rows.append(row)
            print(f"{name:<11} {seed:>4} {row['verdict']:>8.1%} {row['mixed']:>7.1%} {row['runs']:>6.1%}   "
                  f"{row['ten_wall']:>6.2f}s / {row['ten_cpu']:>5.2f}s     {row['auto_wall']:>5.2f}s / "
                  f"{row['auto_cpu']:>5.2f}s")
        worst = min(r["verdict"] for r in rows), max(r["runs"] for r in rows)
        print(f"{name:<11}  all  worst verdict agreement {worst[0]:.1%}, most runs {worst[1]:.1%}")
        if name == "suite-like":
            held = worst[0] >= 0.95 and worst[1] <= 0.5
    print("criterion (suite-like: verdict >= 95%, runs <= 50%):", "held" if held else "MISSED")
    return 0 if held else 1


if __name__ == "__main__":
    sys.exit(main())
