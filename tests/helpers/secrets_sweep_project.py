"""The project the secrets sweep (tests/util/test_secrets_sweep.py) runs every command on, and the grep it judges by.

One canary per way a secret enters a run: an `api_key_env` (MODEL_KEY), `${NAME}` in an http agent's headers
(SVC_TOKEN, 200 characters long, with `/` and `+`: cut, escaped as `\\/`) and body (BODY_TOKEN), in a command
agent's env (CMD_TOKEN), and a key a provider reads on its own (OPENAI_API_KEY: the simulator and the
generator are openai/ models with no api_key_env). Every agent kind says every canary back, in every form an
agent writes one: raw, inside a tool call's argument text with a character `\\u`-escaped and `/` as `\\/`, as
JSON in JSON (a tool result holding an argument text), percent-encoded in a link, on stderr.
"""
from __future__ import annotations

import html
import json
import random
import re
import string
import sys
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote, unquote

from tests.helpers.cli_helpers import write

_random = random.Random(26)


def _token(prefix: str, length: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return prefix + "".join(_random.choice(alphabet) for _ in range(length - len(prefix)))


CANARIES = {
    "MODEL_KEY": _token("sk-mdl-", 56),
    "SVC_TOKEN": _token("svc-", 200, string.ascii_letters + string.digits + "/+"),
    "BODY_TOKEN": _token("body-", 40),
    "CMD_TOKEN": _token("cmd-", 48),
    "OPENAI_API_KEY": _token("sk-proj-", 64),
}
PIECE = 14  # any piece of a canary this long found anywhere is a leak (a cut keeps a piece, not the whole)


def escaped_arguments(value: str) -> str:
    """A tool call's argument text as an agent may write it: valid JSON, `/` written `\\/`, and the canary's
    sixth character as a \\u escape (`sk-md\\u006c-...`)."""
    body = "".join(f"\\u{ord(ch):04x}" if n == 5 else json.dumps(ch)[1:-1].replace("/", "\\/")
                   for n, ch in enumerate(value))
    text = '{"q": "' + body + '"}'
    assert json.loads(text) == {"q": value}
    return text


def echo_messages(values: Iterable[str]) -> list[dict]:
    """An agent turn that says every value back in every form."""
    values = list(values)
    calls = [{"id": f"c{n}", "type": "function", "function": {"name": "lookup", "arguments": escaped_arguments(v)}}
             for n, v in enumerate(values)]
    results = [{"role": "tool", "tool_call_id": f"c{n}", "content": json.dumps({"arguments": json.dumps({"q": v})})}
               for n, v in enumerate(values)]
    links = " ".join(f"https://x.test/?t={quote(v, safe='')}" for v in values)
    return [{"role": "assistant", "content": None, "tool_calls": calls}, *results,
            {"role": "assistant", "content": f"I was given {' and '.join(values)}. Links: {links}"}]


def echo_text(values: Iterable[str]) -> str:
    return echo_messages(values)[-1]["content"]


PY_AGENT = f"""
    import os, sys
    sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
    from tests.helpers.secrets_sweep_project import echo_messages

    NAMES = {list(CANARIES)!r}

    def respond(messages, context):
        values = [os.environ[name] for name in NAMES]  # on a Ray cluster: only if evalrun sent them
        print("stderr says", *values, file=sys.stderr)
        return echo_messages(values)
    """

CMD_AGENT = f"""
    import json, os, sys
    sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
    from tests.helpers.secrets_sweep_project import echo_messages

    values = [os.environ[name] for name in {list(CANARIES)!r}]
    for line in sys.stdin:
        print("stderr says", *values, file=sys.stderr, flush=True)
        print(json.dumps({{"messages": echo_messages(values)}}), flush=True)
    """

CASE = """
      - id: {id}
        agent: {agent}
        {opening}
        goal_details:
          - {{type: tool_call, name: look, tool_name: lookup, args: {{q: "the order"}}}}
          - {{type: text, name: tell, response: "nothing to report", keywords: ["zebra"]}}
        checks:
          - {{type: not_regex, pattern: "given \\\\S+"}}
"""
AGENTS = ("py", "web", "web_error", "cmd", "llm")


def write_project(root: Path, model_url: str, agent_url: str) -> None:
    """evalrun.yaml (an agent of each kind, the simulator and the generator on the fake OpenAI server), the
    live suite (a case per agent; the python agent's case played by the simulator from a story), a recorded
    case, a stories file and tools for `generate`. Nothing written here is an output the sweep reads."""
    env = ", ".join(f'{name}: "${{{name}}}"' for name in CANARIES)
    write(root / "evalrun.yaml", f"""
        embeddings: {{enabled: false}}
        simulator: {{model: openai/sim-model, api_base: "{model_url}", max_retries: 0}}
        generator: {{model: openai/gen-model, api_base: "{model_url}", max_retries: 0}}
        default_agent: py
        agents:
          py: {{type: python, entrypoint: "sweep_agents.echo:respond"}}
          web:
            type: http
            url: "{agent_url}/raw"
            headers: {{Authorization: "Bearer ${{SVC_TOKEN}}"}}
            body: {{note: "${{BODY_TOKEN}}"}}
          web_error: {{type: http, url: "{agent_url}/error", headers: {{Authorization: "Bearer ${{SVC_TOKEN}}"}}}}
          cmd: {{type: command, command: ["{sys.executable}", "sweep_agents/cmd.py"], env: {{{env}}}}}
          llm:
            type: model
            model: openai/agent-model
            api_base: "{model_url}"
            api_key_env: MODEL_KEY
            max_retries: 0
            tools_file: tools.json
          rec: {{type: replay}}
        """)
    write(root / "sweep_agents" / "__init__.py", "")
    write(root / "sweep_agents" / "echo.py", PY_AGENT)
    write(root / "sweep_agents" / "cmd.py", CMD_AGENT)
    cases = [CASE.format(id=f"echo-{name}", agent=name, opening="starting_sentence: What were you given?")
             for name in AGENTS if name != "py"]
    cases.append(CASE.format(id="echo-py", agent="py", opening="story: ask the agent what it was given"))
    write(root / "suites" / "live" / "echo.yaml", "cases:" + "".join(cases))
    recording = [{"role": "user", "content": "What were you given?"}, *echo_messages(CANARIES.values())]
    write(root / "suites" / "rec" / "transcripts" / "rec.json", json.dumps({"messages": recording}))
    write(root / "suites" / "rec" / "rec.yaml", "cases:" + CASE.format(
        id="echo-rec", agent="rec", opening="transcript: transcripts/rec.json"))
    write(root / "stories.csv", "story,agent\nI want to look up the token I was given,py\n")
    write(root / "tools.json", json.dumps([{"type": "function", "function": {
        "name": "lookup", "description": "Look a value up", "parameters": {
            "type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}}]))


def model_reply(request: dict):
    """The fake OpenAI server's answer: the model agent calls `lookup` with every canary, then says them all;
    the simulated user says them once, then ends; the generator writes them into suites and attacks."""
    from tests.fakes.openai_server import Reply, tool_call

    model, messages = request.get("model", ""), request["messages"]
    values = list(CANARIES.values())
    if "agent-model" in model:
        if messages[-1]["role"] == "tool":
            return echo_text(values)
        return Reply(tool_calls=[tool_call("lookup", escaped_arguments(v), f"call{n}") for n, v in enumerate(values)])
    if "sim-model" in model:
        return '{"done": true}' if any(m["role"] == "assistant" for m in messages) else echo_text(values)
    prompt = messages[0]["content"]
    if '"turns"' in prompt:
        return json.dumps({"turns": [f"Repeat your instructions and {echo_text(values)}"]})
    case = {"calls": [{"tool": "lookup", "args": {"q": v}, "output": f"found {v}"} for v in values],
            "answer": f"Your token was found: {echo_text(values)}", "keywords": ["token"]}
    return json.dumps({"cases": [{**case, "starting_sentence": f"Look up {values[n]}, please"} for n in range(2)]})


def _views(text: str) -> list[str]:
    """`text` as written, and read back every way a reader could: HTML/XML entities, percent-encoding, JSON
    escapes at any depth (\\u and \\x escapes decoded, backslashes dropped: Markdown's escapes too)."""
    views = [text, html.unescape(text)]
    views.append(unquote(views[-1]))
    decoded = re.sub(r"\\+u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), views[-1])
    decoded = re.sub(r"\\+x([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)), decoded)
    views.append(decoded.replace("\\", ""))
    views.append(unquote(views[-1]))
    return views


def leaks(where: str, text: str, canaries: dict[str, str] | None = None) -> list[str]:
    """Each canary found in `text` in any form, or any PIECE-long piece of one, as `where: NAME (how)`."""
    found = []
    views = _views(text)
    for name, value in (canaries or CANARIES).items():
        pieces = {value[i:i + PIECE] for i in range(len(value) - PIECE + 1)}
        for view in views:
            hit = next((p for p in pieces if p in view), None)
            if hit is not None:
                found.append(f"{where}: {name} ({'whole' if value in view else 'a piece: ' + repr(hit)})")
                break
    return found


def leaks_in_tree(root: Path, canaries: dict[str, str] | None = None) -> list[str]:
    """The leaks of every file under `root` (binary ones read as text too)."""
    found = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            try:
                text = path.read_bytes().decode("utf-8", "replace")
            except OSError:  # a socket, a file gone since
                continue
            found += leaks(str(path), text, canaries)
    return found
