"""Tests for runner.transcripts.read: normalizing recorded formats and pairing tool calls."""
import json
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from runner.transcripts.read import Trajectory, TranscriptError, build_trajectory, normalize_messages
from runner.transcripts.transcript_file import read_transcript
from tests.helpers.shared_data import require_shared

DATA = Path(__file__).parents[1] / "data" / "transcripts"


def call(id_, name, arguments):
    return {"id": id_, "type": "function", "function": {"name": name, "arguments": arguments}}


def assistant(*calls, content=None):
    msg = {"role": "assistant", "content": content}
    if calls:
        msg["tool_calls"] = list(calls)
    return msg


def tool(id_, content, **extra):
    return {"role": "tool", "tool_call_id": id_, "content": content, **extra}


def user(text):
    return {"role": "user", "content": text}


# ------------------------------------------------------------------ OpenAI format

def test_openai_string_and_object_arguments():
    msgs = [
        {"role": "system", "content": "be brief"},
        user("weather?"),
        assistant(call("a", "get_weather", '{"city": "Oslo"}'),
                  call("b", "get_time", {"tz": "CET"})),
        tool("a", "4C"),
        tool("b", "12:00"),
        assistant(content="4C at noon."),
    ]
    t = build_trajectory(msgs)
    assert isinstance(t, Trajectory)
    assert t.user_turns == 1
    a, b = t.tool_calls
    assert (a.index, a.message_index, a.position, a.id, a.name) == (0, 2, (2, 1), "a", "get_weather")
    assert a.arguments == {"city": "Oslo"}
    assert a.raw_arguments == '{"city": "Oslo"}'
    assert a.arguments_error is None
    assert (a.result, a.result_message_index, a.answered, a.is_error) == ("4C", 3, True, False)
    assert (b.index, b.position, b.arguments, b.raw_arguments) == (1, (2, 2), {"tz": "CET"}, {"tz": "CET"})
    assert (b.result, b.result_message_index) == ("12:00", 4)
    assert [(x.message_index, x.text, x.is_final) for x in t.texts] == [(5, "4C at noon.", True)]
    assert t.final_text == "4C at noon."


def test_content_parts_are_joined():
    msgs = [user("hi"), assistant(content=[{"type": "text", "text": "Hello"},
                                           {"type": "image_url", "image_url": {"url": "x"}},
                                           {"type": "text", "text": "there"}])]
    t = build_trajectory(msgs)
    assert t.messages[1]["content"] == "Hello\nthere"
    assert [x.text for x in t.texts] == ["Hello\nthere"]


def test_texts_skip_blank_and_only_last_is_final():
    msgs = [user("q"), assistant(content="first"), assistant(content="   "),
            assistant(call("x", "f", "{}"), content=""), tool("x", "ok"),
            assistant(content="  second  ")]
    t = build_trajectory(msgs)
    assert [(x.message_index, x.text, x.is_final) for x in t.texts] == [
        (1, "first", False), (5, "second", True)]


def test_repeated_ids_pair_with_latest_unanswered_call_with_that_id():
    msgs = [user("go"),
            assistant(call("dup", "f", "{}")), tool("dup", "r1"),
            assistant(call("dup", "g", "{}")), tool("dup", "r2")]
    t = build_trajectory(msgs)
    assert [(c.name, c.result, c.result_message_index) for c in t.tool_calls] == [
        ("f", "r1", 2), ("g", "r2", 4)]


def test_repeated_id_in_one_message_pairs_in_call_order():
    # Parallel calls of one message are answered in the order they were made.
    msgs = [assistant(call("dup", "f", "{}"), call("dup", "g", "{}")),
            tool("dup", "r1"), tool("dup", "r2")]
    t = build_trajectory(msgs)
    assert [(c.name, c.result) for c in t.tool_calls] == [("f", "r1"), ("g", "r2")]


def test_missing_ids_pair_with_the_latest_message_first():
    msgs = [assistant(call(None, "a", "{}")),
            assistant(call(None, "b", "{}"), call(None, "c", "{}")),
            tool(None, "rb"), tool(None, "rc"), tool(None, "ra")]
    t = build_trajectory(msgs)
    assert [(c.name, c.result) for c in t.tool_calls] == [("a", "ra"), ("b", "rb"), ("c", "rc")]


def test_missing_and_unknown_ids_pair_with_nearest_preceding_unanswered_call():
    msgs = [assistant(call("a", "f", "{}")), tool("a", "fa"),
            assistant(call(None, "g", "{}")),
            assistant(call("c", "h", "{}")),
            tool(None, "to-h"),          # nearest unanswered is h
            tool("zzz", "to-g")]         # unknown id: nearest unanswered is now g
    t = build_trajectory(msgs)
    assert [(c.name, c.id, c.result, c.result_message_index) for c in t.tool_calls] == [
        ("f", "a", "fa", 1), ("g", None, "to-g", 5), ("h", "c", "to-h", 4)]


def test_id_match_beats_nearest_call():
    msgs = [assistant(call("a", "f", "{}"), call("b", "g", "{}")),
            tool("a", "for-f"), tool("b", "for-g")]
    t = build_trajectory(msgs)
    assert [(c.name, c.result) for c in t.tool_calls] == [("f", "for-f"), ("g", "for-g")]


def test_tool_result_without_call_is_ignored_but_kept():
    msgs = [user("x"), tool("nobody", "orphan"),
            assistant(call("a", "f", "{}")), tool("a", "ok"), tool("a", "extra")]
    t = build_trajectory(msgs)
    assert len(t.messages) == 5
    assert t.messages[1] == {"role": "tool", "tool_call_id": "nobody", "content": "orphan"}
    [c] = t.tool_calls
    assert (c.result, c.result_message_index) == ("ok", 3)


def test_unanswered_call_defaults():
    t = build_trajectory([assistant(call("a", "f", '{"k": 1}'))])
    [c] = t.tool_calls
    assert (c.answered, c.result, c.result_message_index, c.is_error) == (False, None, None, False)


# ------------------------------------------------------------------ arguments

def test_invalid_json_arguments_are_kept_and_marked():
    t = build_trajectory([assistant(call("a", "f", '{"a": 1 "b": 2}')), tool("a", "done")])
    [c] = t.tool_calls
    assert c.arguments is None
    assert c.raw_arguments == '{"a": 1 "b": 2}'
    assert c.arguments_error == "arguments are not valid JSON: Expecting ',' delimiter (line 1 column 9)"
    assert c.answered and c.result == "done"


def test_list_arguments_are_not_an_object():
    t = build_trajectory([assistant(call("a", "f", "[1, 2]"), call("b", "g", [1, 2]),
                                    call("c", "h", '"text"'))])
    assert [(c.arguments, c.arguments_error) for c in t.tool_calls] == [
        (None, "arguments are a JSON list, not an object"),
        (None, "arguments are a JSON list, not an object"),
        (None, "arguments are a JSON string, not an object"),
    ]
    assert t.tool_calls[1].raw_arguments == [1, 2]


@pytest.mark.parametrize("raw", ["", "   \n", None])
def test_empty_arguments_mean_no_arguments(raw):
    [c] = build_trajectory([assistant(call("a", "f", raw))]).tool_calls
    assert (c.arguments, c.arguments_error, c.raw_arguments) == ({}, None, raw)


# ------------------------------------------------------------------ error rules

def _result_error(content, pattern=None, **extra):
    msgs = [assistant(call("a", "f", "{}")), tool("a", content, **extra)]
    t = build_trajectory(msgs) if pattern is None else build_trajectory(msgs, pattern)
    return t.tool_calls[0].is_error


def test_error_flag():
    assert _result_error("all good", error=True) is True
    assert _result_error("all good", error=False) is False


def test_error_key_in_json_object():
    assert _result_error({"error": "not found"}) is True
    assert _result_error('{"error": "boom", "code": 3}') is True
    assert _result_error('  {"error": true}') is True
    assert _result_error({"error": None, "value": 1}) is False
    assert _result_error('{"error": ""}') is False
    assert _result_error('{"errors": 0}') is False


def test_error_pattern_default():
    assert _result_error("Error: flight AA1 not found") is True
    assert _result_error("  Error while booking") is True
    assert _result_error("No errors found") is False
    assert _result_error("error: lower case") is False      # case-sensitive as written
    assert _result_error("Errors: none") is False           # \b after Error
    assert _result_error("fine\nError on line 2") is False  # multiline is off
    assert _result_error([{"type": "text", "text": "Error: in a part"}]) is True


def test_error_pattern_custom():
    assert _result_error("status=FAILED", pattern=r"FAILED") is True
    assert _result_error("Error: x", pattern=r"FAILED") is False


def test_invalid_error_pattern_raises_value_error():
    with pytest.raises(ValueError, match="invalid tool_error_pattern"):
        build_trajectory([], "(")


# ------------------------------------------------------------------ positions

def test_positions_put_text_before_calls_of_same_message():
    msgs = [user("q"),
            assistant(call("a", "f", "{}"), call("b", "g", "{}"), content="Checking both."),
            tool("a", "1"), tool("b", "2"),
            assistant(content="Done.")]
    t = build_trajectory(msgs)
    events = sorted([(x.position, "text:" + x.text) for x in t.texts]
                    + [(c.position, "call:" + c.name) for c in t.tool_calls])
    assert events == [((1, 0), "text:Checking both."), ((1, 1), "call:f"),
                      ((1, 2), "call:g"), ((4, 0), "text:Done.")]


# ------------------------------------------------------------------ watsonx format

def test_watsonx_fixture():
    msgs = read_transcript(DATA / "watsonx_simple.messages.json")
    assert msgs[1] == {"role": "assistant", "content": None, "tool_calls": [
        call("call-aaa-1", "find_member_library", {"email": "unknown"})]}
    assert msgs[2] == {"role": "tool", "tool_call_id": "call-aaa-1",
                       "content": "no such member", "name": "find_member_library"}
    assert msgs[0] == {"role": "user", "content": "Which books do I have on loan right now?"}

    t = build_trajectory(msgs)
    assert t.user_turns == 3
    assert [(c.index, c.message_index, c.name, c.arguments, c.result, c.result_message_index)
            for c in t.tool_calls] == [
        (0, 1, "find_member_library", {"email": "unknown"}, "no such member", 2),
        (1, 5, "find_member_library", {"email": "ada@example.org"}, "M-4411", 6),
        (2, 7, "list_loans_library", {"member_id": "M-4411", "status": "active"},
         '["Dune", "Emma"]', 8),
        (3, 11, "list_loans_library", {"member_id": "M-4411", "status": "overdue"},
         '["Emma"]', 12),
    ]
    assert all(c.answered and not c.is_error for c in t.tool_calls)
    assert [(x.message_index, x.is_final) for x in t.texts] == [
        (3, False), (9, False), (13, True)]
    assert t.final_text == "Emma is overdue; Dune is still within its loan period."


def test_watsonx_raw_messages_build_directly():
    raw = json.loads((DATA / "watsonx_simple.messages.json").read_text())
    assert build_trajectory(raw) == build_trajectory(read_transcript(
        DATA / "watsonx_simple.messages.json"))


def test_watsonx_broken_tool_call_content():
    raw = [{"role": "assistant", "type": "tool_call", "content": "{not json"}]
    with pytest.raises(TranscriptError, match=r"^message 1: tool_call content is not valid JSON"):
        normalize_messages(raw)


def test_real_watsonx_complex_run():
    t = build_trajectory(read_transcript(require_shared("watsonx-examples", "data_complex.run1.messages.json")))
    assert len(t.tool_calls) == 5  # its metrics file says total_tool_calls 5
    assert all(c.answered for c in t.tool_calls)
    assert t.texts[-1].is_final


# ------------------------------------------------------------------ tau2 format

def test_tau2_style_messages():
    raw = [
        {"role": "assistant", "content": "Hi! How can I help?", "tool_calls": None,
         "turn_idx": 0, "timestamp": "t0", "cost": 0.0, "usage": None, "raw_data": None},
        {"role": "user", "content": "Cancel ABC123.", "tool_calls": None, "turn_idx": 1},
        {"role": "assistant", "content": "", "turn_idx": 2, "tool_calls": [
            {"id": "call_1", "name": "get_reservation_details",
             "arguments": {"reservation_id": "ABC123"}, "requestor": "assistant"}]},
        {"id": "call_1", "role": "tool", "content": "Error: Reservation ABC123 not found",
         "requestor": "assistant", "error": True, "turn_idx": 3},
        {"role": "assistant", "content": None, "turn_idx": 4, "tool_calls": [
            {"id": "call_2", "name": "cancel_reservation",
             "arguments": {"reservation_id": "ABC124"}, "requestor": "assistant"}]},
        {"id": "call_2", "role": "tool", "content": '{"status": "cancelled"}',
         "requestor": "assistant", "error": False, "turn_idx": 5},
        {"role": "assistant", "content": "Cancelled ABC124.", "tool_calls": None},
    ]
    msgs = normalize_messages(raw)
    assert msgs[0] == {"role": "assistant", "content": "Hi! How can I help?"}
    assert msgs[2]["tool_calls"] == [
        call("call_1", "get_reservation_details", {"reservation_id": "ABC123"})]
    assert msgs[3] == {"role": "tool", "tool_call_id": "call_1",
                       "content": "Error: Reservation ABC123 not found", "error": True}
    assert msgs[5] == {"role": "tool", "tool_call_id": "call_2",
                       "content": '{"status": "cancelled"}'}

    t = build_trajectory(raw)
    assert [(c.name, c.id, c.arguments, c.is_error, c.result_message_index)
            for c in t.tool_calls] == [
        ("get_reservation_details", "call_1", {"reservation_id": "ABC123"}, True, 3),
        ("cancel_reservation", "call_2", {"reservation_id": "ABC124"}, False, 5)]
    assert t.user_turns == 1
    assert [(x.message_index, x.is_final) for x in t.texts] == [(0, False), (6, True)]


def test_normalize_is_idempotent():
    raw = json.loads((DATA / "watsonx_simple.messages.json").read_text())
    once = normalize_messages(raw)
    assert normalize_messages(once) == once


# ------------------------------------------------------------------ read_transcript

def test_read_transcript_list_form():
    msgs = read_transcript(DATA / "openai_list.json")
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "assistant"]
    t = build_trajectory(msgs)
    [c] = t.tool_calls
    assert (c.name, c.arguments, c.result) == ("get_weather", {"city": "Oslo"},
                                                '{"temp_c": 4, "sky": "cloudy"}')


def test_read_transcript_object_form_ignores_other_keys():
    msgs = read_transcript(str(DATA / "openai_object.json"))
    assert len(msgs) == 4
    assert msgs[1]["content"] == "Let me compute that."
    t = build_trajectory(msgs)
    assert t.tool_calls[0].arguments == {"a": 2, "b": 3}
    assert [x.text for x in t.texts] == ["Let me compute that.", "2 + 3 = 5."]


def test_read_transcript_missing_file(tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(TranscriptError, match="transcript file not found") as e:
        read_transcript(missing)
    assert str(missing) in str(e.value)


def test_read_transcript_unreadable(tmp_path):
    with pytest.raises(TranscriptError, match="cannot read transcript file"):
        read_transcript(tmp_path)  # a directory
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(TranscriptError, match="cannot read transcript file"):
        read_transcript(binary)


def test_read_transcript_bad_json_reports_line_and_column():
    with pytest.raises(TranscriptError) as e:
        read_transcript(DATA / "bad_json.json")
    assert str(e.value) == (f"{DATA / 'bad_json.json'}: invalid JSON at line 3:24: "
                            "Expecting ',' delimiter")


def test_read_transcript_bad_shapes():
    with pytest.raises(TranscriptError, match=r"got string$"):
        read_transcript(DATA / "bad_shape.json")
    with pytest.raises(TranscriptError, match="JSON object has no 'messages' key"):
        read_transcript(DATA / "no_messages_key.json")


def test_read_transcript_messages_not_a_list(tmp_path):
    p = tmp_path / "t.json"
    p.write_text('{"messages": {"role": "user"}}')
    with pytest.raises(TranscriptError, match="'messages' must be a list, got object"):
        read_transcript(p)


def test_read_transcript_message_without_role_names_index():
    with pytest.raises(TranscriptError) as e:
        read_transcript(DATA / "no_role.json")
    assert str(e.value) == f"{DATA / 'no_role.json'}: message 2 has no role"  # numbered from 1, as explanations do


def test_bad_messages_name_their_number_from_1():
    with pytest.raises(TranscriptError, match=r"^message 2 is not an object \(got str\)$"):
        normalize_messages([user("a"), "oops"])
    with pytest.raises(TranscriptError, match=r"^message 3 has unknown role 'robot'$"):
        normalize_messages([user("a"), user("b"), {"role": "robot", "content": "x"}])
    with pytest.raises(TranscriptError, match=r"^message 1: tool call 2 has no name$"):
        normalize_messages([assistant(call("a", "f", "{}"), {"id": "b", "arguments": "{}"})])


# ------------------------------------------------------------------ property

_ids = st.sampled_from(["a", "b", None, "zz"])
_events = st.lists(st.one_of(
    st.tuples(st.just("call"), st.lists(_ids, min_size=1, max_size=3)),
    st.tuples(st.just("result"), _ids),
    st.tuples(st.just("user"), st.none()),
), max_size=12)


@given(_events)
def test_pairing_invariants(events):
    msgs = []
    for kind, payload in events:
        if kind == "call":
            msgs.append(assistant(*[call(i, "f", "{}") for i in payload]))
        elif kind == "result":
            msgs.append(tool(payload, "r"))
        else:
            msgs.append(user("u"))
    t = build_trajectory(msgs)
    used = [c.result_message_index for c in t.tool_calls if c.answered]
    assert len(used) == len(set(used))                      # a result answers one call
    assert all(c.result_message_index > c.message_index for c in t.tool_calls if c.answered)
    assert [c.index for c in t.tool_calls] == list(range(len(t.tool_calls)))
    assert [c.position for c in t.tool_calls] == sorted(c.position for c in t.tool_calls)
    # every result is used unless no call was open when it arrived
    open_count = 0
    for m in t.messages:
        if m["role"] == "assistant":
            open_count += len(m.get("tool_calls", []))
        elif m["role"] == "tool" and open_count:
            open_count -= 1
    assert sum(not c.answered for c in t.tool_calls) == open_count


def test_read_recording_keeps_the_termination_reason(tmp_path):
    from runner.transcripts.transcript_file import read_recording

    path = tmp_path / "t.json"
    path.write_text(json.dumps({"messages": [user("hi")], "termination_reason": "max_steps", "other": 1}))
    recording = read_recording(path)
    assert recording.termination_reason == "max_steps"
    assert recording.messages == [{"role": "user", "content": "hi"}]
    path.write_text(json.dumps([user("hi")]))
    assert read_recording(path).termination_reason is None
    path.write_text(json.dumps({"messages": [], "termination_reason": 3}))
    with pytest.raises(TranscriptError, match="'termination_reason' must be text, got number"):
        read_recording(path)


# ------------------------------------------------------------------ review fixes

def test_lone_surrogates_in_a_transcript_are_written_out_as_visible_escapes(tmp_path):
    from runner.transcripts.transcript_file import read_recording

    path = tmp_path / "t.json"
    path.write_text('{"termination_reason": "user_stop\\ud800", "messages": [{"role": "user", "content": "hi \\udc00"},'
                    ' {"role": "assistant", "content": "ok \\ud83d\\ude00", "tool_calls": [{"id": "c\\ud800",'
                    ' "function": {"name": "f\\ud800", "arguments": {"k\\ud800": "\\\\ud800"}}}]}]}', encoding="utf-8")
    recording = read_recording(path)
    assert recording.termination_reason == "user_stop\\ud800"
    assert recording.messages == [
        {"role": "user", "content": "hi \\udc00"},
        {"role": "assistant", "content": "ok \U0001f600", "tool_calls": [
            {"id": "c\\ud800", "type": "function", "function": {"name": "f\\ud800",
                                                                "arguments": {"k\\ud800": "\\ud800"}}}]}]
    build_trajectory(recording.messages).model_dump_json().encode("utf-8")  # the report can be written


def test_replace_lone_surrogates_walks_deep_data_without_recursion():
    from runner.util.jsontext import may_hold_surrogates, replace_lone_surrogates

    data: list = ["\ud800"]
    for _ in range(5000):
        data = [data, {"\udfff": "a"}]
    fixed = replace_lone_surrogates(data)
    assert fixed is data and fixed[1] == {"\ufffd": "a"}
    while isinstance(fixed[0], list):
        fixed = fixed[0]
    assert fixed == ["\ufffd"]
    assert replace_lone_surrogates("\ud83d\ude00\ud83d") == "\U0001f600\ufffd"
    assert [may_hold_surrogates(t) for t in ('"\\uD83D"', '"\\U0000dc00"', '"\\u00e9"', "plain")] == [
        True, True, False, False]


def test_build_trajectory_can_skip_normalizing_messages_already_normalized(monkeypatch):
    import runner.transcripts.read as trajectory

    msgs = normalize_messages([user("hi"), assistant(call("a", "f", "{}")), tool("a", "done"),
                               assistant(content="bye")])
    expected = build_trajectory(msgs, termination_reason="user_stop")
    calls = []
    monkeypatch.setattr(trajectory, "normalize_messages", lambda raw: calls.append(raw) or raw)
    assert build_trajectory(msgs, termination_reason="user_stop", normalized=True) == expected
    assert calls == []
    build_trajectory(msgs)
    assert calls == [msgs]
