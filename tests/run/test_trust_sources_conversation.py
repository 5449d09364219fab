"""Which conversation a verdict is about (issue 26, item 4): every console line, results.jsonl, report.json and
report format say whether the case was played live, replayed from its recording, from --replay or rescored; a
case naming an agent and a transcript is a warning (validate and run), and a recording that does not open
with the case's starting sentence is another conversation: an error in validate, the case's error in a run."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.helpers.cli_helpers import tool_call_messages, write, write_json

AGENT = """
    def respond(messages, context):
        return [{"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                 "function": {"name": "refund", "arguments": '{"amount": 1000}'}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "ok"},
                {"role": "assistant", "content": "Refunded 1000."}]
    """
GOAL = "goal_details: [{type: tool_call, name: refund, tool_name: refund, args: {amount: 10}}]"
BOTH_WARNING = ("warning: case 'recorded-refund' names agent 'shop' and has a `transcript:`: its recording is "
                "replayed and 'shop' is never called (its lines say `replayed`); remove `transcript:` to play it "
                "live against the agent, or `agent:` to say it is replayed")



def shop(root: Path) -> None:
    """An agent that refunds 1000 where 10 is expected; a recording that refunds 10 (it passes)."""
    write(root / "evalrun.yaml", """
        embeddings: {enabled: false}
        agents:
          shop: {type: python, entrypoint: "shop_agent:respond"}
          archive: {type: replay}
        """)
    write(root / "shop_agent.py", AGENT)
    recording = [{"role": "user", "content": "Please refund my order."}, *tool_call_messages("refund", {"amount": 10})]
    write_json(root / "suites" / "t" / "refund.json", recording)
    write(root / "suites" / "refunds.yaml", f"""
        cases:
          - id: recorded-refund
            agent: shop
            starting_sentence: Please refund my order.
            transcript: t/refund.json
            {GOAL}
          - id: archived-refund
            agent: archive
            starting_sentence: please refund my order
            transcript: t/refund.json
            {GOAL}
          - id: live-refund
            agent: shop
            starting_sentence: Please refund my order.
            {GOAL}
        """)


def cases_of(path: Path) -> dict[str, dict]:
    return {c["id"]: c for c in json.loads(path.read_text())["cases"]}


def test_a_case_naming_an_agent_and_a_transcript_says_it_is_replayed_everywhere(tmp_path, evalrun):
    shop(tmp_path)
    code, out, err = evalrun(tmp_path, "validate", "suites")
    assert code == 0
    assert out.splitlines() == [f"suites/refunds.yaml:2:5: {BOTH_WARNING}"]  # not the `replay` agent's case

    code, out, err = evalrun(tmp_path, "run", "suites", "--output-dir", "out", "--format", "junit", "--format", "md",
                             "--format", "html")
    assert code == 1
    lines = out.splitlines()
    assert "PASS  recorded-refund [replayed]  completion 1.00, precision 1.00, recall 1.00" in lines
    assert "PASS  archived-refund [replayed]  completion 1.00, precision 1.00, recall 1.00" in lines
    assert "FAIL  live-refund [live]  completion 0.00, precision 0.00, recall 0.00" in lines
    assert f"suites/refunds.yaml:2:5: {BOTH_WARNING}" in err.splitlines()  # the run prints it too

    recording = str(Path("suites") / "t" / "refund.json")
    report = cases_of(tmp_path / "out" / "report.json")
    assert {i: c["conversation_source"] for i, c in report.items()} == {
        "recorded-refund": "transcript", "archived-refund": "transcript", "live-refund": "live"}
    saved = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert {c["id"]: c["conversation_source"] for c in saved} == {i: c["conversation_source"] for i, c in report.items()}

    junit = {case.get("name"): case.find("system-out").text for case in ET.parse(tmp_path / "out" / "junit.xml").iter("testcase")}
    assert f"conversation: replayed: {recording}" in junit["recorded-refund"].splitlines()
    assert "conversation: live" in junit["live-refund"].splitlines()
    summary = (tmp_path / "out" / "summary.md").read_text().splitlines()
    assert "Conversations: 1 live, 2 replayed" in summary
    assert any(line.startswith("| live-refund | failed \\[live\\] | ") for line in summary)
    page = (tmp_path / "out" / "report.html").read_text()
    assert '"sources":{"live":"live","transcript":"replayed","replay":"replayed (--replay)","rescore":"rescored"}' in page


def test_replay_and_rescore_say_so_on_every_line(tmp_path, evalrun):
    shop(tmp_path)
    assert evalrun(tmp_path, "run", "suites", "--output-dir", "first")[0] == 1
    _, out, _ = evalrun(tmp_path, "run", "suites", "--replay", "first/conversations.jsonl", "-k", "live",
                           "--output-dir", "replayed")
    assert "FAIL  live-refund [replayed (--replay)]  completion 0.00, precision 0.00, recall 0.00" in out.splitlines()
    assert cases_of(tmp_path / "replayed" / "report.json")["live-refund"]["conversation_source"] == "replay"

    _code, out, _ = evalrun(tmp_path, "rescore", "first", "suites", "--output-dir", "again")
    lines = out.splitlines()
    assert "FAIL  live-refund [rescored]  completion 0.00, precision 0.00, recall 0.00" in lines
    assert "PASS  recorded-refund [replayed]  completion 1.00, precision 1.00, recall 1.00" in lines
    assert {i: c["conversation_source"] for i, c in cases_of(tmp_path / "again" / "report.json").items()} == {
        "recorded-refund": "transcript", "archived-refund": "transcript", "live-refund": "rescore"}


def test_a_recording_that_opens_otherwise_is_not_this_cases_conversation(tmp_path, evalrun):
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\n")
    write_json(tmp_path / "suites" / "t" / "refund.json",
               [{"role": "user", "content": "Refund order 1 please"}, *tool_call_messages("refund", {"amount": 10})])
    write(tmp_path / "suites" / "s.yaml", f"""
        cases:
          - id: copied
            starting_sentence: Cancel my subscription.
            transcript: t/refund.json
            {GOAL}
          - id: same-words
            starting_sentence: "  REFUND   order 1 please. "
            transcript: t/refund.json
            {GOAL}
        """)
    code, out, _err = evalrun(tmp_path, "validate", "suites")
    assert code == 4
    assert out.splitlines() == [
        "suites/s.yaml:2:5: error: case 'copied': the recording is not this case's conversation: its first user "
        "message is 'Refund order 1 please', but the case's starting_sentence is 'Cancel my subscription.'; point "
        "`transcript:` at this case's recording, or make starting_sentence what the user said first (a replayed "
        "case may also leave it out)"]

    code, out, _ = evalrun(tmp_path, "run", "suites", "--output-dir", "out")
    assert code == 3  # never a pass: the case ends in error, the other is scored
    report = cases_of(tmp_path / "out" / "report.json")
    assert report["copied"]["status"] == "error" and report["copied"]["error"].startswith(
        "the recording is not this case's conversation: its first user message is 'Refund order 1 please'")
    assert report["copied"]["metrics"] is None and report["same-words"]["status"] == "passed"
    assert "ERROR copied [replayed]" in out.splitlines()


@pytest.mark.parametrize("sentence, first, differs", [
    ("Where is my order?", "where is my order", False),  # case, closing punctuation
    ("Where is  my\torder", "Where is my order? It's A-1042.", False),  # whitespace; the message goes on
    ("It\u2019s late", "it's LATE!", False),  # typographic quotes
    ("\uff37here is my order", "Where is my order", False),  # compatibility forms (fullwidth W)
    ("Hi", "History of my orders", True),  # not at a word boundary
    ("Where is my order?", "Cancel my order", True),
    ("Where is my order?", "", False),  # no text: nothing contradicts
])
def test_the_opening_is_compared_forgivingly_but_not_loosely(sentence, first, differs):
    from runner.transcripts.opening import opening_problem

    messages = [{"role": "system", "content": "You are a shop."}, {"role": "user", "content": first}]
    assert (opening_problem(sentence, messages) is not None) == differs
    assert opening_problem(sentence, [{"role": "assistant", "content": "Hello!"}]) is None  # no user message
    assert opening_problem(None, messages) is None


def test_content_parts_are_read_as_their_text():
    from runner.transcripts.opening import opening_problem

    parts = [{"role": "user", "content": [{"type": "text", "text": "Where is"}, {"type": "image_url"},
                                          {"type": "text", "text": "my order"}]}]
    assert opening_problem("Where is my order", parts) is None
    assert opening_problem("Cancel it", parts) is not None


def test_the_starter_replays_and_says_so_and_copying_it_wrong_is_warned(tmp_path, evalrun):
    assert evalrun(tmp_path, "init", "proj")[0] == 0
    suite = (tmp_path / "proj" / "suites" / "order-status.yaml").read_text()
    assert "# (`agent: my_agent`) and delete the next line: a case with both is still replayed, and validate warns.\n" \
        "transcript: transcripts/order-status.json\n" in suite
    code, out, _ = evalrun(tmp_path, "run", "proj/suites", "--output-dir", "out")
    assert code == 0 and out.splitlines()[0] == "PASS  order-status [replayed]  completion 1.00, precision 1.00, recall 1.00"

    (tmp_path / "proj" / "suites" / "order-status.yaml").write_text(suite.replace("tags: [example]\n",
                                                                                  "tags: [example]\nagent: my_agent\n"))
    code, out, _ = evalrun(tmp_path, "validate", "proj/suites")
    assert code == 0 and out.startswith("proj/suites/order-status.yaml:3:1: warning: case 'order-status' names agent "
                                        "'my_agent' and has a `transcript:`")
