"""The environment variables model providers read on their own, kept in this one place.

A model named `anthropic/claude-...` with no `api_key_env` still gets its key: litellm reads ANTHROPIC_API_KEY
(and evalrun's OpenAI path reads OPENAI_API_KEY). Those values are secrets the configuration never names, so
the redactor (runner/util/secrets.py) masks them, and the Ray executor sends a worker the variables of the models
a run names. Both ask this module; neither keeps a list of its own.

Each provider (the part of a model name before `/`, as litellm reads it) maps to the prefixes of the variables
it reads. A variable under a prefix is a secret when its name says so (KEY, TOKEN, SECRET, PASSWORD,
CREDENTIALS); OPENAI_BASE_URL is not, and is still sent to workers.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

# provider -> prefixes of the variables it reads (litellm's names, and the vendors' own SDKs' where they differ)
PROVIDER_PREFIXES: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_",), "text-completion-openai": ("OPENAI_",), "azure": ("AZURE_",),
    "azure_ai": ("AZURE_AI_", "AZURE_"), "anthropic": ("ANTHROPIC_",), "gemini": ("GEMINI_", "GOOGLE_"),
    "vertex_ai": ("VERTEXAI_", "VERTEX_", "GOOGLE_"), "bedrock": ("AWS_",), "sagemaker": ("AWS_",),
    "cohere": ("COHERE_", "CO_"), "cohere_chat": ("COHERE_", "CO_"), "mistral": ("MISTRAL_",),
    "codestral": ("CODESTRAL_",), "groq": ("GROQ_",), "together_ai": ("TOGETHERAI_", "TOGETHER_"),
    "huggingface": ("HUGGINGFACE_", "HF_"), "replicate": ("REPLICATE_",), "deepseek": ("DEEPSEEK_",),
    "xai": ("XAI_",), "openrouter": ("OPENROUTER_", "OR_"), "fireworks_ai": ("FIREWORKS_AI_", "FIREWORKS_"),
    "perplexity": ("PERPLEXITYAI_", "PERPLEXITY_"), "watsonx": ("WATSONX_", "WX_"), "databricks": ("DATABRICKS_",),
    "cerebras": ("CEREBRAS_",), "ai21": ("AI21_",), "nvidia_nim": ("NVIDIA_NIM_",), "deepinfra": ("DEEPINFRA_",),
    "ollama": ("OLLAMA_",), "ollama_chat": ("OLLAMA_",), "hosted_vllm": ("HOSTED_VLLM_",), "voyage": ("VOYAGE_",),
    "sambanova": ("SAMBANOVA_",), "github": ("GITHUB_",), "cloudflare": ("CLOUDFLARE_",), "anyscale": ("ANYSCALE_",),
    "friendliai": ("FRIENDLI_", "FRIENDLIAI_"), "nscale": ("NSCALE_",), "novita": ("NOVITA_",),
}
# A model named without a provider: litellm guesses the provider from the name; OpenAI when nothing else fits.
_UNPREFIXED = (("claude", "anthropic"), ("gemini", "vertex_ai"), ("command", "cohere"), ("mistral", "mistral"),
               ("codestral", "codestral"))
_SECRET_NAME = re.compile(r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|ZENAPIKEY|APIKEY)(_|$)")


def providers_of(model: str) -> list[str]:
    """The providers whose variables a call to `model` may read: its prefix, or for a bare name the one litellm
    would guess from it, and OpenAI."""
    if "/" in model:
        return [model.split("/", 1)[0].strip().lower()]
    guessed = [provider for start, provider in _UNPREFIXED if model.lower().startswith(start)]
    return [*guessed, "openai"]


def prefixes_of(models: Iterable[str]) -> set[str]:
    """The variable prefixes of the providers of `models` (an unknown provider `acme/...`: ACME_)."""
    found: set[str] = set()
    for model in models:
        for provider in providers_of(model):
            found.update(PROVIDER_PREFIXES.get(provider, (provider.upper().replace("-", "_") + "_",)))
    return found


def is_secret_name(name: str) -> bool:
    """OPENAI_API_KEY, AWS_SECRET_ACCESS_KEY, WATSONX_ZENAPIKEY, HF_TOKEN; not OPENAI_BASE_URL or AZURE_API_VERSION."""
    return _SECRET_NAME.search(name.upper()) is not None


ALL_PREFIXES: tuple[str, ...] = tuple(sorted({p for prefixes in PROVIDER_PREFIXES.values() for p in prefixes}))


def implicit_secret_names(models: Iterable[str], environ: Mapping[str, str]) -> set[str]:
    """The set variables that hold a secret some provider reads on its own: those of every provider above, and
    those of the providers of `models` (a provider not listed here included)."""
    prefixes = tuple(prefixes_of(models)) + ALL_PREFIXES
    return {name for name in environ if name.startswith(prefixes) and is_secret_name(name)}
