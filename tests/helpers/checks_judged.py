"""Shared by several test modules (once in tests/checks/test_checks_judged.py): fake, judge_cascade, token_of."""
from __future__ import annotations

import re

import pytest

from runner.llm.client import LLMClient
from runner.llm.judge import LLMJudge
from runner.llm.prompts import PromptLibrary
from runner.llm.runtime import LLMRuntime
from runner.llm.settings import JudgeSettings
from runner.score.cascade import Cascade, CascadeSettings
from tests.fakes.openai_server import FakeOpenAI


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


def judge_cascade(fake, **settings):
    options = {"model": "openai/fake-judge", "api_base": fake.base_url, "max_retries": 0, "cache": False,
               "timeout_s": 5, **settings}
    judge = LLMJudge(LLMClient(JudgeSettings(**options), runtime=LLMRuntime()), PromptLibrary())
    return Cascade(CascadeSettings(use_embeddings=False), judge=judge)


def token_of(request: dict) -> str:
    return re.search(r"BEGIN-(V[0-9A-F]{20})", request["messages"][0]["content"]).group(1)
