"""The `command` target: a real subprocess speaking JSON lines (tests/fakes/jsonl_agent.py)."""
from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from runner.run.conversation import Conversation, converse
from runner.run.simulate import ScriptedUser
from tests.fakes.cases import make_agent, make_case, talk

SCRIPT = str(Path(__file__).parents[1] / "fakes" / "jsonl_agent.py")
THREE_TURNS = {"starting_sentence": "one", "user_prompts": ["two", "three"]}


@pytest.fixture
def short_graces(monkeypatch):
    """Shorter waits for a stuck process to leave after stdin closes (2 s) and for the stderr a stray child holds
    (2 s): the tests using it prove that the process is stopped and the conversation ends, not how politely."""
    from runner.run.agents import _process

    monkeypatch.setattr(_process, "CLOSE_GRACE_S", 0.3)
    monkeypatch.setattr(_process, "STDERR_GRACE_S", 0.5)


def command_agent(mode: str, **options):
    return make_agent({"type": "command", "command": [sys.executable, SCRIPT, mode], **options})


@pytest.mark.parametrize("mode", ["echo", "completion"])
def test_one_process_answers_every_turn(mode):
    conversation = talk(make_case(**THREE_TURNS), command_agent(mode))
    assert [m["content"] for m in conversation.messages] == [
        "one", "you said: one", "two", "you said: two", "three", "you said: three"]
    assert (conversation.termination_reason, conversation.error) == ("script_end", None)
    assert conversation.stderr_tail == [f"agent started in mode {mode}", "turn 1: one", "turn 2: two", "turn 3: three"]


def test_a_crash_is_the_case_error_with_the_last_stderr_lines():
    conversation = talk(make_case(**THREE_TURNS), command_agent("crash2"))
    assert [m["content"] for m in conversation.messages] == ["one", "you said: one", "two"]
    assert conversation.termination_reason == "agent_error"
    assert conversation.error == (
        "the agent process exited with code 3 before answering turn 2; last stderr lines:\n"
        "  agent started in mode crash2\n  turn 1: one\n  turn 2: two\n"
        "  Traceback (most recent call last):\n  RuntimeError: the database is down")


def test_a_line_that_is_not_json_is_the_case_error():
    conversation = talk(make_case(**THREE_TURNS), command_agent("garbage2", stderr_lines=2))
    assert conversation.error.startswith("the agent process answered turn 2 with a line that is not JSON: "
                                         "thinking about it... (logs belong on stderr); last stderr lines:\n")
    assert conversation.stderr_tail == ["turn 1: one", "turn 2: two"]  # bounded by stderr_lines
    assert len(conversation.messages) == 3


def test_no_answer_within_the_turn_timeout_kills_the_process(short_graces):
    started = time.monotonic()
    agent = command_agent("sleep", timeout_s=0.5)
    conversation = talk(make_case(**THREE_TURNS), agent)
    assert time.monotonic() - started < 5
    assert conversation.error.startswith("the agent process gave no answer to turn 1 within 0.5 s")
    assert agent.process.returncode is not None  # closed: killed, not left running


def test_a_program_that_does_not_exist():
    agent = make_agent({"type": "command", "command": "no-such-agent-binary --flag"}, Path("/tmp"))
    conversation = talk(make_case(starting_sentence="hi"), agent)
    assert (conversation.termination_reason, conversation.error) == (
        "agent_error", "the agent could not start: cannot start command no-such-agent-binary (in /tmp): "
                       "No such file or directory")


def test_env_values_reach_the_process_but_not_the_kept_stderr(monkeypatch):
    monkeypatch.setenv("MY_SECRET", "tok-98765")
    conversation = talk(make_case(starting_sentence="hi"), command_agent("env", env={"AGENT_TOKEN": "${MY_SECRET}"}))
    assert conversation.messages[-1]["content"] == "token length 9"
    assert conversation.stderr_tail[-1] == "token is <redacted>"


def test_cancelling_the_case_kills_the_process_and_its_children():
    case = make_case(starting_sentence="hi")
    agent = command_agent("child")
    kept = Conversation()

    async def cancel_soon():
        task = asyncio.create_task(converse(case, agent, ScriptedUser(case), conversation=kept))
        for _ in range(100):
            await asyncio.sleep(0.05)
            if any(line.startswith("child pid") for line in agent.stderr_tail()):
                break
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_soon())
    child = int(next(line for line in agent.stderr_tail() if line.startswith("child pid")).split()[-1])
    assert agent.process.returncode is not None
    for _ in range(50):
        if not _alive(child):
            break
        time.sleep(0.05)
    assert not _alive(child)
    assert kept.messages == [{"role": "user", "content": "hi"}]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is dead, only not yet collected
        return stat.read().split()[2] != "Z"


def test_stop_in_a_reply_ends_the_conversation():
    conversation = talk(make_case(**THREE_TURNS), command_agent("stop"))
    assert (conversation.termination_reason, conversation.error, conversation.user_turns) == ("agent_stop", None, 1)
    assert conversation.messages[-1] == {"role": "assistant", "content": "you said: one"}


def test_a_process_that_never_reads_its_input_times_out(short_graces):
    agent = make_agent({"type": "command", "timeout_s": 0.5,
                        "command": [sys.executable, "-c", "import time, sys; print('up', file=sys.stderr, flush=True); "
                                                          "time.sleep(3600)"]})
    case = make_case(starting_sentence="x" * 4_000_000)  # more than a pipe holds
    started = time.monotonic()
    conversation = talk(case, agent)
    assert time.monotonic() - started < 6
    assert conversation.error.startswith("the agent process did not read turn 1 within 0.5 s")


# ------------------------------------------------------------------ the process group, whatever the leader did

def child_pid(agent) -> int:
    return int(next(line for line in agent.stderr_tail() if line.startswith("child pid")).split()[-1])


def test_the_children_of_an_agent_that_exits_are_killed_and_its_death_is_seen_at_once():
    agent = command_agent("orphan", timeout_s=20)
    started = time.monotonic()
    conversation = talk(make_case(**THREE_TURNS), agent, timeout_s=30)
    assert time.monotonic() - started < 5  # the child holds stdout open: EOF alone never comes
    assert [m["content"] for m in conversation.messages] == ["one", "you said: one", "two"]
    assert conversation.error.startswith("the agent process exited with code 0 before answering turn 2; "
                                         "last stderr lines:\n  agent started in mode orphan\n  turn 1: one\n"
                                         "  child pid ")
    child = child_pid(agent)
    for _ in range(50):
        if not _alive(child):
            break
        time.sleep(0.05)
    alive = _alive(child)
    if alive:
        os.kill(child, 9)  # a failing test leaves nothing behind
    assert not alive


def test_a_child_that_left_the_group_holding_the_pipes_does_not_hang_the_conversation(short_graces):
    agent = command_agent("escape", timeout_s=20)
    started = time.monotonic()
    try:
        conversation = talk(make_case(**THREE_TURNS), agent, timeout_s=30)
        assert time.monotonic() - started < 8
        assert conversation.error.startswith("the agent process exited with code 0 before answering turn 2")
    finally:
        os.kill(child_pid(agent), 9)  # out of evalrun's reach by design (setsid): the test cleans up


def test_stderr_held_by_a_child_out_of_the_group_is_waited_for_once(monkeypatch):
    """crashed() gives the last stderr lines STDERR_GRACE_S once the leader exited; when a child out of the
    group's reach holds stderr open, close() must not wait as long again for lines that cannot come."""
    from runner.run.agents import _process
    from runner.run.agents._base import AgentError

    monkeypatch.setattr(_process, "STDERR_GRACE_S", 1.0)
    channel = _process.ProcessChannel("the agent process", stderr_lines=5, max_line_bytes=1 << 20, secrets=[])

    async def scenario() -> float:
        await channel.start([sys.executable, SCRIPT, "escape"], os.getcwd(), dict(os.environ))
        await channel.send(b'{"turn": 1, "messages": [{"role": "user", "content": "one"}]}\n', 10, "turn 1")
        assert b"you said: one" in await channel.receive(10, "turn 1")
        with pytest.raises(AgentError, match="exited with code 0 before answering turn 2"):
            await channel.receive(10, "turn 2")  # the leader exited: crashed() waited for stderr
        loop = asyncio.get_running_loop()
        started = loop.time()
        await channel.close()
        return loop.time() - started

    try:
        closing = asyncio.run(scenario())
    finally:
        os.kill(child_pid(channel), 9)  # out of evalrun's reach by design (setsid): the test cleans up
    assert closing < 1.0, f"close() waited {closing:.2f} s again for the stderr crashed() had waited 1 s for"


def test_a_helper_holding_the_pipes_leaves_no_traceback_through_the_cli(tmp_path, short_graces):
    from tests.helpers.cli_helpers import run_cli, saved_conversations, write

    write(tmp_path / "evalrun.yaml", f"""
        embeddings: {{enabled: false}}
        agents:
          forks: {{type: command, command: ["{sys.executable}", "{SCRIPT}", "orphan"], timeout_s: 20}}
          escapes: {{type: command, command: ["{sys.executable}", "{SCRIPT}", "escape"], timeout_s: 20}}
        """)
    write(tmp_path / "suites" / "s.yaml", """
        cases:
          - {id: forks, agent: forks, starting_sentence: one, user_prompts: [two], goal_details: [{type: text, name: t, keywords: [one]}]}
          - {id: answers-once, agent: forks, starting_sentence: one, goal_details: [{type: text, name: t, keywords: [one]}]}
          - {id: escapes, agent: escapes, starting_sentence: one, goal_details: [{type: text, name: t, keywords: [one]}]}
        """)
    started = time.monotonic()
    result = run_cli("suites", "--output-dir", "out", "-v", cwd=tmp_path, timeout=120)
    import json

    def children(case_id: str) -> list[int]:
        saved = saved_conversations(tmp_path / "out")[case_id]
        return [int(line.split()[-1]) for line in saved.get("stderr", []) if line.startswith("child pid")]

    for pid in children("escapes"):
        os.kill(pid, 9)
    assert time.monotonic() - started < 30
    assert result.returncode == 3, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "Event loop is closed" not in result.stderr, result.stderr
    cases = {c["id"]: c for c in json.loads((tmp_path / "out" / "report.json").read_text())["cases"]}
    assert (cases["forks"]["status"], cases["answers-once"]["status"], cases["escapes"]["status"]) == (
        "error", "passed", "passed")
    leftovers = children("answers-once") + children("forks")
    alive = [pid for pid in leftovers if _alive(pid)]
    for pid in alive:
        os.kill(pid, 9)  # a failing test leaves nothing behind
    assert len(leftovers) == 2 and not alive


# ------------------------------------------------------------------ the environment

def test_the_process_gets_a_minimal_environment_and_what_env_names(monkeypatch):
    monkeypatch.setenv("JUDGE_API_KEY", "sk-judge-123")
    monkeypatch.setenv("LC_TIME", "C")
    monkeypatch.setenv("PASSED_ON", "yes")
    for decoy in ("LANGUAGE_MODEL_KEY", "LCTOKEN", "LD_SECRET", "PATH_TOKEN", "HOMEBREW_GITHUB_API_TOKEN", "TZ_KEY"):
        monkeypatch.setenv(decoy, "secret")  # near the names that pass, but not them
    conversation = talk(make_case(starting_sentence="hi"),
                        command_agent("envnames", env={"AGENT_MODE": "test", "FROM_EVALRUN": "${PASSED_ON}"}))
    names = set(conversation.messages[-1]["content"].split())
    expected = {n for n in os.environ if n in {"PATH", "HOME", "TMPDIR", "TZ", "LANG", "LANGUAGE"} or
                n.startswith("LC_")} | {"AGENT_MODE", "FROM_EVALRUN"}
    assert names - {"LC_CTYPE"} == expected - {"LC_CTYPE"}  # Python may set LC_CTYPE itself (PEP 538)
    assert "LC_TIME" in names and "PATH" in names


def test_inherit_env_passes_the_whole_environment(monkeypatch):
    monkeypatch.setenv("JUDGE_API_KEY", "sk-judge-123")
    conversation = talk(make_case(starting_sentence="hi"), command_agent("envnames", inherit_env=True))
    assert "JUDGE_API_KEY" in conversation.messages[-1]["content"].split()


def test_a_judge_key_never_reaches_a_command_agent_through_the_cli(tmp_path):
    from tests.helpers.cli_helpers import write

    write(tmp_path / "dump_env.py", """
        import json, os, sys
        for line in sys.stdin:
            with open("seen_env.json", "w") as out:
                json.dump(dict(os.environ), out)
            print(json.dumps({"messages": [{"role": "assistant", "content": "done"}]}), flush=True)
        """)
    write(tmp_path / "evalrun.yaml", f"""
        embeddings: {{enabled: false}}
        judge: {{model: openai/fake, api_key_env: EVAL_JUDGE_KEY, api_base: "http://127.0.0.1:9"}}
        agents:
          bot: {{type: command, command: ["{sys.executable}", dump_env.py]}}
        """)
    write(tmp_path / "suites" / "s.yaml", """
        cases:
          - {id: a, agent: bot, starting_sentence: hi, goal_details: [{type: text, name: t, keywords: [done]}]}
        """)
    from tests.helpers.cli_helpers import run_cli

    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path, env={"EVAL_JUDGE_KEY": "sk-very-secret-judge-key"})
    assert result.returncode == 0, result.stdout + result.stderr
    seen = (tmp_path / "seen_env.json").read_text()
    assert "sk-very-secret-judge-key" not in seen and "EVAL_JUDGE_KEY" not in seen
    assert '"PATH"' in seen


def test_an_agent_that_exits_near_its_deadline_is_reported_as_exited_not_slow(tmp_path):
    """The agent answers, leaves a helper holding its output, and exits just before the next turn's
    deadline, inside evalrun's short grace for a line already written: it still says the process exited."""
    agent = make_agent({"type": "command", "timeout_s": 1.5, "command": [
        "sh", "-c", "read line; echo '{\"messages\": [{\"role\": \"assistant\", \"content\": \"hi\"}]}'; "
                    "sleep 30 & sleep 1.35; exit 4"]})
    conversation = talk(make_case(**THREE_TURNS), agent)
    assert [m["content"] for m in conversation.messages] == ["one", "hi", "two"]
    assert conversation.error == "the agent process exited with code 4 before answering turn 2 (nothing on stderr)"
