"""The one redactor (runner/util/secrets.py): a secret is masked in every form evalrun may find it written in (raw,
a character \\u-escaped in a tool call's argument text, `\\/`, JSON in JSON at any depth, percent-encoded), what
is left stays valid JSON, the keys providers read on their own are secrets with no `api_key_env` naming them,
and every place that shortens text masks before it cuts (a cut secret is a fragment no redactor knows)."""
from __future__ import annotations

import io
import json
import string
from urllib.parse import quote, unquote

import pytest
from hypothesis import HealthCheck, assume, example, given, settings, strategies as st

from runner.util.secret_forms import is_maskable
from runner.util.secrets import MASK, RedactingStream, Redactor, protect_config, redact, remember

SECRET_CHARS = string.ascii_lowercase + string.digits + '"\\/+%-_é€'
FILLER = st.text(alphabet="XYZ .,;:!?\n\t", max_size=12)
AS_WRITTEN = ("json", "json_ascii", "escape_one", "escape_one_upper", "slashes", "percent")  # by an agent
AS_SAVED = ("json", "json_ascii", "percent")  # then by whatever saves or sends that text on


def _encode(text: str, how: str, at: int) -> str:
    """`text` as one more layer writes it (the JSON string's content, without its quotes)."""
    if how in ("json", "json_ascii"):
        return json.dumps(text, ensure_ascii=how == "json_ascii")[1:-1]
    if how in ("escape_one", "escape_one_upper"):  # one character as a \u escape, the rest as JSON writes them
        at %= len(text)
        unit = f"\\u{ord(text[at]):04x}" if ord(text[at]) <= 0xFFFF else json.dumps(text[at])[1:-1]
        unit = unit.upper().replace("\\U", "\\u") if how == "escape_one_upper" else unit
        return json.dumps(text[:at])[1:-1] + unit + json.dumps(text[at + 1:])[1:-1]
    if how == "slashes":
        return json.dumps(text)[1:-1].replace("/", "\\/")
    return quote(text, safe="")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(secret=st.text(alphabet=SECRET_CHARS, min_size=6, max_size=40), before=FILLER, after=FILLER,
       written=st.tuples(st.sampled_from(AS_WRITTEN), st.integers(0, 100)),
       saved=st.lists(st.tuples(st.sampled_from(AS_SAVED), st.just(0)), max_size=3))
# found by hypothesis: a secret holding `%00`, percent-encoded four times, needs five rounds of decoding
@example(secret="000%00", before="", after="", written=("percent", 0), saved=[("percent", 0)] * 3)
def test_every_encoded_form_of_a_secret_is_masked_and_every_layer_still_reads(secret, before, after, written, saved):
    assume(is_maskable(secret))  # not a short number (see test_a_placeholder_...)
    layers = [written, *saved]
    text = before + secret + after
    for how, at in layers:
        text = _encode(text, how, at)
    masked = Redactor([secret])('{"said": "' + text + '"}')  # a line of results.jsonl
    assert masked.startswith('{"said": "') and masked.endswith('"}')
    text = masked[len('{"said": "'):-2]
    for how, _ in reversed(layers):  # every layer still reads, back to what the agent wrote
        text = unquote(text) if how == "percent" else json.loads(f'"{text}"')
    assert secret not in text and MASK in text, (layers, masked)


def test_the_forms_of_issue_26():
    key = "sk-abcdef0123456789/xyz"
    arguments = '{"token": "sk-ab\\u0063def0123456789\\/xyz"}'  # as an agent may write a tool call's arguments
    saved = json.dumps({"function": {"arguments": arguments}})  # as a transcript holds it: JSON in JSON
    assert json.loads(Redactor([key])(saved)) == {"function": {"arguments": '{"token": "***"}'}}
    twice = json.dumps({"content": saved})
    assert json.loads(json.loads(Redactor([key])(twice))["content"]) == {"function": {"arguments": '{"token": "***"}'}}
    assert Redactor([key])("https://x.test/?t=" + quote(key, safe="")) == "https://x.test/?t=***"
    # the letter of an escape is not taken for the secret's first character: `\n` + "nabc..." stays valid JSON
    assert json.loads(Redactor(["nabcdef1"])(json.dumps("x\nnabcdef1 y"))) in ("x***nabcdef1 y", "x\n*** y", "x*** y")


@pytest.mark.parametrize("model, variable", [
    ("openai/gpt-4o-mini", "OPENAI_API_KEY"), ("gpt-4o-mini", "OPENAI_API_KEY"),
    ("anthropic/claude-3-5", "ANTHROPIC_API_KEY"), ("claude-3-5-sonnet", "ANTHROPIC_API_KEY"),
    ("azure/gpt-4o", "AZURE_API_KEY"), ("azure/gpt-4o", "AZURE_OPENAI_API_KEY"),
    ("gemini/gemini-1.5-pro", "GEMINI_API_KEY"), ("vertex_ai/gemini-1.5", "GOOGLE_API_KEY"),
    ("bedrock/anthropic.claude", "AWS_SECRET_ACCESS_KEY"), ("watsonx/ibm/granite", "WATSONX_APIKEY"),
    ("huggingface/x", "HF_TOKEN"), ("acme/any-model", "ACME_API_KEY")])
def test_the_key_a_provider_reads_on_its_own_is_a_secret_without_any_api_key_env(model, variable):
    environ = {variable: "v4lue-0f-the-key", "OPENAI_BASE_URL": "http://127.0.0.1:4000/v1"}
    _, redactor = protect_config({"judge": {"model": model}}, environ)
    assert redactor(f"the agent said v4lue-0f-the-key at {environ['OPENAI_BASE_URL']}") == \
        f"the agent said {MASK} at http://127.0.0.1:4000/v1"  # a base URL is not a secret


@pytest.mark.parametrize("placeholder", ["null", "None", "true", "1234567"])
def test_a_placeholder_a_local_server_takes_for_a_key_is_no_secret(placeholder):
    """OPENAI_API_KEY=null (or none) for a local server: masking JSON's own words would break every line."""
    _, redactor = protect_config({"judge": {"model": "openai/local"}}, {"OPENAI_API_KEY": placeholder})
    line = '{"error": null, "passed": true, "tokens": 1234567, "note": "None"}'
    assert redactor(line) == line


def test_this_process_masks_the_providers_keys_and_what_each_config_loaded_names(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-implicit-123456")
    monkeypatch.setenv("SWEEP_HEADER_TOKEN", "hdr-abcdef-98765")
    remember({"agents": {"web": {"headers": {"Authorization": "Bearer ${SWEEP_HEADER_TOKEN}"}}}})
    assert redact("sk-implicit-123456 and hdr-abcdef-98765") == f"{MASK} and {MASK}"


def test_a_key_a_suites_own_judge_names_is_a_secret_of_this_process(monkeypatch):
    from runner.llm.settings import JudgeSettings

    monkeypatch.setenv("SUITE_JUDGE_KEY", "sk-suite-judge-4242")
    JudgeSettings(model="openai/gpt-4o-mini", api_key_env="SUITE_JUDGE_KEY")  # as a check's `judge:` is read
    assert redact('{"reason": "sk-suite-judge-4242"}') == '{"reason": "***"}'


LONG = "tok" + "Zq7/Kp2+Wm9x" * 17  # 207 characters


@pytest.fixture
def long_secret(monkeypatch):
    monkeypatch.setenv("SWEEP_LONG_TOKEN", LONG)
    remember({"headers": {"Authorization": "${SWEEP_LONG_TOKEN}"}})


def _cutters():
    from runner.authoring.record.draft import _short as draft_short
    from runner.checks.tool_calls import _short as tool_calls_short
    from runner.frontends.cli.chat import _short as chat_short
    from runner.llm.errors import quoted, short
    from runner.report.otlp import _text as otlp_text
    from runner.run.agents._base import excerpt
    from runner.score.negation import quote as _quote
    from runner.score.normalize import show
    from runner.suite.load import _short as load_short
    from runner.util.diagnostics import quote as diagnostic_quote
    from runner.util.secrets import clip

    return {"show": show, "excerpt": excerpt, "llm short": short, "llm quoted": quoted, "clip": lambda t: clip(t, 80),
            "tool_calls": tool_calls_short, "draft": draft_short, "chat": chat_short, "negation": _quote,
            "diagnostic quote": diagnostic_quote, "load": load_short, "otlp": otlp_text}


@pytest.mark.parametrize("cutter", list(_cutters()))
@pytest.mark.parametrize("written", ["raw", "escaped"])
def test_every_place_that_shortens_text_masks_the_secret_before_the_cut(long_secret, cutter, written):
    value = LONG if written == "raw" else _encode(LONG, "escape_one", 30).replace("/", "\\/")
    for lead in ("", "x" * 40, "y" * 150):
        shown = _cutters()[cutter](f"{lead} {value} and more")
        pieces = {LONG[i:i + 12] for i in range(len(LONG) - 11)}
        assert not any(p in view for p in pieces for view in (shown, shown.replace("\\", ""))), (lead, shown)


def test_a_stream_masks_a_secret_written_in_two_pieces_and_what_is_left_at_flush(long_secret):
    out = io.StringIO()
    stream = RedactingStream(out)
    stream.write("first " + LONG[:90])
    stream.write(LONG[90:] + " end\nthen " + LONG)
    assert out.getvalue() == f"first {MASK} end\n"
    stream.flush()
    assert out.getvalue() == f"first {MASK} end\nthen {MASK}"
