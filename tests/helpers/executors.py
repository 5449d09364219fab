"""Shared by several test modules (once in tests/run/test_executors.py): ANSWER, CASES, _tool_messages, generate, verdicts,
differences."""
from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli_helpers import write

# Ten rounds of generate()'s 42 variants (7 kinds; kind 5 split by n % 2, kind 6 by n % 3): every variant ten
# times, and still 8 Ray batches on 2 CPUs and ~33 pool batches at -j 4, as 2,000 made (ray_cluster.batches_by_hash,
# replay_pool's batch size). Larger counts are tests/bench/bench_ray.py's and bench_scale.py's.
CASES = 420

ANSWER = "Your booking ABC123 is cancelled; the refund of 120.50 EUR reaches your card in 5 days."


def _tool_messages(name: str, args: dict, answer: str) -> list[dict]:
    return [{"role": "user", "content": "Please cancel my booking."},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]},
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"ok": True})},
            {"role": "assistant", "content": answer}]


def generate(root: Path, count: int) -> None:
    """`count` recorded cases of every kind a replay meets: passing, failing on an argument, a fuzzy text
    answer, checks that pass and fail, skipped, a missing transcript (error), a bad transcript (error)."""
    suites = root / "suites"
    (suites / "t").mkdir(parents=True)
    write(root / "evalrun.yaml", "embeddings: {enabled: false}\n")
    for n in range(count):
        kind = n % 7
        args = {"booking": f"B{n:05d}", "reason": "illness", "amount": n % 50 + 0.5}
        sent = dict(args) if kind != 1 else {**args, "booking": f"X{n:05d}"}  # kind 1: a wrong argument
        answer = ANSWER if kind != 2 else "Cancelled it. Refund 120.5 EUR in five days."
        case = {"id": f"case-{n:05d}", "tags": [f"kind{kind}"], "transcript": f"t/case-{n:05d}.json",
                "goals": {"cancel": ["tell"], "tell": []},
                "goal_details": [
                    {"type": "tool_call", "name": "cancel", "tool_name": "cancel_booking", "args": args,
                     "arg_matching": {"reason": "fuzzy"}},
                    {"type": "text", "name": "tell", "response": ANSWER}]}
        if kind == 3:
            case["checks"] = [{"type": "contains_all", "values": ["ABC123", "refund"]},
                              {"type": "regex", "pattern": r"\b\d+ days\b"}]
        if kind == 4:
            case["checks"] = [{"type": "not_contains", "value": "refund"}]  # fails
        if kind == 5 and n % 2:
            case["skip"] = "not today"
        if kind == 6 and n % 3 == 0:
            case["transcript"] = f"t/missing-{n:05d}.json"  # warned at collection, an error when run
        (suites / f"case-{n:05d}.json").write_text(json.dumps(case))
        transcript = _tool_messages("cancel_booking", sent, answer)
        text = json.dumps(transcript) if not (kind == 6 and n % 3 == 1) else "[{\"role\": \"user\""  # cut short
        (suites / "t" / f"case-{n:05d}.json").write_text(text)


# The cosine of one text pair computed in two processes differs by ~1e-7 (measured up to 1.5e-7): the texts encoded
# in the same batch and the CPU threads torch uses change the float rounding. A run on a cold similarity cache
# computes its own (the cache then keeps the first score written), so two runs side by side may differ there.
EMBEDDING_NOISE = 1e-6
_MISSING = object()


def differences(a: object, b: object, path: str = "cases", embedding: bool = False) -> list[str]:
    """Where two reports' cases differ (`path: a != b`), an embedding score within EMBEDDING_NOISE being equal:
    everything else, its verdict and the reason it prints (two decimals) included, must be the same."""
    if isinstance(a, dict) and isinstance(b, dict):
        embedding = a.get("decided_by") == "embedding" == b.get("decided_by")
        return [found for key in sorted({*a, *b}, key=str)
                for found in differences(a.get(key, _MISSING), b.get(key, _MISSING), f"{path}.{key}", embedding)]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [found for n, (x, y) in enumerate(zip(a, b, strict=True)) for found in differences(x, y, f"{path}[{n}]")]
    if (embedding and path.endswith(".score") and isinstance(a, float) and isinstance(b, float)
            and abs(a - b) <= EMBEDDING_NOISE):
        return []
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def verdicts(report_path: Path) -> list[dict]:
    cases = json.loads(report_path.read_text())["cases"]
    for case in cases:
        case.pop("duration_s")
    return cases
