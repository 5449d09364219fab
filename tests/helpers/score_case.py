"""Shared by several test modules (once in tests/score/test_score_case.py): Convo, OFFLINE, make_case, say, tool, user."""
from __future__ import annotations

import json

from runner.score.cascade import Cascade, CascadeSettings
from runner.score.case import score_trajectory
from runner.suite.models import Case
from runner.transcripts.read import build_trajectory

OFFLINE = Cascade(CascadeSettings(use_embeddings=False))  # rapidfuzz is the last stage: deterministic and fast


def make_case(**fields) -> Case:
    return Case.model_validate({"id": "t", "source": {"path": "t.yaml"}, **fields})


def tool(name, goal_name=None, **args):
    return {"type": "tool_call", "name": goal_name or name, "tool_name": name, "args": args}


def user(text):
    return {"role": "user", "content": text}


def say(text):
    return {"role": "assistant", "content": text}


class Convo:
    """Builds OpenAI messages: calls get ids, results pair by id."""

    def __init__(self):
        self.messages = [user("hi")]
        self.n = 0

    def call(self, name, result="ok", *, error=False, raw=None, **args):
        self.n += 1
        cid = f"c{self.n}"
        arguments = raw if raw is not None else json.dumps(args)
        self.messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}]})
        message = {"role": "tool", "tool_call_id": cid, "content": result}
        if error:
            message["error"] = True
        self.messages.append(message)
        return self

    def say(self, text):
        self.messages.append(say(text))
        return self

    def score(self, case: Case, cascade: Cascade = OFFLINE):
        return score_trajectory(case, build_trajectory(self.messages), cascade)
