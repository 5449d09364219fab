"""The depth limit checked on parsed JSON (runner.util.read_limits.too_deep_json) agrees with the check on the
text (json_limits, the oracle) on every document, and names the same line and column."""
from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

from runner.util.read_limits import MAX_DEPTH, json_limits, too_deep_json

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(alphabet="[]{}\"\\ab:,\n", max_size=6))


@st.composite
def nested(draw):
    """A document whose deepest branch is near the limit, with brackets and quotes inside its strings."""
    depth = draw(st.integers(MAX_DEPTH - 3, MAX_DEPTH + 3))
    value = draw(scalars)
    for _ in range(depth):
        siblings = draw(st.lists(scalars, max_size=2))
        value = {draw(st.text(alphabet="[]{}ab", max_size=3)): value, "s": siblings} if draw(st.booleans()) \
            else [*siblings, value]
    return value


@settings(max_examples=150, deadline=None)
@given(nested(), st.booleans())
def test_the_parsed_check_agrees_with_the_text_check(document, indented):
    text = json.dumps(document, indent=1 if indented else None)
    assert too_deep_json(json.loads(text), text) == json_limits(text, max_values=None)


def test_json_lines_are_measured_from_each_line():
    line = "[" * MAX_DEPTH + "]" * MAX_DEPTH  # exactly at the limit: allowed on its own line
    text = "\n".join([line, line])
    assert too_deep_json([json.loads(line), json.loads(line)], text, outer=0) is None
    deeper = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    text = "\n".join([line, deeper])
    assert too_deep_json([json.loads(line), json.loads(deeper)], text, outer=0) == \
        (2, MAX_DEPTH + 1, "error", f"the file is nested more than {MAX_DEPTH} levels deep", "too-deep")
