"""Does evalrun give Google ADK 2.13's verdicts on ADK's own eval files? (a script, not a pytest test)

    .venv/bin/python tests/bench/adk_agreement.py ADK_FILES_DIR... --adk-python /work/tools/adk/venv/bin/python
    .venv/bin/python tests/bench/adk_agreement.py adk-python/tests/integration/fixture adk-samples/python/agents \\
        ../shared/data/agentflow --keep /tmp/adk-agreement --show-disagreements

The folders hold ADK eval files as their repositories have them (google/adk-python's
tests/integration/fixture/, google/adk-samples' python/agents/*/eval/, with their test_config.json) or the
Agentflow eval set; nothing is copied into this project. Every `*.test.json` and `*.evalset.json` found is
run unmodified.

Each case's recorded expected conversation is replayed as the agent's actual conversation, as it is and
perturbed (a changed argument, a dropped, swapped, repeated or extra call, a number sent as text, a
reworded, shorter or missing answer...). The same actual invocations go two ways:
- to evalrun, as recordings (`evalrun run FOLDERS --replay DIR`, the real CLI in a subprocess), which reads
  the eval files and their configs itself and scores `tool_trajectory_avg_score` and `response_match_score`
  turn by turn;
- to ADK 2.13's own evaluators (TrajectoryEvaluator, and RougeEvaluator as ResponseEvaluator builds it for
  response_match_score), with the expected invocations ADK's own loaders read from the same files (EvalSet;
  the older list of turns migrated as AgentEvaluator does; the older session lists as `adk eval` reads them)
  and the metrics ADK's config reader makes of the same config.
Every run is repeated under each file's own config and three more (IN_ORDER, ANY_ORDER, ignore_args), named
with --eval-config. The script prints, per criterion and per case, how many verdicts agree, and every score
that differs. With --convert (default), each file is also converted with `evalrun convert` and the YAML is
scored on the same recordings: its verdicts must be the original's.

The ADK half runs in an interpreter that has google-adk 2.13 (`--adk-python`, or this one when it can import
google.adk: `pip install -c .ci/constraints.txt -e '.[bench]'`). Exit status: 0 when every verdict agrees, 1 when some do not, 2 when
the comparison could not be made.
"""
from __future__ import annotations

import argparse
import copy
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parents[2]
EVAL_SUFFIXES = (".test.json", ".evalset.json")
COMPARED = ("tool_trajectory_avg_score", "response_match_score")  # the criteria ADK computes locally
EXTRA_CONFIGS = {
    "in_order": {"criteria": {"tool_trajectory_avg_score": {"threshold": 0.5, "match_type": "IN_ORDER"},
                              "response_match_score": 0.45}},
    "any_order": {"criteria": {"tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "any-order"},
                               "response_match_score": {"threshold": 0.6}}},
    "ignore_args": {"criteria": {"tool_trajectory_avg_score": {"threshold": 0.75, "ignore_args": True},
                                 "response_match_score": 0.3}},
}
COMPARED_IDS: set[str] = set()  # the cases compared (a conversation_scenario case has no recording to replay)
OFFLINE_CONFIG = "enable_fuzzy_matching: false\nembeddings: {enabled: false}\ncache_dir: .evalrun/cache\n"


class Broken(Exception):
    """The comparison could not be made."""


# ================================================================== the actual conversations

def perturbations(turns: list[dict]) -> dict[str, list[dict]]:
    """Variants of a case's expected turns [{user, calls: [(name, args)], answer}], each an actual conversation."""
    variants = {"as_expected": copy.deepcopy(turns)}

    def variant(name, change):
        turns_copy = copy.deepcopy(turns)
        if change(turns_copy) is not False:
            variants[name] = turns_copy

    with_calls = [t for t in turns if t["calls"]]

    def changed_argument(ts):
        for t in ts:
            for call in t["calls"]:
                if call[1]:
                    key = next(iter(call[1]))
                    call[1][key] = _changed(call[1][key])
                    return None
        if not any(t["calls"] for t in ts):
            return False
        first = next(t for t in ts if t["calls"])
        first["calls"][0] = (first["calls"][0][0], {"unexpected": 1})
        return None

    def text_case(ts):
        for t in ts:
            for call in t["calls"]:
                for key, value in call[1].items():
                    if isinstance(value, str) and value.lower() != value.upper():
                        call[1][key] = value.swapcase()
                        return None
        return False

    def number_as_text(ts):
        for t in ts:
            for call in t["calls"]:
                for key, value in call[1].items():
                    if isinstance(value, (int, float)) and not isinstance(value, bool):
                        call[1][key] = str(value)
                        return None
        return False

    def int_as_float(ts):
        for t in ts:
            for call in t["calls"]:
                for key, value in call[1].items():
                    if isinstance(value, int) and not isinstance(value, bool):
                        call[1][key] = float(value)
                        return None
        return False

    def dropped_call(ts):
        if not with_calls:
            return False
        busiest = max(ts, key=lambda t: len(t["calls"]))
        busiest["calls"].pop()
        return None

    def swapped_calls(ts):
        for t in ts:
            if len(t["calls"]) >= 2 and t["calls"][0] != t["calls"][1]:
                t["calls"][0], t["calls"][1] = t["calls"][1], t["calls"][0]
                return None
        holders = [t for t in ts if t["calls"]]
        if len(holders) >= 2:
            holders[0]["calls"], holders[1]["calls"] = holders[1]["calls"], holders[0]["calls"]
            return None
        return False

    def extra_call(ts):
        target = next((t for t in ts if t["calls"]), ts[0])
        target["calls"].append(("lookup_notes", {"query": "anything else"}))

    def repeated_call(ts):
        target = next((t for t in ts if t["calls"]), None)
        if target is None:
            return False
        target["calls"].insert(0, copy.deepcopy(target["calls"][0]))
        return None

    def reworded(ts):
        for t in ts:
            t["answer"] = _reworded(t["answer"])

    def shorter(ts):
        for t in ts:
            words = t["answer"].split()
            t["answer"] = " ".join(words[: max(1, math.ceil(len(words) / 3))]) if words else ""

    def silent_last_turn(ts):
        ts[-1]["answer"] = ""

    def mixed(ts):
        last = next((t for t in reversed(ts) if t["calls"]), None)
        if last is not None and last["calls"][-1][1]:
            key = sorted(last["calls"][-1][1])[-1]
            last["calls"][-1][1][key] = _changed(last["calls"][-1][1][key])
        ts[0]["answer"] = " ".join(ts[0]["answer"].split()[:4])

    for name, change in [("changed_argument", changed_argument), ("text_case_changed", text_case),
                         ("number_as_text", number_as_text), ("int_as_float", int_as_float),
                         ("dropped_call", dropped_call), ("swapped_calls", swapped_calls), ("extra_call", extra_call),
                         ("repeated_call", repeated_call), ("reworded_answer", reworded), ("shorter_answer", shorter),
                         ("silent_last_turn", silent_last_turn), ("mixed", mixed)]:
        variant(name, change)
    return variants


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value + 0.5
    if isinstance(value, str):
        return value + " (edited)"
    if isinstance(value, list):
        return value[:-1] if value else ["x"]
    if isinstance(value, dict):
        return {**value, "extra": 1}
    return "x"


_SYNONYMS = {"the": "this", "is": "seems", "are": "seem", "currently": "right now", "i": "we", "you": "y'all",
             "can": "could", "weather": "forecast", "temperature": "temp", "have": "got", "will": "shall",
             "your": "the", "a": "one", "and": "plus", "with": "alongside", "of": "from"}


def _reworded(text: str) -> str:
    if not text:
        return "I am not sure."
    words = [_SYNONYMS.get(w.lower(), w) for w in text.split()]
    return "Sure! " + " ".join(words)


def recording(turns: list[dict]) -> list[dict]:
    """An actual conversation as OpenAI-style messages: one assistant message per call, then its result."""
    messages: list[dict] = []
    n = 0
    for turn in turns:
        messages.append({"role": "user", "content": turn["user"]})
        for name, args in turn["calls"]:
            n += 1
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]})
            messages.append({"role": "tool", "tool_call_id": f"call_{n}", "content": json.dumps({"ok": True})})
        if turn["answer"]:
            messages.append({"role": "assistant", "content": turn["answer"]})
    return messages


# ================================================================== the evalrun half

def find_eval_files(roots: list[Path]) -> list[Path]:
    found = []
    for root in roots:
        if root.is_file():
            found.append(root.resolve())
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            found += [Path(dirpath, f).resolve() for f in sorted(filenames) if f.endswith(EVAL_SUFFIXES)]
    return found


def load_cases(roots: list[Path]) -> list[dict]:
    """Every case evalrun reads from the roots: its file, its place in the file, its id and expected turns."""
    sys.path.insert(0, str(PROJECT_ROOT))
    from runner.suite.load import load_suites

    loaded = load_suites(roots)
    errors = [str(d) for d in loaded.diagnostics if d.severity == "error"]
    if errors:
        raise Broken("evalrun cannot read the eval files:\n  " + "\n  ".join(errors[:20]))
    cases, index_in_file, scenarios = [], Counter(), 0
    for case in loaded.cases:
        path = (Path.cwd() / case.source.path).resolve()
        index_in_file[path] += 1
        if not case.turns:  # a conversation_scenario: no expected conversation, nothing ADK's evaluators compare
            scenarios += 1
            continue
        turns = [{"user": t.user, "calls": [(c.tool_name, copy.deepcopy(c.args or {})) for c in t.calls or ()],
                  "answer": t.response or ""} for t in case.turns]
        cases.append({"file": str(path), "index": index_in_file[path] - 1, "id": case.id, "turns": turns})
    if scenarios:
        print(f"{scenarios} conversation_scenario case(s) left out: they hold no expected conversation to compare")
    return cases


def config_of(file: str, named: Path | None) -> str | None:
    if named is not None:
        return str(named)
    for name in ("test_config.json", "eval_config.json"):
        candidate = Path(file).parent / name
        if candidate.is_file():
            return str(candidate)
    return None


def run_evalrun(paths: list[Path], replay: Path, out: Path, work: Path, eval_config: Path | None) -> dict:
    """{case id: {criterion: (status, score, explanation)}} from one run of the real CLI."""
    command = [sys.executable, "-m", "runner", "run", *map(str, paths), "--replay", str(replay), "--config",
               str(work / "evalrun.yaml"), "--output-dir", str(out), "--quiet"]
    if eval_config is not None:
        command += ["--eval-config", str(eval_config)]
    done = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True)
    report_path = out / "report.json"
    if done.returncode not in (0, 1, 3) or not report_path.is_file():
        raise Broken(f"evalrun exited {done.returncode}: {' '.join(command)}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    report = json.loads(report_path.read_text(encoding="utf-8"))
    found = {}
    for case in report["cases"]:
        if case["status"] == "error" and case["id"] in COMPARED_IDS:
            raise Broken(f"case {case['id']} ended in error: {case.get('error')}")
        found[case["id"]] = {c["type"]: (c["status"], c.get("score"), c.get("explanation", ""))
                                     for c in case.get("checks", []) if c["type"] in COMPARED}
    return found


# ================================================================== the ADK half (runs where google.adk imports)

def adk_side(jobs: list[dict]) -> list[dict]:
    """ADK 2.13's verdicts: for each job (file, case index, config, actual invocations per variant). Only what
    google-adk itself needs: its loaders, its config reader and the two evaluators (no Vertex AI, no pandas)."""
    import logging

    logging.disable(logging.CRITICAL)
    from google.adk.evaluation.eval_case import Invocation, InvocationEvent, InvocationEvents
    from google.adk.evaluation.eval_config import get_eval_metrics_from_config, get_evaluation_criteria_or_default
    from google.adk.evaluation.eval_set import EvalSet
    from google.adk.evaluation.final_response_match_v1 import RougeEvaluator
    from google.adk.evaluation.local_eval_sets_manager import (
        convert_eval_set_to_pydantic_schema,
        load_eval_set_from_file,
    )
    from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator
    from google.genai import types as gt

    evaluators = {"tool_trajectory_avg_score": lambda m: TrajectoryEvaluator(eval_metric=m),
                  "response_match_score": lambda m: RougeEvaluator(m)}  # what ResponseEvaluator builds for it

    def expected_cases(file: str) -> list:
        text = Path(file).read_text(encoding="utf-8")
        data = json.loads(text)
        if isinstance(data, dict):
            return EvalSet.model_validate(_agentflow_as_adk(data) if _agentflow(data) else data).eval_cases
        if data and "data" in data[0]:  # the older list of sessions: what `adk eval` reads
            return load_eval_set_from_file(file, "bench").eval_cases
        # the older list of turns, as AgentEvaluator._get_eval_set_from_old_format migrates it
        return convert_eval_set_to_pydantic_schema("bench", [{"name": file, "data": data, "initial_session": {}}]).eval_cases

    def actual(turns: list[dict]) -> list:
        invocations = []
        for turn in turns:
            events = [InvocationEvent(author="agent", content=gt.Content(role="model", parts=[
                gt.Part(function_call=gt.FunctionCall(name=name, args=args))])) for name, args in turn["calls"]]
            final = gt.Content(role="model", parts=[gt.Part(text=turn["answer"])]) if turn["answer"] else None
            invocations.append(Invocation(user_content=gt.Content(role="user", parts=[gt.Part(text=turn["user"])]),
                                          final_response=final,
                                          intermediate_data=InvocationEvents(invocation_events=events)))
        return invocations

    results = []
    for job in jobs:
        config = get_evaluation_criteria_or_default(job["config"])
        expected = expected_cases(job["file"])[job["index"]].conversation
        metrics = [m for m in get_eval_metrics_from_config(config) if m.metric_name in COMPARED]
        verdicts = {}
        for name, turns in job["variants"].items():
            verdicts[name] = {}
            for metric in metrics:
                result = evaluators[metric.metric_name](metric).evaluate_invocations(actual(turns), expected)
                verdicts[name][metric.metric_name] = (result.overall_eval_status.name, result.overall_score)
        results.append({"key": job["key"], "verdicts": verdicts})
    return results


def _agentflow(data: dict) -> bool:
    return any("expected_tool_trajectory" in inv or "expected_final_response" in inv
               for case in data.get("eval_cases", []) for inv in case.get("conversation") or [])


def _agentflow_as_adk(data: dict) -> dict:
    """The Agentflow eval set in ADK's EvalSet shape (the mapping evalrun reads it with)."""
    def text(message):
        content = (message or {}).get("content")
        if isinstance(content, str):
            return content
        return "\n".join(b.get("text") or "" for b in content or [] if b.get("type") == "text")

    cases = []
    for case in data["eval_cases"]:
        conversation = [{"invocation_id": inv.get("invocation_id", ""),
                         "user_content": {"role": "user", "parts": [{"text": text(inv["user_content"])}]},
                         "final_response": ({"role": "model", "parts": [{"text": text(inv["expected_final_response"])}]}
                                            if inv.get("expected_final_response") else None),
                         "intermediate_data": {"tool_uses": [{"name": c["name"], "args": c.get("args", {})}
                                                             for c in inv.get("expected_tool_trajectory") or []]}}
                        for inv in case["conversation"]]
        cases.append({"eval_id": case["eval_id"], "conversation": conversation,
                      "session_input": case.get("session_input")})
    return {"eval_set_id": data["eval_set_id"], "eval_cases": cases}


def run_adk(jobs: list[dict], adk_python: str | None, work: Path) -> list[dict]:
    try:
        import google.adk  # noqa: F401 - the bench extra installs it into this interpreter
        if adk_python is None:
            return adk_side(jobs)
    except ImportError:
        if adk_python is None:
            raise Broken("google.adk does not import here: give --adk-python (an interpreter with google-adk 2.13), "
                         "or pip install -e '.[bench]'") from None
    jobs_file, out_file = work / "adk-jobs.json", work / "adk-results.json"
    jobs_file.write_text(json.dumps(jobs), encoding="utf-8")
    done = subprocess.run([adk_python, __file__, "--adk-side", str(jobs_file), str(out_file)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise Broken(f"the ADK half failed ({adk_python}):\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    return json.loads(out_file.read_text(encoding="utf-8"))


# ================================================================== comparing

def compare(cases, configs, variants_of, ours_by_config, adk_by_key, show: bool, label: str) -> int:
    per_criterion: Counter = Counter()
    agree: Counter = Counter()
    case_agree = case_total = 0
    score_diffs = []
    disagreements = []
    for config_name in configs:
        ours = ours_by_config[config_name]
        for case in cases:
            key = f"{config_name}|{case['file']}|{case['index']}"
            adk = adk_by_key[key]
            for variant in variants_of[case["id"], case["file"]]:
                theirs = adk[variant]
                mine = ours[variant].get(case["id"])
                if mine is None:
                    raise Broken(f"{case['id']} ({case['file']}) is missing from evalrun's report ({variant})")
                if set(theirs) != set(mine):
                    raise Broken(f"{case['id']} {variant} {config_name}: ADK runs {sorted(theirs)}, evalrun "
                                 f"{sorted(mine)}")
                both = True
                for criterion, (status, score) in theirs.items():
                    our_status, our_score, why = mine[criterion]
                    same = (status == "PASSED") == (our_status == "passed")
                    per_criterion[criterion] += 1
                    agree[criterion] += same
                    both &= same
                    if score is not None and our_score is not None and score != our_score:
                        score_diffs.append((abs(score - our_score), case["id"], variant, criterion, score, our_score))
                    if not same:
                        disagreements.append(f"{config_name} {case['id']} {variant} {criterion}: ADK {status} "
                                             f"{score}, evalrun {our_status} {our_score}: {why}")
                case_total += 1
                case_agree += both
    total, agreed = sum(per_criterion.values()), sum(agree.values())
    print(f"{label}:")
    for criterion in COMPARED:
        if per_criterion[criterion]:
            print(f"  {criterion:28} {agree[criterion]:5} / {per_criterion[criterion]:<5} verdicts agree")
    print(f"  {'every criterion of a case':28} {case_agree:5} / {case_total:<5} case verdicts agree")
    print(f"  agreement {agreed}/{total} = {agreed / max(total, 1):.4%}; scores differing from ADK's: {len(score_diffs)}"
          + (f" (largest {max(score_diffs)[0]:.3g})" if score_diffs else " (every score is the same float)"))
    if show:
        for line in disagreements[:50]:
            print("   ", line)
        for diff in sorted(score_diffs, reverse=True)[:10]:
            print("    score differs:", diff)
    return total - agreed


def main(argv: list[str]) -> int:
    if argv[:1] == ["--adk-side"]:
        jobs = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
        Path(argv[2]).write_text(json.dumps(adk_side(jobs)), encoding="utf-8")
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", nargs="+", type=Path, help="folders (or files) holding ADK or Agentflow eval files")
    parser.add_argument("--adk-python", help="an interpreter with google-adk 2.13 (default: this one)")
    parser.add_argument("--keep", type=Path, help="work here and keep the recordings and reports")
    parser.add_argument("--no-convert", action="store_true", help="do not check `evalrun convert` on the same runs")
    parser.add_argument("--show-disagreements", action="store_true")
    args = parser.parse_args(argv)
    work = args.keep.resolve() if args.keep else Path(tempfile.mkdtemp(prefix="adk-agreement-"))
    try:
        return _run(args, work)
    except Broken as exc:
        print(f"cannot compare: {exc}", file=sys.stderr)
        return 2
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def _run(args, work: Path) -> int:
    roots = [r.resolve() for r in args.roots]
    for stale in ("replay", "out", "converted", "configs"):
        shutil.rmtree(work / stale, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    (work / "evalrun.yaml").write_text(OFFLINE_CONFIG, encoding="utf-8")
    files = find_eval_files(roots)
    cases = load_cases(roots)
    COMPARED_IDS.update(case["id"] for case in cases)
    print(f"{len(files)} eval files, {len(cases)} cases, {sum(len(c['turns']) for c in cases)} turns "
          f"({sum(len(t['calls']) for c in cases for t in c['turns'])} expected calls)")
    variants_of, variant_names = {}, set()
    for case in cases:
        variants = perturbations(case["turns"])
        variants_of[case["id"], case["file"]] = variants
        variant_names |= set(variants)
    for name in sorted(variant_names):  # one replay folder per variant: a case without it replays as expected
        folder = work / "replay" / name
        for case in cases:
            turns = variants_of[case["id"], case["file"]].get(name, variants_of[case["id"], case["file"]]["as_expected"])
            target = folder / f"{case['id']}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps({"messages": recording(turns)}), encoding="utf-8")
    configs: dict[str, Path | None] = {"own": None}
    for name, config in EXTRA_CONFIGS.items():
        path = work / "configs" / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(config), encoding="utf-8")
        configs[name] = path
    per_case_variants = {key: sorted(v) for key, v in variants_of.items()}
    print(f"{len(variant_names)} actual conversations per case at most ({', '.join(sorted(variant_names))}); "
          f"{len(configs)} configs (own, {', '.join(EXTRA_CONFIGS)})")

    ours_by_config = {}
    for config_name, config_path in configs.items():
        ours_by_config[config_name] = {name: run_evalrun(roots, work / "replay" / name,
                                                         work / "out" / config_name / name, work, config_path)
                                       for name in sorted(variant_names)}
    jobs = [{"key": f"{config_name}|{case['file']}|{case['index']}", "file": case["file"], "index": case["index"],
             "config": config_of(case["file"], config_path),
             "variants": {v: variants_of[case["id"], case["file"]][v] for v in per_case_variants[case["id"], case["file"]]}}
            for config_name, config_path in configs.items() for case in cases]
    adk_by_key = {r["key"]: {v: {m: tuple(s) for m, s in per.items()} for v, per in r["verdicts"].items()}
                  for r in run_adk(jobs, args.adk_python, work)}
    variants_for_compare = {key: per_case_variants[key] for key in per_case_variants}
    failures = compare(cases, configs, variants_for_compare, ours_by_config, adk_by_key, args.show_disagreements,
                       "evalrun on the files as they are, against ADK 2.13's evaluators")
    if not args.no_convert:
        failures += check_convert(roots, cases, configs, variants_for_compare, adk_by_key, work, args)
    return 0 if failures == 0 else 1


def check_convert(roots, cases, configs, variants_of, adk_by_key, work: Path, args) -> int:
    """`evalrun convert` every root (with each config), and score the YAML on the same recordings: a case keeps
    its id, so each finds its recordings again."""
    ours_by_config = {}
    for config_name, config_path in configs.items():
        targets = []
        for i, root in enumerate(roots):
            target = work / "converted" / config_name / str(i)
            command = [sys.executable, "-m", "runner", "convert", str(root), "-o", str(target)]
            if config_path is not None:
                command += ["--eval-config", str(config_path)]
            done = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True)
            if done.returncode != 0:
                raise Broken(f"evalrun convert exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
            targets.append(target)
        ours_by_config[config_name] = {
            name: run_evalrun(targets, work / "replay" / name, work / "out-converted" / config_name / name, work, None)
            for name in sorted({v for vs in variants_of.values() for v in vs})}
    return compare(cases, configs, variants_of, ours_by_config, adk_by_key, args.show_disagreements,
                   "the same files after `evalrun convert` (YAML), against ADK 2.13's evaluators")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
