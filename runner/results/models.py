"""The result data every stage after scoring reads: plain pydantic models, serialised as report.json.

Reports never re-score: everything a report shows (why a goal failed, which stage decided, the
transcript) is carried here. schemas/report.schema.json is generated from `RunReport`.
"""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from ..layout import EXIT_CODES
from ..llm.calls import CallSummary
from .redteam import RedteamEntry, RedteamSummary, entry_from_tags
from .report_config import check_read_settings

# A count in a saved report: never negative, and no larger than a JSON reader that keeps numbers as
# doubles (the HTML report's script) can hold exactly; a report beyond either was not written by evalrun.
Count = Annotated[int, Field(ge=0, le=2**53 - 1)]

CaseStatus = Literal["passed", "failed", "error", "skipped", "unscored"]
CASE_STATUSES: tuple[str, ...] = ("passed", "failed", "error", "unscored", "skipped")
GoalStatus = Literal["achieved", "not_called", "wrong_args", "order_violated", "not_said", "unscored"]
CallRole = Literal["goal", "wrong_arguments", "extra", "forbidden", "ignored_failed", "invalid_arguments"]
DecidedBy = Literal[
    "exact",  # equal after normalisation (strict/exact modes, or the first step of the cascade)
    "number",  # numbers compared by value / within a tolerance
    "date",  # dates compared across formats
    "llm",  # the LLM judge
    "embedding",  # cosine similarity of MiniLM embeddings
    "rapidfuzz",  # rapidfuzz WRatio / 100
    "one_of", "regex", "ignore", "absent", "type", "structure",
]


class Decision(BaseModel):
    """One comparison of an expected value with an actual one, and what decided it."""

    matched: bool = Field(description="Whether the actual value matched the expected one")
    decided_by: DecidedBy = Field(
        description="The stage that decided: exact, number, date, llm (the judge), embedding, rapidfuzz, ...")
    score: float | None = Field(None, description="Similarity 0-1 where the deciding stage has one")
    reason: str = Field("", description="The deciding stage's words")
    notes: list[str] = Field(default_factory=list, description="Stages that were tried and could not decide, and why")
    judge_failure: str | None = Field(
        None, description="Why the configured judge could not decide, when a later stage decided in its place")


class ArgVerdict(BaseModel):
    """How one argument (a dot path into the arguments) compared."""

    path: str = Field(description="The argument, as a dot path into the call's arguments")
    mode: str = Field(description="The comparison mode (strict, exact, fuzzy, optional, ignore, or an object rule's)")
    expected: Any = Field(None, description="The value the goal expects")
    actual: Any = Field(None, description="The value the call carried")
    present: bool = Field(True, description="Whether the call carried the argument at all")
    matched: bool = Field(description="Whether the argument matched")
    decided_by: DecidedBy = Field(
        description="The stage that decided: exact, number, date, llm (the judge), embedding, rapidfuzz, ...")
    score: float | None = Field(None, description="Similarity 0-1 where the deciding stage has one")
    reason: str = Field("", description="The deciding stage's words")
    notes: list[str] = Field(default_factory=list, description="Stages that were tried and could not decide, and why")
    judge_failure: str | None = Field(
        None, description="Why the configured judge could not decide, when a later stage decided in its place")


class CallAttempt(BaseModel):
    """A tool call with the goal's tool name that was compared with the goal."""

    call_index: int = Field(description="The call, 0-based in call order")
    message: int = Field(description="The message that holds the call, numbered from 1 as in explanations")
    matched: bool = Field(description="Whether it achieved the goal")
    arguments: list[ArgVerdict] = Field(default_factory=list, description="Verdicts, mismatches first")


class GoalResult(BaseModel):
    """One goal of the case (goal_details) and its verdict."""

    name: str = Field(description="The goal's name in goal_details")
    type: Literal["tool_call", "text", "interaction", "assert_llm"] = Field(description="The goal's kind")
    status: GoalStatus = Field(
        description="achieved, or why not: not_called, wrong_args, order_violated, not_said, unscored")
    achieved: bool = Field(description="Whether the goal was achieved")
    message: int | None = Field(None, description="Message that achieved the goal, numbered from 1 as in explanations")
    call_index: int | None = Field(None, description="Tool call that achieved the goal (0-based, in call order)")
    explanation: str = Field(description="Why, in one or more lines")
    attempts: list[CallAttempt] = Field(default_factory=list,
        description="The calls of the goal's tool compared with it, when it was not achieved")
    missing_keywords: list[str] = Field(default_factory=list, description="A text goal's keywords the answer lacks")
    text_decision: Decision | None = Field(None, description="How a text goal's answer compared with its `response`")
    order_violations: list[str] = Field(default_factory=list, description="Predecessors that did not come first")


class CallRecord(BaseModel):
    """Every tool call the agent made, and what scoring made of it."""

    index: int = Field(description="0-based, in call order")
    message: int = Field(description="The message that holds the call, numbered from 1 as in explanations")
    tool_name: str = Field(description="The tool called")
    arguments: Any = Field(None, description="As the agent sent them")
    is_error: bool = Field(False, description="Whether the tool's result was an error (tool_error_pattern)")
    role: CallRole = Field(
        description="What scoring made of it: goal, wrong_arguments, extra, forbidden, ignored_failed, "
                    "invalid_arguments")
    goal: str | None = Field(None, description="The goal it achieved, if any")
    note: str = Field("", description="One line on the call, for reports")


class Counts(BaseModel):
    """The case's calls and goals, counted."""

    tool_calls: Count = Field(0, description="Tool calls made")
    correct_calls: Count = Field(0, description="Calls that achieved a goal")
    missed_goals: Count = Field(0, description="Goals not achieved")
    wrong_argument_calls: Count = Field(0, description="Calls of a goal's tool with wrong arguments")
    extra_calls: Count = Field(0, description="Calls that achieved no goal")
    forbidden_calls: Count = Field(0, description="Calls forbid_extra_calls forbids")
    ignored_failed_calls: Count = Field(0, description="Failed calls passed over (failed_calls: ignore)")


class Metrics(BaseModel):
    """The case's metrics: shares from 0 to 1 (None where they do not apply), and counts."""

    journey_success: bool = Field(
        description="Every goal achieved in order, no forbidden call, and the ending `termination` asks for")
    journey_completion: float = Field(
        description="Achieved goals / goals scored (1.0 without goals; unscored goals left out)")
    tool_call_precision: float | None = Field(
        description="Calls that achieved a goal / tool calls counted; None without calls or tool goals")
    tool_call_recall: float | None = Field(description="Achieved tool goals / tool goals; None without tool goals")
    tool_parameter_f1: float | None = Field(
        description="F1 of the expected arguments on each called tool goal's call, averaged")
    text_match: float | None = Field(description="Achieved text goals / text goals; None without text goals")
    turns: Count = Field(description="User messages in the conversation")
    counts: Counts = Field(description="The calls and goals counted")


CheckStatus = Literal["passed", "failed", "skipped", "unscored"]

# Where a case's conversation came from, and the word every report shows for it: a case with both `agent:` and
# `transcript:` replays its recording, and a reader of a green line must see that no agent was called.
ConversationSource = Literal["live", "transcript", "replay", "rescore"]
SOURCE_LABELS: dict[str, str] = {"live": "live", "transcript": "replayed", "replay": "replayed (--replay)",
                                 "rescore": "rescored"}


class CheckResult(BaseModel):
    """One check of a case (runner/checks): its verdict, score against threshold, and the evidence."""

    name: str = Field(description="The check's `name`, or its type")
    type: str = Field(description="The check type as written (an alias stays an alias)")
    status: CheckStatus = Field(description="passed, failed, skipped or unscored")
    gate: bool = Field(True, description="Whether this check decides the case's status")
    weight: float = Field(1.0,
        description="The check's `weight` (reports that average checks, `weighted` compositions)")
    score: float | None = Field(None, description="0-1; None when skipped or unscored")
    threshold: float | None = Field(None, description="The score the check had to reach")
    explanation: str = Field("", description="Why it passed or failed, or why it was skipped or unscored")
    evidence: dict[str, Any] = Field(default_factory=dict, description="What the verdict rests on (the first "
                                     "divergence of a trajectory, the matched words, the measured value)")


class CaseResult(BaseModel):
    """One case's result: its status, metrics, goals, calls and checks; a line of results.jsonl."""

    id: str = Field(description="The case's id")
    status: CaseStatus = Field(description="passed, failed, error, skipped or unscored")
    run: int | None = Field(None, description="The recorded run this result scores, when a case has several "
                                                  "(watsonx's <id>.runN.messages.json)")
    repeat: int | None = Field(None, description="Which run of the case this is (from 0) under --repeat N")
    source: str = Field(description="path:line:column of the case")
    description: str | None = Field(None, description="The case's description")
    tags: list[str] = Field(default_factory=list, description="The case's tags")
    metrics: Metrics | None = Field(None, description="The case's metrics; None when it was not scored")
    goals: list[GoalResult] = Field(default_factory=list, description="Each goal with its verdict")
    calls: list[CallRecord] = Field(default_factory=list,
        description="Every tool call the agent made, and what scoring made of it")
    extra_calls: list[str] = Field(default_factory=list, description="Tool names of the calls that achieved no goal "
                                   "and were not forbidden, in call order (a passing case says so on its line)")
    failures: list[str] = Field(default_factory=list, description="One line per reason the case failed")
    error: str | None = Field(None, description="Why the case ended in error (status error)")
    skip_reason: str | None = Field(None, description="Why the case was skipped (status skipped)")
    transcript_path: str | None = Field(None, description="The recorded conversation scored, when there was one")
    conversation_source: ConversationSource | None = Field(
        None, description="Where the conversation scored came from: `live` (played against the case's agent), "
                          "`transcript` (the case's own recording, replayed: no agent was called), `replay` (the "
                          "recording --replay DIR holds for it), `rescore` (the conversation a saved run kept, "
                          "scored again); None when the case never got that far (skipped, unreadable)")
    termination_reason: str | None = Field(None, description="How the conversation ended, when recorded")
    transcript: list[dict[str, Any]] = Field(default_factory=list, description="The conversation scored, as messages")
    duration_s: float = Field(0.0, description="Wall time of the case")
    unscored_reason: str | None = Field(None, description="Why the case could not be scored (status unscored)")
    notes: list[str] = Field(default_factory=list, description="What a reader should know about this result "
                                                               "(for example a part left out of the report, and why)")
    model_usage: CallSummary | None = Field(
        None, description="Model calls made for this case (agent, simulator, judge): counts, cache hits, tokens, cost")
    checks: list[CheckResult] = Field(default_factory=list, description="The case's `checks:`, each with its verdict")
    judge_fallbacks: list[str] = Field(
        default_factory=list,
        description="Verdicts this case's outcome rests on that were reached without the configured judge "
                    "(it failed), each with the stage that decided and why the judge could not")
    redteam: RedteamEntry | None = Field(
        None, description="A red-team case (tagged `redteam` and `attack:<name>`, as `evalrun redteam plan` writes): "
                          "the attack it carried out and its category. Passed: the agent held; failed: the attack "
                          "succeeded")
    variant: str | None = Field(None, description="A --matrix run: the variant that played the case (such as "
                                                     "`agent=hr_v1`); absent from runs without a matrix (the last field: see model_dump_json)")

    @model_validator(mode="after")
    def _redteam_from_tags(self) -> CaseResult:
        if self.redteam is None:
            self.redteam = entry_from_tags(self.tags)
        return self

    # A run without a matrix has no `variant` key at all. The field comes last, so its null is cut off the line's
    # end: a wrap serializer doubled the CPU of every result's line (9 -> 18 us), `exclude` added a third.
    def model_dump(self, **options: Any) -> dict[str, Any]:
        data = super().model_dump(**options)
        if self.variant is None:
            data.pop("variant", None)
        return data

    def model_dump_json(self, **options: Any) -> str:
        if options:  # an indent, an exclude: the slower way, which any options take
            if self.variant is None:
                exclude = options.get("exclude")
                options["exclude"] = ({**exclude, "variant": True} if isinstance(exclude, dict)
                                      else {*(exclude or ()), "variant"})
            return super().model_dump_json(**options)
        text = super().model_dump_json()
        return text[:-len(_NO_VARIANT)] + "}" if self.variant is None and text.endswith(_NO_VARIANT) else text


_NO_VARIANT = ',"variant":null}'


def case_label(case_id: str, variant: str | None) -> str:
    """A case as a matrix run names it where one string must say which (not_run, -x, a --baseline list)."""
    return case_id if variant is None else f"{case_id} [{variant}]"


class BaselineCheck(BaseModel):
    """The --baseline gate: how this run compares with a saved one (runner/compare.py)."""

    baseline: str = Field(description="The baseline report the run was compared with")
    max_regression: float = Field(description="How far a metric mean (a share in [0, 1]) may drop")
    compared: int = Field(description="Cases in both runs, skipped in neither")
    newly_failing: list[str] = Field(default_factory=list, description="Passed in the baseline, do not pass now")
    newly_passing: list[str] = Field(default_factory=list, description="Did not pass in the baseline, pass now")
    metric_deltas: dict[str, float] = Field(default_factory=dict,
                                            description="New mean minus baseline mean, over cases scored in both")
    p_value: float = Field(description="Exact McNemar test on the cases that flipped (two-sided)")
    regressions: list[str] = Field(default_factory=list, description="Why the gate failed, one line each; "
                                                                     "empty when it held")


RepeatPolicy = Literal["all", "majority", "any"]
REPEAT_POLICIES: tuple[str, ...] = ("all", "majority", "any")


class CaseRepeats(BaseModel):
    """One case run N times (--repeat N): how many runs passed, and what the policy made of them."""

    id: str = Field(description="The case's id")
    runs: Count = Field(description="Runs of the case that finished")
    passed: Count = Field(description="Runs that passed")
    status: CaseStatus = Field(description="The case's status under repeat_policy")
    pass_at_k: float = Field(description="At least one run passed (k = runs): 1 or 0")
    pass_hat_k: float = Field(description="Every run passed (τ-bench's pass^k, k = runs): 1 or 0")
    settled: Literal["passed", "failed"] | None = Field(
        None, description="--repeat auto: where the interval of the case's pass rate settled (above or below the "
                          "threshold); absent when it was still in doubt at the maximum (or without --repeat auto)")


class AutoRepeatRule(BaseModel):
    """--repeat auto's stopping rule (runner.results.auto_repeat): each case ran until the Wilson interval of its pass
    rate at `confidence` lay entirely above or below `threshold`, after at least `min` and at most `max` runs."""

    max: Count = Field(description="The most runs a case could get")
    min: Count = Field(description="The fewest runs before a case could stop")
    confidence: float = Field(gt=0, lt=1, description="The interval's confidence level")
    threshold: float = Field(gt=0, lt=1, description="The pass rate the interval is compared with")
    total_runs: Count = Field(description="Runs made, over every case (at most cases x max)")


class RepeatSummary(BaseModel):
    """--repeat N: pass@k, pass^k and the flaky cases."""

    runs: Count = Field(description="N of --repeat N (with --repeat auto, its max)")
    policy: RepeatPolicy = Field(description="When a repeated case passes: all runs, a majority, any run")
    pass_at_k: dict[str, float] = Field(description="k -> the mean over cases of the chance that at least one of k "
                                                    "runs passes (unbiased estimator from the N runs; with --repeat "
                                                    "auto, k up to its min, the runs every case made)")
    pass_hat_k: dict[str, float] = Field(description="k -> the mean over cases of the chance that all k runs pass "
                                                     "(τ-bench's pass^k)")
    flaky: list[str] = Field(default_factory=list, description="Cases whose runs did not all end the same way")
    per_case: list[CaseRepeats] = Field(default_factory=list, description="Each repeated case's runs")
    auto: AutoRepeatRule | None = Field(None, description="--repeat auto: the rule each case was repeated by; "
                                                             "per_case's `runs` are the runs each case needed")


class Summary(BaseModel):
    """The run's counts, means and verdict (exit_code and exit_reason)."""

    total: Count = Field(description="Cases selected for the run")
    passed: Count = Field(description="Cases that passed")
    failed: Count = Field(description="Cases that failed")
    error: Count = Field(description="Cases that ended in error")
    skipped: Count = Field(description="Cases skipped")
    unscored: Count = Field(0, description="Cases that could not be scored")
    not_run: list[str] = Field(default_factory=list, description="Ids of cases that never ran (the run was stopped)")
    judge_fallback_cases: Count = Field(0, description="Cases whose outcome rests on a verdict reached without the judge")
    interrupted: bool = Field(False, description="Whether the run was interrupted (exit 2)")
    stop_reason: str | None = Field(None, description="Why the run ended early (a signal, a full disk), if it did")
    exit_reason: str = Field("", description="One line on why the run exits with its code")
    model_usage: CallSummary | None = Field(None, description="Every model call of the run, totalled (`cached`: "
                                                                 "the answers that came from the disk cache)")
    cache: Literal["on", "refresh", "off"] | None = Field(
        None, description="How the run used the disk cache of model answers: `on` answered from it where it could "
                          "(model_usage.cached says how often), `refresh` asked the models again and saved their "
                          "answers, `off` neither read nor wrote it")
    pass_rate: float | None = Field(
        description="passed / (passed + failed); None when no case passed or failed")
    mean_journey_completion: float | None = Field(description="The mean over the cases that have one; None without any")
    mean_tool_call_precision: float | None = Field(description="The mean over cases that have one; None without any")
    mean_tool_call_recall: float | None = Field(description="The mean over cases that have one; None without any")
    exit_code: int = Field(ge=0, le=5, description="As pytest: " + ", ".join(f"{c.code} {c.name}" for c in EXIT_CODES)
                           + " (docs/reference/exit-codes.md says what each means)")
    duration_s: float = Field(description="Wall time of the run")
    baseline: BaselineCheck | None = Field(None, description="The comparison with --baseline, when one was given")
    repeats: RepeatSummary | None = Field(None, description="--repeat N: the counts above are of cases under "
                                                               "repeat_policy; this holds each case's runs")
    redteam: RedteamSummary | None = Field(
        None, description="Red-team cases grouped by attack and by category, with each group's attack success rate "
                          "(failed / decided); absent when the run had none")


class Selection(BaseModel):
    """Which of the suites' cases the run was asked to run, so `evalrun rescore` scores the same ones."""

    filters: list[str] = Field(default_factory=list, description="-k/--filter globs on the case id")
    tags: list[str] = Field(default_factory=list, description="--tag: only cases with one of these tags "
                                                              "(compared without regard to case)")
    only: list[str] | None = Field(None, description="--last-failed: the ids of the cases it chose; "
                                                        "None when the run did not narrow to a list of ids")


class MatrixVariant(BaseModel):
    """One variant of a --matrix run: its assignments, counts, pass rate, cost and own verdict."""

    id: str = Field(description="The assignments joined by ', ' in axis order, such as `agent=hr_v1, model=openai/a`")
    assignments: dict[str, str] = Field(description="Each axis's value in this variant, such as {agent: hr_v1}")
    counts: dict[str, Count] = Field(description="Its cases by status (the run's status keys)")
    total: Count = Field(description="Cases played in this variant")
    pass_rate: float | None = Field(description="Passed over scored cases of this variant; null when none "
                                                   "was scored")
    pass_rate_interval: list[float] | None = Field(description="95% Wilson interval of the pass rate")
    cost_usd: float | None = Field(description="What this variant's model calls cost, in US dollars; null "
                                                  "when unknown")
    tokens: Count | None = Field(description="Tokens this variant's model calls used; null when unknown")
    verdict: dict[str, Any] = Field(description="`exit_code` and `reason`: the variant judged alone by the run's gates")


class MatrixSummary(BaseModel):
    """A --matrix run: every selected case played once per variant (docs/how-to/matrix.md)."""

    axes: dict[str, list[str]] = Field(description="Each axis (agent, model) and its values, in the order given")
    variants: list[MatrixVariant] = Field(description="Every variant, in the order of the axes' product")
    disagreements: list[str] = Field(description="Ids of the cases whose status differs across variants, worst first")


class RunReport(BaseModel):
    version: str = Field(description="The report format's version")
    evalrun_version: str = Field(description="The evalrun that wrote it")
    run_id: str = Field("", description="The run's id: its folder's name under .evalrun/reports/")
    started_at: str = Field(description="When the run started (ISO 8601, UTC)")
    paths: list[str] = Field(default_factory=list, description="The suite files and folders the run was given")
    shard: str | None = Field(None, description="I/N when the run was one shard of the suite (--shard)")
    selection: Selection = Field(default_factory=Selection, description="-k, --tag and --last-failed as the run "
                                                                        "applied them")
    agent: str | None = Field(None, description="The agent that played every live case (--agent NAME); "
                                                   "None when each case was played by its own agent")
    merged_from: list[str] = Field(default_factory=list, description="The shard reports `evalrun merge` joined")
    matrix: MatrixSummary | None = Field(None, description="--matrix: the variants and their summaries; absent "
                                                              "from runs without a matrix")
    config: dict[str, Any] = Field(description="The evalrun.yaml settings the run used (secrets redacted)")
    summary: Summary = Field(description="The run's counts and verdict")
    cases: list[CaseResult] = Field(description="Every finished case's result, in the order the run collected them")

    @field_validator("shard")
    @classmethod
    def _one_part_of_n(cls, value: str | None) -> str | None:
        from ..util.shard import parse_shard

        return None if value is None else str(parse_shard(value))  # ValueError names what is wrong

    @field_validator("config")
    @classmethod
    def _settings_readers_use(cls, value: dict[str, Any]) -> dict[str, Any]:
        return check_read_settings(value)  # ValueError names the setting
