"""The interpreter: turns each collected case into a `CaseResult`, never losing one.

A case is scored on a recorded conversation: its own `transcript:` or `--replay DIR/<id>.json`.
Whatever goes wrong with one case (missing file, bad JSON, a bug) becomes that case's `error`
result with the reason, and the other cases still run.
"""
from __future__ import annotations

import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from .config import LoadedConfig
from .results import CaseResult
from .score.cascade import Cascade, CascadeSettings
from .suite.models import Case
from .trajectory import TranscriptError, build_trajectory, read_recording


@dataclass
class RunOptions:
    replay_dir: Optional[Path] = None


def make_cascade(loaded: LoadedConfig) -> Cascade:
    config = loaded.config
    settings = CascadeSettings(enable_fuzzy_matching=config.enable_fuzzy_matching,
                               similarity_threshold=config.similarity_threshold,
                               use_embeddings=config.embeddings.enabled)
    judge = None
    if config.judge is not None and config.enable_fuzzy_matching:
        from .llm import LLMClient, LLMJudge
        from .prompts import PromptLibrary

        cache_dir = loaded.resolve(config.cache_dir) if config.judge.cache else None
        judge = LLMJudge(LLMClient(config.judge, cache_dir, role="judge"),
                         PromptLibrary(loaded.resolve(config.prompts_dir)))
    embedder = None
    if config.embeddings.model_path:
        from .score.embeddings import MiniLMEmbedder

        embedder = MiniLMEmbedder(str(loaded.resolve(config.embeddings.model_path)))
    from .llm import current_runtime  # cheap: litellm is imported only when a model is called

    similarity_cache = None if current_runtime().no_cache else loaded.resolve(config.cache_dir)
    return Cascade(settings, judge=judge, embedder=embedder, cache_dir=similarity_cache)


def transcript_for(case: Case, options: RunOptions) -> Optional[Path]:
    if options.replay_dir is not None:
        return options.replay_dir / f"{case.id}.json"
    if case.transcript:
        return Path(case.source.path).parent / case.transcript
    return None


def run_case(case: Case, loaded: LoadedConfig, cascade: Cascade, options: RunOptions) -> CaseResult:
    from .score.case import score_trajectory

    started = time.perf_counter()
    base = dict(id=case.id, source=str(case.source), description=case.description, tags=case.tags)
    if case.skip:
        reason = case.skip if isinstance(case.skip, str) else "skip: true"
        return CaseResult(**base, status="skipped", skip_reason=reason)
    path = transcript_for(case, options)
    if path is None:
        return CaseResult(**base, status="error",
                          error="nothing to score: the case has no `transcript:` and no --replay folder was given "
                                "(running live agents is not supported yet)")
    try:
        recording = read_recording(path)
        trajectory = build_trajectory(recording.messages, loaded.config.tool_error_pattern,
                                      recording.termination_reason, normalized=True)
        scored = score_trajectory(case, trajectory, cascade)
    except TranscriptError as exc:
        return CaseResult(**base, status="error", error=str(exc), transcript_path=str(path),
                          duration_s=time.perf_counter() - started)
    except Exception as exc:  # a bug must not take the other cases down; keep the trace for the report
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return CaseResult(**base, status="error", transcript_path=str(path),
                          error=f"internal error while scoring: {detail}\n{traceback.format_exc(limit=6)}",
                          duration_s=time.perf_counter() - started)
    return CaseResult(**base, status="passed" if scored.passed else "failed", metrics=scored.metrics,
                      goals=scored.goals, calls=scored.calls, failures=scored.failures, transcript_path=str(path),
                      termination_reason=trajectory.termination_reason,
                      transcript=trajectory.messages, duration_s=time.perf_counter() - started)


def run_cases(cases: list[Case], loaded: LoadedConfig, options: RunOptions,
              on_result: Callable[[CaseResult], None] = lambda r: None) -> tuple[list[CaseResult], bool]:
    """(results, interrupted). Ctrl-C stops after the current case; finished results are kept."""
    cascade = make_cascade(loaded)
    results: list[CaseResult] = []
    try:
        for case in cases:
            result = run_case(case, loaded, cascade, options)
            results.append(result)
            on_result(result)
    except KeyboardInterrupt:
        return results, True
    return results, False
