"""Benchmark: `evalrun DIR` on 1,000 replay cases (10 goals and 40 messages each, strict arguments).

    python tests/bench/bench_replay.py [--cases 1000] [--runs 3]

Writes the suites and transcripts to a temp folder, runs the real CLI in a subprocess and prints
the median wall time. Also checks that the run imported neither litellm nor torch (target: ≤ 3 s).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOALS = 10
REPO = Path(__file__).resolve().parents[2]


def make_case(folder: Path, n: int) -> None:
    goals, messages = [], [{"role": "system", "content": "You are a helpful agent."}]
    for g in range(GOALS):
        args = {"account": f"acct-{n}-{g}", "amount": g * 10 + 0.5, "tags": ["a", "b", str(g)],
                "options": {"notify": g % 2 == 0, "channel": "email"}}
        goals.append({"type": "tool_call", "name": f"step_{g}", "tool_name": f"tool_{g % 4}", "args": args})
        messages.append({"role": "user", "content": f"Please do step {g}."})
        actual = {**args, "tags": list(reversed(args["tags"])), "account": args["account"].upper(),
                  "amount": str(args["amount"])}
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{g}", "type": "function", "function": {"name": f"tool_{g % 4}", "arguments": json.dumps(actual)}}]})
        messages.append({"role": "tool", "tool_call_id": f"call_{g}", "content": json.dumps({"ok": True})})
        messages.append({"role": "assistant", "content": f"Step {g} is done."})
    order = {f"step_{g}": [f"step_{g + 1}"] for g in range(GOALS - 1)}
    suite = {"id": f"case-{n:04d}", "tags": ["bench"], "goals": order, "goal_details": goals,
             "transcript": f"t/case-{n:04d}.json"}
    (folder / f"case-{n:04d}.json").write_text(json.dumps(suite))
    (folder / "t" / f"case-{n:04d}.json").write_text(json.dumps(messages))
    assert len(messages) == 41  # a system message plus 40


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "suites" / "t").mkdir(parents=True)
        (root / "evalrun.yaml").write_text("embeddings: {enabled: false}\n")
        for n in range(args.cases):
            make_case(root / "suites", n)
        probe = ("import sys, runner.frontends.cli; code = runner.frontends.cli.main(['suites', '-q', '--output-dir', 'out']);"
                 "heavy = [m for m in ('litellm', 'torch', 'sentence_transformers') if m in sys.modules];"
                 "print('heavy imports:', heavy or 'none', 'exit', code)")
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            result = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True,
                                    env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
            times.append(time.perf_counter() - started)
            if "exit 0" not in result.stdout:
                print(result.stdout[-2000:], result.stderr[-2000:])
                return 1
        print(result.stdout.strip().splitlines()[-1])
        report = json.loads((root / "out" / "report.json").read_text())
        print(f"{report['summary']['passed']} of {report['summary']['total']} cases passed")
        print(f"evalrun on {args.cases} replay cases ({GOALS} goals, 40 messages each): "
              f"median {statistics.median(times):.2f} s over {args.runs} runs (all: {', '.join(f'{t:.2f}' for t in times)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
