"""Does evalrun give Agentflow's own verdicts on Agentflow's own eval files? (a script, not a pytest test)

    .venv/bin/python tests/bench/bench_agentflow_agreement.py --library-python /work/venvs/af-0101/bin/python
    .venv/bin/python tests/bench/bench_agentflow_agreement.py --configs 80 --seed 7 --keep /tmp/af-bench --show 20

Generates (seeded) eval configs and eval sets in Agentflow's shape — half written by the library's own
`EvalSet.to_file` / `EvalConfig.to_file`, half by hand with only some keys (content blocks, missing expected
answers, omitted args) — covering every match type with and without check_args, thresholds from 0.3 to 1.0, every
deterministic criterion (trajectory, tool_name_match, node_order, rouge_match, contains_keywords), `enabled: false`,
null and empty criteria; and for each case recorded actuals: as expected, with calls moved between turns, trailing
extra calls, dropped, swapped or repeated calls, changed argument types (1 / 1.0 / true / "1"), extra arguments,
reworded, partial or missing answers. The same files and actuals go two ways:
- to the library's `AgentEvaluator` (tests/bench/agentflow_library.py, run with the library's interpreter), the
  oracle: a replay graph feeds the actuals into its own TrajectoryCollector;
- to evalrun, the real CLI in a subprocess: `evalrun run FOLDERS --replay DIR`, the actuals as recordings (the
  node visits in the recording's state, where an Agentflow agent reports them).
Then the eval sets go through `evalrun convert` and the YAML is scored on the same recordings: its verdicts
must be the JSON files'; and the YAML is written back as Agentflow files (`evalrun convert --to agentflow`), on
which the library's evaluator must give its first verdicts again. It prints the agreement on case verdicts and criterion verdicts (status and score, float for float), every
disagreement with --show, and the cases where evalrun differs on purpose (a config that checks nothing: Agentflow
passes, evalrun reports unscored) apart. Exit 0 when the agreement reaches --target (default 99 %), else 1; 2 when
the comparison could not be made.
"""
from __future__ import annotations

import argparse
import copy
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(PROJECT_ROOT))
from tests.helpers.agentflow_files import (  # noqa: E402 - after the path above
    call,
    criterion,
    eval_case,
    eval_config,
    eval_set,
    invocation,
    recording,
    user_texts,
)

LIBRARY = Path(__file__).with_name("agentflow_library.py")
DETERMINISTIC = ("tool_name_match", "trajectory", "node_order", "rouge_match", "contains_keywords")
RESULT_NAMES = {"tool_trajectory_avg_score": "trajectory", "tool_name_match_score": "tool_name_match",
                "node_order_score": "node_order", "rouge_match": "rouge_match", "contains_keywords": "contains_keywords"}
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 2 / 3, 0.7, 0.75, 0.8, 0.9, 1.0)
TOOLS = ("get_weather", "to_fahrenheit", "search", "book", "cancel")
VALUES = (1, 2, 1.0, 2.5, True, False, "1", "Paris", "Oslo", None, [1, 2], {"a": 1})
WORDS = ["the", "weather", "in", "paris", "is", "sunny", "and", "warm", "today", "it", "is", "20", "degrees", "celsius", "oslo", "rain", "snow_fall", "café", "booked", "your", "flight", "cancelled", "sorry", "I", "could", "not", "find", "that"]
OFFLINE = "enable_fuzzy_matching: false\nembeddings: {enabled: false}\ncache_dir: .evalrun/cache\n"


class Broken(Exception):
    """The comparison could not be made."""


# ================================================================== generation

def random_args(rng: random.Random) -> dict:
    return {name: rng.choice(VALUES) for name in rng.sample(("city", "n", "unit", "q", "when"), rng.randint(0, 3))}


def random_text(rng: random.Random, low: int = 3, high: int = 10) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
    text = " ".join(words)
    return (text[:1].upper() + text[1:] + rng.choice((".", "!", "", "?"))) if text else text


def expected_case(rng: random.Random, eval_id: str, by_hand: bool) -> dict:
    turns = []
    for t in range(rng.choice((1, 1, 2, 2, 3))):
        calls = [(rng.choice(TOOLS), random_args(rng) if rng.random() < 0.7 else {})
                 for _ in range(rng.choice((0, 1, 1, 2, 3)))]
        answer = rng.choice((None, random_text(rng), random_text(rng), "")) if t < 2 else random_text(rng)
        nodes = ["MAIN"] * rng.randint(0, 3) if rng.random() < 0.5 else []
        user = random_text(rng, 2, 6) or "hello"
        if by_hand and rng.random() < 0.4:  # content blocks, as Agentflow's messages also come
            user = [{"type": "text", "text": user}, {"type": "image_url", "image_url": {"url": "x"}}]
        inv = invocation(user, [call(n, a) for n, a in calls], answer, nodes=tuple(nodes), invocation_id=f"{eval_id}-{t}")
        if by_hand:
            inv = _sparse_invocation(rng, inv)
        turns.append(inv)
    case = eval_case(eval_id, *turns)
    if by_hand:
        case = {k: v for k, v in case.items() if k in ("eval_id", "conversation") or rng.random() < 0.3}
    return case


def _sparse_invocation(rng: random.Random, inv: dict) -> dict:
    """An invocation written by hand: only some keys, calls without args or call_id."""
    out = {"user_content": {"role": "user", "content": inv["user_content"]["content"]}}
    if inv["expected_tool_trajectory"] or rng.random() < 0.5:
        out["expected_tool_trajectory"] = [{k: v for k, v in c.items() if k == "name" or (k == "args" and v)}
                                           for c in inv["expected_tool_trajectory"]]
    if inv["expected_node_order"]:
        out["expected_node_order"] = inv["expected_node_order"]
    answer = inv["expected_final_response"]
    if answer is not None:
        text = answer["content"]
        out["expected_final_response"] = {"role": "assistant", "content": text if rng.random() < 0.5 else
                                          [{"type": "text", "text": w} for w in text.split(" ", 1)]}
    return out


def actual_turns(rng: random.Random, case: dict) -> dict[str, list[dict]]:
    """Actual invocations of a case: as expected, and perturbed, keyed by variant name."""
    base = []
    for inv in case["conversation"]:
        calls = [{"name": c["name"], "args": copy.deepcopy(c.get("args") or {})} for c in inv.get(
            "expected_tool_trajectory") or ()]
        answer = inv.get("expected_final_response")
        text = _text(answer) if answer else random_text(rng)
        visits = ["__start__", *(inv.get("expected_node_order") or ["MAIN"])]
        base.append({"tool_calls": calls, "final_response": text, "node_visits": visits})
    variants = {"as_expected": base}
    pick = rng.sample(PERTURBATIONS, 5)
    for name in pick:
        turns = copy.deepcopy(base)
        if PERTURBATIONS_FN[name](rng, turns) is not False:
            variants[name] = turns
    return variants


def _text(message: dict | None) -> str:
    if not message:
        return ""
    content = message.get("content")
    return content if isinstance(content, str) else " ".join(b["text"] for b in content if "text" in b)


def _all_calls(turns: list[dict]) -> list[tuple[int, int]]:
    return [(t, i) for t, turn in enumerate(turns) for i in range(len(turn["tool_calls"]))]


def moved_between_turns(rng, turns):
    if len(turns) < 2 or not _all_calls(turns):
        return False
    t, i = rng.choice(_all_calls(turns))
    moved = turns[t]["tool_calls"].pop(i)
    target = rng.choice([k for k in range(len(turns)) if k != t])
    turns[target]["tool_calls"].insert(rng.randint(0, len(turns[target]["tool_calls"])), moved)


def trailing_extra(rng, turns):
    turns[-1]["tool_calls"] += [{"name": rng.choice(TOOLS), "args": random_args(rng)} for _ in range(rng.randint(1, 2))]


def dropped(rng, turns):
    if not _all_calls(turns):
        return False
    t, i = rng.choice(_all_calls(turns))
    del turns[t]["tool_calls"][i]


def swapped(rng, turns):
    for turn in turns:
        if len(turn["tool_calls"]) >= 2:
            turn["tool_calls"][0], turn["tool_calls"][1] = turn["tool_calls"][1], turn["tool_calls"][0]
            return None
    return False


def repeated(rng, turns):
    if not _all_calls(turns):
        return False
    t, i = rng.choice(_all_calls(turns))
    turns[t]["tool_calls"].insert(i, copy.deepcopy(turns[t]["tool_calls"][i]))


def changed_argument(rng, turns):
    with_args = [(t, i) for t, i in _all_calls(turns) if turns[t]["tool_calls"][i]["args"]]
    if not with_args:
        return False
    t, i = rng.choice(with_args)
    args = turns[t]["tool_calls"][i]["args"]
    key = rng.choice(sorted(args))
    value = args[key]
    # a value equal in Python but of another type: keyed by type too, since 1, 1.0 and True are one dict key
    retyped = {(int, 1): 1.0, (float, 1.0): True, (bool, True): 1, (int, 2): "2", (str, "Paris"): "paris"}
    args[key] = retyped.get((type(value), value), "changed") \
        if isinstance(value, (int, float, str, bool)) else "changed"


def extra_argument(rng, turns):
    if not _all_calls(turns):
        return False
    t, i = rng.choice(_all_calls(turns))
    turns[t]["tool_calls"][i]["args"]["extra"] = 1


def reworded(rng, turns):
    words = turns[-1]["final_response"].split()
    rng.shuffle(words)
    turns[-1]["final_response"] = " ".join(words[: max(1, len(words) - rng.randint(0, 3))]) + " " + random_text(rng, 0, 3)


def silent_last_turn(rng, turns):
    turns[-1]["final_response"] = ""


def other_tool(rng, turns):
    if not _all_calls(turns):
        return False
    t, i = rng.choice(_all_calls(turns))
    turns[t]["tool_calls"][i]["name"] = rng.choice([n for n in TOOLS if n != turns[t]["tool_calls"][i]["name"]])


def other_nodes(rng, turns):
    turns[rng.randrange(len(turns))]["node_visits"] += ["TOOL_SUMMARY", "MAIN"][: rng.randint(1, 2)]


PERTURBATIONS_FN = {f.__name__: f for f in (moved_between_turns, trailing_extra, dropped, swapped, repeated,
                                            changed_argument, extra_argument, reworded, silent_last_turn, other_tool,
                                            other_nodes)}
PERTURBATIONS = tuple(PERTURBATIONS_FN)


def random_config(rng: random.Random, index: int, by_hand: bool) -> dict:
    if index % 25 == 3:
        return {"criteria": {}} if by_hand else eval_config()
    chosen = rng.sample(DETERMINISTIC, rng.randint(1, len(DETERMINISTIC)))
    criteria: dict[str, Any] = {}
    for name in chosen:
        options: dict[str, Any] = {"threshold": rng.choice(THRESHOLDS)}
        if name in ("trajectory", "node_order"):
            options["match_type"] = rng.choice(("EXACT", "IN_ORDER", "ANY_ORDER"))
        if name == "trajectory":
            options["check_args"] = rng.random() < 0.5
        if name == "contains_keywords":
            options["keywords"] = rng.sample(WORDS, rng.randint(0, 3))
        if rng.random() < 0.08:
            options["enabled"] = False
        criteria[name] = options if by_hand else criterion(**options)
    if by_hand:
        return {"criteria": {**criteria, **({"llm_judge": None} if rng.random() < 0.5 else {})}}
    return eval_config(**criteria)


def generate(rng: random.Random, configs: int, cases_per_config: int, work: Path) -> list[dict]:
    jobs = []
    for k in range(configs):
        by_hand = k % 2 == 1
        folder = work / "sets" / f"c{k:03d}"
        cases = [expected_case(rng, f"c{k:03d}-{j}", by_hand) for j in range(cases_per_config)]
        variants = {case["eval_id"]: actual_turns(rng, case) for case in cases}
        # one eval case per (case, variant): the same expectations against each actual conversation
        expanded, actuals = [], {}
        for case in cases:
            for name, turns in variants[case["eval_id"]].items():
                copy_case = copy.deepcopy(case)
                copy_case["eval_id"] = f"{case['eval_id']}-{name}"
                expanded.append(copy_case)
                actuals[copy_case["eval_id"]] = turns
        data = eval_set(f"set{k:03d}", *expanded)
        config = random_config(rng, k, by_hand)
        job = {"key": f"c{k:03d}", "folder": str(folder), "eval_set": data, "config": config, "to_file": not by_hand,
               "actuals": actuals}
        if by_hand:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "cases.evalset.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
            (folder / "eval_config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
        jobs.append(job)
    return jobs


def coverage(jobs: list[dict]) -> str:
    """What the generated files exercise, counted: criteria by option, thresholds, actual conversations."""
    from collections import Counter

    seen: Counter = Counter()
    thresholds = set()
    for job in jobs:
        criteria = job["config"].get("criteria") or {}
        for name, options in criteria.items():
            if not options:
                continue
            thresholds.add(round(options.get("threshold", 0.8), 3))
            extra = (f" {options.get('match_type', 'EXACT')}" if name in ("trajectory", "node_order") else "") + \
                (f" check_args={bool(options.get('check_args'))}" if name == "trajectory" else "")
            seen[name + extra + (" (enabled: false)" if options.get("enabled") is False else "")] += 1
        if not any(criteria.values()):
            seen["no criterion on"] += 1
    variants = Counter(case["eval_id"].split("-", 2)[2] for job in jobs for case in job["eval_set"]["eval_cases"])
    turns = Counter(len(case["conversation"]) for job in jobs for case in job["eval_set"]["eval_cases"])
    return ("configs per criterion: " + ", ".join(f"{k} {v}" for k, v in sorted(seen.items())) +
            f"\nthresholds: {', '.join(f'{t:g}' for t in sorted(thresholds))}\nactual conversations: " +
            ", ".join(f"{k} {v}" for k, v in sorted(variants.items())) +
            f"\ncases by turns: {', '.join(f'{k} turn(s) {v}' for k, v in sorted(turns.items()))}")


# ================================================================== the two sides

def library_side(python: str, jobs: list[dict], work: Path) -> list[dict]:
    jobs_file = work / "jobs.json"
    jobs_file.write_text(json.dumps(jobs), encoding="utf-8")
    done = subprocess.run([python, str(LIBRARY), "write", str(jobs_file)], capture_output=True, text=True)
    if done.returncode != 0:
        raise Broken(f"the library could not write the files:\n{done.stderr[-3000:]}")
    done = subprocess.run([python, str(LIBRARY), "oracle", str(jobs_file)], capture_output=True, text=True)
    if done.returncode != 0:
        raise Broken(f"the library's evaluator failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def evalrun_side(jobs: list[dict], work: Path) -> dict[str, dict]:
    replay = work / "replay"
    shutil.rmtree(replay, ignore_errors=True)
    replay.mkdir(parents=True)
    for job in jobs:
        data = json.loads((Path(job["folder"]) / "cases.evalset.json").read_text(encoding="utf-8"))
        for case in data["eval_cases"]:
            rec = recording(user_texts(case), job["actuals"][case["eval_id"]])
            (replay / f"{case['eval_id']}.json").write_text(json.dumps(rec), encoding="utf-8")
    (work / "evalrun.yaml").write_text(OFFLINE, encoding="utf-8")
    return run_evalrun(work / "sets", work, work / "out")


def converted_side(work: Path) -> dict[str, dict]:
    """The same eval sets after `evalrun convert` (YAML), scored on the same recordings."""
    target = work / "converted"
    shutil.rmtree(target, ignore_errors=True)
    done = subprocess.run([sys.executable, "-m", "runner", "convert", str(work / "sets"), "-o", str(target)],
                          cwd=PROJECT_ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise Broken(f"evalrun convert exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return run_evalrun(target, work, work / "out-converted")


def round_trip(python: str, jobs: list[dict], oracle: list[dict], work: Path) -> list[str]:
    """The converted YAML written back as Agentflow files (`evalrun convert --to agentflow`): the library's evaluator
    must give them the verdicts it gave the originals."""
    back = work / "back"
    shutil.rmtree(back, ignore_errors=True)
    done = subprocess.run([sys.executable, "-m", "runner", "convert", str(work / "converted"), "--to", "agentflow", "-o",
                           str(back)], cwd=PROJECT_ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise Broken(f"evalrun convert --to agentflow exited {done.returncode}:\n{done.stderr[-3000:]}")
    again = [{**job, "key": job["key"], "folder": str(back / Path(job["folder"]).name / "cases"), "to_file": False}
             for job in jobs]
    jobs_file = work / "jobs-back.json"
    jobs_file.write_text(json.dumps(again), encoding="utf-8")
    done = subprocess.run([python, str(LIBRARY), "oracle", str(jobs_file)], capture_output=True, text=True)
    if done.returncode != 0:
        raise Broken(f"the library's evaluator failed on the files written back:\n{done.stderr[-3000:]}")
    first = {r["key"]: r for r in oracle}
    return [f"{r['key']}: {r.get('refused') or 'different verdicts'}" for r in json.loads(done.stdout)
            if r != first[r["key"]]]


def same_verdicts(ours: dict[str, dict], converted: dict[str, dict]) -> list[str]:
    def verdicts(case: dict) -> tuple:
        return case["status"], [(c["name"], c["status"], c.get("score")) for c in case.get("checks", [])]

    return [f"{case_id}: converted {verdicts(converted.get(case_id, {'status': 'missing'}))} vs {verdicts(case)}"
            for case_id, case in ours.items() if case_id not in converted or verdicts(converted[case_id]) != verdicts(case)]


def run_evalrun(target: Path, work: Path, out: Path) -> dict[str, dict]:
    replay = work / "replay"
    command = [sys.executable, "-m", "runner", "run", str(target), "--replay", str(replay), "--config",
               str(work / "evalrun.yaml"), "--output-dir", str(out), "--quiet"]
    done = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True)
    if done.returncode not in (0, 1, 3) or not (out / "report.json").is_file():
        raise Broken(f"evalrun exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return {case["id"]: case for case in report["cases"]}


# ================================================================== comparison

def compare(jobs: list[dict], oracle: list[dict], ours: dict[str, dict], show: int) -> dict[str, Any]:
    tally = {"cases": 0, "cases_agree": 0, "criteria": 0, "criteria_agree": 0, "on_purpose": 0, "refused": 0}
    shown: list[str] = []
    for result in oracle:
        if "refused" in result:
            tally["refused"] += 1
            shown.append(f"{result['key']}: the library refused the files: {result['refused'][:200]}")
            continue
        for eval_id, theirs in result["cases"].items():
            mine = ours.get(eval_id)
            if mine is None:
                tally["cases"] += 1
                shown.append(f"{eval_id}: not in evalrun's report")
                continue
            if not theirs["criteria"]:  # nothing checked: Agentflow passes, evalrun says unscored (on purpose)
                tally["on_purpose"] += 1
                if mine["status"] != "unscored":
                    shown.append(f"{eval_id}: config checks nothing, evalrun said {mine['status']}")
                continue
            tally["cases"] += 1
            mine_passed = mine["status"] == "passed"
            if mine_passed == theirs["passed"] and mine["status"] in ("passed", "failed"):
                tally["cases_agree"] += 1
            else:
                shown.append(f"{eval_id}: case Agentflow {'passed' if theirs['passed'] else 'failed'}, evalrun "
                             f"{mine['status']} {mine.get('unscored_reason') or ''}")
            checks = {c["name"]: c for c in mine.get("checks", [])}
            for crit in theirs["criteria"]:
                name = RESULT_NAMES.get(crit["criterion"], crit["criterion"])
                tally["criteria"] += 1
                check = checks.get(name)
                agree = check is not None and check["status"] == ("passed" if crit["passed"] else "failed") and \
                    check.get("score") == crit["score"]
                if agree:
                    tally["criteria_agree"] += 1
                else:
                    shown.append(f"{eval_id}: {name} Agentflow {crit['score']!r} {crit['passed']} vs evalrun "
                                 f"{check and check['status']} {check and check.get('score')!r}: "
                                 f"{check and check.get('explanation', '')[:200]}")
    tally["disagreements"] = shown[:show] if show else []
    tally["disagreement_count"] = len(shown)
    return tally


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--library-python", default="/work/venvs/af-0101/bin/python",
                        help="an interpreter with 10xscale-agentflow (0.10.1) or 10xgraph installed")
    parser.add_argument("--configs", type=int, default=60, help="eval configs (each with its own eval set)")
    parser.add_argument("--cases", type=int, default=4, help="expected cases per eval set (each played up to 6 ways)")
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument("--show", type=int, default=10, help="print this many disagreements")
    parser.add_argument("--target", type=float, default=99.0, help="the agreement (%%) to reach")
    parser.add_argument("--no-convert", action="store_true", help="skip scoring the `evalrun convert` YAML too")
    args = parser.parse_args(argv)
    if not Path(args.library_python).exists():
        print(f"no interpreter at {args.library_python}: make one with the library (see tests/bench/README.md)")
        return 2
    work = args.keep or Path(tempfile.mkdtemp(prefix="af-bench-"))
    shutil.rmtree(work / "sets", ignore_errors=True)
    started = time.monotonic()
    try:
        jobs = generate(random.Random(args.seed), args.configs, args.cases, work)
        n_cases = sum(len(j["eval_set"]["eval_cases"]) for j in jobs)
        print(f"{len(jobs)} eval configs and sets ({sum(j['to_file'] for j in jobs)} written by the library's to_file, "
              f"the others by hand), {n_cases} eval cases (seed {args.seed})")
        print(coverage(jobs))
        oracle = library_side(args.library_python, jobs, work)
        ours = evalrun_side(jobs, work)
        tally = compare(jobs, oracle, ours, args.show)
        converted_differs = None if args.no_convert else same_verdicts(ours, converted_side(work))
        back_differs = None if args.no_convert else round_trip(args.library_python, jobs, oracle, work)
    except Broken as exc:
        print(f"the comparison could not be made: {exc}")
        return 2
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    case_pct = 100 * tally["cases_agree"] / max(tally["cases"], 1)
    crit_pct = 100 * tally["criteria_agree"] / max(tally["criteria"], 1)
    print(f"case verdicts: {tally['cases_agree']}/{tally['cases']} agree ({case_pct:.2f} %)")
    print(f"criterion verdicts (status and score): {tally['criteria_agree']}/{tally['criteria']} agree ({crit_pct:.2f} %)")
    print(f"on purpose: {tally['on_purpose']} case(s) under a config that checks nothing (Agentflow passes them, "
          "evalrun reports unscored)")
    if tally["refused"]:
        print(f"{tally['refused']} config(s) refused by the library")
    for line in tally["disagreements"]:
        print(f"  {line}")
    if converted_differs is not None:
        print(f"after `evalrun convert`: {len(ours) - len(converted_differs)}/{len(ours)} cases give the same verdicts "
              "and scores as the JSON files")
        for line in converted_differs[: args.show]:
            print(f"  {line}")
    if back_differs is not None:
        print(f"written back with `evalrun convert --to agentflow`: the library gives {len(jobs) - len(back_differs)}/"
              f"{len(jobs)} eval sets the verdicts it gave the originals")
        for line in back_differs[: args.show]:
            print(f"  {line}")
    print(f"{time.monotonic() - started:.1f} s")
    return 0 if min(case_pct, crit_pct) >= args.target and not tally["refused"] and not converted_differs and not back_differs else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
