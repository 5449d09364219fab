"""Shared by several test modules (once in tests/report/test_report_validation.py): JSON_VALUES, _places, mutations, runs, tampered."""
from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
from hypothesis import strategies as st

from tests.helpers.cli_helpers import run_cli
from tests.helpers.report_formats import make_run
from tests.helpers.run_shards import project as shard_project


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """A run with passed, failed and errored cases (and its baseline comparison), and two shards."""
    root = tmp_path_factory.mktemp("valid")
    assert make_run(root).returncode == 3
    done = run_cli("suites", "--output-dir", "with-baseline", "--baseline", "out", cwd=root)
    assert done.returncode == 3, done.stdout + done.stderr
    shards = tmp_path_factory.mktemp("shards")
    shard_project(shards)
    for i in (1, 2):
        assert run_cli("suites", "--shard", f"{i}/2", "--output-dir", f"shard{i}", cwd=shards).returncode in (0, 1)
    (root / "shards").symlink_to(shards)
    return root


def tampered(root: Path, name: str, change, source: str = "with-baseline") -> Path:
    data = json.loads((root / source / "report.json").read_text(encoding="utf-8"))
    change(data)
    folder = root / name
    folder.mkdir(exist_ok=True)
    text = json.dumps(data)  # NaN, Infinity as Python writes them
    (folder / "report.json").write_text(re.sub(r'"RAW:([^"]*)"', r"\1", text), encoding="utf-8")  # numbers as written
    return folder


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2 ** 70), max_value=2 ** 70) | st.floats()
    | st.text(max_size=6) | st.sampled_from(["passed", "failed", "error", "1/2", "0/0", "", "-1"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=5)


def _places(node, depth=0):
    """(container, key) of every value in a report down to a few levels: where a mutation can land."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        yield node, key
        if depth < 4:
            yield from _places(value, depth + 1)


@st.composite
def mutations(draw, report: dict) -> dict:
    data = copy.deepcopy(report)
    for _ in range(draw(st.integers(1, 3))):
        area = draw(st.sampled_from(["summary", "cases", "header"]))
        root = data if area == "header" else data.get(area)
        places = list(_places(root)) if isinstance(root, (dict, list)) else []
        if not places:
            data[draw(st.sampled_from(["summary", "cases", "shard", "paths"]))] = draw(JSON_VALUES)
            continue
        container, key = draw(st.sampled_from(places))
        action = draw(st.sampled_from(["replace", "replace", "delete", "duplicate"]))
        if action == "delete":
            del container[key]
        elif action == "duplicate" and isinstance(container, list):
            container.append(copy.deepcopy(container[key]))
        else:
            container[key] = draw(JSON_VALUES)
    return data
