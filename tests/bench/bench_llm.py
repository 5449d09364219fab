"""The LLM layer against the fake OpenAI server: how close to the ideal wall time does it get?

    .venv/bin/python tests/bench/bench_llm.py                      # 600 calls, 200 ms each, concurrency 32
    .venv/bin/python tests/bench/bench_llm.py --calls 200 --latency 0.1 --concurrency 16

Sends CALLS distinct chat requests through LLMClient.acomplete (one run-wide limit) to the fake
server, run in a process of its own, that answers each after LATENCY seconds, and prints wall time against the ideal
(calls x latency / concurrency) with the process CPU time beside it (these machines are shared).
A second pass over the same requests must be answered from the disk cache: it prints the requests
the server saw (target 0). Then a third pass with half the cache entries removed (a run killed half
way) must send exactly the missing half.
"""
from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from runner.llm.client import LLMClient
from runner.llm.runtime import LLMRuntime
from runner.llm.settings import ModelSettings

REPO = Path(__file__).resolve().parents[2]


async def run_pass(client: LLMClient, calls: int) -> float:
    started = time.perf_counter()
    await asyncio.gather(*[client.acomplete([{"role": "user", "content": f"question {i}"}]) for i in range(calls)])
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=600)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    options = parser.parse_args()
    ideal = options.calls * options.latency / options.concurrency
    server = subprocess.Popen([sys.executable, "-m", "tests.fakes.openai_server", "--delay", str(options.latency)],
                              cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        base_url = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as cache:
            settings = ModelSettings(model="openai/fake", api_base=base_url, timeout_s=30)

            def client(cached: bool = True) -> LLMClient:
                return LLMClient(settings, Path(cache) if cached else None, role="agent",
                                 runtime=LLMRuntime(concurrency=options.concurrency))

            asyncio.run(client(cached=False).acomplete([{"role": "user", "content": "warm up: import litellm"}]))
            measured = client()
            cpu = time.process_time()
            wall = asyncio.run(run_pass(measured, options.calls))
            cpu = time.process_time() - cpu
            sent = measured.runtime.summary()
            print(f"{options.calls} calls x {options.latency * 1000:.0f} ms at concurrency {options.concurrency}: "
                  f"wall {wall:.2f} s, ideal {ideal:.2f} s, efficiency {ideal / wall:.0%} (target >= 90%); "
                  f"CPU of this process {cpu:.2f} s ({cpu / options.calls * 1000:.1f} ms a call); "
                  f"requests {sent.calls - sent.cached}")
            again = client()
            cached_wall = asyncio.run(run_pass(again, options.calls))
            totals = again.runtime.summary()
            print(f"second pass: {totals.calls - totals.cached} requests (target 0), wall {cached_wall:.2f} s")
            import sqlite3

            with sqlite3.connect(str(Path(cache) / "llm" / "replies.sqlite")) as db:  # lose half the answers
                entries = [key for (key,) in db.execute("SELECT key FROM replies ORDER BY key")]
                db.executemany("DELETE FROM replies WHERE key = ?", [(k,) for k in entries[: len(entries) // 2]])
            resumed = client()
            asyncio.run(run_pass(resumed, options.calls))
            totals = resumed.runtime.summary()
            resent = totals.calls - totals.cached
            print(f"after losing half the entries (a killed run): {resent} requests (target {len(entries) // 2})")
    finally:
        server.terminate()
        server.wait()
    return 0 if ideal / wall >= 0.9 and resent == len(entries) // 2 else 1


if __name__ == "__main__":
    sys.exit(main())
