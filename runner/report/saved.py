"""Reading a saved run for the report formats: report.json as plain data, and the few facts every
format derives from it (which suite file a case came from, why it did not pass, the pass rate with
its interval). Nothing here scores: a report shows what the run decided.

A saved run folder is hostile input like any other (a CI artifact from a fork, a hand-edited file):
every report is checked against the models evalrun writes it from (runner.results.models) before a
format, a merge or a comparison reads it, so a string count, a negative or infinite one, a case that
is not an object or an unknown status is refused with the field named instead of crashing mid-way.
It may also hold a value that is a secret on this machine (a run made where it was not one): every
secret of this process is masked as the report is read, so no format, merge or comparison writes it.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ..results.stats import wilson_interval
from ..util.jsontext import json_kind_phrase
from ..util.secrets import Redactor, clip, redact

REPORT_NAME = "report.json"
PROBLEM_STATUSES = ("failed", "error", "unscored")


class NotAReport(ValueError):
    """The path holds no report evalrun wrote; the message says what to give instead."""


def report_file(path: Path) -> Path:
    """`path` itself when it is a file, else the report.json of the run folder it names."""
    target = path / REPORT_NAME if path.is_dir() else path
    if not target.is_file():
        raise NotAReport(f"{path} holds no {REPORT_NAME}: give a run's folder (for example "
                         ".evalrun/reports/latest) or its report.json")
    return target


def load_report(path: Path) -> dict[str, Any]:
    """The report as plain dicts, parsed once and checked against the report models (each case on its
    own, so a report of 50,000 cases never has 50,000 models alive at once). NotAReport names the
    first fields that are wrong."""
    target = report_file(path)
    try:
        with target.open("rb") as source:
            raw = source.read()
        # the text as JSON wrote it: the redactor masks a secret in its JSON-escaped forms too
        data = parse_report_json(redact(raw.decode("utf-8")) if Redactor() else raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise NotAReport(f"{target} is not a report evalrun wrote: {exc}") from None
    problems = report_problems(data)
    if problems:
        raise NotAReport(f"{target} is not a valid evalrun report: {_listed(problems)}")
    return data


def parse_report_json(text: bytes | str) -> Any:
    """JSON as evalrun writes it. A non-finite number (NaN, Infinity, 1e999) is kept as its text, so
    that the field holding it fails validation by name instead of passing as a float."""
    def finite(number: str) -> Any:
        value = float(number)
        return value if math.isfinite(value) else number

    if not may_overflow(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")):
        return json.loads(text, parse_constant=str)  # no number can overflow: skip the per-number hook (2x faster)
    return json.loads(text, parse_constant=str, parse_float=finite)


# Every digit a 0 and every exponent an e ("e+" an "ee"): the shapes of numbers, found by plain searches
# (a regular expression took 1.5 s over 95 MB, these 0.13 s).
_NUMBER_SHAPES = bytes.maketrans(b"0123456789E+", b"0000000000ee")


def may_overflow(text: bytes) -> bool:
    """Whether a JSON number in `text` may be past a float's range (1.8e308): one with an exponent of 100
    and up (1e999), or with an exponent of two digits at most, more than 209 digits before its point (a
    250-digit integer part times 1e60 is infinity too). A superset: digits in strings count too."""
    shapes = text.translate(_NUMBER_SHAPES)
    return b"e000" in shapes or b"0" * 200 in shapes


def report_problems(data: Any, *, with_cases: bool = True) -> list[str]:
    """What makes `data` not a report evalrun wrote, one `field: problem` line each (empty: it is one).
    Types are checked strictly: a count written as "5" or 5.0 is not a count."""
    from ..results.models import CaseResult, RunReport

    if not isinstance(data, dict):
        return [f"the file holds {json_kind_phrase(data)}, not a report object"]
    cases = data.get("cases")
    if with_cases and not isinstance(cases, list):
        return ["cases: " + ("missing" if cases is None else f"expected a list, got {json_kind_phrase(cases)}")]
    problems = _model_problems(RunReport, {**data, "cases": []}, ())
    if not with_cases:
        return problems
    seen: dict[tuple, int] = {}
    for n, case in enumerate(cases or ()):  # a list here (checked above)
        found = _model_problems(CaseResult, case, ("cases", n))
        if not found:  # each result once: a case counted twice would be counted twice in every total
            key = (case["id"], case.get("run"), case.get("repeat"), case.get("variant"))  # a --matrix run: per variant
            if key in seen:
                found = [f"cases[{n}]: case '{case['id']}'" + (f" run {key[1]}" if key[1] is not None else "")
                         + (f" repeat {key[2]}" if key[2] is not None else "")
                         + (f" variant {key[3]}" if key[3] is not None else "")
                         + f" is listed twice (also cases[{seen[key]}])"]
            seen.setdefault(key, n)
        problems += found
        if len(problems) > _SHOWN:
            break  # enough to act on; the rest is not read
    return problems


_SHOWN = 3


def _model_problems(model: type[BaseModel], value: Any, where: tuple) -> list[str]:
    try:
        model.model_validate(value, strict=True)
    except ValidationError as exc:
        return [f"{_field(where + tuple(err['loc']))}: {_message(err)}" for err in exc.errors()[:_SHOWN + 1]]
    return []


def _field(loc: tuple) -> str:
    """`summary.passed`, `cases[3].goals[0].status`: where a value is, as a reader of the file finds it."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else ("." if text else "") + str(part)
    return text or "(the report)"


def _message(err: Mapping[str, Any]) -> str:
    """pydantic's message in the words of a JSON file: an object, not a dictionary or a model instance."""
    message = re.sub(r"a valid dictionary( or instance of \w+)?", "an object", err["msg"])
    if err.get("type") == "value_error":
        return message.removeprefix("Value error, ")
    return message + _got(err)


def _got(err: Mapping[str, Any]) -> str:
    if err.get("type") == "missing":
        return ""
    value = err.get("input")
    shown = json.dumps(value, ensure_ascii=False) if isinstance(value, (str, int, float, bool, type(None))) \
        else json_kind_phrase(value)
    return f" (got {clip(shown, 61)})"


def _listed(problems: list[str]) -> str:
    return "; ".join(problems[:_SHOWN]) + ("; and more" if len(problems) > _SHOWN else "")


def suite_file(case: dict) -> str:
    """The suite file of a case, from its `source` (path:line:column)."""
    source = str(case.get("source") or "")
    parts = source.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        return parts[0]
    return source or "(unknown file)"


def reasons(case: dict) -> list[str]:
    """Why a case did not pass, one line each, in the words the run used."""
    status = case.get("status")
    if status == "failed":
        return [str(line) for line in case.get("failures") or []] or ["failed (no reason was recorded)"]
    if status == "error":
        return [str(case.get("error") or "ended in error (no reason was recorded)")]
    if status == "unscored":
        return [str(case.get("unscored_reason") or "could not be scored (no reason was recorded)")]
    if status == "skipped":
        return [str(case.get("skip_reason") or "skipped")]
    return []


def extra_calls_text(names: list[str]) -> str:
    """`2 extra calls: cancel_order, issue_refund` (a tool called more than once: `get_order ×2`); '' for none."""
    if not names:
        return ""
    counted = {name: names.count(name) for name in dict.fromkeys(names)}
    listed = ", ".join(name if n == 1 else f"{name} ×{n}" for name, n in counted.items())
    return f"{len(names)} extra call{'s' if len(names) > 1 else ''}: {listed}"


def conversation_text(case: dict, *, with_path: bool = True) -> str:
    """Where the case's conversation came from, in the words of every report: `live`, `replayed: <recording>`,
    `replayed (--replay): <file>`, `rescored: <saved conversation>`; '' when the case never got that far."""
    from ..results.models import SOURCE_LABELS

    source = case.get("conversation_source")
    label = SOURCE_LABELS.get(source) if isinstance(source, str) else None
    if label is None:
        return ""
    path = case.get("transcript_path")
    return f"{label}: {path}" if with_path and path and source != "live" else label


def sources_line(cases: list) -> str:
    """`Conversations: 5 live, 8 replayed`: how many of the run's cases came from each source; '' for none."""
    from ..results.models import SOURCE_LABELS

    counted: dict[str, int] = {}
    for case in cases:
        label = conversation_text(case, with_path=False) if isinstance(case, dict) else ""
        if label:
            counted[label] = counted.get(label, 0) + 1
    said = [f"{counted[label]} {label}" for label in SOURCE_LABELS.values() if label in counted]
    return "Conversations: " + ", ".join(said) if said else ""


def one_line_reason(case: dict) -> str:
    lines = reasons(case)
    if not lines:
        return ""
    first = " ".join(lines[0].split())
    return first + (f" (+{len(lines) - 1} more)" if len(lines) > 1 else "")


def pass_rate(summary: dict) -> tuple[float | None, tuple[float, float] | None, int, int]:
    """(rate, 95% Wilson interval, passed, decided): over passed + failed cases, as the run counts it."""
    passed = int(summary.get("passed") or 0)
    decided = passed + int(summary.get("failed") or 0)
    if not decided:
        return None, None, passed, 0
    return passed / decided, wilson_interval(passed, decided), passed, decided


def percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def pass_rate_text(summary: dict) -> str:
    rate, interval, passed, decided = pass_rate(summary)
    if rate is None or interval is None:  # both or neither
        return "n/a (no case was passed or failed)"
    return f"{percent(rate)} ({passed}/{decided}; 95% CI {percent(interval[0])}–{percent(interval[1])})"
