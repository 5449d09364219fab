"""Every way a run can end leaves a valid report of what finished: real signals, pipes, devices, processes."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from tests.helpers.chaos_procs import children, wait_for
from tests.helpers.cli_helpers import REPO, cli_env, run_cli, tool_call_messages, write, write_json

NO_EMBEDDINGS = "embeddings: {enabled: false}\n"
REPORT_SCHEMA = json.loads((REPO / "schemas" / "report.schema.json").read_text())


def many_cases(root, count, *, failing=(), heavy=0):
    """`count` one-goal cases; the ones in `failing` call the tool with the wrong argument; with `heavy`, each
    conversation opens with a user message of that many characters."""
    write(root / "evalrun.yaml", NO_EMBEDDINGS)
    opening = [{"role": "user", "content": "x" * heavy}] if heavy else []
    for n in range(count):
        write_json(root / "suites" / f"c{n:04d}.json", {"goal_details": [
            {"type": "tool_call", "name": "g", "tool_name": "t", "args": {"n": n}}], "transcript": f"t/c{n:04d}.json"})
        write_json(root / "suites" / "t" / f"c{n:04d}.json",
                   opening + tool_call_messages("t", {"n": -1 if n in failing else n}))


def start(root, *args, **popen):
    return subprocess.Popen([sys.executable, "-m", "runner", "suites", *args], cwd=root, env=cli_env(),
                            stdout=popen.pop("stdout", subprocess.PIPE), stderr=popen.pop("stderr", subprocess.PIPE),
                            text=True, **popen)


def valid_report(path):
    report = json.loads(path.read_text())
    jsonschema.validate(report, REPORT_SCHEMA)
    return report


def results_lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.process  # the run is killed
def test_results_reach_the_disk_as_cases_finish_even_when_the_run_is_killed(tmp_path):
    many_cases(tmp_path, 300)
    process = start(tmp_path, "--output-dir", "out", "-j", "2")
    for _ in range(5):
        assert process.stdout.readline().startswith("PASS")
    process.kill()  # SIGKILL: no handler runs, nothing is flushed at exit
    process.communicate(timeout=60)
    lines = results_lines(tmp_path / "out" / "results.jsonl")
    assert len(lines) >= 5  # every case printed was already on disk
    assert all(line["status"] == "passed" for line in lines)
    assert not (tmp_path / "out" / "report.json").exists()  # never half a report


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])  # a hang-up (terminal or SSH session closed) is a stop too
@pytest.mark.process  # a real signal
def test_sigterm_writes_the_report_of_what_finished_lists_the_rest_and_exits_2(tmp_path, name):
    many_cases(tmp_path, 400)
    process = start(tmp_path, "--output-dir", "out")
    assert process.stdout.readline().startswith("PASS")
    process.send_signal(getattr(signal, name))
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 2, stderr
    report = valid_report(tmp_path / "out" / "report.json")
    summary = report["summary"]
    finished = [c["id"] for c in report["cases"]]
    assert summary["interrupted"] and summary["stop_reason"] == name
    assert sorted(finished + summary["not_run"]) == sorted(f"c{n:04d}" for n in range(400))
    assert finished == sorted(finished)  # the report keeps collection order whatever order cases finished in
    assert f"interrupted ({name}): {len(finished)} of 400 cases finished: exit 2" in stdout.splitlines()
    assert "Traceback" not in stderr


@pytest.mark.process  # real signals
def test_signals_while_the_report_is_written_do_not_cut_it_short(tmp_path):
    many_cases(tmp_path, 600)
    process = start(tmp_path, "--output-dir", "out")
    assert process.stdout.readline().startswith("PASS")
    report = tmp_path / "out" / "report.json"
    deadline = time.monotonic() + 60
    # Keep pressing Ctrl-C until report.json exists: it appears whole, so the presses cover its writing.
    while not report.exists() and process.poll() is None and time.monotonic() < deadline:
        process.send_signal(signal.SIGINT)
        time.sleep(0.002)
    process.communicate(timeout=60)
    assert process.returncode == 2
    report = valid_report(tmp_path / "out" / "report.json")
    assert len(report["cases"]) + len(report["summary"]["not_run"]) == 600


@pytest.mark.process  # a shell pipe closes the process's stdout
def test_a_closed_stdout_still_writes_the_report_and_keeps_the_exit_code(tmp_path):
    many_cases(tmp_path, 60, failing={7})
    shell = f"{sys.executable} -m runner suites --output-dir out | head -1"
    result = subprocess.run(["bash", "-o", "pipefail", "-c", shell], cwd=tmp_path, env=cli_env(),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1  # a case failed: never 0, whatever happened to the pipe
    assert len(result.stdout.splitlines()) == 1
    report = valid_report(tmp_path / "out" / "report.json")
    assert len(report["cases"]) == 60 and report["summary"]["failed"] == 1
    assert "console output stopped (the output pipe was closed)" in result.stderr
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr


@pytest.mark.process  # the process's stdout is /dev/full
def test_a_full_disk_for_the_console_does_not_stop_the_run(tmp_path):
    many_cases(tmp_path, 20, failing={3})
    with open("/dev/full", "w") as full:  # every write fails with ENOSPC
        process = start(tmp_path, "--output-dir", "out", stdout=full)
        _, stderr = process.communicate(timeout=120)
    assert process.returncode == 1
    assert len(valid_report(tmp_path / "out" / "report.json")["cases"]) == 20
    assert "console output stopped (No space left on device)" in stderr
    assert "Traceback" not in stderr


@pytest.mark.process  # two runs at once
def test_two_runs_sharing_an_output_dir_keep_both_results(tmp_path):
    many_cases(tmp_path, 200)
    first = start(tmp_path, "--output-dir", "out", "-j", "1")
    assert first.stdout.readline().startswith("PASS")  # the first run holds the folder now
    first.send_signal(signal.SIGSTOP)  # paused mid-run, still holding it, while the second one runs whole
    try:
        second = start(tmp_path, "--output-dir", "out")
        second_out, _ = second.communicate(timeout=120)
    finally:
        first.send_signal(signal.SIGCONT)
    first.communicate(timeout=120)
    assert (first.returncode, second.returncode) == (0, 0)
    moved = [line for line in second_out.splitlines() if line.startswith("another run is writing to out")]
    assert moved, second_out
    own_folders = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    assert len(own_folders) == 1
    for report_path in (tmp_path / "out" / "report.json", own_folders[0] / "report.json"):
        assert len(valid_report(report_path)["cases"]) == 200


def test_arguments_deeper_than_the_serialiser_goes_are_kept_as_written_and_marked(tmp_path):
    # Transcripts are refused past 100 levels when read; a live agent's arguments are kept as their text
    # past that depth, and reported as arguments that cannot be read (never dropped from the report).
    many_cases(tmp_path, 2)
    with (tmp_path / "evalrun.yaml").open("a") as config:
        config.write("agents:\n  deep: {type: python, entrypoint: 'deep_agent:respond'}\n")
    write(tmp_path / "deep_agent.py", """
        import json

        def respond(messages, context):
            deep = value = {}
            for _ in range(400):  # deeper than the serialiser goes
                value["a"] = {}
                value = value["a"]
            arguments = json.dumps({"n": 1, "options": deep})
            call = {"id": "c1", "type": "function", "function": {"name": "t", "arguments": arguments}}
            return [{"role": "assistant", "content": None, "tool_calls": [call]},
                    {"role": "tool", "tool_call_id": "c1", "content": "ok"},
                    {"role": "assistant", "content": "done"}]
        """)
    write(tmp_path / "suites" / "live.yaml", """
        id: deep
        agent: deep
        starting_sentence: go
        goal_details: [{type: tool_call, name: g, tool_name: t, args: {n: 1}}]
        """)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    report = valid_report(tmp_path / "out" / "report.json")
    case = next(c for c in report["cases"] if c["id"] == "deep")
    assert case["status"] == "failed" and len(case["transcript"]) == 4 and not case["notes"]
    assert case["calls"][0]["role"] == "invalid_arguments"
    assert case["calls"][0]["arguments"] == case["transcript"][1]["tool_calls"][0]["function"]["arguments"]
    assert case["calls"][0]["note"].endswith("arguments are nested more than 100 levels deep; evalrun keeps them as "
                                             "written but does not read them")
    assert [c["status"] for c in report["cases"]] == ["passed", "passed", "failed"]


def test_a_result_that_cannot_be_serialised_is_saved_without_its_conversation(tmp_path):
    from runner.results.folder import RunFolder
    from runner.results.models import CallRecord, CaseResult

    folder, _ = RunFolder.open(tmp_path / "out", "run-1")
    folder.start_results()
    odd = CaseResult(id="odd", status="passed", source="s.yaml:1:1",
                     transcript=[{"role": "assistant", "content": "x", "meta": object()}],
                     calls=[CallRecord(index=0, message=1, tool_name="t", arguments={"n": 1}, role="goal")])
    saved = folder.add(0, 0, odd).whole()  # the result as saved
    folder.close_results()
    assert saved.status == "passed" and saved.transcript == [] and saved.calls[0].arguments is None
    assert saved.notes[0].startswith("the conversation and call arguments were left out of the report: they could "
                                     "not be saved (PydanticSerializationError: ")
    assert results_lines(folder.results_path)[0]["notes"] == saved.notes


def test_control_characters_from_the_agent_are_shown_not_obeyed(tmp_path):
    write(tmp_path / "evalrun.yaml", NO_EMBEDDINGS)
    write(tmp_path / "suites" / "refuse.yaml", """
        id: refuse
        forbid_extra_calls: true
        goal_details: []
        transcript: t.json
        """)
    sneaky = "cancel\x1b[2K\r\x1b[32mPASS  refuse\u202e"
    write_json(tmp_path / "suites" / "t.json", tool_call_messages(sneaky, {"x": "\x1b]0;title\x07"}))
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 1
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout and "\r" not in result.stdout
    assert any(line.startswith("  - forbidden call: cancel\\x1b[2K\\r\\x1b[32mPASS  refuse\\u202e(")
               for line in result.stdout.splitlines()), result.stdout


def test_secrets_never_reach_the_report_the_results_or_the_console(tmp_path):
    from tests.fakes.openai_server import FakeOpenAI, Reply

    canary = "sk-canary-5d41402abc4b2a76b9719d911017c592"
    write(tmp_path / "suites" / "fuzzy.yaml", """
        goal_details:
          - type: tool_call
            name: search
            tool_name: search_flights
            args: {destination: the capital of France}
            arg_matching: {destination: fuzzy}
        transcript: t.json
        """)
    # the agent itself repeats the key, and the provider echoes it back in its errors
    write_json(tmp_path / "suites" / "t.json", [{"role": "user", "content": f"my key is {canary}"},
                                                 *tool_call_messages("search_flights", {"destination": canary})])
    with FakeOpenAI() as fake:
        echo = Reply(status=500, body={"error": {"message": f"Incorrect API key provided: {canary}"}})
        fake.script(echo, echo, echo)
        write(tmp_path / "evalrun.yaml", f"""
            embeddings: {{enabled: false}}
            judge:
              model: openai/fake-judge
              api_base: {fake.base_url}
              api_key_env: EVALRUN_CANARY_KEY
              max_retries: 0
              extra: {{api_key: literal-secret-in-config, headers: {{Authorization: Bearer literal-bearer}}}}
            """)
        result = run_cli("suites", "--output-dir", "out", cwd=tmp_path, env={"EVALRUN_CANARY_KEY": canary})
    assert "Traceback" not in result.stderr
    outputs = {"stdout": result.stdout, "stderr": result.stderr,
               "report.json": (tmp_path / "out" / "report.json").read_text(),
               "results.jsonl": (tmp_path / "out" / "results.jsonl").read_text()}
    for name, text in outputs.items():
        for secret in (canary, "literal-secret-in-config", "literal-bearer"):
            assert secret not in text, f"{secret} leaked into {name}"
    config = json.loads(outputs["report.json"])["config"]["judge"]
    assert config["extra"] == {"api_key": "***", "headers": {"Authorization": "***"}}
    assert config["api_key_env"] == "EVALRUN_CANARY_KEY"  # the variable's name is not a secret
    assert "my key is ***" in outputs["report.json"]


@pytest.mark.process  # the process's own peak memory
def test_memory_does_not_keep_results(tmp_path):
    """The run keeps a tally, not the results: 10x the cases must not cost 10x the memory."""
    # VmHWM is this process's own peak; ru_maxrss would carry the parent's (pytest's) across fork and exec.
    probe = ("import re, runner.frontends.cli as c; code = c.main(['suites', '-q', '--output-dir', 'out']);"
             "peak = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1); print(peak, code)")

    def peak_kib(count):
        root = tmp_path / str(count)
        many_cases(root, count, heavy=20_000)  # each result heavy: a long conversation kept in the report
        out = subprocess.run([sys.executable, "-c", probe], cwd=root, env=cli_env(), capture_output=True, text=True,
                             timeout=300)
        peak, code = out.stdout.splitlines()[-1].split()
        assert code == "0", out.stderr
        return int(peak)

    # Both runs use the pool's largest batches (its working set: a few batches in flight per worker), so the
    # difference is what the run keeps: 1,500 more results of ~20 KB each would be ~30 MB if kept; allow the
    # index of refs and noise.
    small, large = peak_kib(1000), peak_kib(2500)
    assert large - small < 12_000, (small, large)


@pytest.mark.process  # a pseudo-terminal as the process's stdout
def test_a_terminal_gets_a_progress_line_and_a_pipe_gets_plain_lines(tmp_path):
    import pty

    many_cases(tmp_path, 30, failing={4})
    pid, fd = pty.fork()
    if pid == 0:  # the child: the CLI with a terminal as its stdout
        os.chdir(tmp_path)
        os.execve(sys.executable, [sys.executable, "-m", "runner", "suites", "--output-dir", "out", "-j", "2"],
                  cli_env(TERM="xterm"))
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 1
    screen = b"".join(chunks).decode()
    assert "\r\x1b[2K[30/30] 29 passed, 1 failed, " in screen
    assert "[1/30] " in screen and " left" in screen  # an estimate while cases remain
    piped = run_cli("suites", "--output-dir", "out2", cwd=tmp_path)
    assert "\x1b" not in piped.stdout and "[30/30]" not in piped.stdout


@pytest.fixture(scope="module")
def slow_to_collect(tmp_path_factory) -> Path:
    """6,000 suite files, written once: a run interrupted while collecting them writes nothing (asserted), so
    each signal's run finds the project as the other left it."""
    root = tmp_path_factory.mktemp("slow-to-collect")
    write(root / "evalrun.yaml", NO_EMBEDDINGS)
    for n in range(6000):
        write_json(root / "suites" / f"d{n // 500}" / f"c{n:05d}.json", {
            "goal_details": [{"type": "tool_call", "name": "g", "tool_name": "t", "args": {"n": n}}],
            "transcript": "t.json"})
    return root


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
@pytest.mark.process  # a real signal
def test_sigterm_while_the_suites_are_collected_says_so_and_exits_2(slow_to_collect, name):
    """Collecting 12,000 files takes seconds; a signal then used to end the process with 143 and no word."""
    tmp_path = slow_to_collect
    process = start(tmp_path, "--output-dir", "out")
    assert process.stderr.readline() == "config: evalrun.yaml\n"  # printed just before collection starts
    # Its first reader process means it is collecting (it reads the first 2,000 files itself, then forks readers
    # for the rest): stopped then, the signal is delivered as it goes on, among its forks. (A fixed sleep after the
    # line above bets on how long the collection takes; stopped right at the line, the collection's handlers are
    # not yet set, and the run ends as any command does on a signal: 'interrupted'.)
    wait_for(lambda: children(process.pid), 60, "a reader process", process)
    process.send_signal(signal.SIGSTOP)
    process.send_signal(getattr(signal, name))
    process.send_signal(signal.SIGCONT)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 2, stdout + stderr
    assert stderr.splitlines() == [f"interrupted ({name}) while collecting the suites, before any case ran: nothing "
                                   "was run and no report was written: exit 2"]
    assert stdout == "" and not (tmp_path / "out").exists()


@pytest.mark.parametrize("closed", ["2>&-", ">&-", ">&- 2>&-", "<&-"])
@pytest.mark.process  # a standard stream closed at start
def test_a_run_started_with_a_standard_stream_closed_runs_writes_its_report_and_keeps_its_exit_code(tmp_path, closed):
    """With stderr closed, sys.stderr is None and nothing ran (exit 1); the free descriptor must not become a file
    the run writes (results.jsonl would take fd 2, and any C-level write to stderr with it)."""
    many_cases(tmp_path, 30, failing={4})
    shell = f"exec {sys.executable} -m runner suites --output-dir out {closed}"
    result = subprocess.run(["bash", "-c", shell], cwd=tmp_path, env=cli_env(), capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr  # a case failed: the run's own code
    report = valid_report(tmp_path / "out" / "report.json")
    assert len(report["cases"]) == 30 and report["summary"]["failed"] == 1
    assert len(results_lines(tmp_path / "out" / "results.jsonl")) == 30  # every line a result, nothing else
    if ">&-" not in closed:
        assert "1 case(s) failed: exit 1" in result.stdout
    assert "Traceback" not in result.stderr


@pytest.mark.process  # the process's stderr is a pipe with no reader
def test_a_stderr_whose_reader_is_gone_does_not_stop_the_run(tmp_path):
    many_cases(tmp_path, 30, failing={4})
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write to stderr now fails (EPIPE)
    try:
        process = start(tmp_path, "--output-dir", "out", stderr=write_end)
    finally:
        os.close(write_end)
    stdout, _ = process.communicate(timeout=120)
    assert process.returncode == 1, stdout
    assert len(valid_report(tmp_path / "out" / "report.json")["cases"]) == 30
    assert "1 case(s) failed: exit 1" in stdout
