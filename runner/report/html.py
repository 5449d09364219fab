"""One self-contained HTML page for a run: opens from disk with no network (styles and script are
inline, no fonts or CDNs). The summary is written here as escaped HTML; the cases travel gzip-compressed
in base64 inside a <script type="application/json"> block (html_data) and a small script decodes their
index to draw the table in batches, and a case's details only when it is opened, so a run of 5,000
cases is a file of a few MB that opens at once.

`write_saved` streams the cases from report.json (one at a time: memory stays flat); `write` takes the
report as plain data. Everything from the run may be agent text: the summary is escaped with
html.escape, the data block holds only base64 and JSON with every <, > and & as a \\u escape, and the
script sets textContent only.
"""
from __future__ import annotations

import html
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from ..results.models import SOURCE_LABELS
from .base import ReportFormat
from .grid import grid_of, html_table as grid_table
from .html_assets import JS
from .html_data import write_data, write_encoded
from .html_split import encode
from .html_style import CSS
from .redteam import html_section as redteam_html
from .repeat_text import auto_repeat_text, in_doubt
from .saved import pass_rate, percent
from .saved_stream import SavedCase, Unstreamable, browser_json, stream_report

_STATUSES = ("passed", "failed", "error", "unscored", "skipped")


def e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def script_json(value: Any) -> str:
    """JSON that is inert inside a <script> element: no <, > or & survive (so neither </script> nor
    <!-- can appear), and no raw line separators (ensure_ascii escapes every non-ASCII character)."""
    return (json.dumps(value, ensure_ascii=True, separators=(",", ":"))
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


def write(report: dict[str, Any], out: TextIO) -> None:
    """The page of a report held as plain data (saved.load_report)."""
    cases = (SavedCase(case, browser_json(case)) for case in report["cases"])
    _page(report, lambda out, extra: write_data(cases, out, extra), out)


def write_saved(path: Path, out: TextIO) -> None:
    """The page of the run saved at `path`: cut into its cases and made on every core (html_split), or
    when that cannot be proved right, read one case at a time (saved_stream). Unstreamable when the file
    is not a valid report in evalrun's layout: the caller discards `out` and uses `write`."""
    split = encode(path)
    if split is not None and "matrix" in split[0]:
        raise Unstreamable("a --matrix run's grid reads every case first")  # the caller reads it whole (write)
    if split is not None:
        header, encoded = split
        _page(header, lambda out, extra: write_encoded(encoded.chunks, encoded.starts, encoded.rows, out, extra), out)
        return
    header, streamed = stream_report(path)
    if "matrix" in header:
        raise Unstreamable("a --matrix run's grid reads every case first")
    _page(header, lambda out, extra: write_data(streamed, out, extra), out)


def _page(report: dict[str, Any], write_cases: Callable[[TextIO, dict[str, str]], Any], out: TextIO) -> None:
    summary = report["summary"]
    title = f"evalrun report {report.get('run_id', '')}".strip()
    out.write('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
              '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
              "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
              "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
              f"<title>{e(title)}</title>\n<style>{CSS}</style></head>\n<body>\n")
    _summary(out, report)
    grid = grid_of(report) if "cases" in report else None  # --matrix: a row per case, a column per variant
    if grid is not None:
        out.write(grid_table(grid))
    out.write(redteam_html(summary.get("redteam")))
    out.write("<main>\n<h2>Cases</h2>\n<div class=\"toolbar\">\n")
    for status in _STATUSES:
        count = int(summary.get(status) or 0)
        out.write(f'<label class="s-{status}"><input type="checkbox" class="status-filter" value="{status}" checked> '
                  f"{status} ({count})</label>\n")
    out.write('<button id="only-problems" type="button">only problems</button>\n'
              '<input id="search" type="search" placeholder="search id, tag, description, reason…" '
              'aria-label="search cases">\n<span id="case-count" class="muted">reading the cases…</span>\n</div>\n'
              '<div id="data-problem" class="warn" hidden></div>\n'
              '<table id="cases"><thead><tr><th>status</th><th>case</th><th class="col-file">file</th>'
              '<th class="col-why">why</th><th>completion</th><th class="col-time">time</th></tr></thead>'
              '<tbody id="case-rows"></tbody></table>\n'
              '<div class="more"><button id="more" type="button" hidden>show more</button></div>\n'
              '<p class="muted">Problems first (cases that fell behind the baseline, then failed, errored and '
              'unscored ones), then skipped and passed cases. Click a case for its conversation, tool calls and '
              'verdicts; <code>report.html#case=ID</code> opens one.</p>\n</main>\n')
    baseline = summary.get("baseline") or {}
    write_cases(out, {"regressed": script_json(baseline.get("newly_failing") or []),
                            "fixed": script_json(baseline.get("newly_passing") or []),
                            "sources": script_json(SOURCE_LABELS)})  # live or replayed, in the console's words
    out.write(f"<script>{JS}</script>\n</body></html>\n")


def _summary(out: TextIO, report: dict) -> None:
    summary = report["summary"]
    rate, interval, passed, decided = pass_rate(summary)
    not_run = summary.get("not_run") or []
    out.write(f"<header>\n<h1>evalrun report</h1>\n<div class=\"muted\">run {e(report.get('run_id', ''))} · "
              f"started {e(report.get('started_at', ''))} · {e(summary.get('duration_s', 0))}s · "
              f"evalrun {e(report.get('evalrun_version', ''))}</div>\n")
    if report.get("agent"):
        out.write(f'<div id="agent">Every live case was played by agent <code>{e(report["agent"])}</code> '
                  "(--agent)</div>\n")
    if summary.get("interrupted") or summary.get("stop_reason"):
        out.write(f'<div class="warn" id="stopped"><b>The run stopped early</b> '
                  f"({e(summary.get('stop_reason') or 'interrupted')}): {len(not_run)} case(s) did not run.</div>\n")
    out.write('<div class="chips">\n')
    rate_text = "n/a" if rate is None else percent(rate)
    ci = "" if interval is None else f"95% CI {percent(interval[0])}–{percent(interval[1])} · {passed}/{decided}"
    out.write(f'<div class="chip" id="pass-rate"><span class="muted">pass rate</span><b>{e(rate_text)}</b>'
              f'<span class="muted">{e(ci)}</span></div>\n')
    out.write(f'<div class="chip"><span class="muted">cases</span><b>{e(summary.get("total", 0))}</b></div>\n')
    for status in _STATUSES:
        out.write(f'<div class="chip s-{status}"><span class="muted">{status}</span>'
                  f'<b>{int(summary.get(status) or 0)}</b></div>\n')
    if not_run:
        out.write(f'<div class="chip"><span class="muted">not run</span><b>{len(not_run)}</b></div>\n')
    out.write("</div>\n")
    means = [(label, summary.get(key)) for label, key in (("journey completion", "mean_journey_completion"),
                                                         ("tool-call precision", "mean_tool_call_precision"),
                                                         ("tool-call recall", "mean_tool_call_recall"))]
    shown = " · ".join(f"{label} {percent(value)}" for label, value in means if value is not None)
    if shown:
        out.write(f'<div id="means">Means: {e(shown)}</div>\n')
    usage = summary.get("model_usage") or {}
    if usage.get("calls"):
        cost = f" · ${usage['cost_usd']:.4f}" if usage.get("cost_usd") is not None else " · cost unknown"
        roles = ", ".join(f"{role} {totals.get('calls', 0)}" for role, totals in (usage.get("by_role") or {}).items())
        out.write(f'<div id="usage">Model calls: {e(usage["calls"])} ({e(usage.get("cached", 0))} cached, '
                  f'{e(usage.get("errors", 0))} errors{e("; " + roles) if roles else ""}) · tokens '
                  f'{e(usage.get("prompt_tokens", 0))} prompt + {e(usage.get("completion_tokens", 0))} completion'
                  f"{e(cost)}</div>\n")
    if summary.get("judge_fallback_cases"):
        out.write(f'<div class="warn">{e(summary["judge_fallback_cases"])} case(s) rest on verdicts reached without '
                  "the judge, which failed.</div>\n")
    repeats = summary.get("repeats") or {}
    if repeats.get("runs"):
        auto = repeats.get("auto")
        n = str(auto["min"] if auto else repeats["runs"])  # --repeat auto: k up to the runs every case made
        at, hat = repeats.get("pass_at_k") or {}, repeats.get("pass_hat_k") or {}
        flaky = repeats.get("flaky") or []
        if auto:
            doubt = in_doubt(repeats)
            out.write(f'<div id="repeat-auto">{e(auto_repeat_text(repeats))}{":" if doubt else ""}'
                      + "".join(f" <code>{e(case_id)}</code>" for case_id in doubt[:20]) + "</div>\n")
        out.write(f'<div id="repeats">Repeats: {e("auto" if auto else n)} per case '
                  f'(policy {e(repeats.get("policy"))}) · pass@1 '
                  f'{e(percent(at.get("1")))} · pass@{e(n)} {e(percent(at.get(n)))} · pass^1 {e(percent(hat.get("1")))} '
                  f'· pass^{e(n)} {e(percent(hat.get(n)))} · {len(flaky)} flaky'
                  + ("".join(f" <code>{e(case_id)}</code>" for case_id in flaky[:20]) if flaky else "") + "</div>\n")
    baseline = summary.get("baseline") or {}
    if baseline:
        out.write(f'<div id="baseline">Baseline {e(baseline.get("baseline"))}: '
                  f'{len(baseline.get("newly_failing") or [])} newly failing, '
                  f'{len(baseline.get("newly_passing") or [])} newly passing of {e(baseline.get("compared"))} compared '
                  f'(exact McNemar p = {e(format(float(baseline.get("p_value", 1)), ".3g"))})</div>\n')
    if summary.get("exit_reason"):
        out.write(f'<div id="exit-reason"><b>Exit:</b> {e(summary["exit_reason"])}</div>\n')
    if not_run:
        out.write(f"<details><summary>{len(not_run)} case(s) not run</summary><ul>"
                  + "".join(f"<li><code>{e(case_id)}</code></li>" for case_id in not_run) + "</ul></details>\n")
    out.write("</header>\n")


FORMAT = ReportFormat("html", "one self-contained HTML page: summary, filterable cases, conversations, verdicts",
                      "report.html", write, write_saved=write_saved)
