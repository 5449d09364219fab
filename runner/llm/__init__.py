"""The one place that talks to models: the judge, the simulated user and `model` agents call through it.

    settings      how to reach a model (ModelSettings, JudgeSettings)
    client        LLMClient: one model for one role, with the run's limit, cache, breaker and retries
    retries       one request, retried on 429/5xx/timeouts with back-off and Retry-After
    wire          the request and answer both paths speak, and which path a model takes
    openai_fast   OpenAI-compatible servers over a pooled aiohttp client (no litellm)
    litellm_path  every other provider, through litellm (imported on first use)
    pricing       prices and model facts from litellm's price list, read without importing litellm
    runtime       what a run shares (configure(), current_runtime())
    loop          the layer's own event loop (blocking calls, litellm) and what closes at exit
    limits        the run-wide limiter and the circuit breaker
    cache         accepted replies on disk
    calls         what a call leaves behind (LLMCall, CallSummary, record_calls, repeat_scope)
    errors        LLMError and the failures the retry loop acts on
    replies       reading replies leniently; the judge's verdict is the object tagged with its token
    judge         LLMJudge and the reading of its verdicts
    prompts       the Jinja templates of prompts/

Neither litellm nor aiohttp is imported at import; litellm only when a model that needs it is called.
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
