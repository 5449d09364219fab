"""What `evalrun calibrate` prints: the agreement of a check with a person's labels, as console lines.
The library half: labels, agreement and kappa in runner/checks/calibrate.py; running the check in
runner/session/calibrate.py."""
from __future__ import annotations

from ...checks.calibrate import Agreement


def render(agreement: Agreement) -> list[str]:
    """The report, as lines for the console (the judge's words with control characters made visible)."""
    from ...report.console import visible

    def share(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    kappa = share(agreement.kappa) if agreement.kappa is not None else (
        "undefined (every label and verdict the same)" if agreement.decided else "undefined (nothing decided)")
    c = agreement.confusion
    lines = [f"calibrating {agreement.check} on {agreement.total} labelled example(s); the check decided {agreement.decided}",
             f"agreement: {share(agreement.agreement)}", f"Cohen's kappa: {kappa}", "",
             "                 check pass  check fail",
             f"labelled pass    {c['pass']['pass']:>10}  {c['pass']['fail']:>10}",
             f"labelled fail    {c['fail']['pass']:>10}  {c['fail']['fail']:>10}"]
    if agreement.disagreements:
        lines += ["", "disagreements:"] + [f"  {visible(line)}" for line in agreement.disagreements]
    if agreement.undecided:
        lines += ["", "not decided (left out of agreement and kappa):"] + [
            f"  {visible(line)}" for line in agreement.undecided]
    return lines
