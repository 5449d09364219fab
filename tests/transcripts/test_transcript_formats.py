"""Transcript formats beyond OpenAI's: Anthropic Messages, JSON Lines, a BOM; and transcripts that must be refused."""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from runner.transcripts.read import TranscriptError, build_trajectory, normalize_messages
from runner.transcripts.transcript_file import read_recording
from runner.util import files
from tests.helpers.shared_data import require_shared

ANTHROPIC = [
    {"role": "user", "content": "Move 100 EUR to savings."},
    {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "The user wants a transfer.", "signature": "abc"},
        {"type": "text", "text": "Let me do that."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_balance", "input": {"account": "checking"}},
        {"type": "tool_use", "id": "toolu_2", "name": "transfer", "input": {"amount": 100, "to": "savings"}},
    ]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "1200.00"},
        {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": True,
         "content": [{"type": "text", "text": "limit exceeded"}]},
        {"type": "text", "text": "Did it work?"},
    ]},
    {"role": "assistant", "content": [{"type": "text", "text": "The transfer failed: limit exceeded."}]},
]


def test_anthropic_tool_use_and_tool_result_blocks_become_calls_and_results():
    messages = normalize_messages(ANTHROPIC)
    assert messages == [
        {"role": "user", "content": "Move 100 EUR to savings."},
        {"role": "assistant", "content": "Let me do that.", "tool_calls": [
            {"id": "toolu_1", "type": "function", "function": {"name": "get_balance", "arguments": {"account": "checking"}}},
            {"id": "toolu_2", "type": "function", "function": {"name": "transfer",
                                                               "arguments": {"amount": 100, "to": "savings"}}}]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "1200.00"},
        {"role": "tool", "tool_call_id": "toolu_2", "content": "limit exceeded", "error": True},
        {"role": "user", "content": [{"type": "text", "text": "Did it work?"}]},
        {"role": "assistant", "content": "The transfer failed: limit exceeded."},
    ]
    trajectory = build_trajectory(messages, normalized=True)
    assert [(c.name, c.arguments, c.result, c.is_error) for c in trajectory.tool_calls] == [
        ("get_balance", {"account": "checking"}, "1200.00", False),
        ("transfer", {"amount": 100, "to": "savings"}, "limit exceeded", True)]
    assert trajectory.user_turns == 2  # the results are not a user turn; the question after them is
    assert [t.text for t in trajectory.texts] == ["Let me do that.", "The transfer failed: limit exceeded."]


@pytest.mark.parametrize("message,expected", [
    ({"role": "assistant", "content": [{"type": "text", "text": "hi"}, {"type": "server_tool_use", "id": "x"}]},
     "message 2: content block 2 has type 'server_tool_use', which evalrun does not know"),
    ({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                   "content": [{"type": "search_result", "source": "x"}]}]},
     "message 2: content block 1 of a tool_result has type 'search_result', which evalrun does not know"),
    ({"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]},
     "message 2: content block 1 has type 'tool_use', which evalrun does not know"),
    ({"role": "assistant", "content": [{"text": "no type"}]},
     "message 2: content block 1 is not an object with a `type`"),
])
def test_an_unknown_content_block_is_an_error_naming_it(message, expected):
    with pytest.raises(TranscriptError) as error:
        normalize_messages([{"role": "user", "content": "hi"}, message])
    assert str(error.value).startswith(expected)


def test_an_anthropic_transcript_file_with_a_top_level_system_prompt(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"system": "You are a bank agent.", "messages": ANTHROPIC}), encoding="utf-8")
    assert [c.name for c in build_trajectory(read_recording(path).messages, normalized=True).tool_calls] == [
        "get_balance", "transfer"]


def test_json_lines_transcripts(tmp_path):
    lines = [json.dumps(m) for m in ANTHROPIC]
    for name, text in (("t.jsonl", "\n".join(lines) + "\n\n"), ("t.json", "\n".join(lines))):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        assert read_recording(path).messages == normalize_messages(ANTHROPIC), name


def test_a_bad_json_lines_line_is_named(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"role": "user", "content": "hi"}\n{"role": \n', encoding="utf-8")
    with pytest.raises(TranscriptError, match=r"t\.jsonl: invalid JSON Lines at line 2:10: Expecting value "
                                              r"\(each line must hold one message\)$"):
        read_recording(path)


def test_a_utf8_bom_is_accepted(tmp_path):
    path = tmp_path / "t.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps([{"role": "user", "content": "hi"}]).encode())
    assert read_recording(path).messages == [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize("text", ["", "  \n", "[]", '{"messages": []}'])
def test_an_empty_transcript_is_an_error(tmp_path, text):
    path = tmp_path / "t.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TranscriptError, match="the transcript has no messages"):
        read_recording(path)


def test_a_fifo_transcript_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "t.json"
    os.mkfifo(fifo)
    box: dict = {}
    worker = threading.Thread(target=lambda: box.setdefault("error", _error_of(fifo)), daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive(), "reading a FIFO blocked"
    assert box["error"] == (f"cannot read transcript file {fifo}: it is a named pipe (FIFO), not a regular file; "
                            "evalrun reads transcripts only from regular files")


def _error_of(path: Path) -> str:
    try:
        read_recording(path)
    except TranscriptError as e:
        return str(e)
    return "no error"


def test_a_device_transcript_is_refused():
    assert _error_of(Path("/dev/zero")).endswith("it is a character device, not a regular file; evalrun reads "
                                                 "transcripts only from regular files")


def test_a_transcript_above_the_limit_is_refused_with_the_limit_named(tmp_path):
    path = tmp_path / "t.json"
    with open(path, "wb") as out:
        out.truncate(files.TRANSCRIPT_SIZE_LIMIT + 1)
    assert _error_of(path) == f"cannot read transcript file {path}: it is 50 MiB, above the 50 MiB limit for transcripts"


@pytest.mark.parametrize("text,reason", [
    ('[{"role": "tool", "content": ' + "[" * 5000 + "]" * 5000 + "}]", "line 1:128: the file is nested more than 100 levels deep"),
    ('[{"role": "user", "content": ' + "9" * 5000 + "}]", "cannot read the JSON: a number is longer than 4,300 digits"),
])
def test_hostile_json_is_a_transcript_error(tmp_path, text, reason):
    path = tmp_path / "t.json"
    path.write_text(text, encoding="utf-8")
    assert _error_of(path) == f"{path}: {reason}"


def test_a_watsonx_not_found_result_follows_the_same_error_rule_as_other_formats():
    """The recorded data_simple run answers a call with `not found` inside watsonx's JSON-in-a-string
    payload: whether that is an error is decided by tool_error_pattern exactly as for an OpenAI tool
    message with the same text."""
    recorded = json.loads(require_shared("watsonx-examples", "data_simple.run1.messages.json").read_text(encoding="utf-8"))
    openai = [{"role": "user", "content": "hi"},
              {"role": "assistant", "content": None, "tool_calls": [
                  {"id": "c1", "type": "function", "function": {"name": "get_assignment_id_hr_usecase",
                                                                 "arguments": '{"username": "your username"}'}}]},
              {"role": "tool", "tool_call_id": "c1", "content": "not found"}]
    for pattern, expected in ((r"^\s*Error\b", False), (r"(?i)^\s*(error\b|not found\b)", True)):
        watsonx_first = build_trajectory(recorded, pattern).tool_calls[0]
        openai_first = build_trajectory(openai, pattern).tool_calls[0]
        assert (watsonx_first.result, watsonx_first.is_error) == ("not found", expected)
        assert (openai_first.result, openai_first.is_error) == ("not found", expected)
