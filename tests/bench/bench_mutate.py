"""Benchmark: `evalrun mutate DIR` on 1,000 recorded cases, 20 mutants each (issue 32: < 60 s on these machines).

    .venv/bin/python tests/bench/bench_mutate.py                    # 1,000 cases x 20 mutants, every core
    .venv/bin/python tests/bench/bench_mutate.py --cases 200 -j 1   # a quicker look, one process

Writes 1,000 suites (4 tool goals with an order chain, strict and fuzzy arguments, and a text goal with
keywords) and their 14-message transcripts to a temp folder, runs the real CLI in a subprocess with the cache
off (every mutant scored), and prints the wall time, the CPU time of the process and its workers, and the
mutants scored per CPU second (these machines are shared: the CPU figure is the steadier one). Exits 1 when
the wall time is over --target seconds.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GOALS = 4


def make_case(folder: Path, n: int) -> None:
    goals, messages = [], [{"role": "system", "content": "You are a helpful agent."},
                           {"role": "user", "content": f"Please move the money for order {n}."}]
    for g in range(GOALS):
        args = {"account": f"ACC-{n:04d}-{g}", "amount": 10 * g + n % 7, "date": f"2025-0{1 + g}-1{g}",
                "note": f"step {g}"}
        goals.append({"type": "tool_call", "name": f"step_{g}", "tool_name": f"tool_{g}", "args": args,
                      "arg_matching": {"date": "fuzzy", "note": "ignore"}})
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{g}", "type": "function", "function": {"name": f"tool_{g}", "arguments": json.dumps(args)}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{g}", "content": json.dumps({"ok": True, "id": g})})
    messages.append({"role": "assistant", "content": f"All four steps of order {n} are done: 3 transfers on 2025-01-10."})
    goals.append({"type": "text", "name": "answer", "keywords": [f"order {n}", "done"]})
    suite = {"id": f"case-{n:04d}", "goals": {f"step_{g}": [f"step_{g + 1}"] for g in range(GOALS - 1)},
             "goal_details": goals, "forbid_extra_calls": True, "transcript": f"t/case-{n:04d}.json"}
    (folder / f"case-{n:04d}.json").write_text(json.dumps(suite))
    (folder / "t" / f"case-{n:04d}.json").write_text(json.dumps(messages))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--mutants", type=int, default=20)
    parser.add_argument("-j", "--concurrency", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--target", type=float, default=60.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "suites" / "t").mkdir(parents=True)
        (root / "evalrun.yaml").write_text("embeddings: {enabled: false}\n")
        for n in range(args.cases):
            make_case(root / "suites", n)
        env = {**os.environ, "PYTHONPATH": str(REPO), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1"}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "runner", "mutate", "suites", "--mutants-per-case",
                               str(args.mutants), "-j", str(args.concurrency), "--cache", "off", "-o", "out"],
                              cwd=root, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if done.returncode != 0:
            print(done.stdout[-2000:], done.stderr[-2000:], sep="\n")
            print(f"evalrun mutate exited {done.returncode}")
            return 2
        totals = json.loads((root / "out" / "mutate.json").read_text())["totals"]
    scored = totals["killed"] + totals["survived"]
    print(f"{totals['mutated']} cases, {totals['mutants']} mutants ({scored} scored, {totals['equivalent']} "
          f"equivalent), kill rate {totals['kill_rate']:.3f}")
    print(f"wall {wall:.1f} s with -j {args.concurrency}; CPU {cpu:.1f} s ({scored / cpu:.0f} mutants per CPU "
          f"second); target < {args.target:g} s")
    return 0 if wall < args.target else 1


if __name__ == "__main__":
    sys.exit(main())
