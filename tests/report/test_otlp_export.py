"""`--otlp FILE|ENDPOINT`: a run as OpenTelemetry spans, a span per case and a gen_ai.evaluation.result
event per goal and check; to a file as OTLP/JSON, and to a real OTLP/HTTP receiver on 127.0.0.1."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.fakes.otel_spans import Traces, genai_turn
from tests.helpers.cli_helpers import cli_env, run_cli, tool_call_messages, write, write_json

SUITE = """
cases:
  - id: paris-ok
    tags: [weather]
    transcript: paris.json
    goals: {paris: [answer]}
    goal_details:
      - {type: tool_call, name: paris, tool_name: get_weather, args: {city: Paris}}
      - {type: text, name: answer, response: It is 18°C in Paris., keywords: ["18°C"]}
  - id: paris-wrong-city
    transcript: paris.json
    goal_details:
      - {type: tool_call, name: lyon, tool_name: get_weather, args: {city: Lyon}}
  - id: from-trace
    transcript: traces.jsonl#conv-7
    goal_details:
      - {type: tool_call, name: paris, tool_name: get_weather, args: {city: Paris}}
"""


def _suite(tmp_path: Path) -> Path:
    folder = tmp_path / "suites"
    write(folder / "weather.yaml", SUITE)
    write_json(folder / "paris.json", [{"role": "user", "content": "Weather in Paris?"},
                                       *tool_call_messages("get_weather", {"city": "Paris"}, '{"temperature_c": 18}'),
                                       {"role": "assistant", "content": "It is 18°C in Paris."}])
    traces = Traces()
    genai_turn(traces, "conv-7", [], "Weather in Paris?", [("c1", "get_weather", {"city": "Paris"}, {"t": 18})],
               "It is 18°C in Paris.")
    traces.write(folder / "traces.jsonl", lines=True)
    return folder


def _attributes(items: list[dict]) -> dict:
    out = {}
    for item in items:
        value = item["value"]
        kind, raw = next(iter(value.items()))
        out[item["key"]] = [next(iter(v.values())) for v in raw.get("values", [])] if kind == "arrayValue" else raw
    return out


def _events(span: dict) -> list[dict]:
    return [_attributes(e["attributes"]) for e in span.get("events", []) if e["name"] == "gen_ai.evaluation.result"]


def test_a_run_written_as_otlp_json_has_a_span_per_case_and_an_event_per_goal(tmp_path):
    _suite(tmp_path)
    done = run_cli("run", "suites", "--output-dir", "out", "--otlp", "spans.json", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "otlp: wrote 4 spans to spans.json" in done.stdout
    document = json.loads((tmp_path / "spans.json").read_text())
    [resource] = document["resourceSpans"]
    assert _attributes(resource["resource"]["attributes"])["service.name"] == "evalrun"
    spans = {s["name"]: s for s in resource["scopeSpans"][0]["spans"]}
    run = spans["evalrun run"]
    assert _attributes(run["attributes"])["evalrun.cases.failed"] == "1"  # 64-bit ints are strings in OTLP/JSON
    cases = {n: s for n, s in spans.items() if n.startswith("evaluate ")}
    assert sorted(cases) == ["evaluate from-trace", "evaluate paris-ok", "evaluate paris-wrong-city"]
    assert {s["parentSpanId"] for s in cases.values()} == {run["spanId"]}
    assert {s["traceId"] for s in spans.values()} == {run["traceId"]}

    ok = cases["evaluate paris-ok"]
    attributes = _attributes(ok["attributes"])
    assert (attributes["evalrun.case.status"], attributes["evalrun.case.tags"]) == ("passed", ["weather"])
    assert attributes["evalrun.metric.journey_completion"] == 1.0
    assert ok["status"] == {"code": 1}  # OK
    assert [(e["gen_ai.evaluation.name"], e["evalrun.evaluation.kind"], e["gen_ai.evaluation.score.value"],
             e["gen_ai.evaluation.score.label"]) for e in _events(ok)] == [
        ("paris", "goal", 1.0, "achieved"), ("answer", "goal", 1.0, "achieved"), ("case", "case", 1.0, "passed")]

    wrong = cases["evaluate paris-wrong-city"]
    [goal, case] = _events(wrong)
    assert (goal["gen_ai.evaluation.name"], goal["gen_ai.evaluation.score.value"]) == ("lyon", 0.0)
    assert "Lyon" in goal["gen_ai.evaluation.explanation"]
    assert case["gen_ai.evaluation.score.label"] == "failed"
    assert wrong["status"]["code"] == 2 and "Lyon" in wrong["status"]["message"]

    # a case scored on a trace names its conversation, so a viewer can put the verdict beside it
    assert _attributes(cases["evaluate from-trace"]["attributes"])["gen_ai.conversation.id"] == "conv-7"


def test_a_jsonl_file_gets_one_line_per_run(tmp_path):
    _suite(tmp_path)
    for _ in range(2):
        run_cli("run", "suites", "--output-dir", "out", "--otlp", "runs.jsonl", cwd=tmp_path)
    lines = (tmp_path / "runs.jsonl").read_text().splitlines()
    assert len(lines) == 2
    run_ids = {_attributes(s["attributes"])["evalrun.run.id"] for line in lines
               for s in json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"] if s["name"] == "evalrun run"}
    assert len(run_ids) == 2


class _Receiver(BaseHTTPRequestHandler):
    bodies: list[tuple[str, str, bytes]] = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.bodies.append((self.path, self.headers["Content-Type"], body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def test_a_run_sent_to_a_real_otlp_http_receiver(tmp_path):
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    _suite(tmp_path)
    _Receiver.bodies = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()  # shutdown() waits a poll
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        done = run_cli("run", "suites", "--output-dir", "out", "--otlp", endpoint, cwd=tmp_path)
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 1, done.stderr
    assert f"otlp: sent 4 spans to {endpoint}/v1/traces" in done.stdout
    [(path, content_type, body)] = _Receiver.bodies
    assert (path, content_type) == ("/v1/traces", "application/x-protobuf")
    request = MessageToDict(ExportTraceServiceRequest.FromString(body))
    spans = {s["name"]: s for s in request["resourceSpans"][0]["scopeSpans"][0]["spans"]}
    assert sorted(spans) == ["evalrun run", "evaluate from-trace", "evaluate paris-ok", "evaluate paris-wrong-city"]
    assert [e["name"] for e in spans["evaluate paris-ok"]["events"]] == ["gen_ai.evaluation.result"] * 3


def test_an_endpoint_that_does_not_answer_is_said_and_a_passing_run_exits_3(tmp_path):
    _suite(tmp_path)
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # the exporter retries a refused connection until the send deadline (10 s by default, of which it waited
    # about 8 here): EVALRUN_OTLP_TIMEOUT, the user's setting for that deadline, shortens it (same code path)
    done = run_cli("run", "suites", "-k", "paris-ok", "--output-dir", "out", "--otlp", f"http://127.0.0.1:{port}",
                   cwd=tmp_path, timeout=120, env={"EVALRUN_OTLP_TIMEOUT": "1"})
    assert f"evalrun: --otlp: cannot send the spans to http://127.0.0.1:{port}/v1/traces" in done.stderr
    assert done.returncode == 3
    assert json.loads((tmp_path / "out/report.json").read_text())["summary"]["passed"] == 1  # the run itself stands


def test_a_replayed_trace_run_imports_no_opentelemetry_unless_asked(tmp_path):
    _suite(tmp_path)
    code = ("import sys; import runner.frontends.cli as c; code = c.main(sys.argv[1:]);"
            "print(sorted(m for m in ('opentelemetry', 'google.protobuf') if m in sys.modules), code)")
    plain = subprocess.run([sys.executable, "-c", code, "run", "suites", "--output-dir", "out", "-q"], cwd=tmp_path,
                           env=cli_env(), capture_output=True, text=True, timeout=120)
    assert plain.stdout.strip().splitlines()[-1] == "[] 1", plain.stderr
    asked = subprocess.run([sys.executable, "-c", code, "run", "suites", "--output-dir", "out", "-q", "--otlp", "s.json"],
                           cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=120)
    assert asked.stdout.strip().splitlines()[-1] == "['google.protobuf', 'opentelemetry'] 1", asked.stderr


def test_replay_reads_a_trace_file_as_the_cases_recording(tmp_path):
    """--replay DIR finds <case id>.json; a trace file there is read like any other transcript."""
    write(tmp_path / "suites/weather.yaml", """
        id: paris
        goal_details:
          - {type: tool_call, name: paris, tool_name: get_weather, args: {city: Paris}}
    """)
    traces = Traces()
    genai_turn(traces, "conv-1", [], "Weather in Paris?", [("c1", "get_weather", {"city": "Paris"}, {"t": 18})],
               "It is 18°C in Paris.")
    traces.write(tmp_path / "recordings/paris.json")
    done = run_cli("run", "suites", "--replay", "recordings", "--output-dir", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS  paris" in done.stdout
