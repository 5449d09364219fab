"""Shared by several test modules (once in tests/checks/test_checks_graded.py): data_of."""
from __future__ import annotations

import json

from tests.helpers.checks_judged import token_of


def data_of(request) -> dict:
    token = token_of(request)
    prompt = request["messages"][0]["content"]
    return json.loads(prompt.split(f"BEGIN-{token}\n", 1)[1].split(f"\nEND-{token}", 1)[0])
