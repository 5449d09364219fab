"""Benchmark: what the pytest plugin costs a project that holds no evalrun suite, and what a suite costs
under pytest compared with the CLI.

    .venv/bin/python tests/bench/bench_pytest_plugin.py [--runs 5] [--cases 200]

1. A project with 200 test modules and 400 YAML/JSON data files, no evalrun.yaml: `pytest --collect-only`
   with the plugin and with `-p no:evalrun`, runs alternated; the ratio of the medians (wall and CPU).
2. An evalrun project of N replayed cases: `evalrun suites/`, `pytest suites/` and `pytest suites/ -n 2`,
   beside pytest's own start-up (its plugins loading, nothing collected).
Whole processes, wall clock and the children's CPU time; this machine is shared, so read the ratios.
Not collected by pytest (the name has no test_ prefix).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def timed(args: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 5):
        raise SystemExit(f"{' '.join(args)} exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def plain_project(root: Path) -> None:
    for n in range(200):
        (root / f"pkg{n % 10}").mkdir(exist_ok=True)
        (root / f"pkg{n % 10}" / f"test_m{n}.py").write_text(f"def test_{n}():\n    assert {n} == {n}\n")
        (root / f"pkg{n % 10}" / f"data{n}.yaml").write_text(f"goal_details: []\nvalue: {n}\n")
        (root / f"pkg{n % 10}" / f"data{n}.json").write_text(json.dumps({"value": n}))


def evalrun_project(root: Path, cases: int) -> None:
    (root / "suites" / "t").mkdir(parents=True)
    (root / "suites" / "evalrun.yaml").write_text("embeddings: {enabled: false}\n")
    for n in range(cases):
        (root / "suites" / "t" / f"c{n}.json").write_text(json.dumps([
            {"role": "user", "content": "look up nwaters"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "1", "type": "function", "function": {
                "name": "get_id", "arguments": json.dumps({"username": "nwaters"})}}]},
            {"role": "tool", "tool_call_id": "1", "content": "15778303"},
            {"role": "assistant", "content": "The id is 15778303."}]))
        (root / "suites" / f"c{n}.yaml").write_text(
            f"id: c{n}\nstarting_sentence: look up nwaters\ntranscript: t/c{n}.json\ngoal_details:\n"
            "  - {type: tool_call, name: get_id, tool_name: get_id, args: {username: nwaters}}\n"
            "  - {type: text, name: tell, keywords: ['15778303']}\n")


def medians(samples: list[tuple[float, float]]) -> tuple[float, float, float, float]:
    walls, cpus = [s[0] for s in samples], [s[1] for s in samples]
    return statistics.median(walls), min(walls), max(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cases", type=int, default=200)
    options = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory() as scratch:
        plain = Path(scratch) / "plain"
        plain.mkdir()
        plain_project(plain)
        runs: dict[str, list] = {"with": [], "without": []}
        for _ in range(options.runs):
            runs["with"].append(timed([python, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
                                      plain))
            runs["without"].append(timed([python, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                                          "-p", "no:evalrun"], plain))
        with_, without = medians(runs["with"]), medians(runs["without"])
        print(f"no evalrun suite, 200 test modules + 400 data files, pytest --collect-only ({options.runs} runs):")
        print(f"  with the plugin    median {with_[0]:.3f} s wall ({with_[1]:.3f}-{with_[2]:.3f}), "
              f"{with_[3]:.3f} s CPU")
        print(f"  -p no:evalrun      median {without[0]:.3f} s wall ({without[1]:.3f}-{without[2]:.3f}), "
              f"{without[3]:.3f} s CPU")
        print(f"  ratio              {with_[0] / without[0]:.3f} wall, {with_[3] / without[3]:.3f} CPU")

        project = Path(scratch) / "evals"
        project.mkdir()
        evalrun_project(project, options.cases)
        (project / "empty").mkdir()
        commands = {"pytest start-up alone": [python, "-m", "pytest", "empty", "-q", "-p", "no:cacheprovider"],
                    "evalrun suites/": [python, "-m", "runner", "suites/", "-q", "--output-dir", "out"],
                    "pytest suites/": [python, "-m", "pytest", "suites/", "-q", "-p", "no:cacheprovider",
                                       "--evalrun-output-dir", "out"],
                    "pytest suites/ -n 2": [python, "-m", "pytest", "suites/", "-q", "-p", "no:cacheprovider", "-n",
                                            "2", "--evalrun-output-dir", "out"]}
        print(f"{options.cases} replayed cases ({options.runs} runs):")
        for label, command in commands.items():
            wall, low, high, cpu = medians([timed(command, project) for _ in range(options.runs)])
            print(f"  {label:<22} median {wall:.2f} s wall ({low:.2f}-{high:.2f}), {cpu:.2f} s CPU")


if __name__ == "__main__":
    main()
