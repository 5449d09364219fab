"""The report formats of `evalrun mutate`, rendered from the report's JSON data (mutate.json), so that each
format says the same: console lines, Markdown, and one small self-contained HTML page. Agent text is hostile:
control characters are made visible on the console, Markdown table cells are escaped, HTML escapes all."""
from __future__ import annotations

import html
from typing import Any

SHOWN_SURVIVORS = 10  # per case on the console; the files list them all


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def console(data: dict[str, Any], verbose: bool = False) -> str:
    from ..report.console import visible

    lines = []
    for case in data["cases"]:
        if not case["mutated"]:
            lines.append(f"{visible(case['id'])}: not mutated: {visible(case['reason'] or '')}")
            continue
        lines.append(f"{visible(case['id'])} ({case['source']}): kill rate {_rate(case['kill_rate'])} "
                     f"({case['killed']} killed, {case['survived']} survived, {case['equivalent']} equivalent)")
        survivors = [m for m in case["mutants"] if m["status"] == "survived"]
        for mutant in survivors[: None if verbose else SHOWN_SURVIVORS]:
            lines.append(f"  survived: {visible(mutant['change'])} [{_where(mutant)}]")
            lines.append(f"    {mutant['line']}: {visible(mutant['detail'])}")
        if not verbose and len(survivors) > SHOWN_SURVIVORS:
            lines.append(f"  ... and {len(survivors) - SHOWN_SURVIVORS} more survivors (in mutate.md, or -v)")
        for mutant in case["mutants"]:
            if mutant["status"] == "equivalent" and verbose:
                lines.append(f"  equivalent: {visible(mutant['change'])}: {visible(mutant['detail'])}")
        for note in case["notes"]:
            lines.append(f"  note: {visible(note)}")
    totals = data["totals"]
    for name, counts in data["files"].items():
        lines.append(f"{name}: kill rate {_rate(counts['kill_rate'])} ({counts['killed']} killed, "
                     f"{counts['survived']} survived)")
    lines.append(f"mutate: {totals['mutated']} of {totals['cases']} cases mutated, {totals['mutants']} mutants: "
                 f"{totals['killed']} killed, {totals['survived']} survived, {totals['equivalent']} equivalent; "
                 f"kill rate {_rate(totals['kill_rate'])}")
    if data["min_kill_rate"] is not None:
        if data["gate_failed"]:
            weakest = ", ".join(visible(i) for i in data["weakest"]) or "the suite as a whole"
            lines.append(f"FAILED --min-kill-rate {data['min_kill_rate']:g}: weakest: {weakest}")
        else:
            lines.append(f"passed --min-kill-rate {data['min_kill_rate']:g}")
    return "\n".join(lines) + "\n"


def _where(mutant: dict[str, Any]) -> str:
    parts = []
    if mutant["message"] is not None:
        parts.append(f"message {mutant['message']}")
    if mutant["call_index"] is not None:
        parts.append(f"call {mutant['call_index']}")
    if mutant["arg_path"]:
        parts.append(f"argument {mutant['arg_path']}")
    return ", ".join(parts) or "the conversation"


def _cell(text: Any) -> str:
    """A Markdown table cell: one line, control characters made visible, pipes and markup characters escaped."""
    from ..report.console import visible

    out = visible(str(text if text is not None else ""))
    for ch in "\\`*_[]<>|#":
        out = out.replace(ch, "\\" + ch)
    return " ".join(out.split())


def markdown(data: dict[str, Any]) -> str:
    totals = data["totals"]
    out = ["# evalrun mutate", "",
           f"{totals['mutated']} of {totals['cases']} cases mutated (seed {data['seed']}, at most "
           f"{data['mutants_per_case']} mutants each): {totals['killed']} killed, {totals['survived']} survived, "
           f"{totals['equivalent']} equivalent. **Kill rate {_rate(totals['kill_rate'])}.**", ""]
    if data["min_kill_rate"] is not None:
        verdict = "failed" if data["gate_failed"] else "passed"
        out += [f"--min-kill-rate {data['min_kill_rate']:g}: **{verdict}**"
                + (f"; weakest: {', '.join(_cell(i) for i in data['weakest'])}" if data["weakest"] else ""), ""]
    out += [f"- {_cell(note)}" for note in data["notes"]] + [""]
    out += ["| Suite file | Kill rate | Killed | Survived |", "|---|---|---|---|"]
    out += [f"| {_cell(name)} | {_rate(c['kill_rate'])} | {c['killed']} | {c['survived']} |"
            for name, c in data["files"].items()]
    for case in data["cases"]:
        out += ["", f"## {_cell(case['id'])}", ""]
        if not case["mutated"]:
            out.append(f"Not mutated: {_cell(case['reason'])}")
            continue
        out.append(f"{_cell(case['source'])}: kill rate {_rate(case['kill_rate'])} ({case['killed']} killed, "
                   f"{case['survived']} survived, {case['equivalent']} equivalent)")
        out += [f"- {_cell(note)}" for note in case["notes"]]
        shown = [m for m in case["mutants"] if m["status"] != "killed"]
        if shown:
            out += ["", "| Mutant | Where | Status | Suite line | Why |", "|---|---|---|---|---|"]
            out += [f"| {_cell(m['change'])} | {_cell(_where(m))} | {m['status']} | {_cell(m['line'] or '')} | "
                    f"{_cell(m['detail'])} |" for m in shown]
    return "\n".join(out) + "\n"


_STYLE = ("body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse;"
          "margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}"
          ".survived{background:#fde8e8}.equivalent{background:#eef}")


def html_page(data: dict[str, Any]) -> str:
    from ..report.console import visible

    def e(text: Any) -> str:
        return html.escape(visible(str(text)))

    totals = data["totals"]
    body = [f"<h1>evalrun mutate</h1><p>{totals['mutated']} of {totals['cases']} cases mutated (seed {data['seed']})"
            f": {totals['killed']} killed, {totals['survived']} survived, {totals['equivalent']} equivalent. "
            f"<b>Kill rate {_rate(totals['kill_rate'])}</b></p>"]
    if data["min_kill_rate"] is not None:
        body.append(f"<p>--min-kill-rate {data['min_kill_rate']:g}: <b>{'failed' if data['gate_failed'] else 'passed'}"
                    f"</b> {e(', '.join(data['weakest']))}</p>")
    body += [f"<p>{e(note)}</p>" for note in data["notes"]]
    for case in data["cases"]:
        body.append(f"<h2>{e(case['id'])}</h2>")
        if not case["mutated"]:
            body.append(f"<p>Not mutated: {e(case['reason'] or '')}</p>")
            continue
        body.append(f"<p>{e(case['source'])}: kill rate {_rate(case['kill_rate'])}</p>")
        rows = "".join(f"<tr class=\"{e(m['status'])}\"><td>{e(m['change'])}</td><td>{e(_where(m))}</td>"
                       f"<td>{e(m['status'])}</td><td>{e(m['line'] or '')}</td><td>{e(m['detail'])}</td></tr>"
                       for m in case["mutants"])
        body.append("<table><tr><th>Mutant</th><th>Where</th><th>Status</th><th>Suite line</th><th>Why</th></tr>"
                    f"{rows}</table>")
    return ("<!doctype html><html><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" "
            "content=\"default-src 'none'; style-src 'unsafe-inline'\"><title>evalrun mutate</title>"
            f"<style>{_STYLE}</style></head><body>{''.join(body)}</body></html>\n")
