"""Benchmark: a real small model plays the agent, the simulated user and the judge.

    .venv/bin/python tests/bench/bench_real_model.py                       # a server on 127.0.0.1:8765
    .venv/bin/python tests/bench/bench_real_model.py --api-base http://127.0.0.1:8791/v1 --cases 12
    .venv/bin/python tests/bench/bench_real_model.py --serve /work/tools/llm/serve.sh    # starts one, stops it after

Any OpenAI-compatible server works (/work/tools/llm/README.md serves SmolLM2-135M-Instruct through
llama.cpp). The suite: CASES live cases in the weather and time-off shapes, each with a `model` agent that
may call a played tool, a `story` for the simulated user (two turns at most), a text goal the judge compares
through the fuzzy cascade, and two judged checks (`semantic_match`, `assert`). It runs twice: the judge
asked for plain text (what `structured_output: auto` gives an api_base server), then with structured output
(`always`: the server's grammar holds the reply to the verdict's schema). For each it prints how many cases
were scored (passed or failed), unscored and errored, and why, grouped; the requests sent and how many
were a reply asked again. A small model's verdicts are close to chance: what this measures is that every
case is accounted for, with its reason, and none is lost to the breaker.
"""
from __future__ import annotations

import argparse
import collections
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHAPES = [
    ("What is the weather in {city}?", "get_weather", "It is 21 degrees and sunny in {city}.",
     "You want to know the weather in {city} today. You live there."),
    ("How many days of time off do I have left?", "get_timeoff_balance", "You have 12 days of time off left.",
     "You are employee nwaters and want to know how many days of time off you have left this year."),
    ("Is my booking {ref} confirmed?", "get_booking", "Your booking {ref} is confirmed.",
     "You booked a flight with reference {ref} and want to know whether it is confirmed."),
]
CITIES = ["Paris", "Oslo", "Lima", "Cairo", "Quito", "Perth"]
TOOLS = [{"type": "function", "function": {"name": name, "description": f"Look up: {name.replace('_', ' ')}",
                                           "parameters": {"type": "object", "properties": {}}}}
         for name in ("get_weather", "get_timeoff_balance", "get_booking")]
REASONS = [  # (group, pattern) - first match wins
    ("judge reply: no JSON object", r"judge's reply holds no JSON object"),
    ("judge reply: no object tagged with the verdict_id", r"no JSON object tagged with this call's verdict_id"),
    ("judge reply: another call's verdict_id", r"another call's verdict_id"),
    ("judge reply: not a verdict (match/score)", r"verdict has no boolean 'match'|verdict has an invalid"),
    ("a reply cut at max_tokens", r"cut at (max_tokens|the server's token limit)"),
    ("a refusal or content filter", r"refused to answer|content filter"),
    ("simulated user: reply unusable", r"the simulated user's (reply|'done')"),
    ("timed out", r"timed out after"),
    ("marked down (breaker)", r"marked down after"),
    ("cannot reach the server", r"cannot reach"),
    ("HTTP error", r"HTTP \d{3}"),
]


def project(root: Path, api_base: str, model: str, cases: int, structured: str, max_tokens: int) -> None:
    common = {"model": model, "api_base": api_base, "timeout_s": 180, "max_retries": 1, "max_tokens": max_tokens,
              "cache": False}
    config = {
        "embeddings": {"enabled": False},
        "judge": {**common, "structured_output": structured},
        "simulator": {**common, "max_user_turns": 2},
        "agents": {"bot": {"type": "model", **common, "max_tool_rounds": 2, "tools": TOOLS,
                           "system_prompt": "You are a helpful assistant. Use the tools to look facts up, then "
                                            "answer briefly."}},
    }
    (root / "suites").mkdir(parents=True)
    (root / "evalrun.yaml").write_text(json.dumps(config))  # JSON is YAML
    for n in range(cases):
        ask, tool, answer, story = SHAPES[n % len(SHAPES)]
        values = {"city": CITIES[n % len(CITIES)], "ref": f"BK{1000 + n}"}
        case = {
            "id": f"c{n:02d}", "agent": "bot", "starting_sentence": ask.format(**values),
            "story": story.format(**values), "tool_outputs": {tool: answer.format(**values)},
            "goal_details": [{"type": "text", "name": "answers", "response": answer.format(**values)}],
            "checks": [{"type": "semantic_match", "reference": answer.format(**values)},
                       {"type": "assert", "statement": "The agent answers the user's question."}],
        }
        (root / "suites" / f"c{n:02d}.yaml").write_text(json.dumps(case))


def reasons_of(case: dict) -> list[str]:
    found = []
    if case.get("error"):
        found.append(case["error"])
    if case.get("unscored_reason"):
        found.append(case["unscored_reason"])
    found += [c["explanation"] for c in case.get("checks", []) if c.get("status") == "unscored"]
    found += case.get("judge_fallbacks") or []
    return found


def group(reason: str) -> str:
    for name, pattern in REASONS:
        if re.search(pattern, reason):
            return name
    return "other: " + reason[:80]


def run_once(api_base: str, model: str, cases: int, structured: str, j: int, max_tokens: int) -> dict:
    root = Path(tempfile.mkdtemp(prefix="evalrun-real-"))
    try:
        project(root, api_base, model, cases, structured, max_tokens)
        started = time.perf_counter()
        result = subprocess.run([sys.executable, "-m", "runner", "suites", "-q", "-j", str(j), "--output-dir", "out"],
                                cwd=root, capture_output=True, text=True, env={"PYTHONPATH": str(REPO),
                                                                               "PATH": "/usr/bin:/bin"})
        wall = time.perf_counter() - started
        report_path = root / "out" / "report.json"
        if not report_path.is_file():
            raise SystemExit(f"evalrun wrote no report (exit {result.returncode}): {result.stderr[-2000:]}")
        report = json.loads(report_path.read_text())
        statuses = collections.Counter(c["status"] for c in report["cases"])
        groups: dict[str, list[str]] = collections.defaultdict(list)
        checks = collections.Counter()
        for case in report["cases"]:
            for check in case.get("checks", []):
                checks[check["status"]] += 1
            for reason in reasons_of(case):
                groups[group(reason)].append(f"{case['id']}: {reason}")
        usage = report["summary"].get("model_usage") or {}
        requests = sum(c.get("model_usage", {}).get("calls", 0) for c in report["cases"] if c.get("model_usage"))
        return {"wall": wall, "exit": result.returncode, "statuses": statuses, "checks": checks, "groups": groups,
                "usage": usage, "requests": requests, "stderr": result.stderr.strip(),
                "terminations": collections.Counter(c.get("termination_reason") for c in report["cases"])}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def wait_for(api_base: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{api_base}/models", timeout=2):
                return True
        except OSError:
            time.sleep(0.5)
    return False


def main() -> int:
    server = None
    if ARGS.serve:
        port = ARGS.api_base.rsplit(":", 1)[1].split("/")[0]
        server = subprocess.Popen([ARGS.serve, port], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if not wait_for(ARGS.api_base, 60 if server else 3):
            print(f"no model server answers at {ARGS.api_base} (start one: /work/tools/llm/serve.sh PORT, or give "
                  "--serve PATH-TO-serve.sh): nothing measured")
            return 0
        for structured in ARGS.judge_modes.split(","):
            r = run_once(ARGS.api_base, ARGS.model, ARGS.cases, structured, ARGS.concurrency, ARGS.max_tokens)
            s, usage = r["statuses"], r["usage"]
            scored = s["passed"] + s["failed"]
            print(f"\njudge structured_output: {structured} - {ARGS.cases} cases in {r['wall']:.0f} s, exit {r['exit']}")
            print(f"  cases: {scored} scored ({s['passed']} passed, {s['failed']} failed), {s['unscored']} unscored, "
                  f"{s['error']} errored")
            print("  checks: " + ", ".join(f"{n} {k}" for k, n in sorted(r["checks"].items())))
            print("  conversations ended by: " + ", ".join(f"{k} {n}" for k, n in r["terminations"].most_common()))
            attempts = usage.get("calls", 0)
            print(f"  model calls: {attempts} ({usage.get('errors', 0)} failed); by role: " + ", ".join(
                f"{role} {t.get('calls', 0)}" for role, t in sorted((usage.get("by_role") or {}).items())))
            print("  why (reasons grouped; one example each):" if r["groups"] else "  no unscored or errored verdicts")
            for name, items in sorted(r["groups"].items(), key=lambda kv: -len(kv[1])):
                print(f"    {len(items):3d}  {name}\n         e.g. {items[0][:220]}")
            if r["stderr"] and any(word in r["stderr"] for word in ("Traceback", "Task was destroyed", "coroutine")):
                print(f"  stderr has a traceback: {r['stderr'][:500]}")
    finally:
        if server is not None:
            server.terminate()
            server.wait()
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--api-base", default="http://127.0.0.1:8765/v1")
    parser.add_argument("--model", default="openai/SmolLM2-135M-Instruct.Q4_1")
    parser.add_argument("--cases", type=int, default=12)
    parser.add_argument("--concurrency", type=int, default=2, help="-j for evalrun (the server answers one at a time)")
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--judge-modes", default="never,always", help="structured_output values to run with")
    parser.add_argument("--serve", help="serve.sh to start a server on --api-base's port (stopped after)")
    ARGS = parser.parse_args()
    raise SystemExit(main())
