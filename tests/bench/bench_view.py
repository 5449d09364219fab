"""Benchmark: `evalrun view` over a history of 200 runs of 5,000 cases each.

    python tests/bench/bench_view.py [--runs 200] [--cases 5000] [--keep DIR] [--opens 3]

Writes the history into a temporary folder (`--keep DIR` keeps it for the next call): each run a report.json
in evalrun's layout (a head, then the cases: results of a case with a goal, a call, a check and a 4-message
conversation, each checked against the report models), the same cases under a different head per run. Starts
`evalrun view` on it in a real process and times, over HTTP: the runs list cold (the first request: every run's
head read) and warm, opening --opens runs not opened before (their index), one case's chunk, and a comparison
of two runs. Prints wall time and the server's CPU time for each, and the server's memory (resident now, and its
peak). Targets (issue 31): runs list < 1 s, a run opens < 2 s, server memory < 300 MiB; exits 1 when one is
missed. On a shared machine wall time follows the load; CPU time is the figure to compare between commits.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TARGET_LIST_S, TARGET_OPEN_S, TARGET_MIB = 1.0, 2.0, 300.0
ENV = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"}


def case(n: int) -> dict:
    from runner.results.models import CaseResult

    amount = 50 + n % 7
    passed = n % 5 != 0
    messages = [{"role": "user", "content": f"Please send {amount} from A-100 to B-200 (case {n})."},
                {"role": "assistant", "content": None, "tool_calls": [{"id": f"t{n}", "type": "function", "function": {
                    "name": "transfer_funds", "arguments": json.dumps({"from": "A-100", "to": "B-200",
                                                                       "amount": amount if passed else amount + 1})}}]},
                {"role": "tool", "tool_call_id": f"t{n}", "content": json.dumps({"transfer_id": n, "ok": True})},
                {"role": "assistant", "content": f"Sent {amount} from A-100 to B-200."}]
    verdict = {"path": "amount", "mode": "strict", "expected": amount, "actual": amount if passed else amount + 1,
               "matched": passed, "decided_by": "number", "reason": "equal" if passed else "expected other"}
    result = CaseResult.model_validate({
        "id": f"case-{n:05d}", "status": "passed" if passed else "failed",
        "source": f"suites/s{n // 100}.yaml:{n % 100 * 9 + 3}:5",
        "description": f"Transfer number {n}", "tags": ["bench", f"group-{n % 10}"],
        "metrics": {"journey_success": passed, "journey_completion": 1.0 if passed else 0.0, "tool_call_precision": 1.0,
                    "tool_call_recall": 1.0, "tool_parameter_f1": 1.0, "text_match": None, "turns": 1,
                    "counts": {"tool_calls": 1, "correct_calls": int(passed)}},
        "goals": [{"name": "transfer", "type": "tool_call", "status": "achieved" if passed else "wrong_args",
                   "achieved": passed, "message": 2, "call_index": 0, "explanation": "compared at message 2",
                   "attempts": [{"call_index": 0, "message": 2, "matched": passed, "arguments": [verdict]}]}],
        "calls": [{"index": 0, "message": 2, "tool_name": "transfer_funds", "arguments": {"amount": amount},
                   "role": "goal" if passed else "wrong_arguments", "goal": "transfer" if passed else None}],
        "failures": [] if passed else ["goal 'transfer': `amount` expected other"],
        "transcript": messages, "duration_s": 0.25, "conversation_source": "live",
        "checks": [{"name": "final_state", "type": "final_state", "status": "passed" if passed else "failed",
                    "score": 1.0 if passed else 0.5, "threshold": 1.0, "explanation": "the final state matches"}]})
    return json.loads(result.model_dump_json())


def make_history(root: Path, runs: int, cases: int) -> None:
    marker = root / f".made-{runs}x{cases}"
    if marker.is_file():
        return
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    body = root / "cases.part"
    with body.open("w") as out:
        out.write(",".join(json.dumps(case(n), separators=(",", ":")) for n in range(cases)))
    failed = sum(1 for n in range(cases) if n % 5 == 0)
    for r in range(runs):
        run_id = f"20260101-{r // 3600:02d}{r // 60 % 60:02d}{r % 60:02d}-000000-1-{r:06x}"
        head = {"version": "2", "evalrun_version": "0.1.0", "run_id": run_id,
                "started_at": f"2026-01-01T{r // 3600:02d}:{r // 60 % 60:02d}:{r % 60:02d}+00:00",
                "paths": ["suites"], "selection": {"filters": [], "tags": [], "only": None}, "agent": None,
                "config": {"agents": {"bank_agent": {"type": "python"}}},
                "summary": {"total": cases, "passed": cases - failed, "failed": failed, "error": 0, "skipped": 0,
                            "unscored": 0, "pass_rate": (cases - failed) / cases, "mean_journey_completion": 0.8,
                            "mean_tool_call_precision": 1.0, "mean_tool_call_recall": 1.0, "exit_code": 1,
                            "duration_s": 60.0}}
        folder = root / "runs" / run_id
        folder.mkdir(parents=True)
        with (folder / "report.json").open("wb") as out, body.open("rb") as source:
            out.write((json.dumps(head)[:-1] + ', "cases": [').encode())
            shutil.copyfileobj(source, out, 1 << 20)
            out.write(b"]}\n")
    body.unlink()
    marker.write_text("")


class Server:
    def __init__(self, folder: Path):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "runner", "view", str(folder), "--port", "0", "--no-open"],
            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(self.process.stdout.readline()), daemon=True)
        reader.start()
        reader.join(120)
        if not line or " at " not in line[0]:
            self.process.kill()
            raise SystemExit(f"evalrun view did not start: {line} {self.process.stderr.read()}")
        self.url = line[0].split(" at ", 1)[1].split(" ", 1)[0]

    def cpu(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def memory(self) -> tuple[float, float]:
        status = dict(line.split(":", 1) for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines())
        return int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024

    def timed(self, path: str) -> tuple[float, float, int]:
        cpu, started = self.cpu(), time.perf_counter()
        with urllib.request.urlopen(self.url + path, timeout=600) as response:
            size = len(response.read())
            assert response.status == 200
        return time.perf_counter() - started, self.cpu() - cpu, size

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--opens", type=int, default=3)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    temporary = None if args.keep else tempfile.mkdtemp(prefix="evalrun-bench-view-")
    root = args.keep or Path(temporary)
    try:
        started = time.perf_counter()
        make_history(root, args.runs, args.cases)
        size = sum(f.stat().st_size for f in (root / "runs").glob("*/report.json"))
        print(f"history: {args.runs} runs x {args.cases} cases, {size / 2**30:.2f} GiB "
              f"(made or found in {time.perf_counter() - started:.1f}s)")
        server = Server(root / "runs")
        misses = []
        try:
            ids = [r["id"] for r in json.loads(urllib.request.urlopen(server.url + "api/runs").read())["runs"]]
            server.stop()
            server = Server(root / "runs")  # a fresh server: the first list below is cold
            rows = [("runs list (cold)", "api/runs", TARGET_LIST_S), ("runs list (warm)", "api/runs", TARGET_LIST_S)]
            for run_id in ids[:args.opens]:
                rows.append((f"open run {run_id[-6:]}", f"api/run?id={run_id}", TARGET_OPEN_S))
            rows.append(("a case's chunk", f"api/chunk?id={ids[0]}&k=3", None))
            rows.append(("compare two runs", f"api/compare?a={ids[1]}&b={ids[0]}", None))
            print(f"{'request':<22} {'wall s':>8} {'cpu s':>8} {'bytes':>11}  target")
            for label, path, target in rows:
                wall, cpu, body = server.timed(path)
                ok = target is None or wall < target
                print(f"{label:<22} {wall:8.3f} {cpu:8.3f} {body:11,d}  {'' if target is None else f'< {target:g} s'}"
                      f"{'' if ok else '  MISSED'}")
                if not ok:
                    misses.append(label)
            rss, peak = server.memory()
            ok = peak < TARGET_MIB
            print(f"server memory: {rss:.0f} MiB resident, peak {peak:.0f} MiB (target < {TARGET_MIB:g} MiB)"
                  f"{'' if ok else '  MISSED'}")
            if not ok:
                misses.append("memory")
        finally:
            server.stop()
        return 1 if misses else 0
    finally:
        if temporary:
            shutil.rmtree(temporary, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
