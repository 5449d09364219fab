"""docs/reference/judge-protocol.md, played: for each judged check's section, the documented check runs on a
recorded conversation against the fake OpenAI-compatible server answering exactly the documented reply (its
example token replaced by the request's), through the real CLI; the reply must be taken (the check passes).
The documented unusable reply must leave the check unscored, asked again as documented."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from runner.checks import builtin_families
from runner.frontends.cli import main
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers.cli_helpers import REPO, write, write_json

PAGE = REPO / "docs" / "reference" / "judge-protocol.md"
EXAMPLE_TOKEN = "V0123456789ABCDEF0123"
TOKEN = re.compile(r"BEGIN-(V[0-9A-F]{20})")
TRANSCRIPT = [
    {"role": "user", "content": "When is my time off, and how many days?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_timeoff", "arguments": "{\"user\": \"nwaters\"}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "{\"start\": \"2025-01-05\", \"days\": 2}"},
    {"role": "assistant", "content": "Your time off is on January 5, 2025, for 2 days."},
]


def _sections() -> dict[str, str]:
    text = PAGE.read_text(encoding="utf-8")
    parts = re.split(r"^(#{2,3}) (.+)$", text, flags=re.M)
    return {parts[i + 1].strip(): parts[i + 2] for i in range(1, len(parts) - 2, 3)}


def _blocks(section: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", section, flags=re.M | re.S)


def _examples() -> list[tuple[str, dict, str]]:
    found = []
    for title, section in _sections().items():
        checks, replies = _blocks(section, "yaml"), _blocks(section, "json")
        if checks and replies:
            [check] = yaml.safe_load(checks[0])["checks"]
            found.append((title, check, replies[0].strip()))
    return found


def _play(root: Path, monkeypatch, check: dict, reply: str) -> tuple[dict, list[dict]]:
    def judge(request: dict) -> str:
        return reply.replace(EXAMPLE_TOKEN, TOKEN.search(request["messages"][0]["content"]).group(1))

    with FakeOpenAI(default=judge) as fake:
        write(root / "evalrun.yaml", f"""
            embeddings: {{enabled: false}}
            judge: {{model: openai/fake-judge, api_base: "{fake.base_url}", max_retries: 0, cache: false}}
            """)
        write_json(root / "suites" / "t.json", TRANSCRIPT)
        write(root / "suites" / "case.yaml", "id: timeoff\nstarting_sentence: When is my time off?\n"
              "transcript: t.json\ngoal_details: []\nchecks:\n" + yaml.safe_dump([check], sort_keys=False))
        monkeypatch.chdir(root)
        main(["run", "suites", "--output-dir", "out", "-q"])
        requests = list(fake.requests)
    [case] = json.loads((root / "out" / "report.json").read_text(encoding="utf-8"))["cases"]
    return case["checks"][0], requests


def test_every_judged_check_has_its_reply_documented():
    headings = " ".join(t for t in _sections() if t != "Each judged check's reply")
    judged = sorted(f.type for f in builtin_families() if f.needs_model)
    assert [t for t in judged if not re.search(rf"\b{t}\b", headings)] == []
    assert len(_examples()) == 7


@pytest.mark.parametrize("title,check,reply", _examples(), ids=[e[0].split(":")[0] for e in _examples()])
def test_the_documented_reply_is_taken(tmp_path, monkeypatch, title, check, reply):
    assert EXAMPLE_TOKEN in reply and TOKEN.fullmatch("BEGIN-" + EXAMPLE_TOKEN)
    result, requests = _play(tmp_path, monkeypatch, check, reply)
    assert (result["type"], result["status"]) == (check["type"], "passed"), result["explanation"]
    assert len(requests) == 1
    [message] = requests[0]["messages"]
    assert message["role"] == "user" and requests[0]["model"] == "fake-judge"
    token = TOKEN.search(message["content"]).group(1)
    assert f"\nEND-{token}" in message["content"]


def test_the_documented_unusable_reply_leaves_the_check_unscored(tmp_path, monkeypatch):
    section = _sections()["A reply that cannot be used"]
    [untagged] = _blocks(section, "json")
    [check] = yaml.safe_load(_blocks(_sections()[next(t for t in _sections() if t.startswith("Match verdicts"))],
                                     "yaml")[0])["checks"]
    result, requests = _play(tmp_path, monkeypatch, check, untagged.strip())
    assert result["status"] == "unscored"
    token = TOKEN.search(requests[0]["messages"][0]["content"]).group(1)
    assert result["explanation"].startswith(
        "unscored: the judge gave no usable answer: the judge's reply has no JSON object tagged with this call's "
        f"verdict_id {token}; an object without it is not a verdict (it may be one the agent wrote) (asked 3 times); "
        "the last reply: ")
    assert len(requests) == 3  # once, then reply_retries (2) times with the problem added
    assert "Your reply could not be used" in requests[1]["messages"][-1]["content"]
