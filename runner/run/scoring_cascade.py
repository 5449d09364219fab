"""The run's scoring cascade as evalrun.yaml sets it up: fuzzy matching, the judge, the embedding model
and their caches. The judge's client and the embedding model are imported only when configured.
"""
from __future__ import annotations

from collections.abc import Callable

from ..config.load import LoadedConfig
from ..score.cascade import Cascade, CascadeSettings


def make_cascade(loaded: LoadedConfig, on_notice: Callable[[str], None] | None = None) -> Cascade:
    """The cascade that scores the run's cases; `on_notice` hears when a model is being loaded."""
    config = loaded.config
    settings = CascadeSettings(enable_fuzzy_matching=config.enable_fuzzy_matching,
                               similarity_threshold=config.similarity_threshold,
                               use_embeddings=config.embeddings.enabled)
    judge = None
    if config.judge is not None and config.enable_fuzzy_matching:
        from ..llm.client import LLMClient
        from ..llm.judge import LLMJudge
        from ..llm.prompts import PromptLibrary

        cache_dir = loaded.resolve(config.cache_dir) if config.judge.cache else None
        judge = LLMJudge(LLMClient(config.judge, cache_dir, role="judge"),
                         PromptLibrary(loaded.resolve(config.prompts_dir)))
    embedder = None
    if config.embeddings.model_path:
        from ..score.embeddings import MiniLMEmbedder

        embedder = MiniLMEmbedder(str(loaded.resolve(config.embeddings.model_path)))
    from ..llm.runtime import current_runtime  # cheap: litellm is imported only when a model is called

    similarity_cache = None if current_runtime().no_cache else loaded.resolve(config.cache_dir)
    return Cascade(settings, judge=judge, embedder=embedder, cache_dir=similarity_cache, on_model_load=on_notice)
