"""converse(): the scripted user, every way a conversation ends, and the saved transcript."""
from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path

import pytest

from runner.config.model import Config
from runner.transcripts.read import build_trajectory
from runner.transcripts.transcript_file import read_recording
from tests.fakes.cases import make_agent, make_case, talk


@pytest.fixture
def echo(tmp_path):
    (tmp_path / "echo_agent.py").write_text(textwrap.dedent("""
        import asyncio

        async def respond(messages, context):
            if messages[-1]["content"] == "take your time":
                await asyncio.sleep(30)
            return "you said: " + messages[-1]["content"]
        """))
    return make_agent({"type": "python", "entrypoint": "echo_agent:respond"}, tmp_path)


def test_the_script_is_starting_sentence_then_user_prompts(echo):
    conversation = talk(make_case(starting_sentence="a", user_prompts=["b", "c"]), echo)
    assert [m["content"] for m in conversation.messages if m["role"] == "user"] == ["a", "b", "c"]
    assert (conversation.termination_reason, conversation.user_turns, conversation.error) == ("script_end", 3, None)


def test_max_user_turns_cuts_the_script(echo):
    conversation = talk(make_case(starting_sentence="a", user_prompts=["b", "c"], max_user_turns=2), echo)
    assert (conversation.termination_reason, conversation.user_turns) == ("max_turns", 2)
    exact = talk(make_case(starting_sentence="a", user_prompts=["b"], max_user_turns=2), echo)
    assert exact.termination_reason == "script_end", exact.error  # the script ended exactly at the limit


def test_user_prompts_alone_start_the_conversation(echo):
    conversation = talk(make_case(user_prompts=["b"]), echo)
    assert conversation.messages[0] == {"role": "user", "content": "b"}


def test_a_case_with_nothing_to_say(echo):
    conversation = talk(make_case(), echo)
    assert (conversation.termination_reason, conversation.messages) == ("no_user_message", [])
    assert conversation.error == "the case has no starting_sentence, user_prompts or story (with a simulator) to start with"


def test_the_case_timeout_keeps_what_was_said(echo):
    started = time.monotonic()
    conversation = talk(make_case(starting_sentence="hi", user_prompts=["take your time", "never"]), echo, timeout_s=0.5)
    assert time.monotonic() - started < 20  # not the agent's 30 s
    assert [m["content"] for m in conversation.messages] == ["hi", "you said: hi", "take your time"]
    assert (conversation.termination_reason, conversation.error) == (
        "timeout", "the conversation did not finish within the case timeout of 0.5 s")


def test_the_saved_transcript_is_read_back_and_scored_the_same(echo, tmp_path):
    conversation = talk(make_case(starting_sentence="a", user_prompts=["b"]), echo)
    path = tmp_path / "c1.json"
    path.write_text(json.dumps(conversation.to_transcript()))
    recording = read_recording(path)
    assert (recording.messages, recording.termination_reason) == (conversation.messages, "script_end")
    assert build_trajectory(recording.messages, termination_reason="script_end").user_turns == 2


def test_a_replay_agent_reads_the_case_transcript_or_its_folder(tmp_path):
    (tmp_path / "t.json").write_text(json.dumps({"messages": [{"role": "user", "content": "x"},
                                                              {"role": "assistant", "content": "y"}],
                                                 "termination_reason": "user_stop"}))
    case = make_case(transcript="t.json", source={"path": str(tmp_path / "s.yaml")})
    conversation = talk(case, make_agent({"type": "replay"}, tmp_path))
    assert (len(conversation.messages), conversation.termination_reason, conversation.user_turns) == (2, "user_stop", 1)
    assert conversation.transcript_path == str(tmp_path / "t.json")
    missing = talk(make_case(id="nope"), make_agent({"type": "replay", "dir": "recordings"}, tmp_path))
    assert (missing.termination_reason, missing.error) == (
        "agent_error", f"transcript file not found: {tmp_path / 'recordings' / 'nope.json'}")


def test_the_live_example_passes(tmp_path):
    """suites/live: the deterministic HR agent, driven and scored with no API key."""
    import asyncio

    from runner.api import collect
    from runner.config.load import load_config
    from runner.run.conversation import converse_case
    from runner.score.cascade import Cascade, CascadeSettings
    from runner.score.case import score_trajectory

    suites = Path(__file__).resolve().parents[2] / "suites"
    loaded, problems = load_config(suites / "evalrun.yaml")
    cases = collect([suites / "live"], config=loaded).cases
    assert problems == [] and len(cases) == 3
    cascade = Cascade(CascadeSettings(use_embeddings=False))  # rapidfuzz decides the one reference answer

    async def run(case):
        return await converse_case(case, loaded, timeout_s=10)

    for case in cases:
        conversation = asyncio.run(run(case))
        scored = score_trajectory(case, build_trajectory(conversation.messages, loaded.config.tool_error_pattern,
                                                         conversation.termination_reason), cascade)
        assert (case.id, conversation.termination_reason, scored.passed) == (case.id, "script_end", True)


def test_a_blocking_agent_that_never_returns_does_not_hold_up_the_run(tmp_path):
    """The sync function runs in a daemon thread: the case times out and the run can still end."""
    import subprocess
    import sys

    (tmp_path / "stuck.py").write_text("import time\ndef respond(messages, context):\n    time.sleep(3600)\n")
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
        from pathlib import Path
        from tests.fakes.cases import make_agent, make_case, talk
        conversation = talk(make_case(starting_sentence="hi"),
                            make_agent({{"type": "python", "entrypoint": "stuck:respond"}}, Path({str(tmp_path)!r})),
                            timeout_s=0.3)
        print(conversation.termination_reason)
        """)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, "timeout"), done.stderr
    assert time.monotonic() - started < 20


def test_converse_case_says_which_agent_is_missing():
    import asyncio

    from runner.config.load import LoadedConfig
    from runner.run.conversation import converse_case

    conversation = asyncio.run(converse_case(make_case(agent="hr_agent", starting_sentence="hi"),
                                             LoadedConfig(config=Config())))
    assert conversation.termination_reason == "agent_error"
    # no evalrun.yaml at all (path None): said as such, not as one without `agents:`
    assert conversation.error.startswith("the case is played live by agent 'hr_agent', but this run found no "
                                         "evalrun.yaml to declare it")
    conversation = asyncio.run(converse_case(make_case(agent="hr_agent", starting_sentence="hi"),
                                             LoadedConfig(config=Config(), path=Path("evalrun.yaml"))))
    assert conversation.error.startswith("the case runs against agent 'hr_agent', which is not declared: evalrun.yaml "
                                         "has no `agents:` section. Declare it, for example:")
