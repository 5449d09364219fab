"""Traces that cannot be read whole: the part that cannot is named (trace, span, attribute), the case is
never passed on what remains, a trace without messages is an error; hostile files fail as data."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings, strategies as st

from runner.transcripts.otlp import read_trace_conversations
from runner.transcripts.read import TranscriptError
from runner.transcripts.transcript_file import read_conversations, read_recording
from tests.fakes.otel_spans import Traces, genai_turn
from tests.helpers.cli_helpers import run_cli, write

PARIS = [("call_001", "get_weather", {"city": "Paris"}, {"city": "Paris", "temperature_c": 18})]
SUITE = """
id: paris
transcript: {transcript}
goals: {{paris: [answer]}}
goal_details:
  - {{type: tool_call, name: paris, tool_name: get_weather, args: {{city: Paris}}}}
  - {{type: text, name: answer, response: It is 18°C in Paris., keywords: ["18°C"]}}
"""


def _run(tmp_path: Path, transcript: str):
    write(tmp_path / "suite.yaml", SUITE.format(transcript=transcript))
    done = run_cli("run", "suite.yaml", "--output-dir", "out", cwd=tmp_path)
    results = [json.loads(line) for line in (tmp_path / "out/results.jsonl").read_text().splitlines()]
    return done, results[0]


def test_a_value_cut_short_by_the_sdk_limit_is_named_and_the_case_is_not_passed(tmp_path):
    traces = Traces(max_span_attribute_length=200)  # the SDK cuts every longer string attribute, mid-JSON
    genai_turn(traces, "conv-1", [], "What's the weather in Paris?", PARIS, "It is 18°C in Paris.")
    traces.write(tmp_path / "traces.jsonl", lines=True)
    cut = next(s for s in traces.spans if s.name == "chat fake-model" and len(s.attributes["gen_ai.input.messages"]) == 200)
    trace_id, span_id = f"{cut.context.trace_id:032x}", f"{cut.context.span_id:016x}"

    done, result = _run(tmp_path, "traces.jsonl#conv-1")

    # every goal is still found in what could be read, yet the case does not pass on it
    assert [g["status"] for g in result["goals"]] == ["achieved", "achieved"]
    assert result["status"] == "unscored"
    named = (f"trace {trace_id}, span 'chat fake-model' ({span_id}), attribute gen_ai.input.messages: not valid JSON: ")
    assert named in result["unscored_reason"]
    assert "cut short, as OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT does" in result["unscored_reason"]
    assert result["unscored_reason"].startswith(
        "part of the recording could not be read, so the case is not passed on what remains: ")
    assert named in done.stdout
    assert done.returncode == 3


def test_a_failing_case_keeps_failing_and_names_the_unreadable_span(tmp_path):
    traces = Traces(max_span_attribute_length=200)
    genai_turn(traces, "conv-1", [], "What's the weather in Paris?", PARIS, "It is 25°C in Paris.")
    traces.write(tmp_path / "traces.otlp.json")
    done, result = _run(tmp_path, "traces.otlp.json#conv-1")
    assert result["status"] == "failed"
    assert result["failures"][-1].startswith("part of the recording could not be read")
    assert done.returncode == 1


def test_a_trace_without_messages_is_an_error_that_says_content_capture_is_off(tmp_path):
    traces = Traces()
    with traces.span("chat fake-model", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "fake-model",
                                         "gen_ai.usage.input_tokens": 30}):
        pass
    traces.write(tmp_path / "traces.jsonl", lines=True)
    trace_id = f"{traces.spans[0].context.trace_id:032x}"
    done, result = _run(tmp_path, "traces.jsonl")
    assert result["status"] == "error"
    assert result["error"].startswith(f"traces.jsonl#{trace_id}: the trace has no messages to score "
                                      f"(trace {trace_id}, span 'chat fake-model'")
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY" in result["error"]
    assert done.returncode == 3


def _two_turns() -> Traces:
    traces = Traces()
    history = genai_turn(traces, "conv-1", [], "What's the weather in Paris?", PARIS, "It is 18°C in Paris.")
    genai_turn(traces, "conv-1", history, "Thanks!", [], "You're welcome.")
    return traces


def _spans(document: dict) -> list[dict]:
    return [s for r in document["resourceSpans"] for ss in r["scopeSpans"] for s in ss["spans"]]


def _set(span: dict, key: str, value: dict) -> None:
    span["attributes"] = [a for a in span["attributes"] if a["key"] != key] + [{"key": key, "value": value}]


@pytest.mark.parametrize("hostile, reason", [
    ({"stringValue": "[" * 5000 + "]" * 5000}, "the value is nested more than 100 levels deep"),
    ({"stringValue": '"' + "x" * (8 * 1024 * 1024 + 1) + '"'},
     "the value is 8,388,611 characters long, above evalrun's limit of 8,388,608; it was not read"),
    ({"stringValue": '[{"role": "user", "parts": [{"type": "text", "content": "\\ud800 hi'},
     "not valid JSON: Unterminated string starting at"),
    ({"intValue": "99999999999999999999999"}, "intValue is outside the 64-bit range"),
    ({"kvlistValue": {"values": [{"key": "a", "value": {"kvlistValue": {"values": []}}}] * 3}}, None),
])
def test_hostile_values_are_named_and_the_other_spans_still_read(tmp_path, hostile, reason):
    document = _two_turns().document()
    spans = _spans(document)
    target = next(s for s in spans if s["name"] == "chat fake-model")
    _set(target, "gen_ai.input.messages", hostile)
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(document))
    [(conversation_id, recording)] = read_conversations(path)
    assert conversation_id == "conv-1"
    assert [m["content"] for m in recording.messages if m["role"] == "user"] == ["What's the weather in Paris?",
                                                                                  "Thanks!"]
    assert recording.messages[-1] == {"role": "assistant", "content": "You're welcome.", "name": "weather_agent"}
    if reason is None:  # a structured value of the wrong shape: the span says so
        assert recording.problems == [f"trace {target['traceId']}, span 'chat fake-model' ({target['spanId']}), "
                                      "attribute gen_ai.input.messages: expected a list of messages, got dict"]
    else:
        [problem] = recording.problems
        assert problem.startswith(f"trace {target['traceId']}, span 'chat fake-model' ({target['spanId']}), "
                                  f"attribute gen_ai.input.messages: {reason}")


def test_spans_with_bad_ids_are_named_and_left_out(tmp_path):
    document = _two_turns().document()
    spans = _spans(document)
    spans[0]["spanId"] = "abc"  # not 16 hex digits
    spans[1]["traceId"] = "zz" * 16
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(document))
    [(_, recording)] = read_conversations(path)
    assert recording.problems[:2] == [
        f"trace {spans[0]['traceId']}, span '{spans[0]['name']}' (abc): the span has no valid traceId/spanId (hex, 32 "
        "and 16 digits)",
        f"trace {'zz' * 16}, span '{spans[1]['name']}' ({spans[1]['spanId']}): the span has no valid traceId/spanId "
        "(hex, 32 and 16 digits)"]


def test_the_same_span_sent_twice_counts_once(tmp_path):
    traces = _two_turns()
    once = read_recording(traces.write(tmp_path / "once.jsonl", lines=True))
    twice = tmp_path / "twice.jsonl"  # an exporter's retry sends every span again
    twice.write_text((tmp_path / "once.jsonl").read_text() * 2)
    assert read_recording(twice).messages == once.messages


def test_numbers_as_json_numbers_and_upper_case_ids_are_read(tmp_path):
    document = _two_turns().document()
    for span in _spans(document):
        span["traceId"], span["spanId"] = span["traceId"].upper(), span["spanId"].upper()
        if "parentSpanId" in span:
            span["parentSpanId"] = span["parentSpanId"].upper()
        span["startTimeUnixNano"], span["endTimeUnixNano"] = int(span["startTimeUnixNano"]), int(span["endTimeUnixNano"])
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(document))
    assert read_recording(path).messages == read_recording(_two_turns().write(tmp_path / "plain.json")).messages


def test_equal_start_times_keep_a_call_before_its_result(tmp_path):
    """Millisecond clocks (the JS SDK) start a parent and child, or a tool and the next model call, together."""
    document = _two_turns().document()
    for span in _spans(document):
        span["startTimeUnixNano"] = "1700000000000000000"
        span["endTimeUnixNano"] = "1700000000000000000"
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(document))
    roles = [m["role"] for m in read_recording(path).messages]
    assert roles == ["user", "assistant", "tool", "assistant", "user", "assistant"]


def test_a_file_that_is_not_a_trace_and_a_selection_on_it(tmp_path):
    path = tmp_path / "messages.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    with pytest.raises(TranscriptError) as info:
        read_recording(f"{path}#conv-1")
    assert str(info.value) == (f"{path}: '#conv-1' names a conversation, but this transcript is not a trace file "
                               "and holds one conversation only")


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
                     max_leaves=30)
_keys = st.sampled_from(["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.operation.name",
                         "gen_ai.tool.call.id", "gen_ai.tool.name", "llm.input_messages.0.message.role",
                         "llm.output_messages.0.message.tool_calls.0.tool_call.id", "gen_ai.prompt.1.content",
                         "gcp.vertex.agent.llm_request", "openinference.span.kind", "gen_ai.conversation.id"])
_values = (st.builds(lambda v: {"stringValue": json.dumps(v)}, _json) | st.builds(lambda v: {"stringValue": v}, st.text())
           | st.builds(lambda v: {"intValue": v}, st.integers() | st.text(max_size=5)) | _json)
_span = st.fixed_dictionaries({
    "traceId": st.sampled_from(["a" * 32, "b" * 32, "x"]), "spanId": st.sampled_from(["1" * 16, "2" * 16, "3" * 16]),
    "parentSpanId": st.sampled_from(["", "1" * 16, "2" * 16, "3" * 16]), "name": st.text(max_size=10),
    "startTimeUnixNano": st.integers(0, 10) | st.text(max_size=3), "attributes": st.lists(
        st.fixed_dictionaries({"key": _keys, "value": _values}), max_size=6)})


@settings(max_examples=200, deadline=None)
@given(st.lists(_span, max_size=6), _json)
@example([{"traceId": "a" * 32, "spanId": "1" * 16, "name": "", "startTimeUnixNano": "²", "attributes": []}], None)
def test_any_span_soup_reads_without_an_exception(spans, junk):
    """Whatever a file holds in OTLP's shape, reading it ends in conversations and named problems."""
    documents = [{"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}, {"resourceSpans": junk}]
    conversations, _ = read_trace_conversations(documents)
    for conversation in conversations:
        json.dumps(conversation.messages)
        for message in conversation.messages:
            assert message["role"] in ("system", "user", "assistant", "tool")


def test_parents_in_a_loop_and_a_chain_deeper_than_python_recursion_are_read(tmp_path):
    traces = _two_turns()
    whole = read_recording(traces.write(tmp_path / "whole.json")).messages
    document = traces.document()
    spans = _spans(document)
    chats = [s for s in spans if s["name"] == "chat fake-model"]
    chats[0]["parentSpanId"], chats[1]["parentSpanId"] = chats[1]["spanId"], chats[0]["spanId"]  # a loop
    deep = [{"traceId": "c" * 32, "spanId": f"{n + 1:016x}", "parentSpanId": f"{n:016x}" if n else "",
             "name": "step", "startTimeUnixNano": str(n)} for n in range(20_000)]
    document["resourceSpans"][0]["scopeSpans"][0]["spans"] += deep
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(document))
    found = read_conversations(path)
    looped = next(r for cid, r in found if cid == "conv-1")
    # every span is still read (the turn's answer came from a looped span), and the loop is named
    assert [m for m in whole if m["role"] == "assistant" and m["content"]] == \
        [m for m in looped.messages if m["role"] == "assistant" and m["content"]]
    assert sorted(looped.problems) == sorted(
        f"trace {c['traceId']}, span 'chat fake-model' ({c['spanId']}), attribute parentSpanId: the span's parents "
        "form a loop; it is placed by its start time, outside the tree" for c in chats[:1])
    assert any(cid == "c" * 32 for cid, _ in found)  # the deep chain is a (message-less) conversation of its own


def test_a_replay_agent_on_a_trace_cut_short_is_not_passed_and_neither_is_its_rescore(tmp_path):
    """A `type: replay` agent plays the recording as a conversation: what could not be read goes with the
    conversation into the run folder, so `evalrun rescore` does not pass the case on what remains either."""
    traces = Traces(max_span_attribute_length=200)
    genai_turn(traces, "conv-1", [], "What's the weather in Paris?", PARIS, "It is 18°C in Paris.")
    traces.write(tmp_path / "recordings/paris.json")
    write(tmp_path / "evalrun.yaml", "agents:\n  recorded: {type: replay, dir: recordings}\n")
    write(tmp_path / "suite.yaml", """
        id: paris
        agent: recorded
        goal_details:
          - {type: tool_call, name: paris, tool_name: get_weather, args: {city: Paris}}
    """)
    first = run_cli("run", "suite.yaml", "--output-dir", "out", cwd=tmp_path)
    assert first.returncode == 3, first.stdout + first.stderr
    assert "attribute gen_ai.input.messages: not valid JSON" in first.stdout
    again = run_cli("rescore", "out", "--output-dir", "out2", cwd=tmp_path)
    assert again.returncode == 3, again.stdout + again.stderr
    [result] = [json.loads(line) for line in (tmp_path / "out2/results.jsonl").read_text().splitlines()]
    assert result["status"] == "unscored"
    assert "part of the recording could not be read" in result["unscored_reason"]


class _TricklingReceiver:
    """An OTLP/HTTP receiver on 127.0.0.1 that reads each request, then answers one byte every 0.2 s, for ever:
    no single read ever waits long, so only a deadline on the whole export ends it."""

    def __init__(self):
        import socket
        import threading

        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        self.closing = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        import threading

        while not self.closing.is_set():
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._trickle, args=(connection,), daemon=True).start()

    def _trickle(self, connection) -> None:
        answer = b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"z" * 100_000
        with connection:
            connection.recv(65536)
            for byte in answer:
                if self.closing.wait(0.2):
                    return
                try:
                    connection.sendall(bytes([byte]))
                except OSError:
                    return

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.closing.set()
        self.server.close()


def test_a_receiver_that_answers_a_byte_at_a_time_is_given_up_after_the_deadline_in_all(tmp_path):
    """The exporter's timeout bounds each read: a receiver trickling its answer kept the run from ending for ever.
    EVALRUN_OTLP_TIMEOUT=0.5 stands for the default 10 s (the same code path: the test need not wait 10 s); a byte
    comes every 0.2 s, so no single read outlasts it."""
    import time

    from tests.helpers.cli_helpers import write_json

    write(tmp_path / "suite.yaml", SUITE.format(transcript="paris.json"))
    write_json(tmp_path / "paris.json", [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "get_weather", "arguments": json.dumps({"city": "Paris"})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "18"},
        {"role": "assistant", "content": "It is 18°C in Paris."}])
    with _TricklingReceiver() as receiver:
        started = time.monotonic()
        done = run_cli("run", "suite.yaml", "--output-dir", "out", "--otlp", receiver.url, cwd=tmp_path,
                       env={"EVALRUN_OTLP_TIMEOUT": "0.5"})
        took = time.monotonic() - started
    assert done.returncode == 3, done.stdout + done.stderr  # the run passed; the spans a team counts on did not arrive
    assert (f"evalrun: --otlp: cannot send the spans to {receiver.url}/v1/traces: the receiver did not answer in "
            "full within 0.5 s") in done.stderr.splitlines()
    assert json.loads((tmp_path / "out" / "report.json").read_text())["summary"]["passed"] == 1
    assert took < 60, took  # 0.5 s of waiting, then the end: never the minutes the trickle would last
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("value", "seconds"), [(None, 10.0), ("", 10.0), ("2.5", 2.5), ("0", 0.1), ("-3", 0.1),
                                               ("soon", 10.0), ("inf", 10.0), ("nan", 10.0)])
def test_the_send_deadline_is_10_s_or_evalrun_otlp_timeout_seconds(monkeypatch, value, seconds):
    from runner.report.otlp import send_deadline

    if value is None:
        monkeypatch.delenv("EVALRUN_OTLP_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("EVALRUN_OTLP_TIMEOUT", value)
    assert send_deadline() == seconds
