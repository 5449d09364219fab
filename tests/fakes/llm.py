"""Helpers for tests of the LLM layer: the fake server as a fixture that runs each test once per path
(the fast OpenAI-compatible client and litellm), and clients and judges pointed at it.

    from tests.fakes.llm import fake, client_for, judge_for, token_of, verdict  # noqa: F401 (fake is a fixture)
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from runner.llm.client import LLMClient
from runner.llm.judge import LLMJudge
from runner.llm.prompts import PromptLibrary
from runner.llm.runtime import LLMRuntime
from runner.llm.settings import JudgeSettings
from tests.fakes.openai_server import FakeOpenAI

TRANSPORTS = ("openai", "litellm")  # the fast path, and litellm: both must behave the same
USER = [{"role": "user", "content": "compare"}]


QUICK_BACKOFF_BASE_S = 0.01  # the back-off of the tests that retry: what they prove is the retry, not its wait


@pytest.fixture(params=TRANSPORTS)
def fake(request, monkeypatch):
    """The fake server; `fake.transport` is the path this run of the test takes. On litellm's, litellm is imported
    first: its import (seconds) is not what a test that times a call measures, whichever test runs first.

    The back-off between retries is cut to QUICK_BACKOFF_BASE_S (in this process) so that retrying tests do not
    sleep 0.25-1 s per retry; test_llm.py::test_the_back_off_between_retries_is_waited restores and proves the real
    one. A Retry-After the server sends is honoured as it is."""
    monkeypatch.setattr("runner.llm.retries.BACKOFF_BASE_S", QUICK_BACKOFF_BASE_S)
    if request.param == "litellm":
        from runner.llm.litellm_path import litellm_module

        litellm_module()
    with FakeOpenAI() as server:
        server.transport = request.param
        yield server


def client_for(fake: FakeOpenAI, cache_dir: Path | None = None, *, runtime: LLMRuntime | None = None,
               role: str = "judge", **overrides) -> LLMClient:
    settings = {"model": "openai/fake-judge", "api_base": fake.base_url, "timeout_s": 5, "cache": cache_dir is not None,
                **transport_of(fake), **overrides}
    return LLMClient(JudgeSettings(**settings), cache_dir, role=role, runtime=runtime or LLMRuntime())


def transport_of(fake: FakeOpenAI) -> dict:
    """The `transport` setting for this run of a test ({} where the settings have no such field: a checkout
    from before the fast path, where the tests that do not depend on it run as they are)."""
    if "transport" not in JudgeSettings.model_fields:
        return {}
    return {"transport": getattr(fake, "transport", "auto")}


def judge_for(fake: FakeOpenAI, **overrides) -> LLMJudge:
    return LLMJudge(client_for(fake, **overrides), PromptLibrary())


def cached_answers(cache_dir: Path) -> list[dict]:
    """The answers in a cache folder (cache_dir/llm/replies.sqlite), read as another process would."""
    import sqlite3

    path = Path(cache_dir) / "llm" / "replies.sqlite"
    if not path.is_file():
        return []
    with sqlite3.connect(str(path)) as db:
        return [json.loads(value) for (value,) in db.execute("SELECT value FROM replies ORDER BY key")]


def token_of(request: dict) -> str:
    """The boundary token of a judge request (the verdict_id its verdict must carry)."""
    text = json.dumps(request["messages"])
    return re.search(r"BEGIN-(V[0-9A-F]{20})", text).group(1)


def verdict(token: str, match: bool, reason: str = "r", score: float = 0.0) -> str:
    return json.dumps({"reason": reason, "match": match, "score": score, "verdict_id": token})
