"""Property-based: hostile input of any shape — random bytes, deep, wide, huge numbers, odd keys — fed
to `validate`, to the loader and to transcript reading. The answer is diagnostics or a TranscriptError,
never a traceback, within a deadline, and memory stays bounded."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from runner.api import validate
from runner.suite.load import load_file
from runner.transcripts.read import TranscriptError, build_trajectory
from runner.transcripts.transcript_file import read_recording

SUFFIXES = [".yaml", ".json", ".jsonl"]
ODD_KEYS = st.sampled_from(["goal_details", "goals", "cases", "<<", "", " ", "\u0000", "\ud800", "\u202e", "..", "$schema",
                            "role", "content", "tool_calls", "type", "tool_use", "messages", "a" * 300])
# Numbers whose text Python's int() refuses (4,301+ digits) cannot even be repr'd by hypothesis: they
# are drawn as placeholders and written into the text afterwards.
_HUGE_TEXT = {"@HUGE1@": "9" * 4301, "@HUGE2@": "-" + "1" * 5000, "@HUGE3@": "1" + "0" * 4300 + ".5",
              "@HUGE4@": "1e99999", "@HUGE5@": "9" * 4300}
HUGE_NUMBERS = st.sampled_from(sorted(_HUGE_TEXT)) | st.sampled_from([1e308, float("inf"), float("nan"), 2 ** 63])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20) | HUGE_NUMBERS,
    lambda children: st.lists(children, max_size=6) | st.dictionaries(ODD_KEYS | st.text(max_size=8), children, max_size=6),
    max_leaves=40)


# Deep and wide values are drawn as a recipe and built in the test: hypothesis would otherwise try to
# print a 3,000-level value when it reports an example.
structures = st.one_of(
    st.tuples(st.just("value"), json_values),
    st.tuples(st.just("deep"), st.integers(90, 3000), st.sampled_from(["list", "dict"])),
    st.tuples(st.just("wide"), st.integers(1000, 250_000), st.sampled_from([0, "a", None])),
)


def _recipe_text(recipe: tuple, suffix: str) -> str:
    if recipe[0] == "deep":  # written directly: json.dumps itself cannot go this deep
        depth = recipe[1]
        opening, closing = ("[", "]") if recipe[2] == "list" else ('{"content": ', "}")
        return opening * depth + '"x"' + closing * depth
    if recipe[0] == "wide":
        return _text_of([recipe[2]] * recipe[1], suffix)
    return _text_of(recipe[1], suffix)


def _text_of(value: object, suffix: str) -> str:
    if suffix == ".jsonl" and isinstance(value, list):
        text = "\n".join(json.dumps(v) for v in value)
    else:
        text = json.dumps(value)  # inf, nan and lone surrogates are written as Python's json writes them
    for placeholder, digits in _HUGE_TEXT.items():
        text = text.replace(f'"{placeholder}"', digits)
    return text


def _check_loader(path: Path) -> None:
    _cases, diagnostics, _ = load_file(path)
    for d in diagnostics:
        assert d.line >= 1 and d.column >= 1 and d.message
        str(d).encode("utf-8")  # printable: no lone surrogates


def _check_transcript(path: Path) -> None:
    try:
        recording = read_recording(path)
    except TranscriptError as error:
        str(error).encode("utf-8")
        return
    build_trajectory(recording.messages, normalized=True)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("hostile")


@settings(max_examples=150, deadline=10_000, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.binary(max_size=3000), st.sampled_from(SUFFIXES))
def test_random_bytes(folder, data, suffix):
    path = folder / f"b{suffix}"
    path.write_bytes(data)
    _check_loader(path)
    _check_transcript(path)


@settings(max_examples=120, deadline=10_000, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(structures, st.sampled_from(SUFFIXES))
def test_random_structures(folder, recipe, suffix):
    path = folder / f"s{suffix}"
    path.write_text(_recipe_text(recipe, suffix), encoding="utf-8", errors="surrogatepass")
    _check_loader(path)
    _check_transcript(path)


@settings(max_examples=60, deadline=10_000, suppress_health_check=[HealthCheck.too_slow])
@given(structures)
def test_random_structures_as_yaml_through_validate(folder, recipe):
    # JSON text is YAML too; as a folder it goes through collection by shape and the config search
    (folder / "v").mkdir(exist_ok=True)
    (folder / "v" / "s.yaml").write_text(_recipe_text(recipe, ".json"), encoding="utf-8", errors="surrogatepass")
    for d in validate([folder / "v"]):
        str(d).encode("utf-8")


def test_memory_stays_bounded_on_the_worst_shapes(tmp_path):
    """The widest and deepest inputs, read by the loader and the transcript reader in a fresh process
    (so earlier tests do not count): the peak stays far below what a CI machine has."""
    import subprocess

    from tests.helpers.cli_helpers import REPO, cli_env
    from tests.helpers.input_limits import PEAK_KIB

    wide = tmp_path / "wide.json"
    wide.write_text("[" + ",".join(['"abcdefgh"'] * 1_000_000) + "]", encoding="utf-8")  # 11 MiB: above the suite limit
    wide_suite = tmp_path / "wide_suite.json"
    wide_suite.write_text("[" + ",".join(["1"] * 4_000_000) + "]", encoding="utf-8")  # 8 MiB of values
    deep = tmp_path / "deep.yaml"
    deep.write_text("a:\n" + "".join("  " * i + "- \n" for i in range(1, 3000)), encoding="utf-8")
    code = (
        "import sys\nfrom pathlib import Path\nfrom tests.suite.test_properties_hostile import _check_loader, "
        "_check_transcript\n"
        f"for p in {[str(wide), str(wide_suite), str(deep)]!r}:\n    _check_loader(Path(p)); _check_transcript(Path(p))\n"
        + PEAK_KIB)
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=cli_env(), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    peak_mib = int(done.stdout.split()[-1]) / 1024
    assert peak_mib < 500, f"peak {peak_mib:.0f} MiB"
