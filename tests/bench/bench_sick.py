"""The offline cascade (no judge) on the SICK test set: how many contradictions pass, how many near-paraphrases.

    .venv/bin/python tests/bench/bench_sick.py PATH/SICK_test_annotated.txt
    .venv/bin/python tests/bench/bench_sick.py PATH/SICK_test_annotated.txt --baseline /tmp/main-export
    .venv/bin/python tests/bench/bench_sick.py PATH/SICK.txt --show-passed  # the full file: its TEST rows

SICK (Marelli et al., 2014; CC BY-NC-SA 3.0) is not shipped with evalrun: pass the path of its test split
(4,927 pairs, tab-separated: pair_ID, sentence_A, sentence_B, relatedness_score, entailment_judgment, with
or without that header) or of the full SICK.txt (its SemEval_set column picks the TEST rows).

Each pair is compared as a text goal's answer is: `expected` = sentence_A, `actual` = sentence_B, then
the other way round. Printed for the cascade with embeddings (all-MiniLM-L6-v2, the default) and without
(rapidfuzz), at the default similarity_threshold:
- contradictions: the share of SICK's CONTRADICTION pairs that pass (a false pass), A->B, B->A, either;
- near-paraphrases: the share of ENTAILMENT pairs rated at least 4.5 of 5 for relatedness that pass
  (the answer says nearly the same thing); all ENTAILMENT pairs too.
Sentence vectors are kept in --cache-dir, so a rerun loads the model only for sentences it has not seen.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import pickle
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NEAR_PARAPHRASE = 4.5  # relatedness (1-5) from which an entailment says nearly the same thing
MODES = ("embeddings", "rapidfuzz")
DEFAULT_CACHE = Path("/tmp/evalrun-bench-sick")


@dataclass(frozen=True)
class SickPair:
    id: str
    a: str
    b: str
    relatedness: float
    label: str  # CONTRADICTION, ENTAILMENT or NEUTRAL


def read_sick(path: Path) -> list[SickPair]:
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    header = rows[0] if rows and rows[0][0] == "pair_ID" else None
    if header is None:  # the test split without its header line
        return [SickPair(r[0], r[1].strip(), r[2].strip(), float(r[3]), r[4]) for r in rows if len(r) >= 5]
    column = {name: index for index, name in enumerate(header)}
    label = "entailment_label" if "entailment_label" in column else "entailment_judgment"
    pairs = []
    for row in rows[1:]:
        if len(row) < len(header) or ("SemEval_set" in column and row[column["SemEval_set"]] != "TEST"):
            continue
        pairs.append(SickPair(row[column["pair_ID"]], row[column["sentence_A"]].strip(),
                              row[column["sentence_B"]].strip(), float(row[column["relatedness_score"]]),
                              row[column[label]]))
    return pairs


class CachedEmbedder:
    """The default MiniLM embedder with its sentence vectors kept on disk between runs."""

    model_id = None  # keeps the cascade's own per-pair score cache out of the way

    def __init__(self, cache_dir: Path):
        from runner.score.embeddings import MiniLMEmbedder

        self._inner = MiniLMEmbedder()
        self._file = cache_dir / f"vectors-{self._inner.model_id.replace('/', '_')}.pickle"
        self._vectors: dict[str, Any] = {}
        try:
            self._vectors = pickle.loads(self._file.read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError):
            pass

    def encode_many(self, texts: list[str]) -> None:
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            self._inner.encode_many(missing)
            self._vectors.update((t, self._inner._cache[t]) for t in missing)
            self._file.parent.mkdir(parents=True, exist_ok=True)
            self._file.write_bytes(pickle.dumps(self._vectors))

    def similarity(self, a: str, b: str) -> float:
        self.encode_many([a, b])
        return max(-1.0, min(1.0, float(self._vectors[a] @ self._vectors[b])))


def run_mode(mode: str, pairs: list[SickPair], cache_dir: Path) -> dict:
    from runner.score.cascade import Cascade, CascadeSettings
    from runner.score.facts import canonical_text

    embedder = CachedEmbedder(cache_dir) if mode == "embeddings" else None
    cascade = Cascade(CascadeSettings(use_embeddings=mode == "embeddings"), embedder=embedder)
    if embedder is not None:
        embedder.encode_many([canonical_text(text) for pair in pairs for text in (pair.a, pair.b)])
    wall, cpu = time.perf_counter(), time.process_time()
    verdicts = {}
    for pair in pairs:
        forward = cascade.compare(pair.a, pair.b, context="the agent's answer")
        backward = cascade.compare(pair.b, pair.a, context="the agent's answer")
        verdicts[pair.id] = [forward.matched, backward.matched, forward.reason, backward.reason]
    return {"mode": mode, "verdicts": verdicts, "wall_s": time.perf_counter() - wall,
            "cpu_s": time.process_time() - cpu}


def share(passed: int, total: int) -> str:
    return f"{passed / total:6.1%} ({passed}/{total})" if total else "n/a"


def summary(result: dict, pairs: list[SickPair]) -> dict[str, str]:
    verdicts = result["verdicts"]

    def rates(selected: list[SickPair]) -> tuple[str, str, str]:
        forward = sum(verdicts[p.id][0] for p in selected)
        backward = sum(verdicts[p.id][1] for p in selected)
        either = sum(verdicts[p.id][0] or verdicts[p.id][1] for p in selected)
        return share(forward, len(selected)), share(backward, len(selected)), share(either, len(selected))

    contradictions = [p for p in pairs if p.label == "CONTRADICTION"]
    near = [p for p in pairs if p.label == "ENTAILMENT" and p.relatedness >= NEAR_PARAPHRASE]
    entailments = [p for p in pairs if p.label == "ENTAILMENT"]
    c, n, e = rates(contradictions), rates(near), rates(entailments)
    return {"contradictions A->B": c[0], "contradictions B->A": c[1], "contradictions either way": c[2],
            f"near-paraphrases (>= {NEAR_PARAPHRASE}) A->B": n[0],
            f"near-paraphrases (>= {NEAR_PARAPHRASE}) B->A": n[1],
            "all entailments A->B": e[0], "all entailments B->A": e[1]}


def measure_baseline(directory: Path, sick: Path, args: argparse.Namespace, modes: tuple[str, ...]) -> list[dict]:
    command = [sys.executable, str(Path(__file__).resolve()), str(sick.resolve()), "--json", "--modes",
               ",".join(modes), "--cache-dir", str(args.cache_dir), "--runner-from", str(directory.resolve())]
    done = subprocess.run(command, env=os.environ.copy(), capture_output=True, text=True, cwd=directory)
    if done.returncode != 0:
        raise SystemExit(f"the baseline run failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sick", type=Path, help="SICK_test_annotated.txt, or the full SICK.txt")
    parser.add_argument("--baseline", type=Path, help="another checkout (e.g. `git archive main`) to measure beside")
    parser.add_argument("--modes", default=",".join(MODES), help="embeddings,rapidfuzz (default: both)")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE,
                        help=f"where sentence vectors are kept (default {DEFAULT_CACHE})")
    parser.add_argument("--show-passed", action="store_true", help="list the contradictions that pass (A->B)")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--runner-from", type=Path, help=argparse.SUPPRESS)  # --baseline's subprocess
    args = parser.parse_args(argv)
    if args.runner_from:
        sys.path.insert(0, str(args.runner_from))
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    pairs = read_sick(args.sick)
    modes = tuple(m for m in args.modes.split(",") if m)
    results = [run_mode(mode, pairs, args.cache_dir) for mode in modes]
    if args.json:
        print(json.dumps(results))
        return 0
    labelled = [(f"{r['mode']} (this checkout)", r) for r in results]
    if args.baseline:
        labelled = [(f"{r['mode']} (baseline)", r) for r in measure_baseline(args.baseline, args.sick, args, modes)] \
            + labelled
    counts = {label: sum(p.label == label for p in pairs) for label in ("CONTRADICTION", "ENTAILMENT", "NEUTRAL")}
    print(f"SICK: {len(pairs)} pairs ({', '.join(f'{k.lower()} {v}' for k, v in counts.items())}); "
          f"the offline cascade without a judge at its default threshold; the share of pairs that pass")
    rows = [(label, summary(result, pairs)) for label, result in labelled]
    print(f"{'':<40}" + "".join(f"{label:>30}" for label, _ in rows))
    for measure in rows[0][1]:
        print(f"{measure:<40}" + "".join(f"{values[measure]:>30}" for _, values in rows))
    for result in results:
        print(f"{result['mode']}: {2 * len(pairs)} comparisons in {result['wall_s']:.1f} s wall, "
              f"{result['cpu_s']:.1f} s CPU (sentence vectors encoded before)")
    if args.show_passed:
        for label, result in labelled:
            print(f"\n== contradictions that pass, A->B: {label} ==")
            for pair in pairs:
                verdict = result["verdicts"][pair.id]
                if pair.label == "CONTRADICTION" and verdict[0]:
                    print(f"  {pair.id:>5} {pair.a!r} vs {pair.b!r}: {verdict[2]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
