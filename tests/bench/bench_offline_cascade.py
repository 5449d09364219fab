"""How often the fuzzy cascade is right on the labelled pairs of tests/data/offline_cascade/pairs.yaml.

    .venv/bin/python tests/bench/bench_offline_cascade.py                       # this checkout
    .venv/bin/python tests/bench/bench_offline_cascade.py --baseline /tmp/base  # beside another checkout
    .venv/bin/python tests/bench/bench_offline_cascade.py --judge-model openai/M --api-base URL

Prints accuracy, false-pass rate (pairs that must not match but passed) and false-fail rate (pairs
that must match but failed), overall and per category, for the offline cascade with embeddings
(the default) and without them (rapidfuzz), at the configured default `similarity_threshold`; then
how the threshold is chosen: the best balanced accuracy with a false-pass rate of at most
`--max-false-pass`, chosen on the development pairs and measured on the held-out ones, and 5-fold
cross-validated. With `--judge-model` the same pairs go to a judge first (the cascade as a run with
`judge:` configured uses it). `--baseline DIR` runs the same measures on the code in DIR (e.g. an
export of main) in a subprocess and prints both side by side.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parents[2]
if str(PROJECT_ROOT) not in sys.path:
    sys.path.append(str(PROJECT_ROOT))

from tests.helpers.offline_pairs import (  # noqa: E402
    CATEGORIES,
    THRESHOLD_GRID,
    Outcome,
    Pair,
    Rates,
    choose_threshold,
    cross_validated,
    load_pairs,
    rates,
)

MODES = ("embeddings", "rapidfuzz")


# ---------------------------------------------------------------- running the cascade


def default_threshold() -> float:
    from runner.config.model import Config

    return float(Config.model_fields["similarity_threshold"].default)


def make_cascade(mode: str, args: argparse.Namespace) -> Any:
    from runner.score.cascade import Cascade, CascadeSettings

    settings = CascadeSettings(similarity_threshold=default_threshold(), use_embeddings=mode != "rapidfuzz")
    return Cascade(settings, judge=make_judge(args) if mode == "judge" else None)


def make_judge(args: argparse.Namespace) -> Any:
    from runner.llm.client import LLMClient
    from runner.llm.judge import LLMJudge
    from runner.llm.prompts import PromptLibrary
    from runner.llm.runtime import LLMRuntime
    from runner.llm.settings import JudgeSettings

    settings = JudgeSettings(model=args.judge_model, api_base=args.api_base, api_key_env=args.api_key_env,
                             timeout_s=args.judge_timeout, max_retries=1, cache=args.judge_cache is not None,
                             structured_output=args.structured_output, extra={"max_tokens": args.max_tokens})

    class FreshBreakerJudge:
        """One runtime per comparison: a judge that fails three pairs in a row is not marked down for the
        rest of the set, so every pair is a fair question to it."""

        def semantic_match(self, expected: str, actual: str, context: str) -> Any:
            client = LLMClient(settings, args.judge_cache, role="judge", runtime=LLMRuntime(concurrency=1))
            return LLMJudge(client, PromptLibrary()).semantic_match(expected, actual, context)

    return FreshBreakerJudge()


def run_mode(mode: str, pairs: list[Pair], args: argparse.Namespace) -> dict:
    cascade = make_cascade(mode, args)
    cascade.expect([text for pair in pairs for text in (pair.expected, pair.actual)])
    wall, cpu = time.perf_counter(), time.process_time()
    verdicts = []
    for pair in pairs:
        decision = cascade.compare(pair.expected, pair.actual, context=pair.context)
        verdicts.append({"id": pair.id, "matched": decision.matched, "decided_by": decision.decided_by,
                         "score": decision.score, "reason": decision.reason,
                         "judge_failure": decision.judge_failure})
    return {"mode": mode, "threshold": default_threshold(), "verdicts": verdicts,
            "wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}


def time_rules(pairs: list[Pair], runs: int = 5) -> str:
    """CPU time of the offline rules (facts, negation, opposites and roles, omission) per comparison: cold
    caches, then warm."""
    from runner.score import facts, negation, omission, opposites, roles, wording

    def one_pass() -> float:
        started = time.process_time()
        for pair in pairs:
            facts.check_facts(pair.expected, pair.actual)
            negation.contradiction(pair.expected, pair.actual)
            opposites.changed_fact(pair.expected, pair.actual)
            omission.omitted_clause(pair.expected, pair.actual)
        return (time.process_time() - started) / len(pairs) * 1e6

    cold, warm = [], []
    for _ in range(runs):
        for cached in (facts._canonical_form, facts.word_facts, negation.clauses, negation.stem, negation.words,
                       wording.read, roles._swap):
            cached.cache_clear()
        cold.append(one_pass())
        warm.append(one_pass())
    cold.sort(), warm.sort()
    return (f"offline rules: {cold[runs // 2]:.0f} µs CPU per comparison, caches cold (min {cold[0]:.0f}, max "
            f"{cold[-1]:.0f}); {warm[runs // 2]:.0f} µs warm; median of {runs} passes over {len(pairs)} pairs")


def outcomes_of(result: dict, pairs: dict[str, Pair]) -> list[Outcome]:
    return [Outcome(pairs[v["id"]], v["matched"], v["decided_by"], v["score"], v["reason"])
            for v in result["verdicts"] if v["id"] in pairs]


def measure_here(args: argparse.Namespace, modes: tuple[str, ...]) -> list[dict]:
    pairs = load_pairs()
    return [run_mode(mode, judge_sample(pairs, args.judge_sample) if mode == "judge" else pairs, args)
            for mode in modes]


def judge_sample(pairs: list[Pair], size: int | None) -> list[Pair]:
    """All pairs, or `size` of them in an order that mixes every category (by a hash of the id): a slow
    judge can be measured on a fair sample, and a longer run repeats the shorter one's questions."""
    if size is None:
        return pairs
    return sorted(pairs, key=lambda p: p.sample_rank)[:size]


def measure_baseline(directory: Path, args: argparse.Namespace, modes: tuple[str, ...]) -> list[dict]:
    """The same measures in a subprocess whose `runner` package is the one in `directory` (the pairs and
    this script stay this checkout's)."""
    command = [sys.executable, str(Path(__file__).resolve()), "--json", "--modes", ",".join(modes),
               "--runner-from", str(directory.resolve())]
    done = subprocess.run(command, env=os.environ.copy(), capture_output=True, text=True, cwd=directory)
    if done.returncode != 0:
        raise SystemExit(f"the baseline run failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


# ---------------------------------------------------------------- printing


def percent(value: float) -> str:
    return "   n/a" if value != value else f"{value:6.1%}"


def figures(r: Rates) -> str:
    return f"accuracy {percent(r.accuracy)}  false-pass {percent(r.false_pass_rate)} " \
           f"({r.false_passes}/{r.non_matches})  false-fail {percent(r.false_fail_rate)} ({r.false_fails}/{r.matches})"


def category_cell(r: Rates, category: str) -> str:
    """What matters in a category: the passes that should not be, or the fails that should not be."""
    if CATEGORIES[category]:
        return f"{r.false_fails:>2}/{r.matches:<3} fail"
    return f"{r.false_passes:>2}/{r.non_matches:<3} pass"


def in_split(pairs: dict[str, Pair], split: str) -> dict[str, Pair]:
    return {pid: p for pid, p in pairs.items() if split == "all" or (split == "held_out") == p.held_out}


def print_tables(labelled: list[tuple[str, dict]], pairs: dict[str, Pair], split: str) -> None:
    chosen = in_split(pairs, split)
    print(f"\n== verdicts at each configuration's default threshold ({split} pairs: {len(chosen)}) ==")
    for label, result in labelled:
        outcomes = outcomes_of(result, chosen)
        print(f"{label:<28} t={result['threshold']:.2f}  {figures(rates(outcomes))}")
    print("\nper category (wrong verdicts / pairs):")
    print(f"{'category':<16}" + "".join(f"{label:>30}" for label, _ in labelled))
    for category in CATEGORIES:
        row = f"{category:<16}"
        for _, result in labelled:
            outcomes = [o for o in outcomes_of(result, chosen) if o.pair.category == category]
            row += f"{category_cell(rates(outcomes), category):>30}"
        print(row)


def print_threshold_choice(label: str, result: dict, pairs: dict[str, Pair], max_false_pass: float) -> None:
    outcomes = outcomes_of(result, pairs)
    development = [o for o in outcomes if not o.pair.held_out]
    held_out = [o for o in outcomes if o.pair.held_out]
    on_development = choose_threshold(development, max_false_pass)
    on_all = choose_threshold(outcomes, max_false_pass)
    cv, per_fold = cross_validated(outcomes, max_false_pass)
    print(f"\n== choosing the threshold: {label} (best balanced accuracy with false-pass <= {max_false_pass:.0%}) ==")
    print(f"chosen on the {len(development)} development pairs: t={on_development:.2f}")
    print(f"  development  {figures(rates(development, on_development))}")
    print(f"  held-out     {figures(rates(held_out, on_development))}   <- not seen when choosing")
    print(f"5-fold cross-validation (thresholds {', '.join(f'{t:.2f}' for t in per_fold)}):")
    print(f"  pooled       {figures(cv)}")
    print(f"chosen on all {len(outcomes)} pairs: t={on_all:.2f}  {figures(rates(outcomes, on_all))}")


def print_curve(label: str, result: dict, pairs: dict[str, Pair], split: str) -> None:
    outcomes = outcomes_of(result, in_split(pairs, split))
    print(f"\n== {label}: false-pass and false-fail by threshold ({split} pairs) ==")
    for threshold in THRESHOLD_GRID[::5]:
        r = rates(outcomes, threshold)
        print(f"  t={threshold:.2f}  {figures(r)}  balanced {percent(r.balanced_accuracy)}")


def print_wrong(label: str, result: dict, pairs: dict[str, Pair], split: str) -> None:
    print(f"\n== wrong verdicts: {label} ({split} pairs) ==")
    for outcome in outcomes_of(result, in_split(pairs, split)):
        if outcome.matched != outcome.pair.match:
            score = f" {outcome.score:.2f}" if outcome.score is not None else ""
            print(f"  {outcome.pair.id:<22} said {'match' if outcome.matched else 'no'} "
                  f"({outcome.decided_by}{score}): {outcome.pair.expected!r} vs {outcome.pair.actual!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, help="another checkout (e.g. `git archive main`) to measure beside")
    parser.add_argument("--split", choices=("all", "development", "held_out"), default="all")
    parser.add_argument("--max-false-pass", type=float, default=0.15,
                        help="the highest false-pass rate a chosen threshold may have (default 0.15, the rule "
                             "evalrun's default similarity_threshold was chosen by)")
    parser.add_argument("--modes", default=",".join(MODES), help="embeddings,rapidfuzz (default: both)")
    parser.add_argument("--show-wrong", action="store_true", help="list every wrong verdict")
    parser.add_argument("--curve", action="store_true", help="the rates at thresholds 0.30, 0.35 .. 0.95")
    parser.add_argument("--json", action="store_true", help="print raw verdicts as JSON (for --baseline)")
    parser.add_argument("--runner-from", type=Path, help=argparse.SUPPRESS)  # --baseline's subprocess
    judge = parser.add_argument_group("the judge path (an OpenAI-compatible server)")
    judge.add_argument("--judge-model", help="a litellm model string, e.g. openai/SmolLM2-135M-Instruct")
    judge.add_argument("--api-base", help="e.g. http://127.0.0.1:8701/v1")
    judge.add_argument("--api-key-env", help="the environment variable that holds the API key, if any")
    judge.add_argument("--judge-timeout", type=float, default=120.0)
    judge.add_argument("--judge-cache", type=Path, help="keep judge replies here (a rerun asks nothing again)")
    judge.add_argument("--structured-output", choices=("auto", "always", "never"), default="auto")
    judge.add_argument("--max-tokens", type=int, default=300, help="a bound on each verdict's length (default 300)")
    judge.add_argument("--judge-sample", type=int, help="ask the judge about N pairs only (all categories mixed)")
    args = parser.parse_args(argv)
    if args.runner_from:
        sys.path.insert(0, str(args.runner_from))  # before anything imports `runner`

    modes = tuple(m for m in args.modes.split(",") if m)
    if args.judge_model and not args.json:
        modes += ("judge",)
    results = measure_here(args, modes)
    if args.json:
        print(json.dumps(results))
        return 0
    pairs = {p.id: p for p in load_pairs()}
    labelled = [(f"{r['mode']} (this checkout)", r) for r in results]
    if args.baseline:
        base = measure_baseline(args.baseline, args, tuple(m for m in modes if m != "judge"))
        labelled = [(f"{r['mode']} (baseline)", r) for r in base] + labelled
    print_tables(labelled, pairs, args.split)
    judged = next((r for r in results if r["mode"] == "judge"), None)
    if judged is not None and len(judged["verdicts"]) < len(pairs):
        sample = {v["id"]: pairs[v["id"]] for v in judged["verdicts"]}
        print(f"\n(the judge was asked about {len(sample)} of the pairs; every configuration on those pairs:)")
        print_tables(labelled, sample, args.split)
    for result in results:
        if result["mode"] != "judge":
            print_threshold_choice(f"{result['mode']} (this checkout)", result, pairs, args.max_false_pass)
        failures = sum(v["judge_failure"] is not None for v in result["verdicts"])
        print(f"{result['mode']}: {len(result['verdicts'])} comparisons in {result['wall_s']:.2f} s wall, "
              f"{result['cpu_s']:.2f} s CPU (model load included)" + (f"; the judge failed {failures} time(s)" if result["mode"] == "judge" else ""))
    if not args.runner_from and "embeddings" in modes:
        print("\n" + time_rules(load_pairs()))
    if args.curve:
        for result in results:
            if result["mode"] != "judge":
                print_curve(result["mode"], result, pairs, args.split)
    if args.show_wrong:
        for label, result in labelled:
            print_wrong(label, result, pairs, args.split)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
