"""The red-team section of every report format: red-team cases grouped by attack and by category, each
group with its attack success rate (failed / decided) and its counts. It reads only the saved summary's
`redteam` entry (runner/results/redteam.py), so `evalrun report RUN_DIR` redraws it from any run.

Attack and category names come from tags in suite files, so they are escaped for each format.
"""
from __future__ import annotations

import html
from typing import Any

COLUMNS = ("cases", "passed", "failed", "unscored", "error")
SUCCESS = "attack success"


def rate_text(rate: float | None) -> str:
    return "n/a" if rate is None else f"{100 * rate:.0f}%"


def _rows(redteam: dict[str, Any]) -> list[tuple[str, str, dict]]:
    """(attack or '(all)', category, group) for the attacks, then the categories."""
    by_attack = redteam.get("by_attack") or []
    rows = [(str(g.get("attack")), str(g.get("category")), g) for g in by_attack]
    categories = [str(g.get("category")) for g in by_attack]
    if len(set(categories)) < len(categories):  # a category holds several attacks: show its total too
        rows += [("(all)", str(g.get("category")), g) for g in redteam.get("by_category") or []]
    return rows


def headline(redteam: dict[str, Any]) -> str:
    """`red team: 16 case(s), attack success 25% (4 of 16 decided)`."""
    groups = redteam.get("by_attack") or []
    failed = sum(int(g.get("failed") or 0) for g in groups)
    decided = failed + sum(int(g.get("passed") or 0) for g in groups)
    return (f"red team: {redteam.get('cases', 0)} case(s), {SUCCESS} {rate_text(redteam.get('attack_success_rate'))} "
            f"({failed} of {decided} decided)")


def console_lines(redteam: dict[str, Any] | None, clean=lambda text: text) -> list[str]:
    """A plain-text table; `clean` makes tag text safe for a terminal."""
    if not redteam:
        return []
    rows = [(clean(a), clean(c), g) for a, c, g in _rows(redteam)]
    attack_w = max([len("attack")] + [len(a) for a, _, _ in rows])
    category_w = max([len("category")] + [len(c) for _, c, _ in rows])
    lines = [headline(redteam),
             f"  {'attack':<{attack_w}}  {'category':<{category_w}}  {SUCCESS:>14}  " + "  ".join(f"{c:>8}" for c in COLUMNS)]
    for attack, category, group in rows:
        lines.append(f"  {attack:<{attack_w}}  {category:<{category_w}}  "
                     f"{rate_text(group.get('attack_success_rate')):>14}  "
                     + "  ".join(f"{int(group.get(c) or 0):>8}" for c in COLUMNS))
    return lines


def markdown(redteam: dict[str, Any] | None, md_text) -> str:
    """A Markdown section; `md_text` escapes untrusted text for a table cell."""
    if not redteam:
        return ""
    out = [f"### Red team\n\n{md_text(headline(redteam))}\n\n",
           "| attack | category | attack success | " + " | ".join(COLUMNS) + " |\n",
           "|---|---|---:|" + "---:|" * len(COLUMNS) + "\n"]
    for attack, category, group in _rows(redteam):
        out.append(f"| {md_text(attack)} | {md_text(category)} | {rate_text(group.get('attack_success_rate'))} | "
                   + " | ".join(str(int(group.get(c) or 0)) for c in COLUMNS) + " |\n")
    return "".join(out) + "\n"


def html_section(redteam: dict[str, Any] | None) -> str:
    if not redteam:
        return ""
    e = lambda value: html.escape(str(value), quote=True)  # noqa: E731
    rows = "".join(
        f"<tr><td><code>{e(attack)}</code></td><td>{e(category)}</td>"
        f"<td class=\"num\">{e(rate_text(group.get('attack_success_rate')))}</td>"
        + "".join(f"<td class=\"num\">{int(group.get(c) or 0)}</td>" for c in COLUMNS) + "</tr>"
        for attack, category, group in _rows(redteam))
    return (f'<section id="redteam"><h2>Red team</h2><p>{e(headline(redteam))}. Attack success: failed / (passed + '
            "failed); a failed red-team case is an attack that worked.</p>"
            "<table><thead><tr><th>attack</th><th>category</th><th>attack success</th>"
            + "".join(f"<th>{c}</th>" for c in COLUMNS) + f"</tr></thead><tbody>{rows}</tbody></table></section>\n")
