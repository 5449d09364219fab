"""How often does evalrun agree with the Berkeley Function Calling Leaderboard (v1)? (a script, not a pytest test)

    .venv/bin/python tests/bench/bfcl_agreement.py ../shared/data/bfcl-v1/
    .venv/bin/python tests/bench/bfcl_agreement.py ../shared/data/bfcl-v1/ --keep /tmp/bfcl-suites --show-disagreements

PATH is a bfcl-v1 folder: question/, possible_answer/, result/<model>/ and score/<model>/. Every category with
all four files (simple, multiple_function, parallel_function, parallel_multiple_function) becomes one evalrun
suite with one case per entry, and each entry's model result becomes a transcript file: the question as a user
message, then one OpenAI assistant message whose `tool_calls` carry the result's calls, names and JSON argument
strings as given (a result that is plain text instead of calls becomes the assistant's text). The real evalrun
CLI then scores the folder in a subprocess and this script compares every case's status with the benchmark's:
an entry passes when the score file does not list it (line 1 is a summary).

The checker's rule, written in the suite language only:
- every expected function (`ground_truth: {func_name: {arg: [acceptable values]}}`) -> a `tool_call` goal.
  Repeated functions carry suffixes (`spotify.play_1`): the suffix is dropped when the name without it is one of
  the question's functions. The model family's results spell dots as underscores (`spotify_play`), and so does
  the checker for it: the converter writes the expected tool name the same way (`tool_name: spotify_play`), so
  evalrun needs no special code for it.
- each argument's acceptable values -> `args: {arg: <first value>}` and `arg_matching: {arg: {one_of: [...]}}`;
  `""` among them means the argument may be omitted -> `optional: true` (and "" leaves one_of, unless it is the
  only value). An acceptable value that is itself an object of acceptable-value lists (`budget: [{min: [..]}]`)
  is walked the same way with dot paths (`budget.min`).
- a possible answer whose value is a list of such objects (`conditions: [[{field: [..]}, ..]]`) gets one rule per
  item and key (`conditions.0.field`), which pairs the items by position, as the checker does.
- a possible answer entry that is not an object of arguments (one malformed entry lists `deck: [[], ""]` as if it
  were a function) stays a goal on its name alone: the checker counts it as an expected call too.
- with one function in the question, every expected call is to that function (the checker never looks the name
  up there, and one possible answer misnames it: `find_closest` for `restaurant_search.find_closest`).
- `forbid_extra_calls: true`: the checker fails a wrong number of calls.
- `extra_args: forbid`: the checker fails an argument the possible answer does not list.
- no `goals` order edges: the parallel checkers are order-free (and the others have one call).

Three argument conversions are compared (`--arg-mode`; by default all run, checker first, the headline):
- checker: one_of as below, plus the checker's own conventions in two rule options: `ignore_chars` (its string
  normalisation drops spaces and `,./-_*^` and lower-cases, which strict mode already ignores; it also makes ' and "
  alike, mirrored by dropping both) and `type` from the question's parameter schema (integer, string, boolean; a
  list of floats must hold floats, `type: number`; a float parameter accepts an int at the top level, as the
  checker converts it). No regexes.
- one_of: as above (every value compared strict: trimmed, case-insensitive, numbers by value, lists as multisets).
- exact: an argument with a single acceptable value is compared `exact` (JSON equality; `optional: true` kept);
  several values stay one_of.

Exit status: 0 whenever the comparison ran (disagreements included); 2 when the run itself broke
(unreadable input, evalrun crashed, cases ended in error, no report).
"""
from __future__ import annotations

import argparse
import json
import re
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

ARG_MODES = ("checker", "one_of", "exact")
QUESTION_PREFIX = "gorilla_openfunctions_v1_test_"
OPTIONAL_VALUE = ""  # among the acceptable values: the argument may be omitted
# Characters the checker's string normalisation removes. It also turns ' into ", which dropping both quotes
# mirrors (slightly more loosely: it makes "ab" equal "a'b" too).
CHECKER_DROPPED = " ,./-_*^'\""

@dataclass
class Entry:
    category: str
    entry_id: str
    question: Any
    functions: list[dict]
    ground_truth: dict
    result: Any  # a list of {name: "<json args>"}, or text when the model answered in words
    failure: dict | None  # the score file's line for this entry; None = the benchmark passed it

    @property
    def case_id(self) -> str:
        return slug(self.entry_id)

    @property
    def benchmark_passed(self) -> bool:
        return self.failure is None


# ------------------------------------------------------------------------------------- reading

def json_lines(path: Path) -> list[dict]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise Broken(f"{path}: cannot read: {exc}") from None


def pick_model(root: Path, model: str | None) -> str:
    models = sorted(p.name for p in (root / "result").glob("*") if p.is_dir()) if (root / "result").is_dir() else []
    if model:
        if model not in models:
            raise Broken(f"{root / 'result'}: no results for model {model!r} (have: {', '.join(models) or 'none'})")
        return model
    if len(models) != 1:
        raise Broken(f"{root / 'result'}: pick a model with --model (have: {', '.join(models) or 'none'})")
    return models[0]


def category_files(root: Path, model: str) -> dict[str, dict[str, Path]]:
    """Category -> its question, possible_answer, result and score files, for categories that have all four."""
    found = {}
    for answers in sorted((root / "possible_answer").glob(f"{QUESTION_PREFIX}*.json")):
        category = answers.stem[len(QUESTION_PREFIX):]
        files = {"question": root / "question" / answers.name, "possible_answer": answers,
                 "result": root / "result" / model / f"{answers.stem}_result.json",
                 "score": root / "score" / model / f"{category}_score.json"}
        if all(p.is_file() for p in files.values()):
            found[category] = files
    return found


def read_category(category: str, files: dict[str, Path]) -> list[Entry]:
    questions = {q["id"]: q for q in json_lines(files["question"])}
    results = {r["id"]: r for r in json_lines(files["result"])}
    score = json_lines(files["score"])
    if not score or "prompt" in score[0]:
        raise Broken(f"{files['score']}: line 1 should be the summary")
    failed = {}
    for line in score[1:]:
        entry_id = (line.get("prompt") or {}).get("id")
        if not entry_id:
            raise Broken(f"{files['score']}: a line without prompt.id")
        failed[entry_id] = line
    entries = []
    for answer in json_lines(files["possible_answer"]):
        entry_id = answer["id"]
        if entry_id not in questions or entry_id not in results:
            raise Broken(f"{category}: {entry_id} has no question or no result")
        functions = questions[entry_id]["function"]
        entries.append(Entry(category=category, entry_id=entry_id, question=questions[entry_id]["question"],
                             functions=functions if isinstance(functions, list) else [functions],
                             ground_truth=answer["ground_truth"], result=results[entry_id]["result"],
                             failure=failed.pop(entry_id, None)))
    if failed:
        raise Broken(f"{files['score']} lists entries without a possible answer: {', '.join(sorted(failed)[:5])}")
    summary = score[0]
    total, correct = summary.get("total_count"), summary.get("correct_count")
    passed = sum(e.benchmark_passed for e in entries)
    if (total, correct) != (len(entries), passed):
        raise Broken(f"{files['score']}: the summary says {correct}/{total} but the file lists "
                     f"{len(entries) - passed} failures of {len(entries)}")
    return entries


# ----------------------------------------------------------------------------------- converting

def tool_name(expected: str, functions: list[dict]) -> str:
    """The name the model family calls, as the checker works it out: with one function in the question, that
    function (the checker never looks its name up, and a few possible answers misname it); else the function
    named, its repeat suffix (`_1`, ` 1`) dropped when needed. Dots become underscores, as in the results."""
    names = [f.get("name") for f in functions]
    if len(names) == 1 and names[0]:
        return names[0].replace(".", "_")
    base = re.sub(r"[ _]\d+$", "", expected)
    name = base if expected not in names and base in names else expected
    return name.replace(".", "_")


# The checker's types, as the suite language's `type` rule names them. A float parameter takes an int at the top
# level (the checker converts it), so it gets no rule there; inside a list the checker wants the items typed as
# the possible answer types them: floats (`number`) where its items are floats.
SCHEMA_TYPES = {"string": "string", "integer": "integer", "boolean": "boolean"}
ITEM_TYPES = {**SCHEMA_TYPES, "float": "number"}


def checker_rule(schema: dict | None, options: list) -> dict[str, Any]:
    """The `type` and `ignore_chars` parts of a rule that mirror the checker for a parameter of this schema
    whose acceptable values are `options`."""
    schema = schema if isinstance(schema, dict) else {}
    rule: dict[str, Any] = {"ignore_chars": CHECKER_DROPPED}
    kind = schema.get("type")
    if kind in SCHEMA_TYPES:
        rule["type"] = SCHEMA_TYPES[kind]
    elif kind == "array" and isinstance(schema.get("items"), dict) and schema["items"].get("type") in ITEM_TYPES:
        item_type = schema["items"]["type"]
        floats = all(isinstance(o, list) and all(isinstance(v, float) for v in o) for o in options)
        if item_type != "float" or floats:
            rule["type"] = ITEM_TYPES[item_type]
    return rule


def is_answer_object(value: Any) -> bool:
    """A nested possible answer: an object whose keys have acceptable-value lists of their own."""
    return isinstance(value, dict) and all(isinstance(v, list) for v in value.values())


def argument_rules(path: str, values: list, mode: str, schema: dict | None = None) -> tuple[Any, dict[str, Any]]:
    """(the expected value, its arg_matching entries) for one argument's acceptable values; `schema` is the
    parameter's schema in the question (for the checker's types)."""
    optional = OPTIONAL_VALUE in values
    options = [v for v in values if v != OPTIONAL_VALUE] or [OPTIONAL_VALUE]
    first = options[0]
    extra = {"optional": True} if optional else {}
    rules: dict[str, Any] = {path: {"mode": "optional"}} if optional else {}
    if len(options) == 1 and is_answer_object(first):
        # `budget: [{min: [..], max: [..]}]`: one rule per key (`budget.min`).
        expected = {}
        properties = (schema or {}).get("properties") if isinstance(schema, dict) else None
        for key, inner in first.items():
            inner_schema = properties.get(key) if isinstance(properties, dict) else None
            expected[key], inner_rules = argument_rules(f"{path}.{key}", inner, mode, inner_schema)
            rules.update(inner_rules)
        return expected, rules
    if len(options) == 1 and isinstance(first, list) and first and all(is_answer_object(v) for v in first):
        # `conditions: [[{field: [..]}, {field: [..]}]]`: one rule per item and key (`conditions.0.field`),
        # which pairs the items by position, as the checker does.
        expected = []
        for i, item in enumerate(first):
            value, inner_rules = argument_rules(f"{path}.{i}", [item], mode)
            expected.append(value)
            rules.update(inner_rules)
        return expected, rules
    if mode == "checker":
        return first, {path: {"one_of": options, **checker_rule(schema, options), **extra}}
    if mode == "exact" and len(options) == 1:
        return first, {path: {"mode": "exact", **extra}}
    return first, {path: {"one_of": options, **extra}}


def parameter_schema(entry: Entry, tool: str, arg: str) -> dict | None:
    """The question's schema of `arg` of the function the goal calls (None when the question does not say)."""
    for function in entry.functions:
        if str(function.get("name", "")).replace(".", "_") == tool:
            properties = (function.get("parameters") or {}).get("properties") or {}
            return properties.get(arg)
    return None


def tool_goals(entry: Entry, mode: str) -> list[dict]:
    goals = []
    for i, (name, arguments) in enumerate(entry.ground_truth.items()):
        tool = tool_name(name, entry.functions)
        goal: dict[str, Any] = {"type": "tool_call", "name": f"call_{i}_{tool}", "tool_name": tool}
        if not isinstance(arguments, dict):
            # A malformed possible answer (an argument list where a function should be); the checker still
            # counts it as an expected function, so it stays a goal, on its name alone.
            goal["args"] = {"IGNORE": None}
        else:
            goal["args"], rules = {}, {}
            for arg, values in arguments.items():
                goal["args"][arg], arg_rules = argument_rules(arg, values, mode, parameter_schema(entry, tool, arg))
                rules.update(arg_rules)
            if rules:
                goal["arg_matching"] = rules
        goals.append(goal)
    return goals


def transcript(entry: Entry) -> list[dict]:
    question = entry.question if isinstance(entry.question, str) else json.dumps(entry.question, ensure_ascii=False)
    messages = [{"role": "user", "content": question}]
    if isinstance(entry.result, list):
        calls = [{"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": arguments}}
                 for i, call in enumerate(entry.result) for name, arguments in call.items()]
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
    else:
        messages.append({"role": "assistant", "content": str(entry.result)})
    return messages


def write_suites(entries: list[Entry], work: Path, modes: list[str]) -> None:
    write_config(work)
    transcripts = work / "transcripts"
    transcripts.mkdir(parents=True, exist_ok=True)
    for entry in entries:
        (transcripts / f"{entry.case_id}.json").write_text(
            json.dumps(transcript(entry), ensure_ascii=False, indent=1), encoding="utf-8")
    by_category: dict[str, list[Entry]] = {}
    for entry in entries:
        by_category.setdefault(entry.category, []).append(entry)
    for mode in modes:
        folder = work / f"suites-{mode}"
        folder.mkdir(parents=True, exist_ok=True)
        for category, group in by_category.items():
            suite = {
                "tags": ["bfcl", category],
                "forbid_extra_calls": True,
                "extra_args": "forbid",
                "cases": [{
                    "id": entry.case_id,
                    "description": f"BFCL v1 {entry.entry_id}; benchmark "
                                   + ("pass" if entry.benchmark_passed else f"fail ({entry.failure.get('error_type')})"),
                    "goal_details": tool_goals(entry, mode),
                    "transcript": f"../transcripts/{entry.case_id}.json",
                } for entry in group],
            }
            write_suite(folder / f"{slug(category)}.yaml", suite,
                        f"tests/bench/bfcl_agreement.py from BFCL v1 {category} (argument mode: {mode})")


# -------------------------------------------------------------------------------------- running

# ------------------------------------------------------------------------------------ reporting

COUNT_ERRORS = ("wrong_count", "decoder_failed")  # the checker's failures for a wrong number of calls


def reason_agreement(entries: list[Entry], outcome: Outcome) -> tuple[int, int]:
    """Failing for the same reason: of the entries both sides fail, how many agree on whether the number of
    calls was wrong (checker: wrong_count, or no calls decoded; evalrun: calls and goals differ in number)
    rather than a call's name or arguments. Returns (agreed, entries both fail)."""
    agreed = total = 0
    for entry in entries:
        case = outcome.cases[entry.case_id]
        if entry.benchmark_passed or case["status"] == "passed":
            continue
        total += 1
        bench_count = any(kind in str(entry.failure.get("error_type")) for kind in COUNT_ERRORS)
        ours_count = len(case.get("calls") or []) != len(case.get("goals") or [])
        agreed += bench_count == ours_count
    return agreed, total


def print_mode(entries: list[Entry], outcome: Outcome, show: bool, kept: bool) -> None:
    agreed, confusion, disagreements = agreement(entries, outcome)
    n = len(entries)
    print(f"\n== argument mode: {outcome.mode} ==" + (f"  (report: {outcome.report_path})" if kept else ""))
    print(f"agreement: {agreed / n:.4f} ({agreed}/{n})")
    print("confusion matrix (rows: benchmark, columns: evalrun):")
    print_confusion(confusion)
    for category in dict.fromkeys(e.category for e in entries):
        group = [e for e in entries if e.category == category]
        ok, matrix, _ = agreement(group, outcome)
        print(f"  {category:28} {ok / len(group):.4f} ({ok}/{len(group)})  "
              f"pass/pass {matrix[(True, True)]}, pass/fail {matrix[(True, False)]}, "
              f"fail/pass {matrix[(False, True)]}, fail/fail {matrix[(False, False)]}")
    same, both = reason_agreement(entries, outcome)
    print(f"reasons: of {both} entries both fail, {same} agree on wrong call count vs wrong name/arguments")
    if disagreements:
        print(f"disagreements: {len(disagreements)}")
    for entry in disagreements:
        verdict = "passed" if outcome.status[entry.case_id] == "passed" else "failed"
        bench = "pass" if entry.benchmark_passed else f"fail ({entry.failure.get('error_type')})"
        print(f"- {entry.entry_id}: benchmark {bench}, evalrun {verdict}")
        if entry.failure:
            for line in entry.failure.get("error") or []:
                print(f"    benchmark: {str(line)[:300]}")
        for line in outcome.failures.get(entry.case_id) or []:
            print(f"    evalrun: {line[:300]}")
        if show:
            print(f"    expected: {json.dumps(entry.ground_truth, ensure_ascii=False)[:600]}")
            print(f"    model:    {json.dumps(entry.result, ensure_ascii=False)[:600]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path, metavar="PATH", help="a bfcl-v1 folder (question/, possible_answer/, ...)")
    parser.add_argument("--model", help="the model under result/ and score/ (default: the only one)")
    parser.add_argument("--category", action="append", metavar="NAME",
                        help="only this category (repeatable; default: every category with all four files)")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="write the suites, transcripts and reports here and keep them (default: a temporary folder)")
    parser.add_argument("--show-disagreements", action="store_true",
                        help="also print, for each disagreement, the possible answer and the model's calls")
    parser.add_argument("--arg-mode", choices=("all",) + ARG_MODES, default="all",
                        help="how acceptable values are compared (default: all; one_of is the headline)")
    args = parser.parse_args(argv)
    modes = list(ARG_MODES) if args.arg_mode == "all" else [args.arg_mode]

    temporary = None
    try:
        root = args.path
        if not root.is_dir():
            raise Broken(f"{root}: no such folder")
        model = pick_model(root, args.model)
        categories = category_files(root, model)
        if args.category:
            unknown = sorted(set(args.category) - set(categories))
            if unknown:
                raise Broken(f"no complete category {', '.join(unknown)} (have: {', '.join(categories)})")
            categories = {c: f for c, f in categories.items() if c in args.category}
        if not categories:
            raise Broken(f"{root}: no category has question, possible_answer, result and score files for {model}")
        entries = [e for category, files in categories.items() for e in read_category(category, files)]
        work, temporary = prepare_workspace(args.keep, ARG_MODES, "bfcl-agreement-")
        write_suites(entries, work, modes)
        outcomes = [run_evalrun(work, mode) for mode in modes]

        print(f"model: {model}; entries: {len(entries)} in {len(categories)} categor"
              f"{'y' if len(categories) == 1 else 'ies'}: "
              + ", ".join(f"{c} {sum(e.category == c for e in entries)}" for c in categories))
        bench = Counter(e.benchmark_passed for e in entries)
        print(f"benchmark verdicts: {bench[True]} pass, {bench[False]} fail")
        kinds = Counter(e.failure.get("error_type") for e in entries if e.failure)
        print("benchmark failure types: " + ", ".join(f"{k} {v}" for k, v in kinds.most_common()))
        for outcome in outcomes:
            print_mode(entries, outcome, args.show_disagreements, kept=bool(args.keep))
        if len(outcomes) > 1:
            print("\n" + summary_line(entries, outcomes))
        if args.keep:
            print(f"kept: {work}")
        return 0
    except Broken as exc:
        print(f"bfcl_agreement: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head`
        sys.stderr.close()
        return 0
    finally:
        if temporary:
            shutil.rmtree(temporary, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
