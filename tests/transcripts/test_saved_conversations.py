"""A live run's conversations.jsonl: one line per conversation, found by key wherever a transcript is read
(`FILE#KEY` in a suite, `--replay FILE`, rescore, import), hostile files refused precisely, runs of earlier
versions (a conversations/ folder, one file per case) still rescored."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runner.results.folder import RunFolder, conversation_file_name
from runner.transcripts import saved_conversations
from runner.transcripts.read import TranscriptError
from runner.transcripts.recording import ConversationRef
from runner.transcripts.saved_conversations import NotSaved, conversation_line, index_of, saved_keys, saved_line
from runner.transcripts.transcript_file import read_conversations, read_recording
from runner.util.files import TRANSCRIPT_SIZE_LIMIT, split_selection
from tests.helpers.cli_helpers import cli_env, run_cli, saved_conversations as saved_in, write
from tests.helpers.run_live import LOOKUP_AGENT, live_project, report_of

ODD_KEYS = ["lookup", "a/b", "a//b", "with # hash", "#first", "trailing/", "sp ace", "ünïcödé ✓", 'quo"te', "back\\slash",
            "lone \ud800 surrogate", "x repeat 2"]


def talk(text: str) -> dict:
    return {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": text}],
            "termination_reason": "user_stop"}


def saved_file(tmp_path: Path, entries: dict[str, dict]) -> Path:
    folder = RunFolder(tmp_path / "run", "r1", None)
    for key, data in entries.items():
        folder.save_conversation(key, data)
    folder.release()
    return folder.conversations_path


# ----------------------------------------------------------------------------------------- the file

def test_every_key_reads_back_its_own_conversation_whatever_it_holds(tmp_path):
    path = saved_file(tmp_path, {key: talk(f"answer to {key}") for key in ODD_KEYS})
    lines = path.read_bytes().splitlines()
    assert len(lines) == len(ODD_KEYS) and all(line.startswith(b'{"conversation": "') for line in lines)
    lines[0].decode("utf-8")  # valid UTF-8 throughout, a lone surrogate in a key included (escaped)
    assert saved_keys(path) == ODD_KEYS
    for key in ODD_KEYS:
        recording = read_recording(f"{path}#{key}")  # as text: a Path would fold `a//b`
        assert recording.messages[-1]["content"] == f"answer to {key}".replace("\ud800", "\\ud800")  # shown
        assert recording.termination_reason == "user_stop" and recording.conversation_id == key


def test_a_line_is_the_transcript_format_plus_its_key(tmp_path):
    data = {"messages": [{"role": "user", "content": "hi"}], "termination_reason": "agent_stop", "state": {"a": 1},
            "error": "boom", "stderr": ["x"]}
    path = saved_file(tmp_path, {"k": data})
    assert json.loads(path.read_text()) == {"conversation": "k", **data}
    assert list(json.loads(path.read_text())) == ["conversation", *data]
    recording = read_recording(f"{path}#k")
    assert recording.state.value == {"a": 1} and recording.state.source == f"the `state` saved in {path}#k"
    assert conversation_line("k", "{}") == b'{"conversation": "k"}\n'
    with pytest.raises(ValueError):
        conversation_line("k", "[1]")


def test_a_key_saved_twice_reads_as_its_newest_line(tmp_path):
    folder = RunFolder(tmp_path / "run", "r1", None)
    folder.save_conversation("a", talk("old"))
    folder.save_conversation("b", talk("other"))
    folder.save_conversation("a", talk("new"))
    folder.release()
    assert read_recording(f"{folder.conversations_path}#a").messages[-1]["content"] == "new"
    assert saved_keys(folder.conversations_path) == ["b", "a"]


def test_a_file_of_one_conversation_needs_no_key_and_a_file_of_several_lists_them(tmp_path):
    one = saved_file(tmp_path / "one", {"only": talk("alone")})
    assert read_recording(one).messages[-1]["content"] == "alone"
    several = saved_file(tmp_path / "two", {"a": talk("1"), "b": talk("2")})
    with pytest.raises(TranscriptError, match=r"holds 2 conversations; name one as FILE#KEY \(keys: a, b\)"):
        read_recording(several)
    with pytest.raises(TranscriptError, match=r"no conversation 'c' in the file \(it holds 2: a, b\)"):
        read_recording(f"{several}#c")


def test_a_run_killed_mid_line_loses_only_that_line(tmp_path):
    path = saved_file(tmp_path, {"a": talk("kept"), "b": talk("cut")})
    whole = path.read_bytes()
    path.write_bytes(whole[:-25])  # the second line cut where a kill would leave it
    assert read_recording(f"{path}#a").messages[-1]["content"] == "kept"
    with pytest.raises(TranscriptError, match=rf"{path}#b: invalid JSON"):
        read_recording(f"{path}#b")


def test_lines_that_do_not_start_with_a_key_are_named_when_a_key_is_missing(tmp_path):
    path = tmp_path / "conversations.jsonl"
    path.write_bytes(conversation_line("a", json.dumps(talk("x"))) + b"\n" + b'{"messages": []}\n' + b"garbage\n")
    with pytest.raises(TranscriptError, match=r"no conversation 'b' .* lines 3, 4 do not start with a key"):
        read_recording(f"{path}#b")
    assert read_recording(f"{path}#a").messages[-1]["content"] == "x"  # blank line 2 skipped
    with pytest.raises(TranscriptError, match="line 3 does not start with its conversation's key"):
        read_conversations(path)


def test_a_line_above_the_transcript_limit_is_refused_without_reading_it(tmp_path, monkeypatch):
    path = saved_file(tmp_path, {"small": talk("x"), "big": talk("y" * 5000)})
    with pytest.raises(NotSaved, match=r"line 2 \(conversation 'big'\) is 5,\d{3} bytes, above the 1,000-byte limit"):
        saved_line(path, "big", 1000)
    assert saved_line(path, "small", 1000)[1] == "small"
    assert TRANSCRIPT_SIZE_LIMIT >= 50 << 20  # the limit a line is held to (the file as a whole may be larger)


def test_keys_are_found_across_read_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(saved_conversations, "_CHUNK", 7)  # every line and most keys span several reads
    entries = {f"case-{n}-{'x' * (n % 13)}": talk("y" * (n * 3)) for n in range(40)}
    path = saved_file(tmp_path, entries)
    index = saved_conversations._scan(path)
    assert list(index.lines) == list(entries) and not index.unreadable
    text = path.read_bytes()
    for key, (offset, length, number) in index.lines.items():
        assert json.loads(text[offset:offset + length])["conversation"] == key
        assert text.count(b"\n", 0, offset) == number - 1


def test_a_long_key_reads_back_and_one_past_the_key_limit_is_unreadable_not_a_crash(tmp_path, monkeypatch):
    long_ids = ["long" + "中" * 1400, "e" + "\U0001F600" * 700, "k" * 20000]  # 8-17 KiB once escaped
    path = saved_file(tmp_path, {**{key: talk(key[:4]) for key in long_ids}, "short": talk("y")})
    assert list(saved_conversations._scan(path).lines) == [*long_ids, "short"]
    for key in long_ids:
        assert read_recording(ConversationRef(path, key)).messages[-1]["content"] == key[:4]
    with pytest.raises(TranscriptError, match=r"no conversation 'kkk[k]*… \(20,001 characters\)'"):
        read_recording(ConversationRef(path, "k" * 20000 + "?"))  # a message quotes a long key cut
    monkeypatch.setattr(saved_conversations, "KEY_LIMIT", 10_000)
    saved_conversations.forget_index(path)
    index = saved_conversations._scan(path)
    assert list(index.lines) == [*long_ids[:2], "short"] and index.unreadable == [3]


def test_the_index_is_made_again_when_the_file_changes(tmp_path):
    folder = RunFolder(tmp_path / "run", "r1", None)
    folder.save_conversation("a", talk("1"))
    assert list(index_of(folder.conversations_path).lines) == ["a"]
    assert index_of(folder.conversations_path) is index_of(folder.conversations_path)  # one pass while unchanged
    folder.save_conversation("b", talk("2"))
    assert list(index_of(folder.conversations_path).lines) == ["a", "b"]
    folder.release()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
def test_a_fifo_named_as_the_file_is_refused_without_being_opened(tmp_path):
    fifo = tmp_path / "conversations.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(TranscriptError, match="not a regular file"):
        read_recording(f"{fifo}#a")


def test_two_processes_appending_to_one_file_never_interleave_lines(tmp_path):
    """pytest-xdist's workers share a run folder: each line is written whole by one write."""
    script = (f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})\n"
              "from pathlib import Path\nfrom runner.results.folder import RunFolder\n"
              "folder = RunFolder(Path(sys.argv[1]), 'r', None)\n"
              "for n in range(300):\n"
              "    folder.save_conversation(f'{sys.argv[2]}-{n}', {'messages': [{'role': 'user', 'content': sys.argv[2] * 20000}]})\n")
    workers = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "run"), name]) for name in "AB"]
    assert [worker.wait(timeout=120) for worker in workers] == [0, 0]
    lines = (tmp_path / "run" / "conversations.jsonl").read_text().splitlines()
    assert len(lines) == 600
    for line in lines:
        data = json.loads(line)
        assert data["messages"][0]["content"] == data["conversation"][0] * 20000


# ----------------------------------------------------------------------------------------- FILE#KEY

def test_split_selection_cuts_at_the_first_hash_before_which_a_file_exists(tmp_path):
    saved = saved_file(tmp_path, {"x": talk("x")})
    assert split_selection(f"{saved}#a/b#c") == (saved, "a/b#c")
    assert split_selection(f"{saved}#a//b") == (saved, "a//b")
    literal = tmp_path / "odd#name.json"
    literal.write_text("[]")
    assert split_selection(literal) == (literal, None)  # a file that exists as written, '#' and all
    assert split_selection(tmp_path / "missing.jsonl#id") == (tmp_path / "missing.jsonl", "id")
    assert split_selection(Path("#hash-first/file.json")) == (Path("#hash-first/file.json"), None)


def test_a_link_named_with_an_id_must_still_lie_inside_the_suite_folders(tmp_path):
    """`link.jsonl#ID` resolved no link as written: a trace outside the suites was read (fixed)."""
    outside = tmp_path / "outside" / "conversations.jsonl"
    outside.parent.mkdir()
    outside.write_bytes(conversation_line("c1", json.dumps(talk("secret from outside"))))
    (tmp_path / "p" / "suites").mkdir(parents=True)
    (tmp_path / "p" / "suites" / "link.jsonl").symlink_to(outside)
    write(tmp_path / "p" / "suites" / "a.yaml", """
        id: a
        transcript: link.jsonl#c1
        goal_details: [{type: text, name: answer, keywords: [secret]}]
        """)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path / "p")
    assert result.returncode == 4, result.stdout + result.stderr
    assert "transcript 'link.jsonl#c1' is outside the suite folders" in result.stdout + result.stderr


# ----------------------------------------------------------------------------------------- the CLI

def test_a_live_run_writes_one_file_that_rescore_replay_and_suites_read_back(tmp_path):
    live_project(tmp_path, LOOKUP_AGENT, cases="""
        agent: bot
        cases:
          - id: data/lookup
            starting_sentence: Look up nwaters please.
            goal_details:
              - {type: tool_call, name: get_id, tool_name: get_assignment_id, args: {username: nwaters}}
              - {type: text, name: tell, keywords: ["15778303"]}
          - id: "odd # id"
            starting_sentence: Look up nwaters please.
            goal_details: [{type: text, name: tell, keywords: ["15778303"]}]
        """)
    assert run_cli("suites", "--output-dir", "out", cwd=tmp_path).returncode == 0
    assert sorted(saved_in(tmp_path / "out")) == ["data/lookup", "odd # id"]
    paths = {c["id"]: c["transcript_path"] for c in report_of(tmp_path)["cases"]}
    assert paths == {"data/lookup": "out/conversations.jsonl#data/lookup", "odd # id": "out/conversations.jsonl#odd # id"}
    calls = (tmp_path / "agents" / "calls.log").read_text()

    replayed = run_cli("suites", "--replay", "out/conversations.jsonl", "--output-dir", "replayed", cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert {c["id"]: c["transcript_path"] for c in report_of(tmp_path, "replayed")["cases"]} == paths
    rescored = run_cli("rescore", "out", "--output-dir", "rescored", cwd=tmp_path)
    assert rescored.returncode == 0, rescored.stdout + rescored.stderr
    assert [c["status"] for c in report_of(tmp_path, "rescored")["cases"]] == ["passed", "passed"]
    assert (tmp_path / "agents" / "calls.log").read_text() == calls  # neither called the agent

    # a suite may name a saved conversation as its transcript (the run folder added to allowed_paths)
    write(tmp_path / "evalrun.yaml", (tmp_path / "evalrun.yaml").read_text() + "allowed_paths: [out]\n")
    write(tmp_path / "recorded" / "case.yaml", """
        id: from-a-run
        transcript: ../out/conversations.jsonl#data/lookup
        goal_details: [{type: text, name: tell, keywords: ["15778303"]}]
        """)
    recorded = run_cli("recorded", "--output-dir", "rec", cwd=tmp_path)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr


def test_replay_of_a_file_that_is_not_a_conversations_file_is_refused(tmp_path):
    live_project(tmp_path, LOOKUP_AGENT)
    write(tmp_path / "notes.jsonl", '{"role": "user", "content": "hi"}\n')
    result = run_cli("suites", "--replay", "notes.jsonl", cwd=tmp_path)
    assert result.returncode == 4
    assert "'notes.jsonl' is a file, not a folder of recordings nor a run's conversations.jsonl" in result.stdout + result.stderr
    missing = run_cli("suites", "--replay", "nowhere", cwd=tmp_path)
    assert missing.returncode == 4 and "no such folder: 'nowhere'" in missing.stdout + missing.stderr


def test_a_rerun_into_the_same_folder_starts_the_file_afresh(tmp_path):
    live_project(tmp_path, LOOKUP_AGENT)
    for _ in range(3):
        assert run_cli("suites", "--output-dir", "out", cwd=tmp_path).returncode == 0
    assert len((tmp_path / "out" / "conversations.jsonl").read_text().splitlines()) == 1


def test_a_run_of_an_earlier_version_is_still_rescored_from_its_conversations_folder(tmp_path):
    live_project(tmp_path, LOOKUP_AGENT)
    assert run_cli("suites", "--output-dir", "out", cwd=tmp_path).returncode == 0
    folder = tmp_path / "out" / "conversations"  # what earlier versions wrote: a file per conversation
    folder.mkdir()
    for key, data in saved_in(tmp_path / "out").items():
        (folder / conversation_file_name(key)).write_text(json.dumps(data))
    (tmp_path / "out" / "conversations.jsonl").unlink()
    suite = tmp_path / "suites" / "live.yaml"
    suite.write_text(suite.read_text().replace("username: nwaters", "username: someone"))
    result = run_cli("rescore", "out", "--output-dir", "again", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    case = report_of(tmp_path, "again")["cases"][0]
    assert case["goals"][0]["status"] == "wrong_args" and case["transcript_path"] == "out/conversations/lookup.json"


def test_a_conversations_file_imports_one_draft_per_conversation(tmp_path):
    path = saved_file(tmp_path, {"first": talk("one"), "second/x": talk("two")})
    found = read_conversations(path)
    assert [(key, rec.messages[-1]["content"]) for key, rec in found] == [("first", "one"), ("second/x", "two")]


@pytest.mark.process  # the run is killed (SIGKILL)
def test_a_killed_live_run_keeps_every_conversation_it_finished(tmp_path):
    live_project(tmp_path, """
        import time

        def respond(messages, context):
            time.sleep(0.05)
            return "hello"
        """, cases="agent: bot\ncases:\n" + "".join(
        f"  - {{id: c{n:03d}, starting_sentence: hi, goal_details: [{{type: text, name: t, keywords: [hello]}}]}}\n"
        for n in range(400)))
    run = subprocess.Popen([sys.executable, "-m", "runner", "suites", "-q", "-j", "4", "--output-dir", "out"],
                           cwd=tmp_path, env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = tmp_path / "out" / "results.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not results.exists() or len(results.read_bytes().splitlines()) < 20):
        time.sleep(0.05)
    run.send_signal(signal.SIGKILL)
    run.wait(timeout=30)
    finished = {json.loads(line)["id"] for line in results.read_bytes().splitlines() if line.endswith(b"}")}
    assert len(finished) >= 20
    saved = (tmp_path / "out" / "conversations.jsonl").read_bytes().splitlines(keepends=True)
    whole = {json.loads(line)["conversation"] for line in saved if line.endswith(b"\n")}
    assert finished <= whole  # a conversation is saved before its result: no finished case lacks it
    for key in whole:
        assert read_recording(f"{tmp_path / 'out' / 'conversations.jsonl'}#{key}").messages[-1]["content"] == "hello"


# ----------------------------------------------------------------------------------------- found in review

def test_a_torn_line_is_closed_off_by_the_next_writer_not_glued_to_its_line(tmp_path):
    """A process killed mid-line (an xdist worker), a write cut by a full disk: the next line starts anew."""
    folder = RunFolder(tmp_path / "run", "r1", None)
    folder.save_conversation("a", talk("kept"))
    with open(folder.conversations_path, "ab") as torn:
        torn.write(conversation_line("b", json.dumps(talk("cut")))[:30])
    other = RunFolder(tmp_path / "run", "r2", None)  # another process's writer, opened after the tear
    other.save_conversation("next", talk("whole"))
    folder.save_conversation("last", talk("also whole"))
    for writer in (folder, other):
        writer.release()
    path = folder.conversations_path
    assert read_recording(ConversationRef(path, "next")).messages[-1]["content"] == "whole"
    assert read_recording(ConversationRef(path, "last")).messages[-1]["content"] == "also whole"
    assert read_recording(ConversationRef(path, "a")).messages[-1]["content"] == "kept"
    with pytest.raises(TranscriptError, match=r"#b: invalid JSON"):
        read_recording(ConversationRef(path, "b"))


def test_a_file_rewritten_in_place_is_indexed_again_not_read_at_old_offsets(tmp_path):
    path = tmp_path / "conversations.jsonl"
    path.write_bytes(conversation_line("a", json.dumps(talk("refund issued"))) +
                     conversation_line("b", json.dumps(talk("I cannot help"))))
    assert read_recording(ConversationRef(path, "a")).messages[-1]["content"] == "refund issued"
    before = os.stat(path)
    with open(path, "r+b") as source:  # the same lines in the other order: the same size
        source.write(conversation_line("b", json.dumps(talk("refund issued"))) +
                     conversation_line("a", json.dumps(talk("I cannot help"))))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # as a coarse clock leaves it
    assert read_recording(ConversationRef(path, "a")).messages[-1]["content"] == "I cannot help"


def test_a_file_of_more_lines_than_evalrun_indexes_is_refused_with_the_reason(tmp_path, monkeypatch):
    monkeypatch.setattr(saved_conversations, "MAX_LINES", 5)
    path = saved_file(tmp_path, {f"k{n}": talk("x") for n in range(6)})
    with pytest.raises(TranscriptError, match="the file has more than 5 lines; evalrun indexes no more"):
        read_recording(ConversationRef(path, "k1"))


def test_a_case_transcript_naming_a_line_keeps_the_key_whole(tmp_path):
    """`FILE#refund//x` was joined as a Path, which folded it to `refund/x`: another case's line (a false pass)."""
    live_project(tmp_path, """
        import json

        def respond(messages, context):
            if "//" in context.case_id:
                return "I cannot help with refunds."
            call = {"id": "c1", "type": "function",
                    "function": {"name": "issue_refund", "arguments": json.dumps({"order": "A1"})}}
            return [{"role": "assistant", "content": None, "tool_calls": [call]},
                    {"role": "tool", "tool_call_id": "c1", "content": "done"},
                    {"role": "assistant", "content": "Refund issued."}]
        """, cases="""
        agent: bot
        cases:
          - {id: refund/x, starting_sentence: refund please, goal_details: [{type: tool_call, name: r, tool_name: issue_refund}]}
          - {id: refund//x, starting_sentence: refund please, goal_details: [{type: tool_call, name: r, tool_name: issue_refund}]}
          - {id: a/./b, starting_sentence: refund please, goal_details: [{type: tool_call, name: r, tool_name: issue_refund}]}
        """)
    live = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert live.returncode == 1, live.stdout + live.stderr
    assert {c["id"]: c["status"] for c in report_of(tmp_path)["cases"]} == \
        {"refund/x": "passed", "refund//x": "failed", "a/./b": "passed"}
    write(tmp_path / "evalrun.yaml", (tmp_path / "evalrun.yaml").read_text() + "allowed_paths: [out]\n")
    write(tmp_path / "rs" / "judge.yaml", """
        cases:
          - {id: the-bad-one, transcript: ../out/conversations.jsonl#refund//x, goal_details: [{type: tool_call, name: r, tool_name: issue_refund}]}
          - {id: the-dot-one, transcript: ../out/conversations.jsonl#a/./b, goal_details: [{type: tool_call, name: r, tool_name: issue_refund}]}
        """)
    judged = run_cli("rs", "--output-dir", "judged", cwd=tmp_path)
    cases = {c["id"]: c for c in report_of(tmp_path, "judged")["cases"]}
    assert cases["the-bad-one"]["status"] == "failed", judged.stdout + judged.stderr
    assert cases["the-bad-one"]["transcript_path"] == "rs/../out/conversations.jsonl#refund//x"
    assert cases["the-dot-one"]["status"] == "passed"


def test_replay_of_a_file_reads_its_line_not_a_file_named_after_it(tmp_path):
    live_project(tmp_path, LOOKUP_AGENT)
    assert run_cli("suites", "--output-dir", "out", cwd=tmp_path).returncode == 0
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"},
                                                {"role": "assistant", "content": "TOP SECRET outside"}]}))
    (tmp_path / "out" / "conversations.jsonl#lookup").symlink_to(outside)
    for args in (["suites", "--replay", "out/conversations.jsonl", "--output-dir", "rep"],
                 ["rescore", "out", "--output-dir", "rep"]):
        result = run_cli(*args, cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "TOP SECRET" not in (tmp_path / "rep" / "report.json").read_text()


def test_a_rescore_or_replay_into_the_folder_it_reads_keeps_what_it_reads(tmp_path):
    live_project(tmp_path, LOOKUP_AGENT)
    assert run_cli("suites", "--output-dir", "out", cwd=tmp_path).returncode == 0
    saved = (tmp_path / "out" / "conversations.jsonl").read_bytes()
    for args in (["rescore", "out", "--output-dir", "out"],
                 ["suites", "--replay", "out/conversations.jsonl", "--output-dir", "out"]):
        result = run_cli(*args, cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        assert [c["status"] for c in report_of(tmp_path)["cases"]] == ["passed"]
        assert (tmp_path / "out" / "conversations.jsonl").read_bytes() == saved


def test_replay_given_an_old_idiom_says_where_the_conversations_are(tmp_path):
    live_project(tmp_path, LOOKUP_AGENT)
    assert run_cli("suites", "--output-dir", "out", "--repeat", "2", cwd=tmp_path).returncode == 0
    folder = run_cli("suites", "--replay", "out/conversations", cwd=tmp_path)
    assert folder.returncode == 4
    assert ("no such folder: 'out/conversations'; a run saves its live conversations in out/conversations.jsonl now "
            "(--replay out/conversations.jsonl)") in folder.stdout + folder.stderr
    run_dir = run_cli("suites", "--replay", "out", cwd=tmp_path)
    assert run_dir.returncode == 4
    assert "'out' is a run folder: its live conversations are in out/conversations.jsonl" in run_dir.stdout + run_dir.stderr
    repeats = run_cli("suites", "--replay", "out/conversations.jsonl", "--output-dir", "rep", cwd=tmp_path)
    assert repeats.returncode == 3, repeats.stdout + repeats.stderr
    assert ("no line saved under that key; it holds 'lookup repeat 0', 'lookup repeat 1': a run with --repeat is "
            "scored again with `evalrun rescore RUN_DIR`") in report_of(tmp_path, "rep")["cases"][0]["error"]


def test_import_of_one_line_named_as_file_hash_key(tmp_path):
    path = saved_file(tmp_path, {"first": talk("one"), "data/second": talk("two")})
    result = run_cli("import", f"{path}#data/second", "-o", "drafts", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    drafts = [p.read_text() for p in (tmp_path / "drafts").rglob("*.yaml")]
    assert len(drafts) == 1 and "id: conversations-data-second" in drafts[0]
    [transcript] = (tmp_path / "drafts").rglob("*.json")
    assert [m["content"] for m in json.loads(transcript.read_text())["messages"]] == ["hi", "two"]


def test_a_conversation_that_cannot_be_saved_is_a_note_under_ray_too(tmp_path):
    import errno
    import types

    from runner.results.models import CaseResult
    from runner.run.executors.ray_cluster import _live_results

    def full(key, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    work = types.SimpleNamespace(runner=types.SimpleNamespace(save_conversation=full), refs=[None], repeats=1)
    played = {"conversations": [(0, 0, "lookup", {"messages": []})],
              "results": [(0, 0, CaseResult(id="lookup", source="s.yaml:1:1", status="passed"))]}
    [(_, _, result)] = _live_results(work, played)
    assert result.status == "passed"
    assert result.notes == ["the conversation could not be saved for `evalrun rescore`: No space left on device"]


def test_pytest_keeps_the_file_of_a_folder_another_run_holds(tmp_path):
    from runner.frontends.pytest.plugin import _forget_saved_conversations
    from runner.results.run_lock import try_lock

    for name in ("out", "out-2"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "conversations.jsonl").write_text("{}\n")
    held = try_lock(tmp_path / "out-2")  # another session writing there now
    try:
        _forget_saved_conversations(tmp_path / "out")
    finally:
        os.close(held)
    assert not (tmp_path / "out" / "conversations.jsonl").exists()
    assert (tmp_path / "out-2" / "conversations.jsonl").exists()


@pytest.mark.process  # pytest -n 2: xdist's workers are processes
def test_pytest_into_a_folder_another_run_holds_saves_everything_in_a_subfolder_of_its_own(tmp_path):
    """Its workers appended to the other run's conversations.jsonl while its report moved (a rescore of either
    then read the wrong line or none)."""
    from runner.results.run_lock import try_lock
    from tests.helpers.pytest_plugin import project, pytest_in

    root = project(tmp_path / "p")
    (root / "out").mkdir()
    theirs = b'{"conversation": "lookup-0", "messages": [{"role": "user", "content": "the other run"}]}\n'
    (root / "out" / "conversations.jsonl").write_bytes(theirs)
    held = try_lock(root / "out")  # another run writing there now
    try:
        done = pytest_in(root, "-n", "2", "--evalrun-output-dir", "out")
    finally:
        os.close(held)
    assert done.returncode == 1, done.stdout + done.stderr
    assert (root / "out" / "conversations.jsonl").read_bytes() == theirs  # untouched
    [own] = [p for p in (root / "out").iterdir() if p.is_dir()]
    assert len(saved_in(own)) == 6 and (own / "report.json").is_file()
    again = run_cli("rescore", str(own.relative_to(root)), "--output-dir", "again", cwd=root)
    summary = json.loads((root / "again" / "report.json").read_text())["summary"]
    assert (summary["error"], summary["passed"], summary["failed"]) == (0, 5, 1), again.stdout + again.stderr


# ----------------------------------------------------------------------------------------- second review

REFUNDS = {"refund/x": {"messages": [{"role": "user", "content": "refund please"},
                                     {"role": "assistant", "content": None, "tool_calls": [
                                         {"id": "c1", "type": "function",
                                          "function": {"name": "issue_refund", "arguments": "{}"}}]},
                                     {"role": "tool", "tool_call_id": "c1", "content": "done"},
                                     {"role": "assistant", "content": "Refund issued."}]},
           "refund//x": talk("I cannot help with refunds.")}


def test_import_of_a_key_with_a_double_slash_drafts_that_conversation(tmp_path):
    path = saved_file(tmp_path, REFUNDS)
    result = run_cli("import", f"{path.relative_to(tmp_path)}#refund//x", "-o", "drafts", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    [draft] = (tmp_path / "drafts").rglob("*.yaml")
    assert "#refund//x" in draft.read_text() and "issue_refund" not in draft.read_text()


def test_save_failures_keeps_a_line_s_key_whole_inside_and_outside_its_folder(tmp_path):
    saved_file(tmp_path, REFUNDS)  # run/conversations.jsonl
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\nallowed_paths: [run]\n")
    goal = "goal_details: [{type: tool_call, name: r, tool_name: issue_refund}]"
    write(tmp_path / "rs" / "judge.yaml", f"id: the-bad-one\ntranscript: ../run/conversations.jsonl#refund//x\n{goal}\n")
    for target in ("failed.yaml", "sub/failed.yaml", "rs/failed.yaml"):
        first = run_cli("rs/judge.yaml", "--output-dir", "r1", "--save-failures", target, cwd=tmp_path)
        assert first.returncode == 1, first.stdout + first.stderr
        rerun = run_cli(target, "--output-dir", "r2", cwd=tmp_path)
        assert rerun.returncode == 1, (target, (tmp_path / target).read_text(), rerun.stdout + rerun.stderr)
        assert report_of(tmp_path, "r2")["cases"][0]["status"] == "failed"  # the same conversation, still failing


def test_a_file_too_large_to_index_is_scanned_once_not_once_a_case(tmp_path, monkeypatch):
    monkeypatch.setattr(saved_conversations, "MAX_LINES", 5)
    path = saved_file(tmp_path, {f"k{n}": talk("x") for n in range(6)})
    scans = []
    real = saved_conversations._scan
    monkeypatch.setattr(saved_conversations, "_scan", lambda p: scans.append(p) or real(p))
    for n in range(3):
        with pytest.raises(TranscriptError, match="more than 5 lines"):
            read_recording(ConversationRef(path, f"k{n}"))
    assert len(scans) == 1


def test_watch_reruns_a_case_when_the_file_its_line_is_in_changes(tmp_path, monkeypatch):
    from runner.frontends.watch import WatchOptions, read_project

    saved_file(tmp_path, REFUNDS)
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\nallowed_paths: [run]\n")
    write(tmp_path / "rs" / "judge.yaml", "id: j\ntranscript: ../run/conversations.jsonl#refund//x\n"
                                          "goal_details: [{type: text, name: t, keywords: [help]}]\n")
    monkeypatch.chdir(tmp_path)
    project, problems = read_project(WatchOptions([Path("rs")]))
    assert not problems
    ids, _ = project.affected([(tmp_path / "run" / "conversations.jsonl").resolve()])
    assert ids == ["j"]


def test_the_otlp_export_names_a_saved_line_s_whole_key():
    from runner.report.otlp import conversation_of

    assert conversation_of("out/conversations.jsonl#a#b") == "a#b"
    assert conversation_of("out/conversations.jsonl#x//y") == "x//y"
    assert conversation_of("traces.jsonl#conv-1") == "conv-1"
    assert conversation_of("suites/t.json") is None


def test_a_file_system_without_locks_still_saves_every_line(tmp_path, monkeypatch):
    import errno
    import fcntl

    from runner.results.run_lock import try_lock

    def no_locks(fd, operation):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    path = saved_file(tmp_path, {"a": talk("1"), "b": talk("2")})
    assert saved_keys(path) == ["a", "b"]
    fd = try_lock(tmp_path / "run")  # not "another run holds it": the run stays in its folder
    assert fd is not None
    os.close(fd)


def test_work_done_aside_leaves_no_thread_behind():
    import asyncio
    import threading

    from runner.llm.loop import run_aside

    async def twice():
        assert await run_aside(sum, [1, 2]) == 3
        with pytest.raises(ZeroDivisionError):
            await run_aside(lambda: 1 / 0)

    asyncio.run(twice())
    deadline = time.monotonic() + 5
    while any(t.name == "evalrun-llm-aside" for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(t.name == "evalrun-llm-aside" for t in threading.enumerate())
