"""What every check shares: the common options, the context it reads, the verdict it returns, and
the `CheckFamily` record each check module exports (its names, description, options model, function)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from ..llm.calls import CallSummary
    from ..score.cascade import Cascade
    from ..suite.models import Case
    from ..suite.tool_specs import ToolSet
    from ..transcripts.read import Trajectory


class CheckOptions(BaseModel):
    """Options every check takes. Each family subclasses this with its own `type` and options."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    if TYPE_CHECKING:  # each family declares its own `type` (a Literal of its names); every check has one
        type: str


    name: str | None = Field(
        None, min_length=1, title="Check name",
        description="Shown in reports and failure lines. Default: the check's type.", examples=["follows the plan"])
    threshold: float | None = Field(
        None, ge=0, le=1, title="Threshold",
        description="The score (0-1) the check must reach to pass. Each check says its default (1 for most: "
        "everything must match; a lower value gives partial credit).", examples=[0.8])
    weight: float = Field(
        1.0, ge=0, title="Weight",
        description="Recorded with the result, for reports that average checks, and used by a `weighted` composition "
        "over its nested checks; it does not change the case's status.",
        examples=[2])
    gate: bool = Field(
        True, title="Gate",
        description="true (default): a failing check fails the case, and an unscored one makes it unscored. "
        "false: the result is recorded only.", examples=[False])


@dataclass
class CheckContext:
    """Everything a check may read about one case's conversation."""

    case: Case
    trajectory: Trajectory
    cascade: Cascade | None = None  # argument matchers in fuzzy mode use it
    usage: CallSummary | None = None  # model calls recorded for the case (live runs)
    duration_s: float | None = None  # wall time of the case, when measured
    selection: Any | None = None  # select.Selection: the run's --profile, which nested checks also obey
    base_dir: Path | None = None  # the folder of evalrun.yaml: `python` checks import from it
    tools: ToolSet | None = None  # the tools the agent was given (valid_tool_calls), when known


@dataclass
class Verdict:
    """What a check function returns. `passed` None means: passed when score >= threshold."""

    score: float | None = None
    explanation: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)
    passed: bool | None = None
    skipped: str | None = None  # why the check could not apply (nothing recorded, no reference)
    unscored: str | None = None  # why no usable score was reached


Reads = Literal["trajectory", "run"]


@dataclass(frozen=True)
class CheckFamily:
    """One check as the registry knows it. `types[0]` is its name; the rest are aliases (names other
    tools use, so files written for them keep working)."""

    types: tuple[str, ...]
    description: str
    options: type[CheckOptions]
    run: Callable[[Any, CheckContext], Verdict]
    default_threshold: float = 1.0
    needs_model: bool = False
    # "trajectory": decided at scoring time; "run": needs what the finished run measured (time, cost)
    reads: Reads = "trajectory"
    # An alias whose default threshold is not the family's (the tool it comes from means another scale)
    alias_thresholds: tuple[tuple[str, float], ...] = ()

    @property
    def type(self) -> str:
        return self.types[0]

    def default_threshold_for(self, check_type: str) -> float:
        return dict(self.alias_thresholds).get(check_type, self.default_threshold)
