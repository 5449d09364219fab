"""A python agent that raises what is not an Exception (SystemExit, KeyboardInterrupt, GeneratorExit, its
own BaseException, a CancelledError nobody asked for) or that kills its own interpreter: that case's
error, never the run's end. In-process for what Python can catch; `isolate: process` for the rest."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from runner.run.conversation import Conversation, converse
from runner.run.simulate import ScriptedUser
from tests.fakes.cases import make_agent, make_case, talk
from tests.helpers.cli_helpers import cli_env, run_cli, write

FAULTY = """
    import asyncio, sys

    class Odd(BaseException):
        pass

    def fail(kind):
        if kind == "exit0":
            sys.exit(0)
        if kind == "exitmsg":
            sys.exit("giving up")
        if kind == "kbd":
            raise KeyboardInterrupt
        if kind == "genexit":
            raise GeneratorExit("closing")
        if kind == "odd":
            raise Odd("strange")
        if kind == "stopiter":
            raise StopIteration
        if kind == "cancel":
            raise asyncio.CancelledError()

    def respond(messages, context):
        fail(context.case_id.split("-")[0])
        return "all good"

    async def respond_async(messages, context):
        await asyncio.sleep(0)
        fail(context.case_id.split("-")[0])
        return "all good"
    """

# (case id prefix, what the error says after "<entrypoint> raised ")
RAISED = [("exit0", "SystemExit: 0"), ("exitmsg", "SystemExit: giving up"), ("kbd", "KeyboardInterrupt"),
          ("genexit", "GeneratorExit: closing"), ("odd", "faulty.Odd: strange"), ("stopiter", "StopIteration"),
          ("cancel", "asyncio.exceptions.CancelledError")]


def fail_line(kind: str) -> int:
    """The line of faulty.py where `kind` is raised (the error points there)."""
    lines = [line.strip() for line in __import__("textwrap").dedent(FAULTY).lstrip("\n").splitlines()]
    start = lines.index(f'if kind == "{kind}":')
    return start + 2


@pytest.mark.parametrize("entry", ["respond", "respond_async"])
@pytest.mark.parametrize("kind, raised", RAISED, ids=[kind for kind, _ in RAISED])
def test_any_base_exception_is_the_case_error_sync_or_async(tmp_path, monkeypatch, entry, kind, raised):
    monkeypatch.syspath_prepend(str(tmp_path))
    write(tmp_path / "faulty.py", FAULTY)
    case = make_case(id=f"{kind}-1", starting_sentence="one", user_prompts=["two"])
    conversation = talk(case, make_agent({"type": "python", "entrypoint": f"faulty:{entry}"}, tmp_path), timeout_s=5)
    assert conversation.termination_reason == "agent_error"
    assert conversation.error == f"faulty:{entry} raised {raised} (at faulty.py:{fail_line(kind)} in fail)"
    assert conversation.messages == [{"role": "user", "content": "one"}]


def test_a_real_cancellation_still_cancels_an_async_agent(tmp_path):
    write(tmp_path / "waits.py", """
        import asyncio

        async def respond(messages, context):
            await asyncio.sleep(60)
        """)
    case = make_case(starting_sentence="hi")
    agent = make_agent({"type": "python", "entrypoint": "waits:respond"}, tmp_path)
    kept = Conversation()

    async def cancel_soon():
        task = asyncio.create_task(converse(case, agent, ScriptedUser(case), conversation=kept))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_soon())
    assert kept.messages == [{"role": "user", "content": "hi"}] and kept.error is None


def test_a_run_whose_agents_exit_and_interrupt_goes_on_and_exits_3(tmp_path):
    """Through the CLI: every case is reported, the healthy ones pass, the run exits 3 with report.json."""
    write(tmp_path / "evalrun.yaml", """
        embeddings: {enabled: false}
        timeout_s: 20
        agents:
          sync: {type: python, entrypoint: "faulty:respond"}
          async: {type: python, entrypoint: "faulty:respond_async"}
        """)
    write(tmp_path / "faulty.py", FAULTY)
    ids = [f"{kind}-{mode}" for kind, _ in RAISED for mode in ("sync", "async")] + ["ok-sync", "ok-async"]
    write(tmp_path / "suites" / "s.yaml", "cases:\n" + "".join(
        f"  - {{id: {i}, agent: {i.split('-')[1]}, starting_sentence: hi,"
        f" goal_details: [{{type: text, name: t, keywords: [good]}}]}}\n" for i in ids))
    started = time.monotonic()
    result = run_cli("suites", "--output-dir", "out", "-j", "2", cwd=tmp_path, timeout=120)
    assert time.monotonic() - started < 60  # no case waited for its timeout
    assert result.returncode == 3, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    cases = {c["id"]: c for c in report["cases"]}
    assert sorted(cases) == sorted(ids)
    assert (cases["ok-sync"]["status"], cases["ok-async"]["status"]) == ("passed", "passed")
    for kind, raised in RAISED:
        for mode, entry in (("sync", "respond"), ("async", "respond_async")):
            case = cases[f"{kind}-{mode}"]
            assert (case["status"], case["termination_reason"]) == ("error", "agent_error"), case["id"]
            assert case["error"] == f"faulty:{entry} raised {raised} (at faulty.py:{fail_line(kind)} in fail)"
    assert report["summary"]["exit_code"] == 3 and report["summary"]["error"] == len(RAISED) * 2


# ------------------------------------------------------------------ isolate: process

WORKER_AGENT = """
    import asyncio, os, signal, subprocess, sys, time

    IMPORTS = [os.getpid()]
    print("importing the agent")          # prints must not reach the protocol
    os.write(1, b"raw bytes on fd 1\\n")   # nor writes below Python
    LOOP = []

    def respond(messages, context):
        kind = context.case_id.split("-")[0]
        print(f"turn {context.turn} of {context.case_id}", flush=True)
        subprocess.run([sys.executable, "-c", "print('a child writing to stdout')"])
        if kind == "osexit" and context.turn == 2:
            os._exit(7)
        if kind == "killed":
            os.kill(os.getpid(), signal.SIGKILL)
        if kind == "exit":
            sys.exit(0)
        if kind == "hang":
            with open("hanging.pid", "w") as out:
                out.write(str(os.getpid()))
            time.sleep(3600)
        if kind == "unsendable":
            return {"messages": [{"role": "assistant", "content": object()}]}
        return {"messages": [{"role": "assistant", "content": f"pid {os.getpid()} imports {len(IMPORTS)} "
                              f"context {context.case_id}/{context.turn}/{context.runtime_context}"}]}

    async def respond_async(messages, context):
        LOOP.append(asyncio.get_running_loop())
        return f"same loop: {all(loop is LOOP[0] for loop in LOOP)}; turn {context.turn}"
    """


def isolated(tmp_path, entry="respond"):
    write(tmp_path / "worker_agent.py", WORKER_AGENT)
    return make_agent({"type": "python", "entrypoint": f"worker_agent:{entry}", "isolate": "process"}, tmp_path)


def test_an_isolated_agent_is_imported_once_per_worker_and_gets_the_context_as_json(tmp_path):
    case = make_case(id="fine-1", starting_sentence="one", user_prompts=["two", "three"], runtime_context={"t": [1]})
    conversation = talk(case, isolated(tmp_path))
    answers = [m["content"] for m in conversation.messages if m["role"] == "assistant"]
    pid = answers[0].split()[1]
    assert pid != str(os.getpid())
    assert answers == [f"pid {pid} imports 1 context fine-1/{n}/{{'t': [1]}}" for n in (1, 2, 3)]
    assert (conversation.termination_reason, conversation.error) == ("script_end", None)
    assert conversation.stderr_tail[:3] == ["importing the agent", "raw bytes on fd 1", "turn 1 of fine-1"]
    assert "a child writing to stdout" in conversation.stderr_tail


def test_an_isolated_async_agent_keeps_one_event_loop_across_turns(tmp_path):
    conversation = talk(make_case(starting_sentence="one", user_prompts=["two"]), isolated(tmp_path, "respond_async"))
    assert [m["content"] for m in conversation.messages if m["role"] == "assistant"] == [
        "same loop: True; turn 1", "same loop: True; turn 2"]


@pytest.mark.parametrize("kind, error", [
    ("osexit", "the worker process of worker_agent:respond exited with code 7 before answering turn 2"),
    ("killed", "the worker process of worker_agent:respond was killed by signal 9 (SIGKILL) before answering turn 1"),
    ("exit", "worker_agent:respond raised SystemExit: 0 (at worker_agent.py:17 in respond)"),
    ("unsendable", "worker_agent:respond returned a value that cannot be sent from its worker process as JSON: "
                   "TypeError: Object of type object is not JSON serializable"),
], ids=["osexit", "killed", "exit", "unsendable"])
def test_a_dying_or_failing_worker_is_the_case_error(tmp_path, kind, error):
    conversation = talk(make_case(id=f"{kind}-1", starting_sentence="one", user_prompts=["two"]), isolated(tmp_path))
    assert conversation.termination_reason == "agent_error"
    assert conversation.error.split("; last stderr lines:")[0] == error
    turns = 2 if kind == "osexit" else 1
    assert [m["role"] for m in conversation.messages] == ["user", "assistant"] * (turns - 1) + ["user"]


def test_a_hanging_worker_is_killed_at_the_case_timeout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    agent = isolated(tmp_path)
    started = time.monotonic()
    conversation = talk(make_case(id="hang-1", starting_sentence="one"), agent, timeout_s=1.5)
    assert time.monotonic() - started < 6
    assert (conversation.termination_reason, conversation.error) == (
        "timeout", "the conversation did not finish within the case timeout of 1.5 s")
    assert_dead(int((tmp_path / "hanging.pid").read_text()))


def test_an_entrypoint_the_worker_cannot_load_is_named(tmp_path):
    write(tmp_path / "broken_import.py", "raise RuntimeError('no config')\n")
    agent = make_agent({"type": "python", "entrypoint": "broken_import:respond", "isolate": "process"}, tmp_path)
    conversation = talk(make_case(starting_sentence="hi"), agent)
    assert conversation.error == ("the agent could not start: entrypoint 'broken_import:respond': importing module "
                                  "'broken_import' failed: RuntimeError: no config (at broken_import.py:1 in <module>)")


def test_an_agent_that_kills_its_worker_while_importing(tmp_path):
    write(tmp_path / "dies_on_import.py", "import os\nprint('bye')\nos._exit(5)\n")
    agent = make_agent({"type": "python", "entrypoint": "dies_on_import:respond", "isolate": "process"}, tmp_path)
    conversation = talk(make_case(starting_sentence="hi"), agent)
    assert conversation.error == ("the agent could not start: the worker process of dies_on_import:respond exited "
                                  "with code 5 while loading the agent; last stderr lines:\n  bye")


def assert_dead(pid: int) -> None:
    for _ in range(100):
        try:
            os.kill(pid, 0)
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().split()[2] == "Z":
                    return
        except (ProcessLookupError, FileNotFoundError):
            return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} is still running")


@pytest.mark.process  # a worker process is killed and the run forks its workers
def test_an_isolated_run_survives_os_exit_and_signals_through_the_cli(tmp_path):
    write(tmp_path / "evalrun.yaml", """
        embeddings: {enabled: false}
        agents:
          bot: {type: python, entrypoint: "worker_agent:respond", isolate: process}
        """)
    write(tmp_path / "worker_agent.py", WORKER_AGENT)
    ids = ["fine-a", "osexit-b", "killed-c", "hang-d", "fine-e"]
    write(tmp_path / "suites" / "s.yaml", "agent: bot\ncases:\n" + "".join(
        f"  - {{id: {i}, starting_sentence: one, user_prompts: [two],{' timeout_s: 2,' if 'hang' in i else ''}"
        f" goal_details: [{{type: text, name: t, keywords: [imports 1]}}]}}\n" for i in ids))
    process = subprocess.Popen([sys.executable, "-m", "runner", "suites", "--output-dir", "out", "-j", "3"],
                               cwd=tmp_path, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 3, out + err
    assert "Traceback" not in err, err
    cases = {c["id"]: c for c in json.loads((tmp_path / "out" / "report.json").read_text())["cases"]}
    assert sorted(cases) == sorted(ids)
    assert cases["fine-a"]["status"] == cases["fine-e"]["status"] == "passed"
    assert cases["osexit-b"]["error"].startswith("the worker process of worker_agent:respond exited with code 7 "
                                                 "before answering turn 2")
    assert cases["killed-c"]["error"].startswith("the worker process of worker_agent:respond was killed by signal 9 "
                                                 "(SIGKILL) before answering turn 1")
    assert cases["hang-d"]["termination_reason"] == "timeout"
    assert_dead(int((tmp_path / "hanging.pid").read_text()))
    assert [m["content"] for m in cases["osexit-b"]["transcript"] if m["role"] == "user"] == ["one", "two"]


def test_the_worker_protocol_is_not_the_agents_stdout(tmp_path):
    """An agent that prints a line shaped like the protocol's answer cannot forge its reply."""
    write(tmp_path / "forger.py", """
        import json, sys
        def respond(messages, context):
            print(json.dumps({"reply": "forged"}), flush=True)
            sys.stdout.buffer.write(b'{"reply": "forged too"}\\n'); sys.stdout.flush()
            return "genuine"
        """)
    agent = make_agent({"type": "python", "entrypoint": "forger:respond", "isolate": "process"}, tmp_path)
    conversation = talk(make_case(starting_sentence="hi"), agent)
    assert conversation.messages[-1] == {"role": "assistant", "content": "genuine"}
    assert conversation.stderr_tail == ['{"reply": "forged"}', '{"reply": "forged too"}']


def test_whatever_escapes_a_case_below_the_agent_is_that_cases_error(tmp_path):
    """The runner's last line of defence: a BaseException from anywhere in a case (here the callback that
    saves its conversation) is that case's error, and the next case runs."""
    from runner.config.load import load_config
    from runner.run.case_index import index_cases
    from runner.run.execute import CaseRunner, RunOptions

    write(tmp_path / "evalrun.yaml", """
        embeddings: {enabled: false}
        agents:
          bot: {type: python, entrypoint: "faulty:respond"}
        """)
    write(tmp_path / "faulty.py", FAULTY)
    write(tmp_path / "suites" / "s.yaml", """
        agent: bot
        cases:
          - {id: ok-1, starting_sentence: hi, goal_details: [{type: text, name: t, keywords: [good]}]}
          - {id: ok-2, starting_sentence: hi, goal_details: [{type: text, name: t, keywords: [good]}]}
        """)
    loaded, problems = load_config(tmp_path / "evalrun.yaml")
    assert problems == []
    index = index_cases([tmp_path / "suites"], None, roots=[tmp_path / "suites"])
    saved: list[str] = []

    def save(case_id: str, data: dict):
        saved.append(case_id)
        if case_id == "ok-1":
            raise KeyboardInterrupt  # not the user's Ctrl-C: evalrun handles that as a signal
        return None

    runner = CaseRunner(loaded, RunOptions(), roots=[tmp_path / "suites"], save_conversation=save)

    async def both():
        return [await runner.run(ref) for ref in index.refs]

    first, second = asyncio.run(both())
    assert first[0].status == "error"
    assert first[0].error.startswith("internal error while running the case: KeyboardInterrupt")
    assert second[0].status == "passed" and saved == ["ok-1", "ok-2"]


def test_a_surrogate_pair_written_as_two_code_points_becomes_the_character(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    write(tmp_path / "pairs.py", """
        def respond(messages, context):
            return "smile \\ud83d\\ude00, lone \\udc00 and \\ud83d"
        """)
    conversation = talk(make_case(starting_sentence="hi"), make_agent({"type": "python", "entrypoint": "pairs:respond"},
                                                                      tmp_path))
    assert conversation.messages[-1]["content"] == "smile \U0001f600, lone \\udc00 and \\ud83d"


# ------------------------------------------------------------------ async agents: a loop of their own

ROGUE_ASYNC = """
    import asyncio, itertools, sys, time

    class Odd(BaseException):
        pass

    async def boom():
        raise KeyboardInterrupt

    async def respond(messages, context):
        kind = context.case_id.split("-")[0]
        if kind == "block":  # a blocking call inside async def: evalrun's loop must not wait for it
            time.sleep(30)
        if kind == "stoploop":
            asyncio.get_running_loop().stop()
            await asyncio.sleep(0.5)
        if kind == "cancelall":
            for task in asyncio.all_tasks():
                task.cancel()
            await asyncio.sleep(0.5)
        if kind == "exit":
            sys.exit(3)
        if kind == "odd":
            raise Odd("strange")
        if kind == "background":  # a task of its own that raises what asyncio does not catch
            asyncio.get_running_loop().create_task(boom())
            await asyncio.sleep(0.5)
        if kind == "forever":  # a generator that never ends, consumed without an await
            for _ in itertools.count():
                pass
        if kind == "keeps":  # what it keeps between turns stays usable: one loop per conversation
            global LOOP
            if context.turn == 1:
                LOOP = asyncio.get_running_loop()
            return f"same loop {asyncio.get_running_loop() is LOOP}"
        await asyncio.sleep(0.01)
        return "all good"
    """

# case id prefix -> (status, termination reason, the error)
ROGUE_EXPECTED = {
    "ok": ("passed", "script_end", None),
    "keeps": ("passed", "script_end", None),
    "block": ("error", "timeout", "the conversation did not finish within the case timeout of 2 s"),
    "forever": ("error", "timeout", "the conversation did not finish within the case timeout of 2 s"),
    "stoploop": ("error", "agent_error",
                 "rogue:respond: the agent stopped its event loop (loop.stop()) before answering"),
    "cancelall": ("error", "agent_error", "rogue:respond raised asyncio.exceptions.CancelledError"),
    "exit": ("error", "agent_error", "rogue:respond raised SystemExit: 3 (at rogue.py:"),
    "odd": ("error", "agent_error", "rogue:respond raised rogue.Odd: strange (at rogue.py:"),
    "background": ("error", "agent_error", "rogue:respond: its event loop ended: KeyboardInterrupt (at rogue.py:"),
}


def rogue_project(root, kinds) -> list[str]:
    write(root / "evalrun.yaml", """
        embeddings: {enabled: false}
        agents:
          rogue: {type: python, entrypoint: "rogue:respond"}
        """)
    write(root / "rogue.py", ROGUE_ASYNC)
    ids = [f"{kind}-{n}" for kind in kinds for n in range(2)]
    write(root / "suites" / "s.yaml", "agent: rogue\ncases:\n" + "".join(
        f"  - {{id: {i}, starting_sentence: one, user_prompts: [two], timeout_s: 2,"
        f" goal_details: [{{type: text, name: t, keywords: [{'same loop True' if i.startswith('keeps') else 'good'}]}}]}}\n"
        for i in ids))
    return ids


@pytest.mark.process  # a real signal
def test_an_async_agent_that_blocks_stops_its_loop_or_cancels_everything_is_only_that_cases_error(tmp_path):
    """On evalrun's own loop, one blocking call stalled every case (timeout_s not enforced: PASS after 30 s), and an
    agent stopping the loop or cancelling every task ended the run with a traceback, exit 1 and no report."""
    ids = rogue_project(tmp_path, ROGUE_EXPECTED)
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-m", "runner", "suites", "--output-dir", "out", "-j", "8"],
                               cwd=tmp_path, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = process.communicate(timeout=120)
    took = time.monotonic() - started
    assert process.returncode == 3, out + err
    assert "Traceback" not in err and "Task was destroyed" not in err, err
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    cases = {c["id"]: c for c in report["cases"]}
    assert sorted(cases) == sorted(ids)
    for case_id, case in cases.items():
        status, reason, error = ROGUE_EXPECTED[case_id.split("-")[0]]
        assert (case["status"], case["termination_reason"]) == (status, reason), (case_id, case.get("error"))
        assert (case.get("error") or "").startswith(error or ""), (case_id, case.get("error"))
    assert took < 28, took  # the blocked agents were abandoned at their timeout, never waited for (30 s)


@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT"])
@pytest.mark.process  # a real signal
def test_a_signal_ends_a_run_whose_async_agent_blocks_at_once(tmp_path, name):
    """The stop reaches evalrun's loop while the agent's own loop is blocked: exit 2 with the report, not after
    the agent's 30 s."""
    rogue_project(tmp_path, ["ok", "block"])
    process = subprocess.Popen([sys.executable, "-m", "runner", "suites", "--output-dir", "out", "-j", "4"],
                               cwd=tmp_path, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started = None
    try:
        deadline = time.monotonic() + 60
        results = tmp_path / "out" / "results.jsonl"
        while time.monotonic() < deadline:  # the ok cases finished: the blocked ones are blocking now
            if results.exists() and results.read_text().count("\n") >= 2:
                break
            time.sleep(0.05)
        started = time.monotonic()
        process.send_signal(getattr(signal, name))
        out, err = process.communicate(timeout=25)
    finally:
        process.kill()
    took = time.monotonic() - started
    assert process.returncode == 2, out + err
    assert "Traceback" not in err, err
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert sorted(c["id"] for c in report["cases"]) == ["ok-0", "ok-1"]
    assert sorted(report["summary"]["not_run"]) == ["block-0", "block-1"]
    assert took < 15, took
