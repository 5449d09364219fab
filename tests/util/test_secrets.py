"""Secrets appear nowhere: the values named in evalrun.yaml through `*api_key_env` or `${NAME}` are
collected from the config as written (before its credential keys are masked), and redacted from every
file of the run folder and from every console line, -v included, from the first case on."""
from __future__ import annotations

import json

from runner.util.secrets import MASK, Redactor, protect_config, secret_values
from tests.helpers.cli_helpers import run_cli, write
from tests.helpers.html_page import page_data

ENVIRON = {"SVC_TOKEN": "tok-7f3a9c1e55", "SVC_KEY": "key-0b9d44aa17", "REFRESH_TOKEN": "rt-c0ffee1234",
           "JUDGE_KEY": "sk-judge-9988", "PLAIN": "not-a-secret-but-named", "SHORT": "abc"}


def test_names_under_credential_keys_are_collected_before_the_keys_are_masked():
    record = {"agents": {"svc": {"type": "http", "headers": {"Authorization": "Bearer ${SVC_TOKEN}",
                                                             "X-Api-Key": "${SVC_KEY}"}}},
              "judge": {"model": "m", "api_key_env": "JUDGE_KEY"},
              "extra": {"refresh_token": "${REFRESH_TOKEN}", "note": "${PLAIN} and ${SHORT} and ${UNSET}"}}
    masked, redact = protect_config(record, ENVIRON)
    assert masked["agents"]["svc"]["headers"] == {"Authorization": MASK, "X-Api-Key": MASK}
    assert masked["extra"]["refresh_token"] == MASK
    assert masked["judge"]["api_key_env"] == "JUDGE_KEY"  # a variable's name, not a value
    expected = {"tok-7f3a9c1e55", "key-0b9d44aa17", "rt-c0ffee1234", "sk-judge-9988", "not-a-secret-but-named"}
    assert set(secret_values(record, ENVIRON)) == expected  # "abc" is too short to redact; UNSET has no value
    said = " ".join(ENVIRON.values())
    assert redact(said) == " ".join([MASK] * 5 + ["abc"])
    # The masked copy alone names none of the credential variables: collecting from it loses them.
    assert set(secret_values(masked, ENVIRON)) == {"sk-judge-9988", "not-a-secret-but-named"}


def test_a_secret_is_redacted_as_json_writes_it_too():
    secret = 'pa"ss\\wörd-1'
    redact = Redactor([secret])
    line = json.dumps({"said": f"the key is {secret}."})
    assert secret not in redact(line) and json.dumps(secret)[1:-1] not in redact(line)
    assert json.loads(redact(line)) == {"said": f"the key is {MASK}."}
    assert redact(json.dumps({"s": secret}, ensure_ascii=False)) == json.dumps({"s": MASK})


ECHO_AGENT = """
    import json, os

    def respond(messages, context):
        tokens = " ".join(os.environ[name] for name in ("SVC_TOKEN", "SVC_KEY", "CMD_TOKEN", "SVC_PATH"))
        call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": json.dumps({"q": tokens})}}
        return [{"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "content": "found " + tokens},
                {"role": "assistant", "content": f"Here is what I was given: {tokens}. Bye."}]
    """


def test_an_agent_that_echoes_the_tokens_of_the_config_leaks_them_nowhere(tmp_path):
    secrets = {"SVC_TOKEN": "svc-4d2c1b0a9f8e", "SVC_KEY": "apikey-77aa11bb22", "CMD_TOKEN": "cmd-5e5e5e5e5e",
               "SVC_PATH": "path-31415926"}
    write(tmp_path / "evalrun.yaml", """
        embeddings: {enabled: false}
        default_agent: echo
        agents:
          echo:
            type: python
            entrypoint: agents.echo:respond
          service:                       # never played: only its headers name the variables
            type: http
            url: "http://127.0.0.1:9/${SVC_PATH}"     # named, but not under a credential key
            headers: {Authorization: "Bearer ${SVC_TOKEN}", X-Api-Key: "${SVC_KEY}"}
          tool:
            type: command
            command: [/bin/true]
            env: {SERVICE_TOKEN: "${CMD_TOKEN}"}
        """)
    write(tmp_path / "agents" / "__init__.py", "")
    write(tmp_path / "agents" / "echo.py", ECHO_AGENT)
    write(tmp_path / "suites" / "s.yaml", """
        cases:
          - id: echo
            starting_sentence: What were you given?
            goal_details:
              - {type: tool_call, name: look, tool_name: lookup, args: {q: "the order"}}
              - {type: text, name: tell, keywords: ["given"]}
        """)
    done = run_cli("suites", "-v", "--output-dir", "out", "--format", "html", "--format", "md", "--format", "junit",
                   cwd=tmp_path, env=secrets)
    assert done.returncode == 1, done.stdout + done.stderr
    # -v printed the goals while the run went on; the one that quotes the agent's argument is redacted too
    look = next(line for line in done.stdout.splitlines() if line.startswith("    ✗ look: "))
    assert f"got '{MASK} {MASK} {MASK} {MASK}'" in look
    files = sorted(p for p in (tmp_path / "out").rglob("*") if p.is_file() and p.suffix != ".lock")
    assert {p.name for p in files} >= {"results.jsonl", "report.json", "conversations.jsonl", "report.html",
                                      "summary.md", "junit.xml"}
    page = json.dumps(page_data((tmp_path / "out" / "report.html").read_text(encoding="utf-8")), ensure_ascii=False)
    for where, text in [("stdout", done.stdout), ("stderr", done.stderr), ("report.html's cases", page),
                        *((str(p), p.read_text(encoding="utf-8")) for p in files)]:
        for name, value in secrets.items():
            assert value not in text, f"{name}'s value is in {where}"
    case = json.loads((tmp_path / "out" / "report.json").read_text())["cases"][0]
    assert case["transcript"][-1]["content"] == f"Here is what I was given: {MASK} {MASK} {MASK} {MASK}. Bye."
