"""`record --annotate`: the judge (the fake OpenAI server, over real HTTP) writes the story, the keywords and
argument modes, and the draft says which lines it wrote; replies that cannot be used leave the rule-based
draft with a note, and the draft passes on its recording either way."""
from __future__ import annotations

import json
import re
from pathlib import Path

from runner.suite.load import load_file
from tests.fakes.llm import token_of
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.helpers.cli_helpers import run_cli, write, write_json

ANSWER = "Reservation Q69X3R is cancelled; $327 goes back to your card by June 12, 2025."


def conversation() -> list[dict]:
    return [
        {"role": "user", "content": "Cancel Q69X3R please, my plans changed."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "cancel_reservation",
            "arguments": json.dumps({"reservation_id": "Q69X3R", "reason": "change_of_plan",
                                     "request_id": "req-7f3a9c1e22b4"})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"status": "cancelled", "refund": 327}'},
        {"role": "assistant", "content": ANSWER},
    ]


def project(tmp_path: Path, base_url: str) -> Path:
    write(tmp_path / "evalrun.yaml", f"""
        cache_dir: cache
        judge:
          model: openai/fake-judge
          api_base: {base_url}
          max_retries: 0
          reply_retries: 1
        """)
    write_json(tmp_path / "chat.json", conversation())
    return tmp_path


def annotation(token: str, **fields) -> str:
    return json.dumps({"story": "You are a traveller who booked Q69X3R and must cancel it.",
                       "keywords": ["Q69X3R", "$327", "next Tuesday"],
                       "argument_modes": {"cancel_reservation": {"reason": "fuzzy", "request_id": "ignore",
                                                                 "no_such_argument": "strict"}},
                       **fields, "verdict_id": token})


def test_the_judges_annotations_are_used_and_marked(tmp_path: Path) -> None:
    with FakeOpenAI() as fake:
        fake.default = lambda request: annotation(token_of(request))
        project(tmp_path, fake.base_url)
        made = run_cli("record", "--from", "chat.json", "-o", "suites", "--annotate", cwd=tmp_path)
        prompt = fake.requests[0]["messages"][0]["content"]
    assert made.returncode == 0, made.stderr
    assert len(fake.requests) == 1
    # the conversation reaches the judge as JSON data between the boundary lines
    data = json.loads(re.search(r"BEGIN-V[0-9A-F]{20}\n(.*)\nEND-V", prompt, re.S).group(1))
    assert data["last_answer"] == ANSWER
    assert data["arguments"]["cancel_reservation"]["reason"] == {"value": "change_of_plan", "mode": "strict"}
    text = (tmp_path / "suites" / "chat.yaml").read_text()
    assert "story: You are a traveller who booked Q69X3R and must cancel it.  # written by the judge; check: what " \
           "the user wants, for a simulated user\n" in text
    assert "    keywords: [Q69X3R, $327]  # written by the judge; check: the facts the answer must hold\n" in text
    assert "      reason: change_of_plan  # written by the judge; fuzzy: chosen by the judge\n" in text
    assert "# --annotate: left out the judge's keywords that the answer does not hold: \"next Tuesday\"\n" in text
    assert "# --annotate: the judge named arguments the draft does not have (left alone): " \
           "cancel_reservation.no_such_argument\n" in text
    case, = load_file(tmp_path / "suites" / "chat.yaml")[0]
    assert case.goal_details[0].arg_matching == {"reason": "fuzzy", "request_id": "ignore"}
    assert run_cli("run", "suites", cwd=tmp_path).returncode == 0


def test_prose_and_garbage_replies_fall_back_to_the_rule_based_draft_with_a_note(tmp_path: Path) -> None:
    with FakeOpenAI() as fake:
        fake.script("Sure! The user wants to cancel their booking. Keywords: Q69X3R, $327.",
                    Reply(content=json.dumps({"story": 42, "verdict_id": "V0"})))
        fake.default = lambda request: json.dumps({"story": ["not", "text"], "verdict_id": token_of(request)})
        project(tmp_path, fake.base_url)
        made = run_cli("record", "--from", "chat.json", "-o", "suites", "--annotate", cwd=tmp_path)
        asked = len(fake.requests)
    assert made.returncode == 0, made.stderr
    assert asked == 2  # the prose, then (asked again with the shape wanted) an object without this call's token
    text = (tmp_path / "suites" / "chat.yaml").read_text()
    assert text.splitlines()[3].startswith("# --annotate: the judge's answer could not be used (")
    assert text.splitlines()[3].endswith("); this is the rule-based draft")
    assert "written by the judge" not in text and "story:" not in text
    assert "keywords: [Q69X3R, '327', 'June 12, 2025']" in text
    assert run_cli("run", "suites", cwd=tmp_path).returncode == 0


def test_a_judge_that_fails_leaves_the_rule_based_draft(tmp_path: Path) -> None:
    with FakeOpenAI() as fake:
        fake.default = lambda request: Reply(status=500, content="database on fire")
        project(tmp_path, fake.base_url)
        made = run_cli("record", "--from", "chat.json", "-o", "suites", "--annotate", cwd=tmp_path)
        base_url = fake.base_url
    assert made.returncode == 0, made.stderr
    assert (f"# --annotate: the judge's answer could not be used (HTTP 500 from {base_url}: database on fire); "
            "this is the rule-based draft") in (tmp_path / "suites" / "chat.yaml").read_text()


def test_annotate_without_a_judge_is_a_usage_error_and_writes_nothing(tmp_path: Path) -> None:
    write(tmp_path / "evalrun.yaml", "cache_dir: cache\n")
    write_json(tmp_path / "chat.json", conversation())
    made = run_cli("record", "--from", "chat.json", "-o", "suites", "--annotate", cwd=tmp_path)
    assert made.returncode == 4
    assert "evalrun record: --annotate asks the judge, and evalrun.yaml configures none; add one" in made.stderr
    assert not (tmp_path / "suites").exists()
