"""Shared by several test modules (once in tests/checks/test_checks_graded.py): data_of."""
from __future__ import annotations
import json
import pytest
from runner.checks.run import check_problem
from runner.checks.graded_options import SAFETY_CATEGORIES
from runner.checks.run import run_checks
from runner.suite.models import Case
from runner.transcripts.read import build_trajectory
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.helpers.checks_judged import judge_cascade, token_of


def data_of(request) -> dict:
    token = token_of(request)
    prompt = request["messages"][0]["content"]
    return json.loads(prompt.split(f"BEGIN-{token}\n", 1)[1].split(f"\nEND-{token}", 1)[0])
