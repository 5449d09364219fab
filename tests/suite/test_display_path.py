"""display_path gives a path as os.path.relpath does; the ones it already is are given back without asking
for the working directory (collection shows every collected file's path)."""
from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings, strategies as st

from runner.util.files import display_path

SEGMENTS = st.sampled_from(["a", "b", ".", "..", "", "a.b", "..x", "x..", "...", "~", "c d"])


@settings(max_examples=400, deadline=None)
@given(st.booleans(), st.lists(SEGMENTS, min_size=1, max_size=5), st.booleans())
def test_display_path_is_relpath(absolute, segments, as_path):
    text = ("/" if absolute else "") + "/".join(segments)
    try:
        expected = os.path.relpath(text)
    except ValueError:  # an empty path: relpath refuses it, display_path gives it back
        expected = text
    assert display_path(Path(text) if as_path and text else text) == (
        os.path.relpath(Path(text)) if as_path and text else expected)


def test_display_path_of_paths_already_relative_and_of_others(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert display_path("suites/a.yaml") == "suites/a.yaml"
    assert display_path(Path("suites/a.yaml")) == "suites/a.yaml"
    assert display_path(tmp_path / "suites" / "a.yaml") == "suites/a.yaml"
    assert display_path("./suites/../suites/a.yaml") == "suites/a.yaml"
    assert display_path("../x.yaml") == "../x.yaml"
    assert display_path("..x/y.yaml") == "..x/y.yaml"
