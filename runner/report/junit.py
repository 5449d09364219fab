"""JUnit XML, the format CI servers (Jenkins, GitLab, GitHub test reporters) read: one <testsuite> per
suite file, one <testcase> per case. A failed case is a <failure> with its explanation, an errored or
unscored one an <error> with the reason, a skipped one <skipped>; cases a stopped run never reached
are <skipped> in a testsuite of their own. Run facts (agents, pass rate, metric means) are
<properties>; a case's metrics go to its <system-out> (the schema gives test cases no properties).

Agent text reaches attributes and text here: it is escaped, and the characters XML 1.0 cannot carry at
all (control characters, lone surrogates) are written as visible escapes such as \\x1b.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, TextIO

from .base import ReportFormat
from .grid import cost_text, rate_text
from .saved import conversation_text, extra_calls_text, one_line_reason, pass_rate_text, reasons, suite_file

# Everything outside XML 1.0's Char production: C0 controls but tab/newline/return, surrogates, U+FFFE/F.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_METRICS = ("journey_success", "journey_completion", "tool_call_precision", "tool_call_recall",
            "tool_parameter_f1", "text_match", "turns")


def xml_safe(text: Any) -> str:
    """`text` with what XML 1.0 forbids made visible (\\x1b, \\ud800); not yet escaped."""
    return _NOT_XML.sub(lambda m: repr(m.group())[1:-1], str(text))


def text(value: Any) -> str:
    return xml_safe(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def attr(value: Any) -> str:
    """An attribute value in double quotes; newlines and tabs kept as character references (a parser
    would otherwise fold them into spaces)."""
    return (text(value).replace('"', "&quot;").replace("\n", "&#10;").replace("\r", "&#13;")
            .replace("\t", "&#9;"))


def _seconds(value: Any) -> str:
    try:
        return f"{max(float(value), 0.0):.3f}"
    except (TypeError, ValueError):
        return "0.000"


def write(report: dict[str, Any], out: TextIO) -> None:
    summary, cases = report["summary"], report["cases"]
    by_file: dict[str, list[int]] = {}  # positions only: the cases stay where they are
    for position, case in enumerate(cases):
        by_file.setdefault(suite_file(case), []).append(position)
    not_run = list(summary.get("not_run") or [])
    problems = int(summary.get("error") or 0) + int(summary.get("unscored") or 0)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(f'<testsuites name="evalrun" tests="{len(cases) + len(not_run)}" failures="{summary.get("failed", 0)}" '
              f'errors="{problems}" time="{_seconds(summary.get("duration_s"))}">\n')
    for file_name, positions in by_file.items():
        _suite(out, file_name, [cases[p] for p in positions], report)
    if not_run:
        _not_run_suite(out, not_run, summary)
    out.write("</testsuites>\n")


def _suite(out: TextIO, file_name: str, cases: list[dict], report: dict) -> None:
    counts = dict.fromkeys(("failed", "error", "unscored", "skipped"), 0)
    for case in cases:
        if case.get("status") in counts:
            counts[case["status"]] += 1
    time = sum(float(case.get("duration_s") or 0) for case in cases)
    out.write(f'  <testsuite name="{attr(file_name)}" tests="{len(cases)}" failures="{counts["failed"]}" '
              f'errors="{counts["error"] + counts["unscored"]}" skipped="{counts["skipped"]}" '
              f'time="{_seconds(time)}" timestamp="{attr(report.get("started_at", ""))}" file="{attr(file_name)}">\n')
    _properties(out, _run_properties(report))
    for case in cases:
        _case(out, file_name, case)
    out.write("  </testsuite>\n")


def _run_properties(report: dict) -> list[tuple[str, Any]]:
    summary, config = report["summary"], report.get("config") or {}
    props: list[tuple[str, Any]] = [("evalrun_version", report.get("evalrun_version", "")),
                                    ("run_id", report.get("run_id", "")),
                                    ("pass_rate", pass_rate_text(summary))]
    agents = config.get("agents") or {}
    if agents:
        props.append(("agents", ", ".join(f"{name} ({(spec or {}).get('type', '?')})" for name, spec in agents.items())))
    if config.get("default_agent"):
        props.append(("default_agent", config["default_agent"]))
    if report.get("agent"):
        props.append(("agent", report["agent"]))  # --agent: it played every live case
    for variant in (report.get("matrix") or {}).get("variants") or ():  # --matrix: each column of the grid
        props.append((f"matrix[{variant.get('id')}]", f"pass rate {rate_text(variant)}, cost {cost_text(variant)}, "
                                                      f"{(variant.get('verdict') or {}).get('reason', '')}"))
    for name in ("mean_journey_completion", "mean_tool_call_precision", "mean_tool_call_recall"):
        if summary.get(name) is not None:
            props.append((name, f"{summary[name]:.4f}"))
    usage = summary.get("model_usage") or {}
    if usage.get("calls"):
        props += [("model_calls", usage["calls"]), ("prompt_tokens", usage.get("prompt_tokens", 0)),
                  ("completion_tokens", usage.get("completion_tokens", 0))]
        if usage.get("cost_usd") is not None:
            props.append(("cost_usd", f"{usage['cost_usd']:.6f}"))
    return props


def _properties(out: TextIO, props: Iterable[tuple[str, Any]]) -> None:
    out.write("    <properties>\n")
    for name, value in props:
        out.write(f'      <property name="{attr(name)}" value="{attr(value)}"/>\n')
    out.write("    </properties>\n")


def _case(out: TextIO, file_name: str, case: dict) -> None:
    status = case.get("status")
    name = case.get("id", "")
    if case.get("run") is not None:
        name = f"{name} (run {case['run']})"
    if case.get("repeat") is not None:  # --repeat N: one testcase per run, told apart
        name = f"{name} (repeat {case['repeat']})"
    if case.get("variant") is not None:  # --matrix: one testcase per variant, named by it
        name = f"{name} [{case['variant']}]"
    out.write(f'    <testcase name="{attr(name)}" classname="{attr(file_name)}" '
              f'time="{_seconds(case.get("duration_s"))}">\n')
    if status in ("failed", "error", "unscored"):
        tag = "failure" if status == "failed" else "error"
        body = "\n".join(reasons(case))
        out.write(f'      <{tag} type="{status}" message="{attr(one_line_reason(case))}">{text(body)}</{tag}>\n')
    elif status == "skipped":
        out.write(f'      <skipped message="{attr(one_line_reason(case))}"/>\n')
    lines = _case_facts(case)
    if lines:
        out.write(f"      <system-out>{text(chr(10).join(lines))}</system-out>\n")
    out.write("    </testcase>\n")


def _case_facts(case: dict) -> list[str]:
    lines = [f"source: {case.get('source', '')}"]
    if conversation_text(case):  # live, or a recording replayed (no agent called)
        lines.append(f"conversation: {conversation_text(case)}")
    if case.get("description"):
        lines.append(f"description: {case['description']}")
    metrics = case.get("metrics") or {}
    for name in _METRICS:
        if metrics.get(name) is not None:
            lines.append(f"{name}: {metrics[name]}")
    for goal in case.get("goals") or []:
        mark = "ok" if goal.get("achieved") else goal.get("status", "")
        lines.append(f"goal {goal.get('name', '')}: {mark}: {goal.get('explanation', '')}")
    if case.get("extra_calls") and isinstance(case["extra_calls"], list):
        lines.append(extra_calls_text([str(name) for name in case["extra_calls"]]))
    for line in case.get("judge_fallbacks") or []:
        lines.append(f"judge fallback: {line}")
    for note in case.get("notes") or []:
        lines.append(f"note: {note}")
    return lines


def _not_run_suite(out: TextIO, not_run: list[str], summary: dict) -> None:
    why = summary.get("stop_reason") or "the run stopped first"
    out.write(f'  <testsuite name="not run" tests="{len(not_run)}" failures="0" errors="0" '
              f'skipped="{len(not_run)}">\n')
    for case_id in not_run:
        out.write(f'    <testcase name="{attr(case_id)}" classname="not run">\n'
                  f'      <skipped message="{attr("not run: " + str(why))}"/>\n    </testcase>\n')
    out.write("  </testsuite>\n")


FORMAT = ReportFormat("junit", "JUnit XML for CI test reporters (Jenkins, GitLab, GitHub)", "junit.xml", write)
