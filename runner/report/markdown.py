"""A Markdown summary for a pull request or a CI job page (GitHub's step summary): the counts, the pass
rate with its 95% Wilson interval, why the run exits as it does, and the failing cases with one-line
reasons. Agent text is escaped so it cannot break the table, open a code span or inject HTML."""
from __future__ import annotations

import re
from typing import Any, TextIO

from .base import ReportFormat
from .grid import grid_of, markdown as grid_markdown
from .redteam import markdown as redteam_markdown
from .repeat_text import auto_repeat_text, in_doubt
from .saved import (
    PROBLEM_STATUSES,
    conversation_text,
    extra_calls_text,
    one_line_reason,
    pass_rate_text,
    percent,
    sources_line,
)

MAX_ROWS = 100  # GitHub caps a step summary at 1 MiB; the full list is in the other formats
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_MARKDOWN = re.compile(r"([\\`*_\[\]|~])")  # what is markup inside a line (block syntax needs a line start)


def md_text(value: Any) -> str:
    """Inline Markdown for untrusted text: one line (newlines become spaces, other control and
    bidi characters visible escapes), HTML neutralised, Markdown punctuation backslash-escaped."""
    line = str(value).replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    line = _CONTROL.sub(lambda m: repr(m.group())[1:-1], line)
    line = line.replace("&", "&amp;").replace("<", "&lt;")
    return _MARKDOWN.sub(r"\\\1", line)


def write(report: dict[str, Any], out: TextIO) -> None:
    summary, cases = report["summary"], report["cases"]
    counts = [(status, int(summary.get(status) or 0)) for status in ("passed", "failed", "error", "unscored", "skipped")]
    not_run = summary.get("not_run") or []
    headline = ", ".join(f"{n} {status}" for status, n in counts if n) or "no cases finished"
    out.write(f"## evalrun: {headline}\n\n")
    out.write(f"**Pass rate:** {md_text(pass_rate_text(summary))}\n\n")
    if report.get("agent"):
        out.write(f"**Agent:** every live case was played by {md_text(report['agent'])} (--agent)\n\n")
    out.write("| total | passed | failed | error | unscored | skipped | not run |\n")
    out.write("|---:|---:|---:|---:|---:|---:|---:|\n")
    out.write(f"| {summary.get('total', len(cases))} | " + " | ".join(str(n) for _, n in counts)
              + f" | {len(not_run)} |\n\n")
    means = [(label, summary.get(key)) for label, key in (("journey completion", "mean_journey_completion"),
                                                         ("tool-call precision", "mean_tool_call_precision"),
                                                         ("tool-call recall", "mean_tool_call_recall"))]
    shown = [f"{label} {percent(value)}" for label, value in means if value is not None]
    if shown:
        out.write("**Means:** " + md_text(", ".join(shown)) + "\n\n")
    usage = summary.get("model_usage") or {}
    if usage.get("calls"):
        cost = f", ${usage['cost_usd']:.4f}" if usage.get("cost_usd") is not None else ""
        out.write(md_text(f"Model calls: {usage['calls']} ({usage.get('cached', 0)} cached), "
                          f"{usage.get('prompt_tokens', 0)} prompt + {usage.get('completion_tokens', 0)} completion "
                          f"tokens{cost}") + "\n\n")
    sources = sources_line(cases)  # live or replayed: a green count must say which
    if sources:
        out.write(md_text(sources) + "\n\n")
    if summary.get("judge_fallback_cases"):
        out.write(f"**Judge fallbacks:** {summary['judge_fallback_cases']} case(s) rest on verdicts reached without "
                  "the judge, which failed\n\n")
    if summary.get("interrupted") or summary.get("stop_reason"):
        out.write(f"> **Stopped early:** {md_text(summary.get('stop_reason') or 'interrupted')}; "
                  f"{len(not_run)} case(s) not run\n\n")
    repeats = summary.get("repeats") or {}
    if repeats.get("runs"):
        auto = repeats.get("auto")
        n = str(auto["min"] if auto else repeats["runs"])  # --repeat auto: k up to the runs every case made
        at, hat = repeats.get("pass_at_k") or {}, repeats.get("pass_hat_k") or {}
        flaky = repeats.get("flaky") or []
        per_case = "auto" if auto else n
        out.write(md_text(f"Repeats: {per_case} per case (policy {repeats.get('policy')}): pass@1 "
                          f"{percent(at.get('1'))}, pass@{n} {percent(at.get(n))}; pass^1 {percent(hat.get('1'))}, "
                          f"pass^{n} {percent(hat.get(n))}; {len(flaky)} flaky case(s)") + "\n\n")
        if auto:
            doubt = in_doubt(repeats)
            doubt_text = "; in doubt: " + ", ".join(md_text(i) for i in doubt[:20]) if doubt else ""
            out.write(md_text(auto_repeat_text(repeats) or "") + doubt_text + "\n\n")
    baseline = summary.get("baseline") or {}
    if baseline:
        out.write(md_text(f"Baseline {baseline.get('baseline')}: {len(baseline.get('newly_failing') or [])} newly "
                          f"failing, {len(baseline.get('newly_passing') or [])} newly passing of "
                          f"{baseline.get('compared')} compared (exact McNemar p = {baseline.get('p_value', 1):.3g})")
                  + "\n\n")
    if summary.get("exit_reason"):
        out.write(f"**Exit:** {md_text(summary['exit_reason'])}\n\n")
    out.write(redteam_markdown(summary.get("redteam"), md_text))
    grid = grid_of(report)  # --matrix: a row per case, a column per variant
    if grid is not None:
        out.write(grid_markdown(grid, md_text, MAX_ROWS))
    problems = (case for case in cases if case.get("status") in PROBLEM_STATUSES)
    header_written, rows, more = False, 0, 0
    for case in problems:
        if rows == MAX_ROWS:
            more += 1
            continue
        if not header_written:
            out.write("### Cases that did not pass\n\n| case | status | why |\n|---|---|---|\n")
            header_written = True
        repeat = f" (repeat {case['repeat']})" if case.get("repeat") is not None else ""
        source = conversation_text(case, with_path=False)
        status = f"{case.get('status', '')} [{source}]" if source else case.get("status", "")
        variant = f" [{case['variant']}]" if case.get("variant") is not None else ""
        out.write(f"| {md_text(str(case.get('id', '')) + repeat + variant)} | {md_text(status)} | "
                  f"{md_text(one_line_reason(case))} |\n")
        rows += 1
    if more:
        out.write(f"\n…and {more} more (see report.json or the HTML report)\n")
    _passed_with_extra_calls(out, cases)
    if not_run:
        out.write(f"\n**Not run:** {md_text(', '.join(map(str, not_run[:MAX_ROWS])))}"
                  + (f" …and {len(not_run) - MAX_ROWS} more" if len(not_run) > MAX_ROWS else "") + "\n")


def _passed_with_extra_calls(out: TextIO, cases: list) -> None:
    """Green cases whose agent made calls no goal asked for: a reviewer must see them too."""
    found = [case for case in cases if case.get("status") == "passed" and case.get("extra_calls")
             and isinstance(case["extra_calls"], list)]
    if not found:
        return
    out.write("\n### Passed, with calls no goal asked for\n\n| case | extra calls |\n|---|---|\n")
    for case in found[:MAX_ROWS]:
        repeat = f" (repeat {case['repeat']})" if case.get("repeat") is not None else ""
        out.write(f"| {md_text(str(case.get('id', '')) + repeat)} | "
                  f"{md_text(extra_calls_text([str(name) for name in case['extra_calls']]))} |\n")
    if len(found) > MAX_ROWS:
        out.write(f"\n…and {len(found) - MAX_ROWS} more\n")


FORMAT = ReportFormat("md", "a Markdown summary (also appended to $GITHUB_STEP_SUMMARY when set)", "summary.md", write)
