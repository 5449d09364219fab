"""How often does evalrun agree with tau2-bench's own verdicts? (a script, not a pytest test)

    .venv/bin/python tests/bench/tau2_agreement.py /work/shared/data/tau2-airline/
    .venv/bin/python tests/bench/tau2_agreement.py FILE.json --keep /tmp/tau2-suites --show-disagreements

Each tau2-bench simulation file (`{timestamp, info, tasks, simulations}`; files without simulations, such
as tasks_head.json, are passed over) becomes one evalrun suite with one case per simulation, and each
simulation's `messages` becomes a transcript file, unmodified. The real evalrun CLI then scores the folder in
a subprocess and this script compares every case's status with the benchmark's reward (1.0 = pass).

The benchmark's grading rule, written in the suite language only:
- every expected action of a write tool (WRITE_TOOLS) -> a `tool_call` goal with the expected arguments
  (`compare_args` null: all of them; a list: only those keys; []: the tool name alone, `args: {IGNORE: null}`);
  read tools are not goals, and `transfer_to_human_agents` is one only when it is the only expected action;
- `forbid_extra_calls: WRITE_TOOLS`: a successful write that achieves no goal changed the database;
- `failed_calls: ignore`: a call whose result has `error: true` changed nothing;
- no `goals` order edges: the benchmark compares the final database, so order does not matter;
- each `communicate_info` string -> a `text` goal with that string as its only keyword (scope any).
Three argument modes are compared: strict (evalrun's default, no arg_matching), exact (`arg_matching:
{arg: exact}` for every top-level argument) and exact-leaves (`exact` on every leaf path such as
`flights.0.date`). `--arg-mode` picks one; by default all run, strict first (the headline).

- `termination: [user_stop, agent_stop]`: a simulation that ended otherwise (max_steps, too_many_errors)
  scores 0 whatever the conversation did. The transcript records the ending as `termination_reason`
  (the object form of a transcript file), and the suite requires it.

Exit status: 0 whenever the comparison ran (disagreements included); 2 when the run itself broke
(unreadable input, evalrun crashed, cases ended in error, no report).
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agreement import (
    Broken,
    Outcome,
    agreement,
    prepare_workspace,
    print_confusion,
    run_evalrun,
    slug,
    summary_line,
    write_config,
    write_suite,
)

WRITE_TOOLS = ["book_reservation", "cancel_reservation", "update_reservation_flights",
               "update_reservation_baggages", "update_reservation_passengers", "send_certificate"]
TRANSFER_TOOL = "transfer_to_human_agents"
NORMAL_ENDINGS = ("user_stop", "agent_stop")
ARG_MODES = ("strict", "exact", "exact-leaves")

@dataclass
class Simulation:
    case_id: str
    file: Path
    task_id: str
    trial: Any
    reward: float
    termination_reason: str
    breakdown: dict
    actions: list[dict]
    communicate: list[str]
    messages: list[dict]

    @property
    def benchmark_passed(self) -> bool:
        return self.reward == 1.0


# ------------------------------------------------------------------------------------- reading

def simulation_files(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.glob("*.json") if p.is_file())
        elif path.is_file():
            files.append(path)
        else:
            raise Broken(f"{path}: no such file or folder")
    return files


def load(path: Path) -> dict | None:
    """The parsed file when it holds simulations, else None (e.g. tasks_head.json, a bare task list)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise Broken(f"{path}: cannot read: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("simulations"), list):
        return None
    if not isinstance(data.get("tasks"), list):
        raise Broken(f"{path}: has simulations but no `tasks` list")
    return data


# ----------------------------------------------------------------------------------- converting

def goal_args(action: dict) -> dict:
    arguments = action.get("arguments") or {}
    keys = action.get("compare_args")
    if keys is None:
        return dict(arguments)
    if not keys:
        return {"IGNORE": None}  # the tool name alone
    return {k: arguments[k] for k in keys if k in arguments}


def tool_goals(actions: list[dict]) -> list[dict]:
    """The expected actions that decide the verdict, as evalrun tool_call goals (without arg_matching)."""
    names = [a.get("name") for a in actions]
    goals = []
    for i, action in enumerate(actions):
        name = action.get("name")
        if name in WRITE_TOOLS:
            goals.append({"type": "tool_call", "name": f"action_{i}_{name}", "tool_name": name,
                          "args": goal_args(action)})
        elif name == TRANSFER_TOOL and set(names) == {TRANSFER_TOOL}:
            # Only the transfer itself counts; its one argument is a free-text summary, which no part of
            # the benchmark's reward compares.
            goals.append({"type": "tool_call", "name": f"action_{i}_{name}", "tool_name": name,
                          "args": {"IGNORE": None}})
    return goals


def text_goals(communicate: list[str]) -> list[dict]:
    return [{"type": "text", "name": f"communicate_{i}", "keywords": [info]} for i, info in enumerate(communicate)]


def leaf_paths(value: Any, path: str = "") -> list[str]:
    """Dot paths of every scalar (and empty container) inside `value`: `flights.0.date`, ..."""
    if isinstance(value, dict) and value:
        return [p for key, item in value.items() for p in leaf_paths(item, f"{path}.{key}" if path else str(key))]
    if isinstance(value, list) and value:
        return [p for i, item in enumerate(value) for p in leaf_paths(item, f"{path}.{i}")]
    return [path]


def with_arg_mode(goals: list[dict], mode: str) -> list[dict]:
    """strict: no arg_matching. exact: `exact` per top-level argument (JSON equality: case, types, list order,
    same keys in nested objects). exact-leaves: `exact` per leaf path, so strings are case-sensitive and list
    items are paired by position, while nested objects may carry extra keys (as the tools ignore them)."""
    if mode == "strict":
        return goals
    out = []
    for goal in goals:
        goal = dict(goal)
        if goal["type"] == "tool_call" and goal["args"] != {"IGNORE": None}:
            paths = list(goal["args"]) if mode == "exact" else leaf_paths(goal["args"])
            goal["arg_matching"] = dict.fromkeys(paths, "exact")
        out.append(goal)
    return out


def read_simulations(files: list[Path]) -> tuple[list[Simulation], list[Path]]:
    simulations: list[Simulation] = []
    skipped: list[Path] = []
    used_ids: set[str] = set()
    for path in files:
        data = load(path)
        if data is None:
            skipped.append(path)
            continue
        tasks = {str(t.get("id")): t for t in data["tasks"]}
        for n, sim in enumerate(data["simulations"]):
            task_id = str(sim.get("task_id"))
            if task_id not in tasks:
                raise Broken(f"{path}: simulation {n} names task {task_id!r}, which the file's tasks lack")
            criteria = tasks[task_id].get("evaluation_criteria") or {}
            case_id = f"{slug(path.stem)}--task{slug(task_id)}--trial{slug(str(sim.get('trial')))}"
            if case_id in used_ids:
                case_id += f"--sim{n}"
            used_ids.add(case_id)
            reward_info = sim.get("reward_info") or {}
            simulations.append(Simulation(
                case_id=case_id, file=path, task_id=task_id, trial=sim.get("trial"),
                reward=float(reward_info.get("reward", 0.0)),
                termination_reason=str(sim.get("termination_reason")),
                breakdown=reward_info.get("reward_breakdown") or {},
                actions=list(criteria.get("actions") or []),
                communicate=list(criteria.get("communicate_info") or []),
                messages=sim.get("messages") or []))
    return simulations, skipped


def write_suites(simulations: list[Simulation], work: Path, modes: list[str]) -> None:
    write_config(work)
    transcripts = work / "transcripts"
    transcripts.mkdir(parents=True, exist_ok=True)
    for sim in simulations:
        # The simulation's messages as they are (evalrun reads tau2's message format directly), with how
        # the run ended beside them.
        recording = {"messages": sim.messages, "termination_reason": sim.termination_reason}
        (transcripts / f"{sim.case_id}.json").write_text(json.dumps(recording, ensure_ascii=False, indent=1),
                                                           encoding="utf-8")
    by_file: dict[Path, list[Simulation]] = {}
    for sim in simulations:
        by_file.setdefault(sim.file, []).append(sim)
    for mode in modes:
        folder = work / f"suites-{mode}"
        folder.mkdir(parents=True, exist_ok=True)
        for path, sims in by_file.items():
            suite = {
                "tags": ["tau2", "airline"],
                "forbid_extra_calls": list(WRITE_TOOLS),
                "failed_calls": "ignore",
                "termination": list(NORMAL_ENDINGS),
                "cases": [{
                    "id": sim.case_id,
                    "description": f"tau2 task {sim.task_id}, trial {sim.trial} from {path.name}; benchmark reward "
                                   f"{sim.reward:g} (termination: {sim.termination_reason})",
                    "goal_details": with_arg_mode(tool_goals(sim.actions), mode) + text_goals(sim.communicate),
                    "transcript": f"../transcripts/{sim.case_id}.json",
                } for sim in sims],
            }
            write_suite(folder / f"{slug(path.stem)}.yaml", suite,
                        f"tests/bench/tau2_agreement.py from {path.name} (argument mode: {mode})")


# -------------------------------------------------------------------------------------- running

# ------------------------------------------------------------------------------------ reporting

def component_agreement(simulations: list[Simulation], outcome: Outcome) -> tuple[int, int, int]:
    """Agreement for the right reasons: evalrun's tool part (write goals achieved, no forbidden call) against
    the benchmark's DB component, its text part against COMMUNICATE. Returns (db agreed, communicate agreed,
    simulations with a breakdown)."""
    db = communicate = total = 0
    for sim in simulations:
        if "DB" not in sim.breakdown:
            continue  # e.g. a run cut short: the benchmark did not evaluate it
        case = outcome.cases[sim.case_id]
        goals = case.get("goals") or []
        tools_ok = all(g["achieved"] for g in goals if g["type"] == "tool_call") and \
            not any(c["role"] == "forbidden" for c in case.get("calls") or [])
        texts_ok = all(g["achieved"] for g in goals if g["type"] == "text")
        total += 1
        db += tools_ok == (sim.breakdown["DB"] == 1.0)
        communicate += texts_ok == (sim.breakdown.get("COMMUNICATE", 1.0) == 1.0)
    return db, communicate, total


def write_calls(messages: list[dict]) -> list[str]:
    """The agent's write calls with their outcome, for reading a disagreement."""
    results = {m.get("id"): m for m in messages if m.get("role") == "tool"}
    lines = []
    for i, message in enumerate(messages):
        for call in message.get("tool_calls") or []:
            if call.get("name") in WRITE_TOOLS + [TRANSFER_TOOL]:
                result = results.get(call.get("id")) or {}
                status = "ERROR " + str(result.get("content"))[:100] if result.get("error") else "ok"
                lines.append(f"message {i + 1}: {call.get('name')}({json.dumps(call.get('arguments'))}) -> {status}")
    return lines


def print_mode(simulations: list[Simulation], outcome: Outcome, show: bool, kept: bool) -> None:
    agreed, confusion, disagreements = agreement(simulations, outcome)
    n = len(simulations)
    print(f"\n== argument mode: {outcome.mode} ==" + (f"  (report: {outcome.report_path})" if kept else ""))
    print(f"agreement: {agreed / n:.4f} ({agreed}/{n})")
    print("confusion matrix (rows: benchmark, columns: evalrun):")
    print_confusion(confusion)
    db, communicate, total = component_agreement(simulations, outcome)
    print(f"components: write goals vs DB {db}/{total}, text goals vs COMMUNICATE {communicate}/{total}")
    if disagreements:
        print(f"disagreements: {len(disagreements)}")
    for sim in disagreements:
        verdict = "passed" if outcome.status[sim.case_id] == "passed" else "failed"
        parts = ", ".join(f"{k} {v:g}" for k, v in sim.breakdown.items()) or "no breakdown"
        print(f"- task {sim.task_id} trial {sim.trial} [{sim.file.name}] case {sim.case_id}: benchmark reward "
              f"{sim.reward:g} ({parts}; termination {sim.termination_reason}), evalrun {verdict}")
        for line in outcome.failures.get(sim.case_id) or []:
            print(f"    evalrun: {line}")
        if show:
            for action in [a for a in sim.actions if a.get("name") in WRITE_TOOLS]:
                print(f"    expected: {action.get('name')}({json.dumps(action.get('arguments'))})")
            for info in sim.communicate:
                print(f"    must say: {info!r}")
            for line in write_calls(sim.messages):
                print(f"    agent:    {line}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="tau2 simulation files or folders of them")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="write the suites, transcripts and reports here and keep them (default: a temporary folder)")
    parser.add_argument("--show-disagreements", action="store_true",
                        help="also print, for each disagreement, the expected writes, the required strings and the "
                             "agent's write calls")
    parser.add_argument("--arg-mode", choices=("all",) + ARG_MODES, default="all",
                        help="how expected arguments are compared (default: all; strict is the headline)")
    args = parser.parse_args(argv)
    modes = list(ARG_MODES) if args.arg_mode == "all" else [args.arg_mode]

    temporary = None
    try:
        files = simulation_files(args.paths)
        simulations, skipped = read_simulations(files)
        if not simulations:
            raise Broken("no simulations found in " + ", ".join(map(str, args.paths)))
        work, temporary = prepare_workspace(args.keep, ARG_MODES, "tau2-agreement-")
        write_suites(simulations, work, modes)
        outcomes = [run_evalrun(work, mode) for mode in modes]

        sim_files = sorted({s.file for s in simulations})
        print(f"simulations: {len(simulations)} from {len(sim_files)} file(s)"
              + (f"; passed over (no simulations): {', '.join(p.name for p in skipped)}" if skipped else ""))
        bench = Counter(s.benchmark_passed for s in simulations)
        print(f"benchmark verdicts: {bench[True]} pass, {bench[False]} fail")
        endings = Counter(s.termination_reason for s in simulations)
        print("termination reasons: " + ", ".join(f"{k} {v}" for k, v in sorted(endings.items())))
        for outcome in outcomes:
            print_mode(simulations, outcome, args.show_disagreements, kept=bool(args.keep))
        if len(outcomes) > 1:
            print("\n" + summary_line(simulations, outcomes))
        if args.keep:
            print(f"kept: {work}")
        return 0
    except Broken as exc:
        print(f"tau2_agreement: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head`
        sys.stderr.close()
        return 0
    finally:
        if temporary:
            shutil.rmtree(temporary, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
