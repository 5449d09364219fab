"""The one place that talks to models: the judge, the simulated user and `model` agents call through it.

    settings    how to reach a model (ModelSettings, JudgeSettings)
    client      LLMClient: one model for one role, with the run's limit, cache, breaker and retries
    runtime     what a run shares (configure(), current_runtime())
    calls       what a call leaves behind (LLMCall, CallSummary, record_calls, repeat_scope)
    judge       LLMJudge and the reading of its verdicts
    prompts     the Jinja templates of prompts/

litellm is imported on the first call that needs it (runner.llm.litellm_path), never at import.
"""
from .calls import CallSummary, Completion, LLMCall, record_calls, repeat_scope, summarize
from .client import LLMClient
from .errors import LLMError
from .judge import JudgeVerdict, LLMJudge
from .runtime import LLMRuntime, configure, current_runtime
from .settings import JudgeSettings, ModelSettings

__all__ = ["CallSummary", "Completion", "JudgeSettings", "JudgeVerdict", "LLMCall", "LLMClient", "LLMError",
           "LLMJudge", "LLMRuntime", "ModelSettings", "configure", "current_runtime", "record_calls",
           "repeat_scope", "summarize"]
