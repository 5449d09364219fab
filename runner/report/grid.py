"""The grid of a --matrix run: a row per case, a column per variant, the cases where variants disagree first; each
variant's pass rate and cost. Built from what a run saved (report.json's `matrix` and its cases, each with its
`variant`), never re-scored; every format draws it from here (console, Markdown, JUnit's properties, HTML)."""
from __future__ import annotations

import html
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..results.summary import repeated_status
from .saved import percent

STATUS_WORDS = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "unscored": "UNSCORED", "skipped": "SKIP",
                "": "not run"}
CONSOLE_AGREEING_ROWS = 30  # a long suite's console grid shows every disagreement and this many other cases


@dataclass
class Grid:
    variants: list[dict]  # report.json's matrix.variants
    rows: list[tuple[str, list[str], bool]] = field(default_factory=list)  # case id, status per variant, disagrees

    @property
    def disagreeing(self) -> int:
        return sum(1 for *_, differs in self.rows if differs)


def grid_of(report: dict, cases: Iterable[Any] | None = None) -> Grid | None:
    """The grid of a saved matrix run (None without a matrix). `cases`: the run's cases when not report["cases"]
    (dicts or CaseResults: only id, variant and status are read)."""
    matrix = report.get("matrix")
    if not isinstance(matrix, dict) or not matrix.get("variants"):
        return None
    policy = ((report.get("summary") or {}).get("repeats") or {}).get("policy") or "all"
    ids = [str(v.get("id")) for v in matrix["variants"]]
    cells: dict[str, dict[str, list[str]]] = {}
    for case in report.get("cases") or () if cases is None else cases:
        get = case.get if isinstance(case, dict) else lambda name, case=case: getattr(case, name, None)
        cells.setdefault(str(get("id")), {}).setdefault(str(get("variant")), []).append(str(get("status")))
    rows = {case_id: [repeated_status(by[v], policy) if v in by else "" for v in ids] for case_id, by in cells.items()}
    first = [case_id for case_id in matrix.get("disagreements") or () if case_id in rows]
    shown = set(first)
    ordered = [(case_id, rows[case_id], True) for case_id in first]
    ordered += [(case_id, statuses, len(set(statuses)) > 1) for case_id, statuses in rows.items()
                if case_id not in shown]
    return Grid(matrix["variants"], ordered)


def rate_text(variant: dict) -> str:
    counts = variant.get("counts") or {}
    passed, failed = int(counts.get("passed") or 0), int(counts.get("failed") or 0)
    return f"{percent(variant.get('pass_rate'))} ({passed}/{passed + failed})"


def cost_text(variant: dict) -> str:
    cost, tokens = variant.get("cost_usd"), variant.get("tokens")
    return ("n/a" if cost is None else f"${cost:.4f}") + ("" if tokens is None else f", {tokens} tokens")


# ----------------------------------------------------------------------------- console

def console_lines(grid: Grid, clean: Callable[[str], str] = str) -> list[str]:
    """The grid as text: each variant numbered with its pass rate and cost, then the cases by number."""
    lines = [f"matrix: {len(grid.variants)} variant(s), {grid.disagreeing} case(s) where they disagree"]
    for n, variant in enumerate(grid.variants, 1):
        lines.append(f"  [{n}] {clean(str(variant.get('id')))}: pass rate {rate_text(variant)}, cost "
                     f"{cost_text(variant)}")
    agreeing = [row for row in grid.rows if not row[2]]
    shown = [row for row in grid.rows if row[2]] + agreeing[:CONSOLE_AGREEING_ROWS]
    width = min(60, max([len("case")] + [len(clean(case_id)) for case_id, *_ in shown]))
    lines.append((f"  {'case':<{width}}  " + "  ".join(f"{f'[{n}]':<8}" for n in range(1, len(grid.variants) + 1)))
                 .rstrip())
    for case_id, statuses, differs in shown:
        name = clean(case_id)
        name = name if len(name) <= width else name[:width - 1] + "…"
        lines.append(f"  {name:<{width}}  " + "  ".join(f"{STATUS_WORDS.get(s, s):<8}" for s in statuses).rstrip()
                     + ("  <- differs" if differs else ""))
    if len(agreeing) > CONSOLE_AGREEING_ROWS:
        lines.append(f"  …and {len(agreeing) - CONSOLE_AGREEING_ROWS} more case(s) where every variant agrees "
                     "(see report.json or the HTML report)")
    return lines


# ----------------------------------------------------------------------------- Markdown

def markdown(grid: Grid, md_text: Callable[[Any], str], max_rows: int) -> str:
    head = "| case | " + " | ".join(md_text(v.get("id")) for v in grid.variants) + " |\n"
    rule = "|---|" + "---|" * len(grid.variants) + "\n"
    rate = "| *pass rate* | " + " | ".join(md_text(rate_text(v)) for v in grid.variants) + " |\n"
    cost = "| *cost* | " + " | ".join(md_text(cost_text(v)) for v in grid.variants) + " |\n"
    body = "".join(f"| {md_text(case_id)}{' ≠' if differs else ''} | "
                   + " | ".join(STATUS_WORDS.get(s, s) for s in statuses) + " |\n"
                   for case_id, statuses, differs in grid.rows[:max_rows])
    more = f"\n…and {len(grid.rows) - max_rows} more case(s)\n" if len(grid.rows) > max_rows else ""
    return (f"### Matrix: {len(grid.variants)} variants, {grid.disagreeing} case(s) where they disagree (≠)\n\n"
            + head + rule + rate + cost + body + more + "\n")


# ----------------------------------------------------------------------------- HTML

def html_table(grid: Grid) -> str:
    """The grid as escaped HTML, in a box that scrolls sideways on a narrow screen (it never cuts a column)."""
    e = lambda value: html.escape(str(value), quote=True)  # noqa: E731
    head = "".join(f'<th scope="col">{e(v.get("id"))}</th>' for v in grid.variants)
    rate = "".join(f"<td>{e(rate_text(v))}</td>" for v in grid.variants)
    cost = "".join(f"<td>{e(cost_text(v))}</td>" for v in grid.variants)
    mark = ' <span title="the variants disagree">≠</span>'
    rows = "".join(f'<tr class="{"differs" if differs else "agrees"}"><th scope="row">{e(case_id)}'
                   f'{mark if differs else ""}</th>'
                   + "".join(f'<td class="s-{e(s or "not-run")}">{e(STATUS_WORDS.get(s, s))}</td>' for s in statuses)
                   + "</tr>" for case_id, statuses, differs in grid.rows)
    return (f'<section id="matrix"><h2>Matrix: {len(grid.variants)} variants, {grid.disagreeing} case(s) where they '
            'disagree</h2>\n<div class="grid-scroll" tabindex="0" role="region" aria-label="matrix grid">'
            f'<table id="matrix-grid"><thead><tr><th scope="col">case</th>{head}</tr></thead>\n<tbody>'
            f'<tr class="rate"><th scope="row">pass rate</th>{rate}</tr><tr class="cost"><th scope="row">cost</th>'
            f"{cost}</tr>{rows}</tbody></table></div></section>\n")
