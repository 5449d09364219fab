"""Short, readable phrases shared by goal explanations and reports."""
from __future__ import annotations

from typing import Any

from ..results.models import ArgVerdict
from .normalize import show


def message_number(message_index: int) -> int:
    """Messages are numbered from 1 everywhere people read them (explanations and report.json): the
    trajectory's 0-based index becomes a number here, once."""
    return message_index + 1


def message_ref(number: int) -> str:
    """`message 4` for the message numbered 4 (see message_number)."""
    return f"message {number}"


OFFLINE_STAGES = ("embedding", "rapidfuzz")  # their reasons begin "decided offline: " (cascade.py)


def decided_offline(decided_by: str) -> bool:
    """Whether a verdict was reached by the offline stages of the cascade, without a judge."""
    return decided_by in OFFLINE_STAGES


def describe_verdict(v: ArgVerdict) -> str:
    """`username` (strict, decided by exact): expected "nwaters", got "nken".
    `reason` (fuzzy): expected "...", got "..." — decided offline: embeddings 0.62 < threshold 0.70."""
    how = v.mode if decided_offline(v.decided_by) else \
        f"{v.mode}, decided by {v.decided_by}" + (f", score {v.score:.2f}" if v.score is not None else "")
    if v.decided_by == "structure" and v.expected is None:
        return f"`{v.path}` ({how}): {v.reason or 'unexpected argument'}, got {show(v.actual)}"
    got = f"got {show(v.actual)}" if v.present else "missing"
    text = f"`{v.path}` ({how}): expected {show(v.expected)}, {got}"
    # The matcher's reason often restates expected/got; keep it only when it says more (a nested path, a
    # regex, a type, a near miss).
    if v.reason.startswith(_MISSING) and len(v.reason) > len(_MISSING):
        text += v.reason[len(_MISSING):]
    elif v.reason and (v.decided_by == "type" or not v.reason.startswith(("expected", "missing"))):
        text += f" — {v.reason}"
    hint = boolean_hint(v.expected, v.actual) if v.present and not v.matched else None
    return text + (f" — {hint}" if hint else "")


_MISSING = "missing argument"
_YES_NO = {"yes": True, "no": False, "y": True, "n": False, "on": True, "off": False}


def boolean_hint(expected: Any, actual: Any) -> str | None:
    """How to write a boolean in YAML, when a yes/no text met a boolean."""
    if isinstance(expected, str) and isinstance(actual, bool) and expected.strip().lower() in _YES_NO:
        value = "true" if _YES_NO[expected.strip().lower()] else "false"
        return (f"the suite's {show(expected)} is text (evalrun reads only true and false as booleans); "
                f"write `{value}` for the boolean")
    if isinstance(expected, bool) and isinstance(actual, str) and actual.strip().lower() in _YES_NO:
        return (f"the call sent the text {show(actual)}, not a boolean; to accept that text, write it quoted in "
                f"the suite; `{str(expected).lower()}` (unquoted) is the boolean")
    return None


def describe_mismatches(verdicts: list[ArgVerdict]) -> str:
    wrong = [v for v in verdicts if not v.matched]
    return "; ".join(describe_verdict(v) for v in wrong) if wrong else "all arguments match"
