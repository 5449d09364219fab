"""Reading trace files: how long evalrun takes to turn a large OTLP/JSON export into conversations.

    .venv/bin/python tests/bench/bench_traces.py                      # 1,000 conversations, median of 5 reads
    .venv/bin/python tests/bench/bench_traces.py --conversations 300 --runs 3

Builds, with the real OpenTelemetry SDK, CONVERSATIONS two-turn tool-calling conversations in the GenAI
shape (invoke_agent > chat, execute_tool, chat; every model call carries the whole history), writes
them as collector JSON lines (one span per line) and as the same spans with no conversation id (the
bare-client shape, joined by history), and times `read_conversations` on each: wall and CPU time,
median with min-max. Prints the file sizes and spans per second.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from runner.transcripts.transcript_file import read_conversations
from tests.fakes.otel_spans import Traces, genai_turn


def build(conversations: int, with_ids: bool) -> Traces:
    traces = Traces()
    for n in range(conversations):
        conversation = f"conv-{n:05d}" if with_ids else None
        history = genai_turn(traces, conversation, [], f"What's the weather in city {n}?",
                             [(f"call_{n}_1", "get_weather", {"city": f"city {n}"}, {"temperature_c": n % 30})],
                             f"It is {n % 30}°C in city {n}.")
        genai_turn(traces, conversation, history, "And tomorrow?",
                   [(f"call_{n}_2", "get_forecast", {"city": f"city {n}", "days": 1}, {"temperature_c": 20})],
                   "Tomorrow it will be 20°C.")
    return traces


def measure(path: Path, runs: int) -> tuple[list[float], list[float], int]:
    walls, cpus = [], []
    found = 0
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        found = len(read_conversations(path))
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return walls, cpus, found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for with_ids in (True, False):
            traces = build(args.conversations, with_ids)
            spans = len(traces.spans)
            path = traces.write(Path(folder) / f"traces-{with_ids}.jsonl", lines=True)
            walls, cpus, found = measure(path, args.runs)
            label = "conversation ids" if with_ids else "no ids (joined by history)"
            print(f"{label}: {found} conversations, {spans:,} spans, {path.stat().st_size / 1e6:.1f} MB; "
                  f"read in {statistics.median(walls):.2f} s wall ({min(walls):.2f}-{max(walls):.2f}), "
                  f"{statistics.median(cpus):.2f} s CPU; {spans / statistics.median(walls):,.0f} spans/s")


if __name__ == "__main__":
    main()
