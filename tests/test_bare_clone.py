"""A bare clone (no shared reference data, no Chromium, no language server) passes the README's test
command even with CI=true: what is missing skips with its reason, and fails only where a variable insists."""
from __future__ import annotations

import pytest

from tests.helpers.shared_data import require_shared, shared_file, shared_params
from tests.helpers.yaml_language_server import require_server

CASES = [
    (lambda: require_shared("watsonx-examples"), "EVALRUN_REQUIRE_SHARED_DATA",
     "shared reference data watsonx-examples not found (looked in $EVALRUN_SHARED_DATA"),
    (lambda: shared_file(*shared_params("watsonx-examples", "*.json")[0].values, "watsonx-examples", "*.json"),
     "EVALRUN_REQUIRE_SHARED_DATA", "shared reference data watsonx-examples not found (looked in"),
    (require_server, "EVALRUN_REQUIRE_YAML_LANGUAGE_SERVER", "yaml-language-server not found"),
]
IDS = ["shared-data", "shared-data-parameter", "language-server"]


@pytest.fixture
def nothing_outside(monkeypatch, tmp_path):
    monkeypatch.setenv("EVALRUN_SHARED_DATA", str(tmp_path / "absent"))
    monkeypatch.setenv("EVALRUN_YAML_LANGUAGE_SERVER", str(tmp_path / "absent"))
    monkeypatch.setenv("CI", "true")
    for _, variable, _ in CASES:
        monkeypatch.delenv(variable, raising=False)


@pytest.mark.parametrize("need, variable, message", CASES, ids=IDS)
def test_what_is_missing_skips_with_its_reason_under_ci(nothing_outside, need, variable, message):
    with pytest.raises(pytest.skip.Exception) as skipped:
        need()
    assert str(skipped.value).startswith(message)
    assert str(skipped.value).endswith(f"(set {variable}=1 to make this a failure)")


@pytest.mark.parametrize("need, variable, message", CASES, ids=IDS)
def test_what_is_missing_fails_where_its_variable_insists(nothing_outside, monkeypatch, need, variable, message):
    monkeypatch.setenv(variable, "1")
    with pytest.raises(pytest.fail.Exception) as failed:
        need()
    assert str(failed.value).startswith(message)
    assert str(failed.value).endswith(f"; {variable} is set, so this is a failure, not a skip")
