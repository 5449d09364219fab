"""runner.util.deepjson: json.loads's twin for replies whose tool arguments nest 100,000 deep. json.loads is the
oracle for everything it can read; deep arguments are kept as the exact text they were written as."""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings, strategies as st

from runner.util.deepjson import loads_keeping_deep_arguments

DEEP = 100_000

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=25)


@settings(max_examples=300, deadline=None)
@given(json_values, st.sampled_from([0, 1, 2]))
def test_it_reads_what_json_reads(value, indent):
    text = json.dumps(value, indent=indent or None)
    assert repr(loads_keeping_deep_arguments(text, 100)) == repr(json.loads(text))


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet='{}[]",:0123456789.eE+-tnrfaulsNI \\x', max_size=30))
def test_it_refuses_what_json_refuses(text):
    try:
        expected = json.loads(text)
    except ValueError:
        with pytest.raises(ValueError):
            loads_keeping_deep_arguments(text, 100)
        return
    got = loads_keeping_deep_arguments(text, 100)
    assert repr(got) == repr(expected) or (isinstance(got, float) and math.isnan(got) and math.isnan(expected))


def deep_object(depth: int) -> str:
    return '{"a": ' * depth + "{}" + "}" * depth


@pytest.mark.parametrize("shape, path", [
    ('{"messages": [{"role": "assistant", "tool_calls": [{"id": "1", "type": "function", "function": {"name": "f", '
     '"arguments": ARGS}}, {"id": "2", "function": {"name": "g", "arguments": {"x": 1}}}]}]}',
     ["messages", 0, "tool_calls", 0, "function", "arguments"]),
    ('{"choices": [{"message": {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": ARGS}}]}}]}',
     ["choices", 0, "message", "tool_calls", 0, "function", "arguments"]),
    ('{"name": "f", "args": ARGS, "id": "c1"}', ["args"]),  # a watsonx tool_call payload
    ('[{"type": "tool_use", "id": "t1", "name": "f", "input": ARGS}]', [0, "input"]),  # Anthropic
])
def test_deep_arguments_are_kept_as_their_exact_text_and_the_rest_is_read(shape, path):
    args = deep_object(DEEP)
    value = loads_keeping_deep_arguments(shape.replace("ARGS", args), 200)
    found = value
    for step in path:
        found = found[step]
    assert found == args
    if "messages" in value:
        assert value["messages"][0]["tool_calls"][1] == {"id": "2", "function": {"name": "g", "arguments": {"x": 1}}}


def test_arguments_nested_deep_inside_their_own_object_are_kept_whole():
    args = '{"keep": 1, "deep": ' + deep_object(DEEP) + ', "after": [1, 2]}'
    value = loads_keeping_deep_arguments('{"arguments": ' + args + ', "name": "f"}', 50)
    assert value == {"arguments": args, "name": "f"}


def test_anything_else_that_deep_is_refused():
    with pytest.raises(ValueError, match="nested more than 200 levels deep"):
        loads_keeping_deep_arguments('{"content": ' + deep_object(DEEP) + "}", 200)
    with pytest.raises(ValueError, match="never closes"):
        loads_keeping_deep_arguments('{"arguments": ' + '{"a": ' * 300, 200)


def test_the_private_json_scanner_it_reads_strings_with_keeps_its_contract():
    """deepjson reads each string with json.decoder.scanstring, a name json exports without documenting it: if a
    Python release changes what it takes or returns, this says so by name before any reply is misread."""
    from json.decoder import JSONDecodeError, scanstring  # type: ignore[attr-defined]

    assert scanstring('"a\\"b\\u00e9" rest', 1) == ('a"bé', 12)
    assert scanstring('{"k": 1}', 2) == ("k", 4)
    with pytest.raises(JSONDecodeError, match="Unterminated string"):
        scanstring('"never closed', 1)
