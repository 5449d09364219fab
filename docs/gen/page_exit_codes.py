"""docs/reference/exit-codes.md: evalrun's exit codes with their meanings, from their one definition
(runner.layout.EXIT_CODES, which `evalrun --help` prints too)."""
from __future__ import annotations

from reference_md import Problems, header, table

INTRO = """\
# Exit codes

Every `evalrun` command exits with one of these codes, as pytest does, so CI reads them as it reads pytest's.
A run decides its code once (runner/results/verdict.py); when the code is not the obvious one, its last lines
say why, ending in the code: `every case was skipped (3): nothing was checked: exit 5`. report.json keeps the
decision as `exit_code` and `exit_reason`; `evalrun --help` lists the codes as this page does.
"""


def render() -> str:
    from runner.layout import EXIT_CODES

    problems = Problems()
    rows = [[f"`{c.code}`", problems.need(c.name, f"exit code {c.code} has no name"),
             problems.need(c.meaning, f"exit code {c.code} has no meaning")] for c in sorted(EXIT_CODES)]
    problems.raise_if_any()
    return "\n".join([header("runner.layout.EXIT_CODES"), INTRO, *table(["code", "name", "meaning"], rows)]) \
        + "\n"
