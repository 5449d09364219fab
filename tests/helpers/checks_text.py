"""Shared by several test modules (once in tests/checks/test_checks_text.py): case_with, texts."""
from __future__ import annotations

from runner.suite.models import Case
from runner.transcripts.read import build_trajectory


def case_with(*specs, **fields):
    return Case.model_validate({"id": "t", "source": {"path": "t.yaml"}, "checks": list(specs), **fields})


def texts(*answers):
    messages = [{"role": "user", "content": "hi"}]
    for answer in answers:
        messages += [{"role": "assistant", "content": answer}, {"role": "user", "content": "and?"}]
    return build_trajectory(messages[:-1] if answers else messages)
