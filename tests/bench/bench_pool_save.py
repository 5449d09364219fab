"""Benchmark: what the run's own process spends on each result a replay pool's worker sends back.

    python tests/bench/bench_pool_save.py [--results 2000] [--runs 5]

One of bench_replay's cases (10 goals, 40 messages; a 19 KB line of results.jsonl) is scored, and its digest
(runner.results.digest: the line and the fields the run's process reads) is pickled as a worker sends it. The
benchmark then times, per result, in this process: unpickling it and `OpenRun.save` as `evalrun -q` saves it
(results.jsonl's line written and flushed, the tally, the console's stage notes), against validating the line
into a CaseResult, which the run's process did for every result before the digest (and still does for `-v`).
Prints CPU microseconds per result, medians of --runs with min-max.
"""
from __future__ import annotations

import argparse
import io
import pickle
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench_replay import make_case


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    from runner.api import RunOutcome, RunRequest, prepare_run
    from runner.frontends.cli.run_output import CaseLines
    from runner.report.console import Console
    from runner.results.models import CaseResult

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "suites" / "t").mkdir(parents=True)
        (root / "evalrun.yaml").write_text("embeddings: {enabled: false}\n")
        make_case(root / "suites", 0)
        saving, validating = [], []
        for run in range(args.runs):
            prepared = prepare_run(RunRequest([root / "suites"], config_path=root / "evalrun.yaml",
                                              output_dir=root / f"out{run}"))
            assert not isinstance(prepared, RunOutcome), prepared
            prepared.index.refs = prepared.index.refs * args.results  # the same case at every position
            console = CaseLines(Console(io.StringIO()), verbose=False, quiet=True)
            opened = prepared.open(events=console)
            assert not isinstance(opened, RunOutcome), opened
            result = prepared.work(opened).runner.run_recorded(prepared.index.refs[0])[0]
            sent = pickle.dumps(opened.folder.serialise.digest(result))
            line = opened.folder.serialise(result)[1]
            started = time.process_time()
            for position in range(args.results):
                opened.save(position, 0, pickle.loads(sent))
            saving.append((time.process_time() - started) / args.results * 1e6)
            started = time.process_time()
            for _ in range(args.results):
                CaseResult.model_validate_json(line)
            validating.append((time.process_time() - started) / args.results * 1e6)
            opened.folder.close_results()
            opened.folder.release()
        print(f"a {len(line):,}-byte result line, {args.results:,} results, {args.runs} runs (CPU µs per result, "
              "median (min-max)):")
        print(f"  saved from its digest (unpickle, write, tally, console): {_figure(saving)}")
        print(f"  validating its line (what the run's process also did before): {_figure(validating)}")
    return 0


def _figure(values: list[float]) -> str:
    return f"{statistics.median(values):.0f} ({min(values):.0f}-{max(values):.0f})"


if __name__ == "__main__":
    raise SystemExit(main())
