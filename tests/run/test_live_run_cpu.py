"""What a live run of the `evalrun` command spends CPU on besides its model calls (issue 16: CPU per model call):
modules it does not need, and bookkeeping per call. Each test pins one saving and the behaviour it must keep."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from runner.llm.calls import CallSummary, CallTotals, LLMCall, summarize
from runner.report import formats
from tests.fakes.openai_server import FakeOpenAI, Reply, tool_call
from tests.helpers.cli_helpers import cli_env, write

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]

# Imported by other runs, not by a live one: the report formats (the parser's help names their files from the
# registry), the replay pool with multiprocessing (live cases never go to it), urllib.request (no proxy is set),
# email (for an HTTP date in Retry-After), importlib.metadata (pydantic's plugin loader reads the installed
# plugins with it: the command loads none) and so no plugin either (logfire's, in a dev install), and the readers
# of other tools' eval files with ADK's pydantic models (only a file that is one of them needs them)
NOT_FOR_A_LIVE_RUN = ("runner.report.junit", "runner.report.html", "runner.report.markdown",
                      "runner.suite.formats.adk", "runner.suite.formats.adk_models", "runner.suite.formats.adk_config",
                      "runner.run.executors.replay_pool", "multiprocessing", "urllib.request", "email",
                      "importlib.metadata", "logfire")


def test_the_help_names_the_file_each_format_writes():
    for name in formats.names():
        assert formats.file_name(name) == formats.get(name).file_name


def test_a_live_run_imports_none_of_what_only_other_runs_need(tmp_path):
    with FakeOpenAI() as fake:
        fake.default = lambda request: (Reply(content="It is 21 degrees in Paris.")
                                        if request["messages"][-1]["role"] == "tool"
                                        else Reply(tool_calls=[tool_call("get_weather", {"city": "Paris"})]))
        write(tmp_path / "evalrun.yaml",
              f"embeddings: {{enabled: false}}\ncache_dir: cache\nagents:\n  bot:\n    type: model\n"
              f"    model: openai/fake\n    api_base: {fake.base_url}\n    tools: {json.dumps(TOOLS)}\n")
        for n in range(3):
            write(tmp_path / "suites" / f"c{n}.yaml",
                  f"id: c{n}\nagent: bot\nstarting_sentence: 'The weather in Paris?'\n"
                  "tool_outputs: {get_weather: {temp_c: 21}}\n"
                  "goal_details:\n  - {type: tool_call, name: look, tool_name: get_weather, args: {city: Paris}}\n"
                  "  - {type: text, name: answer, keywords: ['21']}\n")
        code = ("import sys, runner.frontends.cli as c; code = c.main(['suites', '--output-dir', 'out', '-q', '-j', '3']);"
                f"print(code, sorted(m for m in {NOT_FOR_A_LIVE_RUN!r} if m in sys.modules))")
        env = {k: v for k, v in cli_env().items()  # no proxy; pydantic's plugins left to the command
               if not k.lower().endswith("_proxy") and k != "PYDANTIC_DISABLE_PLUGINS"}
        done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "0 []", done.stdout + done.stderr
    assert len(fake.requests) == 6  # the cases were played live: two calls each


def _calls() -> st.SearchStrategy[LLMCall]:
    money = st.one_of(st.none(), st.floats(min_value=0, max_value=5, allow_nan=False))
    tokens = st.one_of(st.none(), st.integers(min_value=0, max_value=10_000))
    return st.builds(LLMCall, role=st.sampled_from(["agent", "judge", "simulator"]), model=st.just("m"),
                     latency_s=st.floats(min_value=0, max_value=60, allow_nan=False),
                     attempts=st.integers(min_value=0, max_value=3), prompt_tokens=tokens, completion_tokens=tokens,
                     cost_usd=money, saved_usd=money, cached=st.booleans(),
                     error=st.one_of(st.none(), st.just("boom")))


def _added_field_by_field(totals: CallTotals, call: LLMCall) -> None:
    """The oracle: CallTotals.add as it was written, one pydantic assignment per field."""
    totals.calls += 1
    totals.cached += call.cached
    totals.errors += call.error is not None
    totals.prompt_tokens += call.prompt_tokens or 0
    totals.completion_tokens += call.completion_tokens or 0
    if call.cost_usd is not None:
        totals.cost_usd = (totals.cost_usd or 0.0) + call.cost_usd
    elif call.cached or call.prompt_tokens or call.completion_tokens or (call.attempts and call.error is None):
        totals.unpriced += 1
    if call.saved_usd is not None:
        totals.saved_usd = (totals.saved_usd or 0.0) + call.saved_usd
    totals.latency_s += call.latency_s


@settings(max_examples=200, deadline=None)
@given(st.lists(_calls(), max_size=8))
def test_call_totals_add_up_as_one_assignment_per_field_did(calls):
    expected = CallSummary()
    for call in calls:
        _added_field_by_field(expected, call)
        _added_field_by_field(expected.by_role.setdefault(call.role, CallTotals()), call)
    got = summarize(calls)
    assert got.model_dump_json() == expected.model_dump_json()
    assert got.model_fields_set == expected.model_fields_set
    assert {role: t.model_fields_set for role, t in got.by_role.items()} == \
        {role: t.model_fields_set for role, t in expected.by_role.items()}


def test_the_command_s_pydantic_loads_no_plugin_and_a_set_switch_is_pydantic_s(tmp_path):
    probe = ("import sys, runner.frontends.cli as c; c.main(['--version']); from runner.frontends.cli.startup import skip_pydantic_plugins;"
             "skip_pydantic_plugins(); import pydantic; from pydantic.plugin._loader import get_plugins;"
             "print(list(get_plugins()), 'importlib.metadata' in sys.modules)")
    env = {k: v for k, v in cli_env().items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.strip().splitlines()[-1] == "[] False", done.stderr
    # PYDANTIC_DISABLE_PLUGINS given: pydantic's own loader reads it (here: every plugin off)
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env={**env, "PYDANTIC_DISABLE_PLUGINS": "1"},
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.strip().splitlines()[-1] == "[] True", done.stderr


# ------------------------------------------------------------------ the price list, read without parsing

def _fresh_pricing(monkeypatch):
    from runner.llm import pricing

    for name, value in (("_table", None), ("_text", None), ("_by_model", {})):
        monkeypatch.setattr(pricing, name, value)
    return pricing


def test_a_model_missing_from_the_price_list_is_known_unpriced_without_parsing_it(monkeypatch):
    pytest.importorskip("litellm", reason="the price list ships with litellm")
    monkeypatch.delitem(sys.modules, "litellm", raising=False)  # a run on the fast path has not imported it
    pricing = _fresh_pricing(monkeypatch)
    assert pricing.model_facts("openai/my-local-model") is None
    assert pricing.cost_of("openai/my-local-model", {"prompt_tokens": 20, "completion_tokens": 8}) is None
    assert pricing._table is None  # the 3 MB list was searched, not parsed
    facts = pricing.model_facts("openai/gpt-4o-mini")  # one that is there: parsed, and priced as before
    assert pricing._table is not None and facts is pricing._table["gpt-4o-mini"]
    assert pricing.cost_of("openai/gpt-4o-mini", {"prompt_tokens": 1000, "completion_tokens": 100}) == \
        pytest.approx(1000 * facts["input_cost_per_token"] + 100 * facts["output_cost_per_token"])


_KEYS = st.sampled_from(["gpt-4o-mini", "claude-3-5-sonnet-20240620", "a/b", "x", "q\"uote", "back\\slash", "tab\t"])


@settings(max_examples=300, deadline=None)
@given(keys=st.lists(st.one_of(_KEYS, st.text(max_size=6)), max_size=5), name=st.one_of(_KEYS, st.text(max_size=6)),
       escaped=st.booleans(), slashes=st.booleans())
def test_surely_absent_never_says_so_of_a_key_the_json_holds(keys, name, escaped, slashes):
    from runner.llm.pricing import surely_absent

    text = json.dumps({key: {"input_cost_per_token": 1e-6} for key in keys}, ensure_ascii=escaped)
    if slashes:  # JSON may write "/" as "\/"
        text = text.replace("/", "\\/")
    if surely_absent(name, text):
        assert name not in json.loads(text)


# ------------------------------------------------------------------ the parser of the command given

def _parsed(parser, argv):
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            result = vars(parser.parse_args(argv))
        except SystemExit as exc:
            result = exc.code
    return result, out.getvalue(), err.getvalue()


def test_the_parser_of_one_command_parses_helps_and_errs_as_the_whole_parser():
    from runner.frontends import cli

    for name in cli.COMMANDS:
        for argv in ([name], [name, "--help"], [name, "--no-such-option"], [name, "x", "-j", "many"],
                     [name, "suites", "-k", "a", "--tag", "b", "-q"], [name, "--version"]):
            whole = _parsed(cli.build_parser(), argv)
            assert _parsed(cli.build_parser(only=name), argv) == whole, argv
