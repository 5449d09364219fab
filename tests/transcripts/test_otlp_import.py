"""From a trace file a platform exported to a passing suite in two commands:
`evalrun import traces.jsonl -o suites/imported/` then `evalrun run suites/imported/`."""
from __future__ import annotations

from runner.transcripts.transcript_file import read_recording
from tests.fakes.otel_spans import Traces, genai_turn
from tests.helpers.cli_helpers import run_cli


def _traces(tmp_path):
    traces = Traces()
    history = genai_turn(traces, "conv-paris", [], "What's the weather in Paris?",
                         [("call_1", "get_weather", {"city": "Paris"}, {"temperature_c": 18})], "It is 18°C in Paris.")
    genai_turn(traces, "conv-paris", history, "And tomorrow?",
               [("call_2", "get_forecast", {"city": "Paris", "days": 1}, {"temperature_c": 21})],
               "Tomorrow it will be 21°C in Paris.")
    genai_turn(traces, "conv-oslo", [], "Is it snowing in Oslo?",
               [("call_9", "get_weather", {"city": "Oslo"}, {"condition": "snowy"})], "Yes, it is snowing in Oslo.")
    return traces.write(tmp_path / "traces.jsonl", lines=True)


def test_import_writes_one_transcript_and_draft_per_conversation_and_the_drafts_pass(tmp_path):
    _traces(tmp_path)
    done = run_cli("import", "traces.jsonl", "-o", "suites/imported/", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    suites = sorted(p.name for p in (tmp_path / "suites/imported").glob("*.yaml"))
    transcripts = sorted(p.name for p in (tmp_path / "suites/imported/transcripts").glob("*.json"))
    assert len(suites) == 2 and len(transcripts) == 2, done.stdout
    texts = [(tmp_path / "suites/imported" / name).read_text() for name in suites]
    assert any("get_forecast" in text and "get_weather" in text for text in texts)
    saved = [read_recording(tmp_path / "suites/imported/transcripts" / name).messages for name in transcripts]
    assert sorted(m["content"] for conversation in saved for m in conversation if m["role"] == "user") == [
        "And tomorrow?", "Is it snowing in Oslo?", "What's the weather in Paris?"]

    ran = run_cli("run", "suites/imported/", "--output-dir", "out", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "2 passed" in ran.stdout


def test_import_of_a_file_that_cannot_be_read_writes_nothing(tmp_path):
    (tmp_path / "traces.jsonl").write_text('{"resourceSpans": [}\n')
    done = run_cli("import", "traces.jsonl", "-o", "suites/imported/", cwd=tmp_path)
    assert done.returncode == 4
    assert "traces.jsonl" in done.stderr and "nothing was written" in done.stderr
    assert not (tmp_path / "suites").exists()
