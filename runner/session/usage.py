"""What is wrong with a run's options, before anything runs: each problem names its option (the CLI prints them as
usage errors, exit 4), whichever front end built the request."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..util.diagnostics import Diagnostic, Severity

if TYPE_CHECKING:
    from ..config.load import LoadedConfig
    from .request import RunRequest


def option_problem(option: str, message: str, severity: Severity = "error") -> Diagnostic:
    """A problem with a command-line option (not with a file)."""
    return Diagnostic(option, 1, 1, severity, message, "usage")


def usage_problems(request: RunRequest, loaded: LoadedConfig) -> list[Diagnostic]:
    """Problems with the options of the request, each naming its option (the CLI prints them as usage errors)."""
    from ..run.agent_choice import check_agent_override

    problems = []
    if request.agent is not None:
        wrong = check_agent_override(request.agent, loaded.config)
        if wrong:
            problems.append(Diagnostic("--agent", 1, 1, "error", wrong, "unknown-agent"))
    if request.profile is not None:
        from ..checks.select import unknown_profile

        wrong = unknown_profile(loaded, request.profile)
        if wrong:
            problems.append(Diagnostic("--profile", 1, 1, "error", wrong.removeprefix("--profile: "), "unknown-profile"))
    if request.replay_dir is not None:
        from ..suite.containment import replay_problem

        replay_wrong = replay_problem(request.replay_dir)
        if replay_wrong is not None:
            problems.append(Diagnostic("--replay", 1, 1, "error", *replay_wrong))
    out = request.output_dir
    if out is not None and out.exists() and not out.is_dir():
        problems.append(Diagnostic("--output-dir", 1, 1, "error", f"'{out}' exists and is not a folder", "not-a-folder"))
    if request.repeats < 1:
        problems.append(option_problem("--repeat", f"must be at least 1, got {request.repeats}"))
    if request.concurrency < 1:
        problems.append(option_problem("-j/--concurrency", f"must be at least 1, got {request.concurrency}"))
    return problems
