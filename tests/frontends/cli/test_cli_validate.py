"""`evalrun validate`, `schema`, `init`, `--version` and `--help`, the CLI called in this process (run_cli)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from runner import __version__
from tests.helpers.cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[3]
HEAVY = ("litellm", "sentence_transformers", "torch", "transformers", "openai", "numpy", "opentelemetry")

VALID = """\
# yaml-language-server: $schema=../schemas/suite.schema.json
id: greet
starting_sentence: hello
goal_details:
  - {type: text, name: greet, keywords: [hello]}
"""

INVALID = """\
id: broken
goal_detail: []
goals: {a: [b]}
goal_details:
  - {type: text, name: a, keywords: [x]}
"""


def evalrun(cwd: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return run_cli(*args, cwd=cwd, timeout=timeout)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_validate_valid_folder_exits_0(tmp_path):
    write(tmp_path / "suites" / "greet.yaml", VALID)
    write(tmp_path / "suites" / "more" / "deeper" / "other.yaml", VALID.replace("id: greet", "id: other"))
    done = evalrun(tmp_path, "validate", "suites")
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr.splitlines() == ["config: none found (searched suites .. .); using defaults",
                                        "all suites are valid"]


def test_validate_reports_every_problem_and_exits_4(tmp_path):
    write(tmp_path / "suites" / "ok.yaml", VALID)
    write(tmp_path / "suites" / "nested" / "broken.yaml", INVALID)
    done = evalrun(tmp_path, "validate", "suites")
    assert done.returncode == 4
    assert done.stdout.splitlines() == [
        "suites/nested/broken.yaml:2:1: error: unknown key 'goal_detail' in the top level "
        "(did you mean 'goal_details'?)",
        "suites/nested/broken.yaml:3:13: error: goal 'b' is listed in goals but has no goal_details entry",
    ]
    assert done.stderr.splitlines()[-1] == "2 error(s), 0 warning(s)"


def test_validate_yaml_syntax_error(tmp_path):
    write(tmp_path / "s.yaml", "id: a\ngoal_details: [\n")
    done = evalrun(tmp_path, "validate", "s.yaml")
    assert done.returncode == 4
    assert done.stdout == "s.yaml:3:1: error: YAML syntax error: did not find expected node content " \
                          "(while parsing a flow node)\n"


def test_warnings_alone_exit_0(tmp_path):
    write(tmp_path / "s.yaml", VALID + "transcript: missing.json\n")
    done = evalrun(tmp_path, "validate", "s.yaml")
    assert done.returncode == 0
    assert done.stdout == ("s.yaml:6:13: warning: transcript 'missing.json' does not exist (relative to .); "
                           "the case will end in error when run\n")
    assert done.stderr.splitlines()[-1] == "0 error(s), 1 warning(s)"


def test_validate_json_format(tmp_path):
    write(tmp_path / "s" / "bad.yaml", INVALID)
    done = evalrun(tmp_path, "validate", "s", "--format", "json")
    assert done.returncode == 4
    report = json.loads(done.stdout)
    assert report == {"valid": False, "diagnostics": [
        {"path": "s/bad.yaml", "line": 2, "column": 1, "severity": "error", "code": "unknown-key",
         "message": "unknown key 'goal_detail' in the top level (did you mean 'goal_details'?)"},
        {"path": "s/bad.yaml", "line": 3, "column": 13, "severity": "error", "code": "unknown-goal",
         "message": "goal 'b' is listed in goals but has no goal_details entry"},
    ]}
    write(tmp_path / "s" / "bad.yaml", VALID)
    done = evalrun(tmp_path, "validate", "--format", "json", "s")
    assert (done.returncode, json.loads(done.stdout)) == (0, {"valid": True, "diagnostics": []})


def test_validate_missing_path_and_usage_errors(tmp_path):
    done = evalrun(tmp_path, "validate", "nope")
    assert (done.returncode, done.stdout) == (4, "nope:1:1: error: no such file or folder\n")
    assert evalrun(tmp_path, "validate").returncode == 4
    assert evalrun(tmp_path, "validate", "x", "--format", "xml").returncode == 4


def test_validate_checks_the_config_too(tmp_path):
    write(tmp_path / "suites" / "ok.yaml", VALID)
    write(tmp_path / "suites" / "evalrun.yaml", "similarity_threshold: 1.5\n")
    done = evalrun(tmp_path, "validate", "suites")
    assert done.returncode == 4
    assert done.stdout.rstrip().endswith(
        "evalrun.yaml:1:23: error: similarity_threshold is 1.5, but it must be at most 1")


def test_validate_the_examples(tmp_path):
    done = evalrun(tmp_path, "validate", str(ROOT / "suites"), str(ROOT / "suites" / "failing"))
    assert (done.returncode, done.stdout) == (0, "")


@pytest.mark.parametrize("kind", ["suite", "config", "report"])
def test_schema_prints_the_committed_schema(tmp_path, kind):
    done = evalrun(tmp_path, "schema", kind)
    assert done.returncode == 0
    assert done.stdout == (ROOT / "schemas" / f"{kind}.schema.json").read_text(encoding="utf-8")
    assert json.loads(done.stdout)["$id"].endswith(f"/{kind}.schema.json")


def test_schema_defaults_to_suite_and_rejects_unknown_kinds(tmp_path):
    assert evalrun(tmp_path, "schema").stdout == (ROOT / "schemas" / "suite.schema.json").read_text(encoding="utf-8")
    done = evalrun(tmp_path, "schema", "nope")
    assert done.returncode == 4 and "invalid choice: 'nope'" in done.stderr


def test_init_writes_a_starter_that_validates_and_keeps_existing_files(tmp_path):
    done = evalrun(tmp_path, "init", "proj")
    assert done.returncode == 0
    written = {"proj/suites/order-status.yaml", "proj/suites/transcripts/order-status.json", "proj/evalrun.yaml",
               "proj/schemas/suite.schema.json", "proj/schemas/config.schema.json", "proj/.vscode/settings.json",
               "proj/.vscode/extensions.json", "proj/schemas/adk-evalset.schema.json",
               "proj/schemas/adk-eval-config.schema.json"}
    assert {line.split()[1] for line in done.stdout.splitlines() if line.startswith("wrote")} == written
    for relative in written:
        assert (tmp_path / relative).is_file()
    assert (tmp_path / "proj/schemas/suite.schema.json").read_text() == (ROOT / "schemas/suite.schema.json").read_text()
    # an editor on Google ADK's and Agentflow's eval files gets their schemas too
    settings = json.loads((tmp_path / "proj/.vscode/settings.json").read_text())
    assert settings["json.schemas"] == [
        {"fileMatch": ["*.evalset.json", "*.test.json"], "url": "./schemas/adk-evalset.schema.json"},
        {"fileMatch": ["test_config.json", "eval_config.json"], "url": "./schemas/adk-eval-config.schema.json"}]
    for kind in ("adk-evalset", "adk-eval-config"):
        assert (tmp_path / f"proj/schemas/{kind}.schema.json").read_text() == \
            (ROOT / f"schemas/{kind}.schema.json").read_text()

    check = evalrun(tmp_path, "validate", "proj/suites")
    assert (check.returncode, check.stdout) == (0, "")
    assert check.stderr.splitlines() == ["config: proj/evalrun.yaml", "all suites are valid"]
    check = evalrun(tmp_path, "validate", "proj/evalrun.yaml")
    assert (check.returncode, check.stdout) == (0, "")

    # the modelines of the starter resolve to the copied schemas
    suite_text = (tmp_path / "proj/suites/order-status.yaml").read_text()
    assert suite_text.startswith("# yaml-language-server: $schema=../schemas/suite.schema.json\n")
    assert (tmp_path / "proj/evalrun.yaml").read_text().startswith(
        "# yaml-language-server: $schema=schemas/config.schema.json\n")

    (tmp_path / "proj/suites/order-status.yaml").write_text(suite_text + "# my edit\n")
    again = evalrun(tmp_path, "init", "proj")
    assert again.returncode == 0
    assert {line.split()[1] for line in again.stdout.splitlines() if line.startswith("kept")} == written
    assert not any(line.startswith("wrote") for line in again.stdout.splitlines())
    assert (tmp_path / "proj/suites/order-status.yaml").read_text().endswith("# my edit\n")


def test_init_in_the_current_folder(tmp_path):
    assert evalrun(tmp_path, "init").returncode == 0
    assert evalrun(tmp_path, "validate", "suites").returncode == 0


def test_version(tmp_path):
    done = evalrun(tmp_path, "--version")
    assert (done.returncode, done.stdout) == (0, f"evalrun {__version__}\n")


def test_help_lists_the_commands(tmp_path):
    done = evalrun(tmp_path, "--help")
    assert done.returncode == 0
    # Each command on a line of its own with what it does (the usage line alone names none of them); argparse
    # before 3.13 puts the description of a name as long as `calibrate` on the next line.
    listed = dict(re.findall(r"^    (\w+)(?: +|\n {8,})(\S.*)$", done.stdout, re.MULTILINE))
    assert list(listed) == ["run", "quick", "generate", "rescore", "report", "compare", "merge", "validate", "list",
                            "record", "simulate", "watch", "schema", "calibrate", "init", "convert", "import",
                            "redteam", "cache", "mutate", "view"]
    assert all(len(description.split()) >= 3 for description in listed.values())
    validate = evalrun(tmp_path, "validate", "--help")
    assert validate.returncode == 0 and validate.stdout.startswith("usage: evalrun validate")


_PROBE = f"""
import sys
from pathlib import Path
import runner.frontends.cli
code = runner.frontends.cli.main(sys.argv[1:])
heavy = sorted({{m.split(".")[0] for m in sys.modules}} & set({HEAVY!r}))
print(repr((code, heavy)))
"""


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["validate", "suites"], ["schema", "suite"]],
                         ids=" ".join)
def test_light_commands_do_not_import_heavy_libraries(tmp_path, args):
    write(tmp_path / "suites" / "greet.yaml", VALID)
    done = subprocess.run([sys.executable, "-c", _PROBE, *args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "(0, [])"


@pytest.mark.process  # what a fresh interpreter imports: only a new process starts with none
def test_help_import_time_has_no_heavy_modules(tmp_path):
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "runner", "--help"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    imported = {line.split("|")[-1].strip().split(".")[0] for line in done.stderr.splitlines() if "|" in line}
    assert not imported & set(HEAVY)
    assert "runner" in imported


# ------------------------------------------------------------------ review fixes

def test_validate_prints_a_key_holding_a_lone_surrogate(tmp_path):
    write(tmp_path / "suites" / "s.json",
          '{"id": "x",\n "goal_details": [{"type": "text", "name": "a", "keywords": ["k"]}],\n "\\ud800oops": 1}\n')
    done = evalrun(tmp_path, "validate", "suites")
    assert done.returncode == 4
    assert "Traceback" not in done.stderr
    # `tools` is near enough to '?oops' for difflib to suggest it
    assert done.stdout == "suites/s.json:3:2: error: unknown key '\ufffdoops' in the top level (did you mean 'tools'?)\n"


def test_validate_json_output_with_a_lone_surrogate(tmp_path):
    write(tmp_path / "suites" / "s.json", '{"id": "x\\udc00", "goal_details": [], "\\ud800": 1}\n')
    done = evalrun(tmp_path, "validate", "--format", "json", "suites")
    assert done.returncode == 4, done.stderr
    assert [d["message"] for d in json.loads(done.stdout)["diagnostics"]] == ["unknown key '\ufffd' in the top level"]


def test_init_on_an_existing_file_is_a_clean_usage_error(tmp_path):
    (tmp_path / "afile").write_text("keep me")
    done = evalrun(tmp_path, "init", "afile")
    assert (done.returncode, done.stdout, done.stderr) == (4, "", "evalrun init: 'afile' exists and is not a folder\n")
    assert (tmp_path / "afile").read_text() == "keep me"


def test_init_below_a_file_says_which_file_cannot_be_written(tmp_path):
    (tmp_path / "afile").write_text("keep me")
    done = evalrun(tmp_path, "init", "afile/proj")
    assert (done.returncode, done.stdout) == (4, "")
    assert done.stderr == "evalrun init: cannot write afile/proj/suites/order-status.yaml: Not a directory\n"


def test_init_recommends_the_yaml_extension_that_reads_the_schemas(tmp_path):
    assert evalrun(tmp_path, "init", "proj").returncode == 0
    assert json.loads((tmp_path / "proj/.vscode/extensions.json").read_text()) == {"recommendations": ["redhat.vscode-yaml"]}
    assert "redhat.vscode-yaml" in (ROOT / "docs" / "reference" / "suite-format.md").read_text(encoding="utf-8")


def test_init_never_follows_a_dangling_symlink_out_of_the_folder(tmp_path):
    import os

    (tmp_path / "proj").mkdir()
    outside = tmp_path / "outside.yaml"
    os.symlink(outside, tmp_path / "proj" / "evalrun.yaml")
    done = evalrun(tmp_path, "init", "proj")
    assert done.returncode == 4, done.stdout + done.stderr
    assert not outside.exists()
    assert f"proj/evalrun.yaml is a symbolic link to {outside}; evalrun init writes only inside proj" in done.stderr


def test_init_never_writes_through_a_linked_folder(tmp_path):
    import os

    (tmp_path / "proj").mkdir()
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "proj" / "suites")
    done = evalrun(tmp_path, "init", "proj")
    assert done.returncode == 4
    assert list((tmp_path / "elsewhere").iterdir()) == []
    assert "proj/suites is a symbolic link" in done.stderr


def test_init_accepts_a_link_that_stays_inside(tmp_path):
    import os

    (tmp_path / "proj" / "real-suites").mkdir(parents=True)
    os.symlink("real-suites", tmp_path / "proj" / "suites")
    assert evalrun(tmp_path, "init", "proj").returncode == 0
    assert (tmp_path / "proj" / "real-suites" / "order-status.yaml").is_file()
