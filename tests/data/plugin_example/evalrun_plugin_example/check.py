"""`type: shout`: passes when the agent's last reply is written in capital letters."""
from typing import Literal

from runner.checks import CheckContext, CheckFamily, CheckOptions, Verdict


class ShoutOptions(CheckOptions):
    type: Literal["shout"]


def run(options: ShoutOptions, ctx: CheckContext) -> Verdict:
    text = ctx.trajectory.final_text or ""
    shouted = bool(text) and text == text.upper()
    return Verdict(score=1.0 if shouted else 0.0,
                   explanation="the last reply shouts" if shouted else f"the last reply does not shout: {text!r}")


FAMILY = CheckFamily(types=("shout",), description="Passes when the agent's last reply is in capital letters.",
                     options=ShoutOptions, run=run)
