"""`--repeat N` through the real CLI with a model agent over real HTTP: each repeat its own cache slot
(so a rerun replays the same N answers without calling anything), pass@k / pass^k, the flaky cases and
`repeat_policy` deciding the exit code."""
from __future__ import annotations

import json
import threading

import jsonschema
import pytest

from runner.util.resources import schema_path
from tests.helpers.cli_helpers import run_cli, saved_conversations, write


def project(root, base_url: str, policy: str = "") -> None:
    write(root / "evalrun.yaml", f"""
        embeddings: {{enabled: false}}
        {policy}
        agents:
          bot:
            type: model
            model: openai/fake-agent
            api_base: {base_url}
            tools:
              - type: function
                function:
                  name: get_assignment_id
                  parameters: {{type: object, properties: {{username: {{type: string}}}}}}
        """)
    write(root / "suites" / "s.yaml", """
        agent: bot
        cases:
          - id: lookup
            starting_sentence: Look up nwaters please.
            goal_details:
              - {type: tool_call, name: get_id, tool_name: get_assignment_id, args: {username: nwaters},
                 output: "15778303"}
          - id: steady
            starting_sentence: Find nwaters.
            goal_details:
              - {type: tool_call, name: get_id, tool_name: get_assignment_id, args: {username: nwaters},
                 output: "15778303"}
        """)


class Agent:
    """The model under test: for 'lookup' it asks for the right user on its 1st and 3rd first turns and
    the wrong one on the 2nd; for 'steady' always the right one."""

    def __init__(self):
        self.first_turns = {"lookup": 0, "steady": 0}
        self.lock = threading.Lock()

    def __call__(self, request):
        from tests.fakes.openai_server import Reply, tool_call

        messages = request["messages"]
        if messages[-1]["role"] == "tool":
            return Reply(content=f"The id is {messages[-1]['content']}.")
        case = "lookup" if "Look up" in messages[-1]["content"] else "steady"
        with self.lock:
            self.first_turns[case] += 1
            n = self.first_turns[case]
        user = "nken" if case == "lookup" and n == 2 else "nwaters"
        return Reply(tool_calls=[tool_call("get_assignment_id", {"username": user}, "c1")])


def report(root, folder):
    data = json.loads((root / folder / "report.json").read_text())
    jsonschema.validate(data, json.loads(schema_path("report").read_text()))
    return data


def test_repeats_have_their_own_cache_slots_and_a_rerun_replays_the_same_answers(tmp_path):
    from tests.fakes.openai_server import FakeOpenAI

    with FakeOpenAI(default=Agent()) as fake:
        project(tmp_path, fake.base_url)
        first = run_cli("suites", "--repeat", "3", "-j", "1", "--output-dir", "one", "--format", "junit",
                        "--format", "md", "--format", "html", cwd=tmp_path)
        calls_first = len(fake.requests)
        again = run_cli("suites", "--repeat", "3", "-j", "1", "--output-dir", "two", cwd=tmp_path)
        calls_again = len(fake.requests) - calls_first
    assert first.returncode == 1, first.stdout + first.stderr
    assert calls_first == 12  # 2 cases x 3 repeats x 2 agent turns: no repeat was answered from another's slot
    assert calls_again == 0 and again.returncode == 1
    for folder in ("one", "two"):
        data = report(tmp_path, folder)
        runs = [(c["id"], c["repeat"], c["status"]) for c in data["cases"]]
        assert runs == [("lookup", 0, "passed"), ("lookup", 1, "failed"), ("lookup", 2, "passed"),
                        ("steady", 0, "passed"), ("steady", 1, "passed"), ("steady", 2, "passed")]
        summary = data["summary"]
        assert (summary["passed"], summary["failed"], summary["total"]) == (1, 1, 2)  # cases under policy all
        repeats = summary["repeats"]
        assert (repeats["runs"], repeats["policy"], repeats["flaky"]) == (3, "all", ["lookup"])
        # lookup: 2 of 3 runs passed; steady: 3 of 3
        assert repeats["pass_at_k"] == pytest.approx({"1": (2 / 3 + 1) / 2, "2": 1.0, "3": 1.0})
        assert repeats["pass_hat_k"] == pytest.approx({"1": (2 / 3 + 1) / 2, "2": (1 / 3 + 1) / 2, "3": 0.5})
        assert [(c["id"], c["runs"], c["passed"], c["status"], c["pass_at_k"], c["pass_hat_k"])
                for c in repeats["per_case"]] == [("lookup", 3, 2, "failed", 1.0, 0.0), ("steady", 3, 3, "passed", 1.0, 1.0)]
    lines = first.stdout.splitlines()
    assert "FAIL  lookup (repeat 1) [live]  completion 0.00, precision 0.00, recall 0.00" in lines
    assert "--repeat 3 (policy all): pass@1 0.83, pass@3 1.00; pass^1 0.83, pass^3 0.50" in lines
    assert "flaky: 1 case(s) with mixed outcomes: lookup" in lines
    import xml.etree.ElementTree as ET

    names = [c.get("name") for c in ET.parse(tmp_path / "one" / "junit.xml").getroot().iter("testcase")]
    assert names == [f"{case} (repeat {r})" for case in ("lookup", "steady") for r in range(3)]
    summary_md = (tmp_path / "one" / "summary.md").read_text()
    assert "Repeats: 3 per case (policy all): pass@1 83.3%, pass@3 100.0%; pass^1 83.3%, pass^3 50.0%; " \
           "1 flaky case(s)" in summary_md
    assert "| lookup (repeat 1) | failed \\[live\\] |" in summary_md
    page = (tmp_path / "one" / "report.html").read_text()
    assert ('<div id="repeats">Repeats: 3 per case (policy all) · pass@1 83.3% · pass@3 100.0% · pass^1 83.3% '
            '· pass^3 50.0% · 1 flaky <code>lookup</code></div>') in page
    saved = sorted(saved_conversations(tmp_path / "one"))
    assert saved == sorted(f"{case} repeat {r}" for case in ("lookup", "steady") for r in range(3))


@pytest.mark.parametrize("flag,config,code,passed", [
    (["--repeat-policy", "majority"], "", 0, 2),
    (["--repeat-policy", "any"], "", 0, 2),
    ([], "repeat_policy: majority", 0, 2),
    (["--repeat-policy", "all"], "repeat_policy: majority", 1, 1),
])
def test_repeat_policy_decides_whether_a_repeated_case_passes(tmp_path, flag, config, code, passed):
    from tests.fakes.openai_server import FakeOpenAI

    with FakeOpenAI(default=Agent()) as fake:
        project(tmp_path, fake.base_url, config)
        done = run_cli("suites", "--repeat", "3", "-j", "1", "--output-dir", "out", *flag, cwd=tmp_path)
    assert done.returncode == code, done.stdout + done.stderr
    summary = report(tmp_path, "out")["summary"]
    assert summary["passed"] == passed and summary["repeats"]["flaky"] == ["lookup"]


def test_rescore_of_a_repeated_run_scores_each_repeat_s_own_conversation(tmp_path):
    from tests.fakes.openai_server import FakeOpenAI

    with FakeOpenAI(default=Agent()) as fake:
        project(tmp_path, fake.base_url)
        assert run_cli("suites", "--repeat", "3", "-j", "1", "--output-dir", "out", cwd=tmp_path).returncode == 1
        seen = len(fake.requests)
        again = run_cli("rescore", "out", "--output-dir", "again", cwd=tmp_path)
        assert len(fake.requests) == seen
    assert again.returncode == 1, again.stdout + again.stderr
    runs = [(c["id"], c["repeat"], c["status"]) for c in report(tmp_path, "again")["cases"]]
    assert runs[:3] == [("lookup", 0, "passed"), ("lookup", 1, "failed"), ("lookup", 2, "passed")]


def test_a_replayed_case_repeated_gives_the_same_result_each_time(tmp_path):
    from tests.helpers.cli_helpers import tool_call_messages, write_json

    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\n")
    write(tmp_path / "suites" / "s.yaml", """
        cases:
          - id: one
            transcript: t.json
            goal_details:
              - {type: tool_call, name: get_id, tool_name: get_assignment_id, args: {username: nwaters}}
        """)
    write_json(tmp_path / "suites" / "t.json", [{"role": "user", "content": "hi"},
                                                *tool_call_messages("get_assignment_id", {"username": "nwaters"})])
    done = run_cli("suites", "--repeat", "2", "--output-dir", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    data = report(tmp_path, "out")
    assert [(c["repeat"], c["status"]) for c in data["cases"]] == [(0, "passed"), (1, "passed")]
    assert data["summary"]["repeats"]["flaky"] == [] and data["summary"]["passed"] == 1
    assert run_cli("suites", "--repeat", "0", cwd=tmp_path).returncode == 4


def test_compare_of_repeated_runs_adds_a_paired_bootstrap_interval(tmp_path):
    from tests.fakes.openai_server import FakeOpenAI

    class Better(Agent):
        def __call__(self, request):
            from tests.fakes.openai_server import Reply, tool_call

            messages = request["messages"]
            if messages[-1]["role"] == "tool":
                return Reply(content="done")
            return Reply(tool_calls=[tool_call("get_assignment_id", {"username": "nwaters"}, "c1")])

    with FakeOpenAI(default=Agent()) as fake:
        project(tmp_path, fake.base_url)
        assert run_cli("suites", "--repeat", "3", "-j", "1", "--output-dir", "old", cwd=tmp_path).returncode == 1
    with FakeOpenAI(default=Better()) as fake:
        project(tmp_path, fake.base_url)
        assert run_cli("suites", "--repeat", "3", "--no-cache", "--output-dir", "new", cwd=tmp_path).returncode == 0
    done = run_cli("compare", "old", "new", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[1:5] == ["newly failing: 0", "newly passing: 1",
                          "  lookup: failed → passed (was: repeat 1: goal 'get_id': called get_assignment_id 1 time(s), "
                          "never with matching arguments; closest at message 2 (that call failed with an error): "
                          "`username` (strict, decided by exact): expected 'nwaters', got 'nken')",
                          "metric means (cases scored in both):"]
    # per-case pass shares: lookup 2/3 -> 1, steady 1 -> 1; resampling two cases gives means 0, 1/6 or 1/3
    assert lines[-1] == ("pass-rate difference over runs (new - old): +16.7 points, 95% paired bootstrap interval "
                         "+0.0 to +33.3 (2000 resamples of the 2 cases, seed 0): includes 0: could be chance")
    md = run_cli("compare", "old", "new", "--format", "md", cwd=tmp_path)
    assert "pass-rate difference over runs (new - old): +16.7 points" in md.stdout
