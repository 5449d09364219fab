"""Benchmark: `evalrun generate` on the bundled stories and tools, measured end to end through the CLI.

    .venv/bin/python tests/bench/bench_generate.py                                  # the fake server only
    .venv/bin/python tests/bench/bench_generate.py --api-base http://127.0.0.1:8765/v1   # and a real model

Part 1, the fake OpenAI-compatible server (tests/fakes/openai_server.py) scripted per story with good and bad
generations: a good answer; prose; an unknown tool; an unknown argument; a keyword nobody could know; too few
cases; a bad answer first and a good one when asked again. For each script: the stories written and refused,
the requests sent (the retries), the written suites that `evalrun validate` accepts, and their cases that pass
against the reference agent (suites/live/hr_agent.py) and fail against a deliberately broken one (it looks up
the wrong user and answers vaguely).

Part 2 (with --api-base), a real model as the generator (/work/tools/llm/README.md serves SmolLM2-135M-Instruct
through llama.cpp): the same figures for its answers, asked twice (the second run must come from the cache and
write the same files).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.fakes.openai_server import FakeOpenAI  # noqa: E402
from tests.helpers.generate import JOHNDOE, NWATERS, story_of  # noqa: E402

BROKEN_AGENT = '''
import json

def respond(messages, context):
    return [{"role": "assistant", "content": None, "tool_calls": [{"id": "b1", "type": "function", "function": {
                "name": "get_assignment_id_hr_agent", "arguments": json.dumps({"username": "someone_else"})}}]},
            {"role": "tool", "tool_call_id": "b1", "content": "Error: no employee"},
            {"role": "assistant", "content": "I could not find anything for you."}]
'''


def good_cases(request: dict) -> list:
    return NWATERS if "nwaters" in story_of(request) else JOHNDOE


def with_call(cases: list, change) -> list:
    cases = json.loads(json.dumps(cases))
    change(cases[0]["calls"][0])
    return cases


SCRIPTS = {
    "good": lambda request, asked: {"cases": good_cases(request)},
    "prose": lambda request, asked: "Here are two great test cases for your HR agent!",
    "unknown tool": lambda request, asked: {"cases": with_call(good_cases(request),
                                                                lambda c: c.update(tool="get_employee"))},
    "unknown argument": lambda request, asked: {"cases": with_call(
        good_cases(request), lambda c: c["args"].update(employee="x"))},
    "unknowable keyword": lambda request, asked: {"cases": [
        {**good_cases(request)[0], "answer": "You are off on March 9.", "keywords": ["March 9"]},
        good_cases(request)[1]]},
    "too few cases": lambda request, asked: {"cases": good_cases(request)[:1]},
    "bad, then good when asked again": lambda request, asked: (
        "not JSON at all" if asked == 1 else {"cases": good_cases(request)}),
}


def cli(args: list[str], cwd: Path, timeout: float = 1800) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "NO_COLOR": "1", "HF_HUB_OFFLINE": "1",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run([sys.executable, "-m", "runner", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def project(folder: Path, api_base: str, model: str, max_tokens: int) -> None:
    for name in ("hr_agent.py", "hr_tools.py", "hr_stories.csv"):
        shutil.copy(REPO / "suites" / "live" / name, folder / name)
    (folder / "broken.py").write_text(BROKEN_AGENT)
    (folder / ".git").mkdir(exist_ok=True)
    (folder / "evalrun.yaml").write_text(
        f"generator: {{model: '{model}', api_base: '{api_base}', max_retries: 1, timeout_s: 600, "
        f"max_tokens: {max_tokens}, temperature: 0}}\n"
        "embeddings: {enabled: false}\n"
        "agents:\n  hr_agent: {type: python, entrypoint: 'hr_agent:respond'}\n"
        "  broken: {type: python, entrypoint: 'broken:respond'}\n")


def measure(folder: Path, per_story: int = 2) -> dict:
    started = time.perf_counter()
    done = cli(["generate", "--stories", "hr_stories.csv", "--tools", "hr_tools.py", "-n", str(per_story),
                "-o", "out"], folder)
    seconds = time.perf_counter() - started
    out = folder / "out"
    files = sorted(out.glob("*.yaml")) if out.is_dir() else []
    figures = {"exit": done.returncode, "seconds": round(seconds, 1), "written": len(files),
               "refused": sum(1 for line in done.stderr.splitlines() if ": error: story " in line),
               "reasons": [line.split("nothing written: ", 1)[-1][:160] for line in done.stderr.splitlines()
                           if ": error: story " in line],
               "digest": hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()[:12]}
    if files:
        figures["validate_exit"] = cli(["validate", "out"], folder).returncode
        for agent, key in (("hr_agent", "pass_reference"), ("broken", "fail_broken")):
            cli(["run", "out", "--agent", agent, "--output-dir", f"run-{agent}"], folder)
            report = json.loads((folder / f"run-{agent}" / "report.json").read_text())
            statuses = [case["status"] for case in report["cases"]]
            figures[key] = f"{statuses.count('passed' if agent == 'hr_agent' else 'failed')}/{len(statuses)}"
    return figures


def fake_part() -> None:
    print("== the fake server, scripted per story (2 stories, 2 cases each)")
    for name, script in SCRIPTS.items():
        with tempfile.TemporaryDirectory(prefix="bench-generate-") as tmp:
            folder = Path(tmp)

            def answer(request: dict, script=script):
                asked = (len(request["messages"]) + 1) // 2
                reply = script(request, asked)
                return reply if isinstance(reply, str) else json.dumps(reply)

            with FakeOpenAI(default=answer) as fake:
                project(folder, fake.base_url, "openai/fake-writer", 4000)
                figures = measure(folder)
                figures["requests"] = len(fake.requests)
            print(f"{name:32} {json.dumps({k: v for k, v in figures.items() if k not in ('reasons', 'digest')})}")
            for reason in figures["reasons"][:1]:
                print(f"{'':32}   refused because: {reason}")


def real_part(api_base: str, model: str, max_tokens: int, per_story: int) -> None:
    print(f"== a real model: {model} at {api_base} (max_tokens {max_tokens}, {per_story} case(s) per story)")
    with tempfile.TemporaryDirectory(prefix="bench-generate-real-") as tmp:
        folder = Path(tmp)
        project(folder, api_base, model, max_tokens)
        first = measure(folder, per_story)
        print("first run ", json.dumps(first, ensure_ascii=False))
        if not first["written"]:
            print("second run skipped: nothing was accepted, so nothing is cached to answer it")
            return
        shutil.rmtree(folder / "out", ignore_errors=True)
        again = measure(folder, per_story)
        print("second run", json.dumps({k: again[k] for k in ("exit", "seconds", "written", "digest")}),
              "(same files)" if again["digest"] == first["digest"] and again["written"] == first["written"]
              else "(DIFFERENT files)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--api-base", help="an OpenAI-compatible server to use as the generator (part 2)")
    parser.add_argument("--model", default="openai/SmolLM2-135M-Instruct.Q4_1")
    parser.add_argument("--max-tokens", type=int, default=1500)
    parser.add_argument("-n", type=int, default=2, help="cases per story for the real model")
    parser.add_argument("--skip-fake", action="store_true")
    args = parser.parse_args()
    if not args.skip_fake:
        fake_part()
    if args.api_base:
        real_part(args.api_base, args.model, args.max_tokens, args.n)


if __name__ == "__main__":
    main()
