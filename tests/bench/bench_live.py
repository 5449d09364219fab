"""Benchmark: a live run through the real CLI against the fake OpenAI server.

    .venv/bin/python tests/bench/bench_live.py                 # 200 cases x 3 turns, 200 ms a call, -j 32
    .venv/bin/python tests/bench/bench_live.py --cases 100 --latency 0.1 --concurrency 16

Every case is played by a `model` target (a bare model behind the fake server, run in a process of its
own, answering each call after LATENCY seconds) for three scripted user turns: CASES x 3 model calls.
Three runs of `evalrun`:
1. fresh: wall time of the run (report.json's duration) against the ideal, calls x latency / concurrency,
   with the CPU time of the evalrun process beside it (these machines are shared); target >= 90%;
2. the same again: the disk cache must answer every call (0 sent);
3. a run killed (SIGKILL) once half the answers are cached, then started again: the restart must send
   exactly the calls whose answers were not cached yet.
Exits 1 when a cache check fails; the efficiency is printed, not enforced.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def project(root: Path, base_url: str, cases: int) -> None:
    (root / "suites").mkdir(parents=True)
    (root / "evalrun.yaml").write_text(
        "embeddings: {enabled: false}\ncache_dir: cache\ntimeout_s: 120\n"
        f"agents:\n  bot:\n    type: model\n    model: openai/fake\n    api_base: {base_url}\n    timeout_s: 30\n")
    for n in range(cases):
        (root / "suites" / f"c{n:03d}.yaml").write_text(
            f"id: c{n:03d}\nagent: bot\nstarting_sentence: Hello, this is case {n}.\n"
            f"user_prompts: [Tell me more about {n}., Thanks for {n}.]\n"
            "goal_details: [{type: text, name: answers, keywords: [ok]}]\n")


def evalrun(root: Path, output: str, *, kill_when_cached: int = 0) -> tuple[float, float, dict]:
    """(wall of the whole process, its CPU, report summary); with kill_when_cached, SIGKILL it once that
    many answers are in the cache and return an empty summary."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "runner", "suites", "-q", "-j", str(ARGS.concurrency),
                                "--output-dir", output], cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env={**os.environ, "PYTHONPATH": str(REPO), "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    if kill_when_cached:
        while process.poll() is None and cached_answers(root) < kill_when_cached:
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait()
        return time.perf_counter() - started, 0.0, {}
    _, stderr = process.communicate()
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if process.returncode != 0:
        raise SystemExit(f"evalrun exited {process.returncode}: {stderr[-2000:]}")
    report = json.loads((root / output / "report.json").read_text())
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, report["summary"]


def cached_answers(root: Path) -> int:
    import sqlite3

    path = root / "cache" / "llm" / "replies.sqlite"
    if not path.is_file():
        return 0
    try:
        with sqlite3.connect(str(path), timeout=5) as db:
            return db.execute("SELECT count(*) FROM replies").fetchone()[0]
    except sqlite3.Error:  # the run is creating it
        return 0


def sent(summary: dict) -> int:
    usage = summary.get("model_usage") or {}
    return usage.get("calls", 0) - usage.get("cached", 0)


def main() -> int:
    calls = ARGS.cases * 3
    ideal = calls * ARGS.latency / ARGS.concurrency
    server = subprocess.Popen([sys.executable, "-m", "tests.fakes.openai_server", "--delay", str(ARGS.latency)],
                              cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    root = Path(tempfile.mkdtemp(prefix="evalrun-live-"))
    ok = True
    try:
        project(root, server.stdout.readline().strip(), ARGS.cases)
        wall, cpu, summary = evalrun(root, "fresh")
        run = summary["duration_s"]
        print(f"{ARGS.cases} cases x 3 turns = {calls} calls x {ARGS.latency * 1000:.0f} ms at -j {ARGS.concurrency}; "
              f"ideal {ideal:.2f} s")
        print(f"fresh run: {summary['passed']} passed; run {run:.2f} s ({ideal / run:.0%} of ideal), whole process "
              f"{wall:.2f} s wall, {cpu:.2f} s CPU; {sent(summary)} calls sent")
        wall, cpu, again = evalrun(root, "again")
        print(f"second run: {sent(again)} calls sent (target 0), {again['model_usage']['cached']} from the cache; "
              f"run {again['duration_s']:.2f} s, whole process {wall:.2f} s wall, {cpu:.2f} s CPU")
        ok &= sent(again) == 0
        shutil.rmtree(root / "cache")
        evalrun(root, "killed", kill_when_cached=calls // 2)
        kept = cached_answers(root)
        _, _, resumed = evalrun(root, "resumed")
        print(f"killed at {kept} cached answers; the restart sent {sent(resumed)} calls "
              f"(target {calls - kept}: only the missing ones)")
        ok &= sent(resumed) == calls - kept
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(root, ignore_errors=True)
    print("cache checks: " + ("met" if ok else "MISSED"))
    return 0 if ok else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    ARGS = parser.parse_args()
    raise SystemExit(main())
