"""How to reach a model: the settings of the judge, the simulated user and `model` agents, and the
layer's constants."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .calls import SECRET_ENV_NAMES

Role = Literal["agent", "simulator", "judge", "generator"]
Transport = Literal["auto", "openai", "litellm"]

SEMANTIC_MATCH_PROMPT = "semantic_match.j2"
DEFAULT_CONCURRENCY = 8
BACKOFF_BASE_S = 0.5  # retry n waits about BACKOFF_BASE_S * 2**n (with jitter) unless the server says otherwise
BACKOFF_CAP_S = 20.0
BREAKER_THRESHOLD = 3  # consecutive outages (each after its retries) that mark a model down for the run
DUMMY_API_KEY = "not-needed"  # local OpenAI-compatible servers ignore the key, but the SDK insists on one


class ModelSettings(BaseModel):
    """How to reach a model: the judge, the user simulator, or a `model` agent target."""

    model_config = ConfigDict(
        extra="forbid", title="Model",
        json_schema_extra={"description": "A model: an OpenAI-compatible server reached directly, or any other "
                           "provider through litellm.",
                           "examples": [{"model": "openai/gpt-4o-mini", "api_key_env": "OPENAI_API_KEY"}]})

    model: str = Field(
        title="Model", description="Any litellm model string: provider/model. openai/... (and hosted_vllm/, "
        "lm_studio/, llamafile/, litellm_proxy/ with an api_base) go straight to the OpenAI-compatible server; "
        "every other provider through litellm.",
        examples=["openai/gpt-4o-mini", "ollama/llama3.1"])
    api_base: str | None = Field(
        None, title="API base URL", description="The server to call, for local or self-hosted OpenAI-compatible servers.",
        examples=["http://localhost:8000/v1"])
    api_key_env: str | None = Field(
        None, title="API key variable",
        description="Name of the environment variable that holds the API key (the key itself never goes in the file, "
        "and its value is removed from every error evalrun reports).",
        examples=["OPENAI_API_KEY"])
    temperature: float | None = Field(
        None, ge=0, title="Temperature", description="Sampling temperature; unset uses the provider's default.",
        examples=[0.7])
    timeout_s: float = Field(
        30, gt=0, title="Timeout (seconds)",
        description="One deadline for the whole of one request, reading the reply included: a server that "
        "answers slowly byte by byte is cut off at this point and the request counts as failed.",
        examples=[30])
    max_retries: int = Field(
        3, ge=0, title="Retries",
        description="Retries after a rate limit (429), a server error (5xx), a timeout, a dropped connection or a "
        "body that is not JSON, with exponential back-off and jitter, honouring the server's Retry-After.",
        examples=[3])
    reply_retries: int = Field(
        2, ge=0, title="Retries of unusable replies",
        description="How many times a reply that arrived but cannot be used (no verdict, not the expected JSON, cut "
        "at max_tokens, withheld by a content filter) is asked again, with the problem and the expected shape "
        "added to the conversation. Such replies never mark the model down.", examples=[2])
    max_tokens: int | None = Field(
        None, ge=1, title="Maximum tokens",
        description="The most tokens one answer may have (unset: the server's default). A reply cut at this "
        "limit is named as such.", examples=[1024])
    max_retry_wait_s: float = Field(
        60, ge=0, title="Longest wait for retries (seconds)",
        description="The most time one call may spend waiting between its retries in total; a Retry-After "
        "longer than what is left ends the call at once.", examples=[60])
    max_concurrency: int | None = Field(
        None, ge=1, title="Concurrent requests",
        description="At most this many requests to this model at once, on top of the run's limit (-j).",
        examples=[4])
    cache: bool = Field(
        True, title="Cache replies",
        description="Keep accepted replies on disk (under cache_dir) so that re-runs ask the model only new questions; "
        "`evalrun cache clear` forgets them.",
        examples=[True])
    transport: Transport = Field(
        "auto", title="Transport",
        description="How requests reach the model. auto: openai/ models (and hosted_vllm/, lm_studio/, llamafile/, "
        "litellm_proxy/ with an api_base) go over evalrun's own pooled HTTP client, every other provider through "
        "litellm; openai: the own client for any model with an api_base (an OpenAI-compatible /chat/completions); "
        "litellm: always litellm (for parameters only litellm translates).", examples=["auto"])
    extra: dict[str, Any] = Field(
        default_factory=dict, title="Extra parameters",
        description="Added as they are to the request body (for example a provider option such as top_k).",
        examples=[{"top_k": 40}])

    def model_post_init(self, _context: Any) -> None:
        if self.api_key_env:
            SECRET_ENV_NAMES.add(self.api_key_env)

    @model_validator(mode="after")
    def _fast_path_has_a_server(self) -> ModelSettings:
        if self.transport == "openai" and self.api_base is None and not self.model.startswith("openai/"):
            raise ValueError(f"transport: openai needs an api_base (the OpenAI-compatible server) for {self.model}")
        return self


class JudgeSettings(ModelSettings):
    """How to reach the judge model (the `judge` section of evalrun.yaml)."""

    model_config = ConfigDict(
        extra="forbid", title="LLM judge",
        json_schema_extra={"description": "The model that judges semantic matches first in the fuzzy cascade.",
                           "examples": [{"model": "openai/gpt-4o-mini", "api_key_env": "OPENAI_API_KEY"}]})

    temperature: float | None = Field(
        0.0, ge=0, title="Temperature", description="Sampling temperature; 0 keeps verdicts repeatable.", examples=[0.0])
    offline_fallback: bool = Field(
        False, title="Offline stages may stand in",
        description="When the judge fails (unreachable, rate limited, malformed replies), the offline stages "
        "(embeddings, rapidfuzz) decide in its place. false: they still decide, the verdict says so, and a run "
        "whose outcome rests on such a verdict exits 3.", examples=[False])
    structured_output: Literal["auto", "always", "never"] = Field(
        "auto", title="Structured output",
        description="Ask for the verdict as JSON that follows a schema (response_format). auto: when litellm's "
        "model list says the model supports it and no api_base is set; always: also for an OpenAI-compatible "
        "server that supports it; never: plain text. Either way the verdict is the JSON object that carries the "
        "call's verdict_id.",
        examples=["auto"])



class GeneratorSettings(ModelSettings):
    """The model `evalrun generate` writes suites with (the `generator` section of evalrun.yaml): the judge's
    keys, each one defaulting to the judge's setting."""

    model_config = ConfigDict(
        extra="forbid", title="Suite generator",
        json_schema_extra={"description": "The model that writes suites for `evalrun generate`. Every key not given "
                           "is the judge's (so without this section the judge writes them).",
                           "examples": [{"model": "openai/gpt-4o", "api_key_env": "OPENAI_API_KEY", "temperature": 0}]})

    model: str | None = Field(  # type: ignore[assignment]
        None, title="Model", description="Any litellm model string. Default: the judge's model.",
        examples=["openai/gpt-4o"])

    @model_validator(mode="after")
    def _fast_path_has_a_server(self) -> GeneratorSettings:
        return self  # checked once merged over the judge's settings (`merged_over`)

    def merged_over(self, judge: ModelSettings | None) -> ModelSettings | None:
        """The settings to call: the judge's, with these keys over them; None when neither names a model."""
        base = judge.model_dump(exclude_unset=True, include=set(ModelSettings.model_fields)) if judge else {}
        if judge is not None:
            base.setdefault("temperature", judge.temperature)  # the judge's own default (0) is its setting too
        merged = {**base, **self.model_dump(exclude_unset=True)}
        return ModelSettings(**merged) if merged.get("model") else None


class SimulatorSettings(ModelSettings):
    """The `simulator` section of evalrun.yaml: the model that plays the user once the script is over."""

    model_config = ConfigDict(
        extra="forbid", title="Simulated user",
        json_schema_extra={"description": "The model that writes the user's messages once a case's scripted ones "
                                          "run out (only for cases with a `story`).",
                           "examples": [{"model": "openai/gpt-4o-mini", "api_key_env": "OPENAI_API_KEY"}]})

    temperature: float | None = Field(
        0.0, ge=0, title="Temperature", description="Sampling temperature; 0 keeps simulated users repeatable.",
        examples=[0.0])
    max_user_turns: int = Field(
        10, ge=1, title="Maximum user turns",
        description="The most user messages in a simulated conversation, for cases that set no max_user_turns.",
        examples=[10])
