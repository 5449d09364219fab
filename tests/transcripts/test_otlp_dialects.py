"""Traces made by real OpenTelemetry instrumentation read as transcripts, and scored exactly as the same
conversations written as OpenAI messages.

Each dialect's export is produced here: tests/fakes/otel_agent.py runs a tool-calling agent with the
`openai` client against the fake OpenAI server, with the dialect's instrumentation library installed
(opentelemetry-instrumentation-openai-v2, openinference-instrumentation-openai, Traceloop's
opentelemetry-instrumentation-openai, logfire) or as a Google ADK agent with ADK's own tracing (both
schemas, one agent and a root agent transferring to it), and writes the spans with the SDK's OTLP encoder.
"""
from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from runner.transcripts.read import TranscriptError, build_trajectory
from runner.transcripts.transcript_file import read_conversations, read_recording
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.otel_agent import check_group
from tests.fakes.otel_weather import weather_model
from tests.helpers.cli_helpers import REPO, cli_env, run_cli, write

# the processes that make the exports, and the dialects each makes in turn: a process mostly imports, so
# dialects share one where nothing of one can leak into the next (otel_agent.py's check_group says why these)
GROUPS = [["adk", "adk-legacy", "adk-multi", "adk-legacy-multi"],
          ["genai", "genai-agent", "openinference", "openllmetry"],
          ["genai-events", "logfire"]]
DIALECTS = ["genai", "genai-agent", "genai-events", "openinference", "openllmetry", "logfire", "adk", "adk-legacy", "adk-multi",
            "adk-legacy-multi"]
assert sorted(DIALECTS) == sorted(d for group in GROUPS for d in group)


@pytest.fixture(scope="module")
def exports(tmp_path_factory) -> dict[str, Path]:
    """One export per dialect, made by three processes at once (instrumentations patch `openai`)."""
    root = tmp_path_factory.mktemp("otel")
    with FakeOpenAI(default=weather_model) as fake:
        running = [(group, subprocess.Popen([sys.executable, str(REPO / "tests/fakes/otel_agent.py"), str(root),
                                             fake.base_url, *group], env=cli_env(), stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, text=True)) for group in GROUPS]
        for group, process in running:
            _, stderr = process.communicate(timeout=300)
            assert process.returncode == 0, f"{group}: {stderr[-3000:]}"
    return {dialect: root / dialect for dialect in DIALECTS}


def test_the_groups_share_a_process_only_where_nothing_leaks():
    """What one dialect leaves in its process (a global provider, a semconv choice read once, an instrumented
    `openai`) would change the next one's export: such groups are refused before anything runs."""
    for group in GROUPS:
        check_group(group)
    for group, says in ((["logfire", "genai"], "logfire configures the global tracer provider: it must be the last"),
                        (["genai", "genai-events"], "genai-events opts in to semantic conventions read once per "
                                                    "process: no other openai-v2 dialect may share its process"),
                        (["genai", "adk"], "the ADK dialects go in a process of their own")):
        with pytest.raises(SystemExit) as refused:
            check_group(group)
        assert says in str(refused.value), group


def _calls(messages: list[dict]) -> list[tuple]:
    trajectory = build_trajectory(messages)
    return [(c.id, c.name, c.arguments, json.loads(c.result)) for c in trajectory.tool_calls]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("layout", ["traces.otlp.json", "traces.jsonl"])
def test_each_dialect_rebuilds_both_conversations_as_the_agent_held_them(exports, dialect, layout):
    found = read_conversations(exports[dialect] / layout)
    assert len(found) == 2  # two conversations in one file, told apart by id or by their histories
    for n, (conversation_id, recording) in enumerate(found, start=1):
        held = json.loads((exports[dialect] / f"conversation-{n}.json").read_text())
        assert recording.problems == []
        assert [(m["role"], m.get("content") or None) for m in recording.messages if m["role"] != "tool"] == \
            [(m["role"], m.get("content") or None) for m in held if m["role"] != "tool"]
        assert _calls(recording.messages) == _calls(held)
        if dialect in ("genai-agent", "openinference") or dialect.startswith("adk"):  # these set a conversation id
            assert conversation_id == f"conv-weather-000{n}"
        else:  # bare: each model call is a trace of its own, joined by history; the id is the first trace's
            assert conversation_id == recording.trace_ids[0] and len(recording.trace_ids) >= 2


def test_evalrun_json_lines_exporter_writes_what_the_collector_would(exports):
    """The README's one-line export (BatchSpanProcessor(json_lines_exporter(...))) beside the test's own."""
    exported = read_conversations(exports["genai"] / "exported.jsonl")
    assert [(cid, r.messages) for cid, r in exported] == \
        [(cid, r.messages) for cid, r in read_conversations(exports["genai"] / "traces.jsonl")]


def test_content_in_log_events_needs_the_logs_in_the_file(exports, tmp_path):
    """EVENT_ONLY puts every message in log records; the spans alone say content capture is off."""
    lines = (exports["genai-events"] / "traces.jsonl").read_text().splitlines()
    spans_only = tmp_path / "spans.jsonl"
    spans_only.write_text("\n".join(line for line in lines if '"resourceLogs"' not in line) + "\n")
    conversation_id = read_conversations(spans_only)[0][0]
    with pytest.raises(TranscriptError) as info:
        read_recording(f"{spans_only}#{conversation_id}")
    assert "the trace has no messages to score" in str(info.value)
    assert "or the content went to log events that are not in this file" in str(info.value)


def test_collector_lines_in_any_order_give_the_same_conversations(exports):
    lines = (exports["genai"] / "traces.jsonl").read_text().splitlines()
    shuffled = exports["genai"] / "shuffled.jsonl"
    random.Random(7).shuffle(lines)
    shuffled.write_text("\n".join(lines) + "\n")
    ordered = read_conversations(exports["genai"] / "traces.jsonl")
    assert [r.messages for _, r in read_conversations(shuffled)] == [r.messages for _, r in ordered]


def test_a_conversation_is_named_by_its_id_or_a_trace_id(exports):
    path = exports["openinference"] / "traces.jsonl"
    second = read_recording(f"{path}#conv-weather-0002")
    assert second.messages[1] == {"role": "user", "content": "What's the weather in London?"}
    by_trace = read_recording(f"{path}#{second.trace_ids[1].upper()}")
    assert by_trace.conversation_id == "conv-weather-0002"
    with pytest.raises(TranscriptError) as info:
        read_recording(path)
    assert str(info.value) == (f"{path}: the file holds 2 conversations; name one as FILE#ID "
                               "(ids: conv-weather-0001, conv-weather-0002)")
    with pytest.raises(TranscriptError) as info:
        read_recording(f"{path}#conv-nope")
    assert str(info.value) == (f"{path}: no conversation 'conv-nope' in the file "
                               "(it holds: conv-weather-0001, conv-weather-0002)")


SUITE = """
cases:
{cases}
"""
CASE = """
  - id: {id}
    transcript: {transcript}
    goals: {{paris: [tokyo], tokyo: [answer]}}
    goal_details:
      - {{type: tool_call, name: paris, tool_name: get_weather, args: {{city: {first}}}}}
      - {{type: tool_call, name: tokyo, tool_name: get_weather, args: {{city: {second}}}}}
      - {{type: text, name: answer, response: "{answer}", keywords: ["{keyword}"]}}
"""
# (first city, second city, answer, keyword) per conversation: the right ones, and a wrong set that fails
EXPECTED = {1: [("Paris", "Tokyo", "It is rainy and 12°C in Tokyo.", "12°C"),
                ("Paris", "Kyoto", "It is sunny in Kyoto.", "Kyoto")],
            2: [("London", "Oslo", "It is snowy and -2°C in Oslo.", "-2°C"),
                ("Lisbon", "Oslo", "It is snowy and -2°C in Oslo.", "-9°C")]}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_rebuilt_conversations_score_exactly_as_the_openai_messages(exports, dialect, tmp_path):
    folder = tmp_path / "suite"
    folder.mkdir()
    for name in ("traces.jsonl", "conversation-1.json", "conversation-2.json"):
        (folder / name).write_bytes((exports[dialect] / name).read_bytes())
    ids = [cid for cid, _ in read_conversations(folder / "traces.jsonl")]
    cases = []
    for n in (1, 2):
        for variant, (first, second, answer, keyword) in enumerate(EXPECTED[n]):
            for source, transcript in (("openai", f"conversation-{n}.json"), ("trace", f"traces.jsonl#{ids[n - 1]}")):
                cases.append(CASE.format(id=f"{source}-{n}-{variant}", transcript=transcript, first=first,
                                         second=second, answer=answer, keyword=keyword))
    write(folder / "weather.yaml", SUITE.format(cases="".join(cases)))
    done = run_cli("run", str(folder), "--output-dir", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr  # the wrong expectations fail, in both forms
    results = {r["id"]: r for r in map(json.loads, (tmp_path / "out/results.jsonl").read_text().splitlines())}
    assert len(results) == 8
    for n in (1, 2):
        for variant in (0, 1):
            openai, trace = results[f"openai-{n}-{variant}"], results[f"trace-{n}-{variant}"]
            assert trace["status"] == openai["status"] == ("passed" if variant == 0 else "failed")
            assert trace["metrics"] == openai["metrics"]
            assert trace["goals"] == openai["goals"]  # statuses, explanations, message numbers, attempts
            assert trace["calls"] == openai["calls"]
            assert trace["failures"] == openai["failures"]
