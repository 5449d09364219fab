"""The report formats' registry: INDEX (what the command's help names without importing a format) says what the
modules declare, and the registries of every extension kind read their own modules, not a hand-kept list."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.report import formats


def test_the_index_is_what_the_format_modules_declare():
    # a format added as a module with FORMAT and not indexed (or the reverse) fails here;
    # `python -m runner.report.formats` prints the INDEX to paste
    assert set(formats.discover()) == set(formats.INDEX)


def test_every_transcript_format_is_found_and_the_chat_messages_are_the_fallback():
    from runner.transcripts import formats as transcripts

    assert [f.name for f in transcripts.builtin()] == ["otlp", "messages"]
    assert transcripts.find([{"role": "user", "content": "hi"}]).name == "messages"
    assert transcripts.find({"dialogue": []}) is None  # no plugin installed here


def test_a_file_no_format_claims_is_read_as_messages_and_says_what_a_transcript_is(tmp_path):
    from runner.transcripts.recording import TranscriptError
    from runner.transcripts.transcript_file import read_recording

    path = tmp_path / "t.json"
    path.write_text(json.dumps(42))
    with pytest.raises(TranscriptError) as raised:
        read_recording(path)
    assert str(raised.value) == (f"{Path(path)}: expected a JSON list of messages or an object with a 'messages' "
                                 "list, got number")


def test_a_plugin_transcript_format_never_takes_a_file_a_built_in_format_reads(monkeypatch):
    from runner.transcripts import formats as transcripts

    greedy = transcripts.TranscriptFormat("greedy", "claims everything", lambda data: True, lambda data: [])
    monkeypatch.setattr(transcripts, "_plugins", lambda: ((greedy, "entry point evalrun.transcripts:greedy"),))
    assert transcripts.find([{"role": "user", "content": "hi"}]).name == "messages"
    assert transcripts.find({"messages": []}).name == "messages"
    assert transcripts.find({"log": []}) is greedy  # what no built-in claims


def test_a_plugin_check_may_not_take_a_built_in_type_even_as_an_alias():
    import pytest

    from runner.checks import CheckFamily, _plugin_checked, registry
    from runner.util.extensions import PluginProblem

    contains = registry()["contains"]
    family = CheckFamily(types=("mine", "contains"), description="", options=contains.options, run=contains.run)
    with pytest.raises(PluginProblem, match="check type 'contains' is evalrun's own; a plugin never replaces it"):
        _plugin_checked("mine", family)


def test_a_suites_folder_and_the_transcript_reader_agree_on_what_a_trace_file_is(tmp_path):
    # suite/shape.py kept its own copy of the sniffing, which knew `resourceSpans` but not OTLP's `resourceLogs`
    # (a file the transcript reader reads as a trace): both now ask the transcript formats' registry
    from runner.suite.shape import conversation_shaped, looks_like_transcript

    logs = {"resourceLogs": [{"scopeLogs": []}]}
    path = tmp_path / "logs.json"
    path.write_text(json.dumps(logs))
    assert looks_like_transcript(logs)
    assert conversation_shaped(path, path.read_bytes())
