"""tool_error_pattern is the project's regex, but it searches tool results, which the agent's world wrote:
a result built to make it backtrack must not hang the run, and must never be counted as a success."""
import json
import subprocess
import sys
import textwrap

from runner.transcripts.read import build_trajectory

HOSTILE = "a" * 40 + "!"  # (a|aa)+$ backtracks about fib(40) times on it, in re and in the regex package alike


def _messages(result: str) -> list[dict]:
    return [{"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": result},
            {"role": "assistant", "content": "done"}]


def test_a_backtracking_result_ends_in_time_and_counts_as_an_error():
    # The messages travel as JSON: the child must not depend on the working folder to import this module.
    code = textwrap.dedent(f"""
        import json
        from runner.transcripts.read import build_trajectory
        t = build_trajectory(json.loads({json.dumps(_messages(HOSTILE))!r}), r"(a|aa)+$")
        print(t.tool_calls[0].is_error)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, "True"), done.stderr


def test_the_pattern_still_decides_ordinary_results():
    assert build_trajectory(_messages("Error: no such order"), r"^\s*Error\b").tool_calls[0].is_error is True
    assert build_trajectory(_messages("order 42 shipped"), r"^\s*Error\b").tool_calls[0].is_error is False
