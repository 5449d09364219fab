"""What a person reads in the terminal: one line per case, each failure explained, a summary.

Text that came from the agent under test (tool names, arguments, answers) is printed with its control
characters made visible: an escape sequence in a tool name must not be able to erase a line and print
a fake PASS. A console that goes away (a closed pipe, a full disk) never stops the run: output is
dropped from then on, the run goes on and its report is written.
"""
from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from typing import TextIO

from ..results.digest import ResultDigest
from ..results.models import SOURCE_LABELS, CaseResult, Summary, case_label
from .repeat_text import auto_repeat_text
from .saved import extra_calls_text

_COLORS = {"passed": "32", "failed": "31", "error": "35", "skipped": "33", "unscored": "35"}
_LABELS = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "skipped": "SKIP", "unscored": "UNSCORED"}
_PROBLEMS = ("failed", "error", "unscored")


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (ValueError, OSError):
        return False


def use_color(stream: TextIO) -> bool:
    return is_terminal(stream) and "NO_COLOR" not in os.environ


def visible(text: str) -> str:
    """`text` on one line with every control or format character written as an escape (\\x1b, \\n,
    \\u202e): what a terminal would obey is shown instead."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch.isprintable():
            out.append(ch)
        elif unicodedata.category(ch) == "Zs":  # a no-break or other space: harmless, shown as a space
            out.append(" ")
        else:
            out.append(repr(ch)[1:-1])  # \x1b, \n, \u202e, \U000e0001
    return "".join(out)


def _paint(text: str, status: str, color: bool) -> str:
    return f"\033[{_COLORS[status]}m{text}\033[0m" if color else text


class Console:
    """Writes lines to a stream and survives losing it: after a closed pipe or a full disk it stays
    silent (the reason is kept in `lost`) and the run carries on."""

    def __init__(self, stream: TextIO, *, redact: Callable[[str], str] = str):
        self.stream = stream
        self.terminal = is_terminal(stream)
        self.color = use_color(stream)
        self.redact = redact
        self.lost: str | None = None

    def line(self, text: str = "", status: str | None = None) -> None:
        if self.lost is not None:
            return
        text = self.redact(text)
        if status is not None:
            text = _paint(text, status, self.color)
        try:
            self.stream.write(text + "\n")
            self.stream.flush()
        except (OSError, ValueError) as exc:
            self.lost = _why_lost(exc)
            _silence(self.stream)


class Progress:
    """On a terminal, one status line under the case lines, redrawn as cases finish: done/total,
    passed/failed so far, elapsed time and an estimate of what is left. Elsewhere (CI logs, pipes)
    nothing: the case lines are the progress."""

    def __init__(self, console: Console, total: int, *, clock=None):
        import time

        self.console = console
        self.total = total
        self.enabled = console.terminal and total > 1
        self.clock = clock or time.monotonic
        self.started = self.clock()
        self.counts = dict.fromkeys(_LABELS, 0)
        self._drawn = False

    def case(self, line: str | None, status: str) -> None:
        """Print a case's line (if it is shown) above the status line, and count it."""
        self.counts[status] += 1
        if line is not None:
            self._clear()
            self.console.line(line)
        self.draw()

    def status_line(self) -> str:
        done = sum(self.counts.values())
        elapsed = self.clock() - self.started
        eta = f", about {_duration(elapsed / done * (self.total - done))} left" if 0 < done < self.total else ""
        counts = [f"{self.counts['passed']} passed"] + [f"{self.counts[status]} {status}" for status in
                                                        ("failed", "error", "unscored", "skipped") if self.counts[status]]
        return f"[{done}/{self.total}] {', '.join(counts)}, {_duration(elapsed)} elapsed{eta}"

    def draw(self) -> None:
        if self.enabled and self.console.lost is None:
            self._write("\r\033[2K" + self.status_line())
            self._drawn = True

    def finish(self) -> None:
        self._clear()

    def _clear(self) -> None:
        if self._drawn:
            self._write("\r\033[2K")
            self._drawn = False

    def _write(self, text: str) -> None:
        try:
            self.console.stream.write(text)
            self.console.stream.flush()
        except (OSError, ValueError) as exc:
            self.console.lost = _why_lost(exc)


def _duration(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def _why_lost(exc: BaseException) -> str:
    if isinstance(exc, BrokenPipeError):
        return "the output pipe was closed"
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)


def _silence(stream: TextIO) -> None:
    """Point the stream's descriptor at /dev/null so that Python's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def case_line(result: CaseResult | ResultDigest, color: bool = False) -> str:
    """A case's line: its status, id and figures (from a result, or the digest the run's process keeps of one)."""
    label = f"{_LABELS[result.status]:<5}"
    detail = ""
    if result.metrics is not None:
        m = result.metrics
        detail = f"  completion {m.journey_completion:.2f}"
        if m.tool_call_precision is not None:
            detail += f", precision {m.tool_call_precision:.2f}"
        if m.tool_call_recall is not None:
            detail += f", recall {m.tool_call_recall:.2f}"
    elif result.status == "skipped":
        detail = f"  ({visible(result.skip_reason or '')})"
    if result.checks:
        passed = sum(c.status == "passed" for c in result.checks)
        detail += f"{'; ' if detail else '  '}checks {passed}/{len(result.checks)}"
        skipped = [c for c in result.checks if c.status == "skipped"]
        if skipped:  # each distinct reason once, with the checks it applies to
            reasons: dict[str, list[str]] = {}
            for check in skipped:
                reasons.setdefault(check.explanation.removeprefix("skipped: "), []).append(check.name)
            said = "; ".join(f"{', '.join(names)}: {why}" for why, names in reasons.items())
            detail += f" ({len(skipped)} skipped: {visible(said)})"
    if result.extra_calls:  # calls no goal asked for: a green line must not hide them
        detail += f"; {visible(extra_calls_text(result.extra_calls))}"
    if result.judge_fallbacks:
        detail += f"  [{len(result.judge_fallbacks)} verdict(s) without the judge]"
    repeat = f" (repeat {result.repeat})" if result.repeat is not None else ""
    source = SOURCE_LABELS.get(result.conversation_source or "")  # live or replayed: a green line must say which
    name = case_label(result.id, getattr(result, "variant", None))  # a --matrix run: the case and its variant
    line = f"{label} {visible(name)}{repeat}{f' [{source}]' if source else ''}{detail}"
    return _paint(line, result.status, color) if color else line


def goal_lines(result: CaseResult) -> list[str]:
    """-v: one indented line per goal of a case: its name, its status and the explanation scoring gave
    (the status once: an explanation that opens with it, "achieved at message 4", says it already)."""
    lines = []
    for goal in result.goals:
        explanation = visible(goal.explanation)
        said = explanation if explanation.startswith(goal.status.replace("_", " ")) \
            else f"{goal.status} — {explanation}"
        lines.append(f"    {'✓' if goal.achieved else '✗'} {visible(goal.name)}: {said}")
    return lines


def explain_case(result: CaseResult) -> list[str]:
    """The indented lines under a failed, errored or unscored case, or one judged in part without the judge."""
    lines = [f"  {visible(result.source)}"]
    if result.status == "error":
        lines += [f"  error: {visible(line)}" if i == 0 else f"    {visible(line)}"
                  for i, line in enumerate((result.error or "").splitlines()[:8])]
    if result.status == "unscored":
        lines.append(f"  unscored: {visible(result.unscored_reason or '')}")
    lines += [f"  - {visible(failure)}" for failure in result.failures]
    lines += [f"  ! without the judge: {visible(fallback)}" for fallback in result.judge_fallbacks]
    lines += [f"  note: {visible(note)}" for note in result.notes]
    return lines


class StageNotes:
    """Cascade stages that could not decide some comparisons (a missing embedding model, ...), counted
    as results arrive: later stages decided those, which a reader of a green run must know."""

    def __init__(self) -> None:
        self.by_stage: dict[str, list] = {}  # stage -> [count, first reason]

    def add(self, saved: ResultDigest) -> None:
        """Count the notes of a saved result's decisions (its digest has them: runner.results.digest)."""
        for note in saved.decision_notes:
            stage, _, reason = note.partition(": ")
            entry = self.by_stage.setdefault(stage, [0, reason])
            entry[0] += 1

    def lines(self) -> list[str]:
        return [f"note: the {stage} stage could not decide {count} comparison(s); later stages did "
                f"(first reason: {visible(reason)})" for stage, (count, reason) in self.by_stage.items()]


def print_failures(console: Console, results: Iterable[CaseResult]) -> None:
    """The failure section: each case that did not pass (or rests on a stand-in for the judge) with its
    explanation. The repeats of one case (--repeat N) come together: one heading naming the repeats,
    and each line once, marked with the repeats it belongs to unless it belongs to all of them."""
    header = False
    for group in _repeat_groups(r for r in results if r.status in _PROBLEMS or r.judge_fallbacks):
        if not header:
            console.line("\n" + "=" * 30 + " failures " + "=" * 30)
            header = True
        worst = min(group, key=lambda r: _SERIOUSNESS.index(r.status))
        status = worst.status if worst.status in _PROBLEMS else "unscored"
        repeats = [r.repeat for r in group if r.repeat is not None]
        which = "" if not repeats else (f" (repeat {repeats[0]})" if len(repeats) == 1
                                        else f" (repeats {', '.join(map(str, repeats))})")
        name = case_label(worst.id, getattr(worst, "variant", None))  # a --matrix run: the case and its variant
        console.line(f"{_LABELS[worst.status]} {visible(name)}{which}", status)
        lines: dict[str, list] = {}  # each line once, with the repeats that said it, in first-said order
        for result in group:
            for line in explain_case(result):
                lines.setdefault(line, []).append(result.repeat)
        for line, said_by in lines.items():
            console.line(line if len(said_by) == len(group) or len(group) == 1
                         else f"{line}  [repeat {', '.join(map(str, said_by))}]")
        console.line()


_SERIOUSNESS = ("error", "unscored", "failed", "passed", "skipped")


def _which(result: CaseResult) -> tuple:
    return result.id, result.run, getattr(result, "variant", None)


def _repeat_groups(results: Iterable[CaseResult]) -> Iterator[list[CaseResult]]:
    """Consecutive results of the same case and recorded run (its repeats: saved side by side), as lists."""
    group: list[CaseResult] = []
    for result in results:
        if group and (result.repeat is None or _which(result) != _which(group[0])):
            yield group
            group = []
        group.append(result)
    if group:
        yield group


def print_summary(console: Console, summary: Summary, *, notes: Iterable[str] = (),
                  report_path: str | None = None, agent: str | None = None) -> None:
    for line in notes:
        console.line(line, "skipped")
    if agent is not None:
        console.line(agent_line(agent))
    parts = [f"{summary.passed} passed", f"{summary.failed} failed"]
    for status in ("error", "unscored", "skipped"):
        if getattr(summary, status):
            parts.append(f"{getattr(summary, status)} {status}")
    line = ", ".join(parts) + f" in {summary.duration_s:.2f}s"
    status = "passed" if summary.exit_code == 0 else ("failed" if summary.exit_code == 1 else "error")
    console.line(line, status)
    said = cache_line(summary)
    if said:
        console.line(said)
    if summary.repeats is not None:
        console.line(repeat_line(summary.repeats))
        auto = auto_repeat_text(summary.repeats.model_dump())
        if auto:
            console.line(visible(auto))
        if summary.repeats.flaky:
            flaky = summary.repeats.flaky
            console.line(f"flaky: {len(flaky)} case(s) with mixed outcomes: "
                         + ", ".join(visible(i) for i in flaky[:5]) + (", ..." if len(flaky) > 5 else ""))
    if summary.redteam is not None:
        from .redteam import console_lines

        for line in console_lines(summary.redteam.model_dump(), clean=visible):
            console.line(line)
    if (summary.exit_reason and summary.exit_code != 0) or _unusual(summary):
        console.line(summary.exit_reason)
    if summary.not_run:
        shown = ", ".join(visible(i) for i in summary.not_run[:5]) + (", ..." if len(summary.not_run) > 5 else "")
        console.line(f"not run: {len(summary.not_run)} case(s): {shown}")
    if report_path:
        console.line(f"report: {report_path}")


def cache_line(summary: Summary) -> str | None:
    """How many model answers (judge, agent, simulated user) came from the disk cache, when any did or when the
    run refreshed it: a verdict resting on an old answer must say so. None when nothing is worth saying."""
    usage, mode = summary.model_usage, summary.cache
    if usage is None or not usage.calls:
        return None
    if usage.cached:
        return (f"cache: {usage.cached} of {usage.calls} model answer(s) came from the disk cache, not the model; "
                "--cache refresh asks again (`evalrun cache info` shows where it is)")
    if mode == "refresh":
        return f"cache: refreshed: {usage.calls} model answer(s) asked again and saved for the next run"
    return None


def agent_line(agent: str) -> str:
    """Who played the live cases when --agent chose one for all of them."""
    return f"agent: every live case was played by '{visible(agent)}' (--agent)"


def repeat_line(repeats) -> str:
    """`--repeat 3 (policy all): pass@1 0.83, pass@3 1.00; pass^1 0.83, pass^3 0.50`."""
    n = str(repeats.auto.min if repeats.auto else repeats.runs)  # --repeat auto: the runs every case made
    ks = [k for k in ("1", n) if k in repeats.pass_at_k]
    at = ", ".join(f"pass@{k} {repeats.pass_at_k[k]:.2f}" for k in dict.fromkeys(ks))
    hat = ", ".join(f"pass^{k} {repeats.pass_hat_k[k]:.2f}" for k in dict.fromkeys(ks))
    return f"--repeat {'auto' if repeats.auto else repeats.runs} (policy {repeats.policy}): {at}; {hat}"


def _unusual(summary: Summary) -> bool:
    """An exit 0 that is not the obvious one (min_pass_rate let failures through) still says why."""
    return summary.exit_code == 0 and (summary.failed > 0 or summary.baseline is not None)

