"""final_state: the world after the conversation, reported by the agent and compared path by path.

End-to-end through the real CLI: the bundled bank agent's real SQLite rows, live runs replayed from
what they saved, agents that report no state (unscored, exit 3) or fail to (the case's error)."""
from __future__ import annotations

import json
import os
import shutil

import pytest

from tests.helpers.cli_helpers import REPO, run_cli, saved_conversations, write, write_json


def report_of(root, out="out"):
    return json.loads((root / out / "report.json").read_text(encoding="utf-8"))


def case_of(report, case_id):
    return next(c for c in report["cases"] if c["id"] == case_id)


def final_state_check(case):
    return next(c for c in case["checks"] if c["type"] == "final_state")


@pytest.fixture
def examples(tmp_path):
    shutil.copytree(REPO / "suites", tmp_path / "suites")
    return tmp_path


def test_bundled_bank_suite_passes_on_the_agents_sqlite_rows(examples):
    result = run_cli("suites/bank", "--output-dir", "out", cwd=examples)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed, 0 failed" in result.stdout
    report = report_of(examples)
    for case in report["cases"]:
        check = final_state_check(case)
        assert (check["status"], check["score"]) == ("passed", 1.0), check
        assert check["evidence"]["source"] == "bank.bank_agent:state(context)"
        assert check["explanation"].startswith("the final state matches (")
    saved = saved_conversations(examples / "out")["bank-two-turns"]
    assert [(t["from_account"], t["to_account"], t["amount"]) for t in saved["state"]["transfers"]] == [
        ("A-100", "C-300", 80.0), ("C-300", "B-200", 100.0)]


def test_wrong_amount_extra_row_and_missing_row_each_fail_naming_the_path(examples):
    result = run_cli("suites/failing/bank_state.yaml", "--output-dir", "out", cwd=examples)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "0 passed, 3 failed" in result.stdout
    report = report_of(examples)
    expected = {
        "state-wrong-amount": "`transfers.0.amount` (strict, decided by number): expected 5, got 50.0",
        "state-extra-row": "`transfers.1` (strict, decided by structure): unexpected item (item 2 of the state's 2; 1 "
                           "expected), got {\"id\": 2, \"from_account\": \"A-100\", \"to_account\": \"C-300\", \"amount\": 20.0}",
        "state-missing-row": "`transfers.1` (strict, decided by structure): expected {\"from_account\": \"A-100\", "
                             "\"to_account\": \"C-300\", \"amount\": 15}, missing — not in the state (its list has 1 of "
                             "the 2 expected items)",
    }
    for case_id, difference in expected.items():
        case = case_of(report, case_id)
        check = final_state_check(case)
        assert case["status"] == "failed" and check["status"] == "failed"
        assert "the final state differs at 1 path of " in check["explanation"]
        assert difference in check["explanation"], check["explanation"]
        assert difference in result.stdout  # the console says it too
        assert [d["path"] for d in check["evidence"]["differences"]] == [difference.split("`")[1]]
        assert any(difference in failure for failure in case["failures"])


def test_a_replay_of_the_saved_conversations_reproduces_the_verdicts(examples):
    live = run_cli("suites/failing/bank_state.yaml", "suites/bank", "--output-dir", "live", cwd=examples)
    assert live.returncode == 1, live.stdout + live.stderr
    replayed = run_cli("suites/failing/bank_state.yaml", "suites/bank", "--replay", "live/conversations.jsonl",
                       "--output-dir", "replayed", cwd=examples)
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr

    def verdicts(out):
        return {c["id"]: (c["status"], final_state_check(c)["score"],
                          [d["path"] for d in final_state_check(c)["evidence"]["differences"]])
                for c in report_of(examples, out)["cases"]}

    assert verdicts("replayed") == verdicts("live")
    assert len(verdicts("live")) == 6
    source = final_state_check(case_of(report_of(examples, "replayed"), "state-extra-row"))["evidence"]["source"]
    assert source == "the `state` saved in live/conversations.jsonl#state-extra-row"


def agent_project(root, agent_body: str, case_extra: str = "", agent_extra: str = ""):
    write(root / "evalrun.yaml", f"""
        embeddings: {{enabled: false}}
        agents:
          bot:
            type: python
            entrypoint: agents.bot:respond
            {agent_extra}
        """)
    write(root / "agents" / "__init__.py", "")
    write(root / "agents" / "bot.py", agent_body)
    write(root / "suites" / "s.yaml", f"""
        id: order
        agent: bot
        starting_sentence: Order two apples.
        final_state:
          orders: [{{item: apple, quantity: 2}}]
        {case_extra}
        """)


def test_an_agent_that_reports_no_state_leaves_the_case_unscored(tmp_path):
    agent_project(tmp_path, """
        def respond(messages, context):
            return "Done."
        """)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    case = report_of(tmp_path)["cases"][0]
    assert case["status"] == "unscored"
    reason = ("check 'final_state': unscored: no final state to compare with: agent 'bot' (python) reported no state: "
              "there is no function `agents.bot:state` beside its entry point, and its replies carried no `state`")
    assert case["unscored_reason"] == reason
    assert "state" not in saved_conversations(tmp_path / "out")["order"]


def test_the_state_a_reply_carries_is_the_agents_final_state(tmp_path):
    agent_project(tmp_path, """
        def respond(messages, context):
            return {"messages": [{"role": "assistant", "content": "Ordered."}],
                    "state": {"orders": [{"item": "apple", "quantity": 3}], "customer": "ann"}}
        """)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    check = final_state_check(report_of(tmp_path)["cases"][0])
    assert check["evidence"]["source"] == "the `state` of what agents.bot:respond returned on turn 1"
    assert "`orders.0.quantity` (strict, decided by number): expected 2, got 3" in check["explanation"]


@pytest.mark.parametrize("isolate", ["none", "process"])
def test_state_function_beside_the_entry_point_gets_the_conversation_context(tmp_path, isolate):
    agent_project(tmp_path, """
        SEEN = {}

        def respond(messages, context):
            SEEN[context.conversation_id] = context.turn
            return "Ordered."

        async def state(context):
            assert SEEN[context.conversation_id] == context.turn == 1
            return {"orders": [{"item": "Apple ", "quantity": 2.0}], "conversation": context.conversation_id}
        """, agent_extra=f"isolate: {isolate}")
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    check = final_state_check(report_of(tmp_path)["cases"][0])
    assert check["status"] == "passed" and check["evidence"]["source"] == "agents.bot:state(context)"
    saved = saved_conversations(tmp_path / "out")["order"]
    assert len(saved["state"]["conversation"]) == 32


@pytest.mark.parametrize("isolate", ["none", "process"])
@pytest.mark.parametrize("body, error", [
    ("def state(context):\n    raise RuntimeError('db gone')",
     "the agent's final state could not be read: agents.bot:state(context) raised RuntimeError: db gone (at bot.py:6 "
     "in state)"),
    ("def state(context):\n    return {'orders': {1, 2}}",
     "the agent's final state could not be read: the state agents.bot:state(context) returned: `state.orders` is "
     "not JSON data (a Python set); a state holds only JSON data"),
])
def test_a_state_function_that_fails_is_the_cases_error(tmp_path, isolate, body, error):
    agent_project(tmp_path, "def respond(messages, context):\n    return 'Ordered.'\n\n\n" + body + "\n",
                  agent_extra=f"isolate: {isolate}")
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    case = report_of(tmp_path)["cases"][0]
    assert case["status"] == "error"
    if isolate == "process" and "{1, 2}" in body:  # the worker cannot send a set at all
        assert case["error"].startswith("the agent's final state could not be read: agents.bot:state(context) returned "
                                        "a value that cannot be sent from its worker process as JSON: TypeError")
    else:
        assert case["error"].startswith(error), case["error"]


def test_a_transcript_with_a_state_is_graded_and_one_without_is_unscored(tmp_path):
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\n")
    messages = [{"role": "user", "content": "Cancel order 7"}, {"role": "assistant", "content": "Cancelled."}]
    write_json(tmp_path / "suites" / "t" / "with.json", {"messages": messages,
                                                        "state": {"orders": {"7": {"status": "canceled"}}}})
    write_json(tmp_path / "suites" / "t" / "without.json", {"messages": messages})
    write(tmp_path / "suites" / "s.yaml", """
        final_state:
          orders: {"7": {status: cancelled}}
        final_state_matching:
          orders.7.status: {one_of: [cancelled, canceled]}
        cases:
          - {id: with, transcript: t/with.json}
          - {id: without, transcript: t/without.json}
          - id: wrong
            transcript: t/with.json
            final_state_matching: {orders.7.status: strict}   # merged with the file's: the case's rule wins
        """)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    report = report_of(tmp_path)
    assert case_of(report, "with")["status"] == "passed"
    without = case_of(report, "without")
    assert without["status"] == "unscored"
    assert without["unscored_reason"] == (
        "check 'final_state': unscored: no final state to compare with: the transcript "
        "suites/t/without.json has no `state` entry (a live run saves the state its agent "
        "reported there; a hand-written transcript can add `\"state\": {...}`)")
    wrong = final_state_check(case_of(report, "wrong"))
    assert "`orders.7.status` (strict, decided by exact): expected 'cancelled', got 'canceled'" in wrong["explanation"]
    assert result.returncode == 3  # an unscored case outranks the failed one


def test_a_trace_carries_no_state_so_its_final_state_case_is_unscored(tmp_path):
    from tests.fakes.otel_spans import Traces, genai_turn

    traces = Traces()
    genai_turn(traces, "conv-7", [], "Cancel order 7", [("call_1", "cancel_order", {"id": "7"}, {"ok": True})],
               "Cancelled.")
    traces.write(tmp_path / "suites" / "t" / "trace.json")
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\n")
    write(tmp_path / "suites" / "s.yaml", """
        id: traced
        transcript: t/trace.json
        final_state: {orders: {"7": {status: cancelled}}}
        """)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    case = case_of(report_of(tmp_path), "traced")
    assert case["status"] == "unscored", result.stdout + result.stderr
    assert case["unscored_reason"] == (
        "check 'final_state': unscored: no final state to compare with: the trace suites/t/trace.json carries "
        "no state of the world after the conversation (a case's `final_state:` needs a transcript with a "
        "`state` entry or a live run)")
    assert result.returncode == 3


def test_validate_names_a_final_state_matching_path_that_does_not_exist(tmp_path):
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\n")
    write(tmp_path / "suites" / "s.yaml", """
        starting_sentence: hi
        final_state:
          accounts: {A: {balance: 1}}
        final_state_matching:
          accounts.A.balanse: {tolerance: 0.1}
          accounts.*.balance: {tolerance: 0.1, regex: "x"}
        """)
    result = run_cli("validate", "suites", cwd=tmp_path)
    assert result.returncode == 4
    assert ("suites/s.yaml:5:3: error: final_state_matching names 'accounts.A.balanse', which is not a path of "
            "final_state (did you mean 'accounts.A.balance'?)") in result.stdout
    assert "suites/s.yaml:6:23: error: use one of one_of, regex and tolerance per argument, not regex and tolerance" \
        in result.stdout


# --------------------------------------------------------------------------- model agents: played tools keep a state

BANK_CASE = """
    id: pay
    agent: bot
    starting_sentence: Pay 30 from A to B and cancel hold H1.
    initial_state:
      accounts: {A: {balance: 100}, B: {balance: 0}}
      holds: {H1: {amount: 5}, H2: {amount: 7}}
    goal_details:
      - type: tool_call
        name: pay
        tool_name: transfer
        args: {from: A, to: B, amount: 30}
        output: {ok: true}
        effects:
          - {set: accounts.A.balance, value: 70}
          - {set: accounts.B.balance, arg: amount}
          - {append: transfers, arg: "*"}
    tool_outputs:
      cancel_hold: {ok: true}
    tool_effects:
      cancel_hold:
        - {delete: holds.H1}
    final_state:
      accounts: {A: {balance: 70}, B: {balance: 30}}
      holds: {H2: {amount: 7}}
      transfers: [{from: A, to: B, amount: 30}]
    final_state_matching:
      holds: exact
    """


def model_project(root, fake, case: str = BANK_CASE):
    write(root / "evalrun.yaml", f"""
        embeddings: {{enabled: false}}
        agents:
          bot:
            type: model
            model: openai/fake-agent
            api_base: {fake.base_url}
            max_retries: 0
            cache: false
            system_prompt: You are a bank assistant.
        """)
    write(root / "suites" / "s.yaml", case)


@pytest.mark.parametrize("amount, passed", [(30, True), (300, False)])
def test_a_model_agents_played_tools_keep_the_state_their_effects_write(tmp_path, amount, passed):
    from tests.fakes.openai_server import FakeOpenAI, Reply, tool_call

    with FakeOpenAI() as fake:
        fake.script(Reply(tool_calls=[tool_call("transfer", {"from": "A", "to": "B", "amount": amount}, "c1"),
                                      tool_call("cancel_hold", {"id": "H1"}, "c2")]),
                    "Done: paid and cancelled.")
        model_project(tmp_path, fake)
        result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == (0 if passed else 1), result.stdout + result.stderr
    saved = saved_conversations(tmp_path / "out")["pay"]
    check = final_state_check(report_of(tmp_path)["cases"][0])
    assert check["evidence"]["source"] == "the state the played tools kept"
    if passed:
        assert saved["state"] == {"accounts": {"A": {"balance": 70}, "B": {"balance": 30}}, "holds": {"H2": {"amount": 7}},
                                  "transfers": [{"from": "A", "to": "B", "amount": 30}]}
        assert check["status"] == "passed"
    else:  # no goal answered the call: no output, no effects; the hold was still cancelled (tool_outputs)
        assert saved["state"] == {"accounts": {"A": {"balance": 100}, "B": {"balance": 0}}, "holds": {"H2": {"amount": 7}}}
        assert [d["path"] for d in check["evidence"]["differences"]] == [
            "accounts.A.balance", "accounts.B.balance", "transfers"]
        assert "`transfers` (strict, decided by absent): expected [{\"from\": \"A\", \"to\": \"B\", \"amount\": 30}], " \
               "missing" in check["explanation"]


def test_an_effect_that_cannot_apply_is_the_cases_error_naming_it(tmp_path):
    from tests.fakes.openai_server import FakeOpenAI, Reply, tool_call

    case = BANK_CASE.replace("{append: transfers, arg: \"*\"}", "{append: accounts.A.balance, value: 1}")
    with FakeOpenAI() as fake:
        fake.script(Reply(tool_calls=[tool_call("transfer", {"from": "A", "to": "B", "amount": 30}, "c1")]), "Done.")
        model_project(tmp_path, fake, case)
        result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    assert report_of(tmp_path)["cases"][0]["error"] == (
        "tool 'transfer' answered by goal 'pay', effect 3 (append accounts.A.balance): `accounts.A.balance` holds int, not a list to append to")


def test_effects_set_append_delete_and_arguments():
    from runner.run.agents._base import AgentError
    from runner.run.agents._effects import apply_effects
    from runner.suite.models import StateEffect

    def effects(*items):
        return [StateEffect.model_validate(item) for item in items]

    state = {"rows": [{"id": 1}], "n": 1}
    apply_effects(state, effects({"set": "a.b.c", "value": [1]}, {"append": "rows", "arg": "*"},
                                 {"set": "rows.0.id", "arg": "who.id"}, {"set": "missing", "arg": "nope.deeper"},
                                 {"delete": "n"}, {"delete": "not.there"}, {"append": "a.b.c", "value": {"x": 2}},
                                 {"delete": "rows.1"}), {"who": {"id": 9}}, "here")
    assert state == {"a": {"b": {"c": [1, {"x": 2}]}}, "rows": [{"id": 9}], "missing": None}
    with pytest.raises(AgentError, match=r"^here, effect 1 \(set n.x\): `n` holds int, not an object$"):
        apply_effects({"n": 1}, effects({"set": "n.x", "value": 1}), {}, "here")
    for bad, message in [({"set": "a"}, "set needs one of value and arg"),
                         ({"set": "a", "append": "b", "value": 1}, "exactly one of set, append and delete, not set and append"),
                         ({"delete": "a", "value": 1}, "delete takes no value and no arg"),
                         ({"append": "a", "value": 1, "arg": "x"}, "append needs one of value and arg")]:
        with pytest.raises(ValueError, match=message):
            StateEffect.model_validate(bad)


# --------------------------------------------------------------------------- command agents: a state_file

COMMAND_AGENT = r"""
import json, os, sys
mode = sys.argv[1]
for line in sys.stdin:
    request = json.loads(line)
    path = os.environ["EVALRUN_STATE_FILE"]
    with open(os.path.join(os.environ["EVALRUN_CASE_DIR"], "seen"), "a") as seen:
        seen.write(path + "\n")
    if mode == "good":
        json.dump({"orders": [{"item": "apple", "quantity": 2}], "dir": os.environ["EVALRUN_CASE_DIR"]}, open(path, "w"))
    elif mode == "garbage":
        open(path, "w").write("orders: apple x2\x1b[31m")
    elif mode == "huge":
        open(path, "w").write("[" + "1," * 600 + "1]")
    elif mode == "link":
        os.symlink("/etc/hostname", path)
    print(json.dumps({"messages": [{"role": "assistant", "content": "Ordered."}]}), flush=True)
"""


@pytest.mark.parametrize("mode, status, explained", [
    ("good", "passed", None),
    ("silent", "unscored", "check 'final_state': unscored: no final state to compare with: agent 'bot' did not write "
                           "its state_file out/state.json (the process finds its full path in EVALRUN_STATE_FILE)"),
    ("garbage", "error", "the agent's final state could not be read: the state_file out/state.json is not JSON: "
                         "orders: apple x2\\x1b[31m"),
    ("huge", "error", "the agent's final state could not be read: the state_file out/state.json cannot be read: it is "
                      "1,203 bytes, above the 1,000 bytes limit for state files (max_reply_bytes: 1000)"),
    ("link", "error", "the agent's final state could not be read: the state_file out/state.json is a symbolic link; "
                      "the process must write its state into the file itself"),
])
def test_a_command_agents_state_file(tmp_path, mode, status, explained):
    import sys

    write(tmp_path / "agent.py", COMMAND_AGENT)
    write(tmp_path / "evalrun.yaml", f"""
        embeddings: {{enabled: false}}
        agents:
          bot: {{type: command, command: ["{sys.executable}", agent.py, {mode}], state_file: out/state.json,
                 max_reply_bytes: 1000}}
        """)
    write(tmp_path / "suites" / "s.yaml", """
        id: order
        agent: bot
        starting_sentence: Order two apples.
        final_state:
          orders: [{item: apple, quantity: 2}]
        """)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    case = report_of(tmp_path)["cases"][0]
    assert case["status"] == status, result.stdout + result.stderr
    if status == "passed":
        state = saved_conversations(tmp_path / "out")["order"]["state"]
        assert state["dir"].startswith(tempfile_root()) and "evalrun-case-" in state["dir"]
        assert not os.path.exists(state["dir"])  # the conversation's folder is removed when it ends
    else:
        assert (case.get("unscored_reason") or case.get("error")) == explained


def tempfile_root():
    import tempfile

    return tempfile.gettempdir()


def test_state_file_must_stay_inside_the_conversations_folder(tmp_path):
    write(tmp_path / "evalrun.yaml", """
        agents:
          bot: {type: command, command: [agent], state_file: ../state.json}
        """)
    write(tmp_path / "suites" / "s.yaml", "starting_sentence: hi\nfinal_state: {a: 1}\n")
    result = run_cli("validate", "suites", cwd=tmp_path)
    assert result.returncode == 4
    assert "state_file is a relative path inside the conversation's folder, without '..'" in result.stdout + result.stderr


# --------------------------------------------------------------------------- http agents: a state_url

@pytest.mark.parametrize("state_path, state_text, status, explained", [
    ("/state", '{"orders": [{"item": "apple", "quantity": 2}]}', "passed", None),
    ("/state", "", "unscored", "check 'final_state': unscored: no final state to compare with: agent 'bot': GET "
                               "{url} answered with no state (an empty body)"),
    ("/state", "<html>no</html>", "error", "the agent's final state could not be read: the state from {url} is not "
                                           "JSON: <html>no</html>"),
    ("/huge", "", "error", "the agent's final state could not be read: the reply from {url} is larger than 1 MiB "
                           "(max_reply_bytes: 1048576; raise it to allow larger replies)"),
    ("/redirect", "", "error", "the agent's final state could not be read: HTTP 302 from {url}: the endpoint redirects "
                               "to http://elsewhere.example/chat; evalrun does not follow redirects"),
    ("/trickle", "", "error", "the agent's final state could not be read: no complete answer from {url} within 1 s"),
])
def test_an_http_agents_state_url(tmp_path, state_path, state_text, status, explained):
    from tests.fakes.agent_server import AgentServer

    with AgentServer() as server:
        server.state_text = state_text
        url = server.url(state_path)
        write(tmp_path / "evalrun.yaml", f"""
            embeddings: {{enabled: false}}
            agents:
              bot: {{type: http, url: "{server.url('/messages')}", state_url: "{url}", timeout_s: 1,
                     max_reply_bytes: 1048576, headers: {{X-Token: "${{STATE_TOKEN}}"}}}}
            """)
        write(tmp_path / "suites" / "s.yaml", """
            id: order
            agent: bot
            starting_sentence: Order two apples.
            final_state:
              orders: [{item: apple, quantity: 2}]
            """)

        result = run_cli("suites", "--output-dir", "out", cwd=tmp_path, env={"STATE_TOKEN": "s3cret-token"})
        gets = [(path, headers) for path, body, headers in server.requests if not body]
    case = report_of(tmp_path)["cases"][0]
    assert case["status"] == status, result.stdout + result.stderr
    path, headers = gets[0]
    assert path.startswith(state_path + "?case_id=order&conversation_id=") and headers["X-Token"] == "s3cret-token"
    conversation_id = path.rsplit("=", 1)[1]
    assert len(conversation_id) == 32
    if explained is not None:
        assert (case.get("unscored_reason") or case.get("error", "")).startswith(explained.format(url=url))
    assert "s3cret-token" not in result.stdout + (tmp_path / "out" / "report.json").read_text()


# --------------------------------------------------------------------------- the comparison, against an oracle

from hypothesis import (  # noqa: E402
    HealthCheck,
    given,
    settings,
    strategies as st,
)

_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([1.0, 2.5, -0.0]),
                     st.sampled_from(["a", "A ", "b", "1", "2025-01-05", ""]))
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3), max_leaves=8)
_states = st.dictionaries(st.sampled_from(["rows", "n", "meta"]), _values, max_size=3)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_states, _states)
def test_without_rules_the_state_matches_exactly_when_strict_equality_says_so(expected, actual):
    from runner.score.normalize import strict_equal
    from runner.score.state import compare_state

    verdicts = compare_state(expected, actual, {})
    assert all(v.matched for v in verdicts) == strict_equal(expected, actual, "allow")
    assert all(v.matched for v in compare_state(expected, expected, {}))
    paths = [v.path for v in verdicts]
    assert len(paths) == len(set(paths))  # one verdict per compared path


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["id", "amount"]), st.integers(0, 3), min_size=2), max_size=4),
       st.data())
def test_each_missing_or_extra_row_is_named_once(rows, data):
    from runner.score.state import compare_state

    kept = data.draw(st.lists(st.booleans(), min_size=len(rows), max_size=len(rows)))
    extra = data.draw(st.lists(st.dictionaries(st.just("id"), st.integers(10, 12), min_size=1), max_size=2))
    actual = [row for row, keep in zip(rows, kept, strict=True) if keep] + extra
    verdicts = compare_state({"rows": rows}, {"rows": actual}, {})
    wrong = [v for v in verdicts if not v.matched]
    if len(actual) != len(rows):  # every row is either paired or named missing/unexpected, never lost
        missing = [v for v in wrong if v.reason.startswith("not in the state")]
        unexpected = [v for v in wrong if v.reason.startswith("unexpected item")]
        assert len(missing) == max(0, len(rows) - len(actual)) and len(unexpected) == max(0, len(actual) - len(rows))
    assert bool(wrong) == (sorted(map(repr, rows)) != sorted(map(repr, actual)))


# --------------------------------------------------------------------------- ADK: final_session_state

@pytest.mark.parametrize("expected, status, difference", [
    ("{tier: gold, last_order: A-1042}", "passed", None),
    ("{tier: gold, last_order: A-9999, coupon: SPRING}", "failed",
     ["`last_order` (strict, decided by exact): expected 'A-9999', got 'A-1042'",
      "`coupon` (strict, decided by absent): expected 'SPRING', missing"]),
])
def test_adk_final_session_state_is_checked_against_the_session_the_agent_ends_with(tmp_path, expected, status,
                                                                                     difference):

    from tests.fakes import adk_shop
    from tests.fakes.openai_server import FakeOpenAI
    from tests.helpers.agents_adk import make_project

    with FakeOpenAI() as fake:
        project = make_project(tmp_path / "project", fake.base_url)
        with (project / "suites" / "order.yaml").open("a") as suite:
            suite.write(f"final_session_state: {expected}\n")
        adk_shop.script(fake)
        done = run_cli("suites/", "--output-dir", str(tmp_path / "out"), cwd=project)
    [case] = json.loads((tmp_path / "out" / "report.json").read_text())["cases"]
    assert case["status"] == status, done.stdout + done.stderr
    check = final_state_check(case)
    assert check["evidence"]["source"] == "the ADK session's state"
    if difference is not None:
        assert check["explanation"].startswith("the final state differs at 2 paths of 3 values compared (from the "
                                               "ADK session's state): " + "; ".join(difference))


def test_validate_warns_of_effects_that_can_never_apply(tmp_path):
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\n")
    write(tmp_path / "suites" / "s.yaml", """
        starting_sentence: hi
        goal_details:
          - {type: tool_call, name: pay, tool_name: transfer, args: {}, effects: [{delete: holds}]}
        tool_effects:
          cancel_hold: [{delete: holds.H1}]
        final_state: {holds: {}}
        """)
    result = run_cli("validate", "suites", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == [
        "suites/s.yaml:3:65: warning: goal 'pay' has effects but no `output`: they apply when a played call gets this "
        "goal's output; give it one",
        "suites/s.yaml:5:3: warning: tool_effects names 'cancel_hold', which has no `tool_outputs` entry: they apply "
        "when a played call is answered from tool_outputs; add one"]


def test_the_state_is_asked_for_only_by_cases_that_compare_it_and_within_the_case_timeout(tmp_path):
    from tests.fakes.agent_server import AgentServer

    write(tmp_path / "agents" / "__init__.py", "")
    write(tmp_path / "agents" / "slow.py", """
        import time

        def respond(messages, context):
            return "Ordered."

        def state(context):
            time.sleep(30)
        """)
    with AgentServer() as server:
        write(tmp_path / "evalrun.yaml", f"""
            embeddings: {{enabled: false}}
            agents:
              web: {{type: http, url: "{server.url('/messages')}", state_url: "{server.url('/state')}"}}
              slow: {{type: python, entrypoint: "agents.slow:respond"}}
            """)
        write(tmp_path / "suites" / "s.yaml", """
            cases:
              - {id: no-state-asked, agent: web, starting_sentence: hi, goal_details: [{type: text, name: t, keywords: [hi]}]}
              - {id: hangs, agent: slow, starting_sentence: hi, timeout_s: 1, final_state: {orders: []}}
            """)
        result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
        gets = [path for path, body, _ in server.requests if not body]
    report = report_of(tmp_path)
    assert gets == [] and case_of(report, "no-state-asked")["status"] == "passed", result.stdout
    hangs = case_of(report, "hangs")
    assert (hangs["status"], hangs["termination_reason"]) == ("error", "timeout")
    assert hangs["error"] == "the conversation did not finish within the case timeout of 1 s"
