"""Benchmark: `evalrun validate` on 1,000 suite files, and `evalrun --help`.

    .venv/bin/python tests/bench/bench_validate.py [--files 1000] [--runs 5] [--profile]

Targets: validate <= 2 s for 1,000 files, --help <= 0.3 s (medians, wall clock, whole process).
Not collected by pytest (the name has no test_ prefix). --profile prints where validate's time goes.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VALIDATE_TARGET_S = 2.0
HELP_TARGET_S = 0.3


def _tool_goal(rng: random.Random, name: str) -> dict:
    args = {"username": rng.choice(["nwaters", "jdoe", "akim"]), "start_date": f"2025-0{rng.randint(1, 9)}-0{rng.randint(1, 9)}"}
    if rng.random() < 0.4:
        args["address"] = {"zip": f"{rng.randint(10000, 99999)}", "city": rng.choice(["Paris", "Lagos", "Lima"])}
    goal = {"type": "tool_call", "name": name, "tool_name": f"{name}_tool", "args": args}
    matching = {}
    if rng.random() < 0.5:
        matching["start_date"] = "fuzzy"
    if "address" in args and rng.random() < 0.5:
        matching["address.zip"] = {"regex": "^\\d{5}$"}
    if rng.random() < 0.2:
        matching["username"] = {"one_of": [args["username"], args["username"].upper()]}
    if matching:
        goal["arg_matching"] = matching
    return goal


def _case(rng: random.Random, index: int, case_id: str) -> dict:
    names = [f"step_{index}_{i}" for i in range(rng.randint(1, 4))]
    goals = [_tool_goal(rng, n) for n in names]
    goals.append({"type": "text", "name": "summarize", "response": f"Here is answer {index}.",
                  "keywords": [str(index)]})
    order = {a: [b] for a, b in zip(names, names[1:] + ["summarize"], strict=True)}
    return {"id": case_id, "description": f"Generated case {index}", "tags": rng.sample(["hr", "smoke", "a", "b"], 2),
            "story": f"I am user {index} and I want something done.", "starting_sentence": "Hello, I need help.",
            "goals": order, "goal_details": goals}


def _yaml(value, indent: int = 0) -> str:
    """A small YAML writer (block style), so the files look hand-written."""
    pad = "  " * indent
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            if isinstance(item, (dict, list)) and item:
                lines.append(f"{pad}{key}:\n{_yaml(item, indent + 1)}")
            else:
                lines.append(f"{pad}{key}: {json.dumps(item)}")
        return "\n".join(lines)
    if isinstance(value, list):
        lines = []
        for item in value:
            if isinstance(item, dict):
                body = _yaml(item, indent + 1)
                lines.append(f"{pad}- {body.lstrip()}")
            else:
                lines.append(f"{pad}- {json.dumps(item)}")
        return "\n".join(lines)
    return pad + json.dumps(value)


def generate(folder: Path, count: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    made = 0
    while made < count:
        sub = folder / f"area{made % 20}"
        sub.mkdir(parents=True, exist_ok=True)
        kind = made % 4
        if kind == 0:  # a JSON dataset, as watsonx writes it
            (sub / f"s{made}.json").write_text(json.dumps(_case(rng, made, f"case-{made}"), indent=4) + "\n", encoding="utf-8")
        elif kind == 1:  # a multi-case file with defaults
            cases = [_case(rng, made, f"case-{made}-{i}") for i in range(rng.randint(2, 4))]
            for c in cases:
                c.pop("tags")
            data = {"tags": ["multi"], "agent": "hr_agent", "forbid_extra_calls": ["cancel_*"], "cases": cases}
            (sub / f"s{made}.yaml").write_text("# yaml-language-server: $schema=../schemas/suite.schema.json\n"
                                               + _yaml(data) + "\n", encoding="utf-8")
        else:  # one case in block YAML
            (sub / f"s{made}.yaml").write_text("# yaml-language-server: $schema=../schemas/suite.schema.json\n"
                                               + _yaml(_case(rng, made, f"case-{made}")) + "\n", encoding="utf-8")
        made += 1


def _command() -> list[str]:
    script = Path(sys.executable).with_name("evalrun")
    return [str(script)] if script.exists() else [sys.executable, "-m", "runner"]


def _time(args: list[str], cwd: Path, runs: int, expect: int = 0) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
        times.append(time.perf_counter() - started)
        if done.returncode != expect:
            raise SystemExit(f"{' '.join(args)} exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--help-runs", type=int, default=10)
    parser.add_argument("--profile", action="store_true", help="print a cProfile of one in-process validate")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        suites = root / "suites"
        generate(suites, options.files)
        command = _command()
        validate = _time([*command, "validate", "suites"], root, options.runs)
        help_times = _time([*command, "--help"], root, options.help_runs)
        v, h = statistics.median(validate), statistics.median(help_times)
        print(f"evalrun validate ({options.files} files): median {v:.3f} s over {options.runs} runs "
              f"(min {min(validate):.3f}, max {max(validate):.3f}); target <= {VALIDATE_TARGET_S} s "
              f"{'OK' if v <= VALIDATE_TARGET_S else 'SLOW'}")
        print(f"evalrun --help: median {h:.3f} s over {options.help_runs} runs "
              f"(min {min(help_times):.3f}, max {max(help_times):.3f}); target <= {HELP_TARGET_S} s "
              f"{'OK' if h <= HELP_TARGET_S else 'SLOW'}")
        if options.profile:
            import cProfile
            import os
            import pstats

            from runner.api import validate as validate_in_process

            os.chdir(root)
            profiler = cProfile.Profile()
            profiler.enable()
            problems = validate_in_process([Path("suites")])
            profiler.disable()
            assert not problems, problems[:5]
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
        return 0 if v <= VALIDATE_TARGET_S and h <= HELP_TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
