"""`evalrun record --from` end to end, through the real CLI: drafts of the bundled conversations pass when
run, `-o` as a folder, a new file and an existing suite (kept byte for byte), and every failure path
leaves nothing written."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from runner.suite.load import load_file
from tests.helpers.cli_helpers import REPO, run_cli, write, write_json

BUNDLED = sorted(p for p in (REPO / "suites").rglob("transcripts/*.json"))


def files_under(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def chat(*turns: str, answer: str = "Your order A-1042 ships on June 12, 2025.") -> list[dict]:
    messages = []
    for i, turn in enumerate(turns, start=1):
        messages.append({"role": "user", "content": turn})
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "lookup_order",
                                                             "arguments": json.dumps({"order_id": "A-1042"})}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": '{"ships": "2025-06-12"}'})
    messages.append({"role": "assistant", "content": answer})
    return messages


def test_every_bundled_conversation_drafts_to_a_case_that_passes(tmp_path: Path) -> None:
    assert len(BUNDLED) >= 7
    made = run_cli("record", "--from", *map(str, BUNDLED), "-o", "drafts", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines()[-1] == "next: read the lines marked `check:`, then run `evalrun run drafts`"
    suites = sorted((tmp_path / "drafts").glob("*.yaml"))
    assert len(suites) == len(BUNDLED)
    assert len(list((tmp_path / "drafts" / "transcripts").glob("*.json"))) == len(BUNDLED)
    ran = run_cli("run", "drafts", "-v", "--output-dir", "out", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["summary"]["passed"] == len(BUNDLED)
    assert all(goal["achieved"] for case in report["cases"] for goal in case["goals"])


def test_a_new_file_holds_one_case_per_conversation_and_ids_never_collide(tmp_path: Path) -> None:
    write_json(tmp_path / "a" / "chat.json", chat("Where is A-1042?"))
    write_json(tmp_path / "b" / "chat.json", {"messages": chat("Where is A-1042?", "And now?")})
    made = run_cli("record", "--from", "a/chat.json", "b/chat.json", "-o", "suites/orders.yaml", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines()[:2] == ["case 'chat': 1 tool call goal, 1 text goal; 1 line to check",
                                            "case 'chat-2': 1 tool call goal, 1 text goal; 2 lines to check"]
    cases, diagnostics, _ = load_file(tmp_path / "suites" / "orders.yaml")
    assert not diagnostics
    assert [(c.id, c.transcript, c.user_prompts) for c in cases] == [
        ("chat", "transcripts/chat.json", []), ("chat-2", "transcripts/chat-2.json", ["And now?"])]
    # the second conversation repeats its call exactly: left out, and said so
    assert "# left out: message 5's call to lookup_order: it repeats the call of message 2 exactly" in \
        (tmp_path / "suites" / "orders.yaml").read_text()
    assert run_cli("run", "suites", cwd=tmp_path).returncode == 0


SINGLE = """\
# yaml-language-server: $schema=../schemas/suite.schema.json
# An order question, written by hand.
story: >-
  You ordered a lamp (A-1042)
  and want to know when it ships.
starting_sentence: Where is A-1042?   # the first message
goal_details:
  - type: tool_call
    name: lookup
    tool_name: lookup_order
    args: {order_id: A-1042}
  - type: text
    name: tell
    keywords: [June 12]
transcript: transcripts/orders.json
"""


def test_appending_to_a_single_case_file_makes_it_multi_case_and_keeps_every_line(tmp_path: Path) -> None:
    suite = write(tmp_path / "suites" / "orders.yaml", SINGLE)
    write_json(tmp_path / "suites" / "transcripts" / "orders.json", chat("Where is A-1042?"))
    write_json(tmp_path / "orders.json", chat("Where is A-1042?", "Thanks, when exactly?"))
    before, = load_file(suite)[0]
    made = run_cli("record", "--from", "orders.json", "-o", "suites/orders.yaml", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert "added 1 case to suites/orders.yaml" in made.stdout
    text = suite.read_text()
    head, _, rest = text.partition("cases:\n")
    assert head == "".join(SINGLE.splitlines(keepends=True)[:2])  # the comments above the case stay on top
    old_lines = SINGLE.splitlines()[2:]
    assert rest.splitlines()[:len(old_lines) + 1] == ["  - id: orders", *("    " + line for line in old_lines)]
    cases, diagnostics, _ = load_file(suite)
    assert not diagnostics
    assert [c.id for c in cases] == ["orders", "orders-2"]  # the old case keeps its id; the new one gets another
    assert cases[0].model_dump(exclude={"source"}) == before.model_dump(exclude={"source"})
    assert cases[1].transcript == "transcripts/orders-2.json"
    assert run_cli("run", "suites", cwd=tmp_path).returncode == 0


MULTI = """\
agent: shop   # every case talks to the shop agent
cases:
  - id: first
    starting_sentence: hi
    goal_details:
      - {type: text, name: greet, keywords: [hello]}
    transcript: transcripts/first.json
  # a comment about the last case
  - starting_sentence: bye
    goal_details:
      - {type: text, name: bye, keywords: [bye]}
    transcript: transcripts/first.json

# tags come after the cases
tags: [shop]
"""


def test_appending_to_a_multi_case_file_inserts_after_the_last_case_and_changes_no_byte(tmp_path: Path) -> None:
    suite = write(tmp_path / "suites" / "shop.yaml", MULTI)
    write_json(tmp_path / "suites" / "transcripts" / "first.json",
               [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello, bye"}])
    write_json(tmp_path / "first.json", chat("Where is A-1042?"))
    write_json(tmp_path / "shop-2.json", chat("Where is A-1042?"))
    made = run_cli("record", "--from", "first.json", "shop-2.json", "-o", "suites/shop.yaml", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    text = suite.read_text()
    cut = MULTI.index("\n# tags come after")  # the new cases go after the last case's last line
    added = text[cut:len(text) - (len(MULTI) - cut)]
    assert text == MULTI[:cut] + added + MULTI[cut:]
    assert added.startswith("\n  - id: first-2\n    description: Recorded conversation from first.json\n")
    assert added.count("\n  - id: ") == 2 and added.endswith("\n")
    cases, diagnostics, _ = load_file(suite)
    assert not diagnostics
    # "shop-2" is the position id of the second case already there: the new case cannot take it
    assert [c.id for c in cases] == ["first", "shop-2", "first-2", "shop-2-2"]
    assert all(c.agent == "shop" and c.tags == ["shop"] for c in cases)


def test_a_transcript_that_cannot_be_read_stops_everything_before_a_file_is_written(tmp_path: Path) -> None:
    write_json(tmp_path / "good.json", chat("Where is A-1042?"))
    write(tmp_path / "bad.json", '[{"role": "user", "content": "hi"}, {"role": "robot"}]')
    made = run_cli("record", "--from", "good.json", "bad.json", "-o", "drafts", cwd=tmp_path)
    assert made.returncode == 4
    assert made.stderr.splitlines() == ["evalrun record: bad.json: message 2 has unknown role 'robot'",
                                        "nothing was written"]
    assert not (tmp_path / "drafts").exists()


def test_a_conversation_with_nothing_to_check_is_skipped_and_named(tmp_path: Path) -> None:
    write_json(tmp_path / "empty.json", [{"role": "user", "content": "hello?"}])
    made = run_cli("record", "--from", "empty.json", "-o", "drafts", cwd=tmp_path)
    assert made.returncode == 4
    assert made.stderr.splitlines()[:2] == [
        "evalrun record: no conversation could be drafted:",
        "empty.json: no draft: the agent said nothing and made no call a goal could check (the agent called no tool)"]
    assert not (tmp_path / "drafts").exists()


def test_an_invalid_suite_is_never_appended_to(tmp_path: Path) -> None:
    suite = write(tmp_path / "broken.yaml", "starting_sentence: hi\ngoal_details: [{type: text}]\n")
    original = suite.read_bytes()
    write_json(tmp_path / "chat.json", chat("Where is A-1042?"))
    made = run_cli("record", "--from", "chat.json", "-o", "broken.yaml", cwd=tmp_path)
    assert made.returncode == 4
    assert made.stderr.startswith("evalrun record: broken.yaml has problems; fix them before adding cases to it:\n"
                                  "broken.yaml:2:")
    assert suite.read_bytes() == original
    assert sorted(files_under(tmp_path)) == ["broken.yaml", "chat.json"]


def test_a_write_that_fails_half_way_is_undone(tmp_path: Path) -> None:
    """The suite file is written first; when its transcript cannot be (`transcripts` is a file, not a
    folder), the suite is removed again and the existing suite it was added to is restored."""
    write_json(tmp_path / "chat.json", chat("Where is A-1042?"))
    suite = write(tmp_path / "suites" / "orders.yaml", SINGLE.replace("transcript: transcripts/orders.json\n", ""))
    original = suite.read_bytes()
    write(tmp_path / "suites" / "transcripts", "not a folder\n")
    for target in ("suites", "suites/orders.yaml", "suites/new.yaml"):
        made = run_cli("record", "--from", "chat.json", "-o", target, cwd=tmp_path)
        assert made.returncode == 3, made.stderr
        assert made.stderr.startswith("evalrun record: cannot write the drafts: "), made.stderr
        assert made.stderr.splitlines()[-1] == "nothing was written"
        assert suite.read_bytes() == original
        assert sorted(files_under(tmp_path / "suites")) == ["orders.yaml", "transcripts"]


def test_an_output_folder_that_is_a_file_is_a_usage_error(tmp_path: Path) -> None:
    write_json(tmp_path / "chat.json", chat("Where is A-1042?"))
    write(tmp_path / "drafts", "a file\n")
    made = run_cli("record", "--from", "chat.json", "-o", "drafts", cwd=tmp_path)
    assert made.returncode == 4
    assert made.stderr.splitlines()[0] == "evalrun record: drafts exists and is not a folder"


def test_ids_avoid_every_case_a_run_of_the_suite_tree_collects(tmp_path: Path) -> None:
    """Drafts written into suites/drafts/ of a project whose evalrun.yaml sits in suites/: a run of suites/
    sees them beside the hand-written cases, so they take none of those ids (a duplicate stops a run)."""
    shutil.copytree(REPO / "suites", tmp_path / "suites")
    made = run_cli("record", "--from", "suites/hr/transcripts/hr-timeoff-basic.json", "-o", "suites/drafts",
                   cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines()[0].startswith("case 'hr-timeoff-basic-2': ")
    ran = run_cli("run", "suites", "-q", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
