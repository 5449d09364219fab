"""`--shard I/N` and `evalrun merge`: a stable split by case id, and the shards of a CI matrix joined
into one report with one verdict, through the real CLI."""
from __future__ import annotations

import functools
import hashlib
import json
import operator
import shutil
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from runner.util.resources import schema_path
from runner.util.shard import parse_shard
from tests.helpers.cli_helpers import run_cli
from tests.helpers.run_shards import FAILING, IDS, project


def expected_shard(case_id: str, count: int) -> int:
    return int.from_bytes(hashlib.sha256(case_id.encode()).digest()[:8], "big") % count + 1


def report(root, folder):
    data = json.loads((root / folder / "report.json").read_text())
    jsonschema.validate(data, json.loads(schema_path("report").read_text()))
    return data


def run_shards(root, count=3):
    for i in range(1, count + 1):
        done = run_cli("suites", "--shard", f"{i}/{count}", "--output-dir", f"shard{i}", cwd=root)
        assert done.returncode in (0, 1, 5), done.stdout + done.stderr


def test_shards_split_by_a_hash_of_the_id_whatever_the_order_of_the_cases(tmp_path):
    project(tmp_path)
    run_shards(tmp_path)
    got = {i: [c["id"] for c in report(tmp_path, f"shard{i}")["cases"]] for i in (1, 2, 3)}
    for i in (1, 2, 3):
        assert got[i] == [c for c in IDS if expected_shard(c, 3) == i]
        assert report(tmp_path, f"shard{i}")["shard"] == f"{i}/3"
    assert sorted(functools.reduce(operator.iadd, got.values(), [])) == IDS and all(got.values())
    project(tmp_path, ids=list(reversed(IDS)))  # reordered: every case stays in its shard
    assert run_cli("suites", "--shard", "2/3", "--output-dir", "again", cwd=tmp_path).returncode in (0, 1)
    assert sorted(c["id"] for c in report(tmp_path, "again")["cases"]) == sorted(got[2])


def test_merge_joins_the_shards_into_the_report_of_one_run(tmp_path):
    project(tmp_path)
    whole = run_cli("suites", "--output-dir", "whole", cwd=tmp_path)
    assert whole.returncode == 1
    run_shards(tmp_path)
    done = run_cli("merge", "shard1", "shard2/report.json", "shard3", "-o", "merged", "--format", "junit",
                   "--format", "md", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    merged, single = report(tmp_path, "merged"), report(tmp_path, "whole")
    keys = ("total", "passed", "failed", "error", "skipped", "pass_rate", "mean_journey_completion", "exit_code")
    assert {k: merged["summary"][k] for k in keys} == {k: single["summary"][k] for k in keys}
    assert merged["summary"]["exit_reason"] == "3 case(s) failed: exit 1"
    assert merged["merged_from"] == ["shard1", "shard2/report.json", "shard3"]
    assert sorted(c["id"] for c in merged["cases"]) == IDS
    assert "3 case(s) failed: exit 1" in done.stdout.splitlines()
    cases = ET.parse(tmp_path / "merged" / "junit.xml").getroot().iter("testcase")
    assert sorted(c.get("name") for c in cases) == IDS
    summary_md = (tmp_path / "merged" / "summary.md").read_text()
    assert all(failing in summary_md for failing in FAILING)


def test_merge_applies_min_pass_rate_as_one_run_would(tmp_path):
    project(tmp_path)
    run_shards(tmp_path)
    done = run_cli("merge", "shard1", "shard2", "shard3", "-o", "merged", "--min-pass-rate", "0.75", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert report(tmp_path, "merged")["summary"]["exit_reason"] == \
        "min_pass_rate 0.75 reached (0.75) although 3 case(s) failed: exit 0"


def test_merge_checks_the_whole_run_against_a_baseline(tmp_path):
    project(tmp_path, failing=FAILING - {"case-03"})  # the baseline: case-03 passed
    assert run_cli("suites", "--output-dir", "base", cwd=tmp_path).returncode == 1
    project(tmp_path)
    run_shards(tmp_path)
    done = run_cli("merge", "shard1", "shard2", "shard3", "-o", "merged", "--baseline", "base",
                   "--max-regression", "0.2", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    summary = report(tmp_path, "merged")["summary"]
    assert summary["baseline"]["newly_failing"] == ["case-03"]
    assert summary["exit_reason"] == ("baseline base: 1 case(s) that passed in the baseline now fail (case-03); "
                                      "3 case(s) failed: exit 1")
    assert run_cli("merge", "shard1", "shard2", "shard3", "-o", "m2", "--baseline", "nothing",
                   cwd=tmp_path).returncode == 4


def test_merge_refuses_shards_that_do_not_belong_together(tmp_path):
    project(tmp_path)
    run_shards(tmp_path)
    # the same shard twice
    twice = run_cli("merge", "shard1", "shard1", "-o", "m", cwd=tmp_path)
    assert twice.returncode == 4 and twice.stderr == "evalrun merge: shard1 is given twice\n"
    shutil.copytree(tmp_path / "shard1", tmp_path / "copy")
    copy = run_cli("merge", "shard1", "copy", "-o", "m", cwd=tmp_path)
    assert copy.returncode == 4 and "copy and shard1 are both shard 1/3" in copy.stderr
    # a case in two shards (a report edited to claim another shard)
    shutil.copytree(tmp_path / "shard1", tmp_path / "forged")
    forged = json.loads((tmp_path / "forged" / "report.json").read_text())
    forged["shard"] = "2/3"
    (tmp_path / "forged" / "report.json").write_text(json.dumps(forged))
    overlap = run_cli("merge", "shard1", "forged", "-o", "m", cwd=tmp_path)
    first = report(tmp_path, "shard1")["cases"][0]["id"]
    assert overlap.returncode == 4
    assert f"case '{first}' is in both shard1 and forged: shards must not overlap" in overlap.stderr
    # another N
    assert run_cli("suites", "--shard", "1/2", "--output-dir", "half", cwd=tmp_path).returncode in (0, 1)
    other_n = run_cli("merge", "shard2", "half", "-o", "m", cwd=tmp_path)
    assert other_n.returncode == 4 and "ran a different number of shards than" in other_n.stderr
    # another configuration
    project(tmp_path, config="embeddings: {enabled: false}\nsimilarity_threshold: 0.9\n")
    assert run_cli("suites", "--shard", "3/3", "--output-dir", "other", cwd=tmp_path).returncode in (0, 1)
    other = run_cli("merge", "shard1", "shard2", "other", "-o", "m", cwd=tmp_path)
    assert other.returncode == 4
    assert "evalrun merge: other ran a different configuration than shard1: only shards of one run can be merged" \
        in other.stderr
    # not a shard at all
    assert run_cli("suites", "--output-dir", "whole", cwd=tmp_path).returncode == 1
    whole = run_cli("merge", "shard1", "whole", "-o", "m", cwd=tmp_path)
    assert whole.returncode == 4 and "whole is not a shard: it was not run with --shard I/N" in whole.stderr
    assert not (tmp_path / "m").exists()


def test_a_missing_shard_makes_the_merged_verdict_exit_3(tmp_path):
    project(tmp_path)
    run_shards(tmp_path)
    done = run_cli("merge", "shard1", "shard3", "-o", "merged", cwd=tmp_path)
    assert done.returncode == 3
    assert report(tmp_path, "merged")["summary"]["exit_reason"] == \
        "shard(s) 2/3 missing: the merged report covers only part of the suite: exit 3"


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "a/b", "1"])
def test_a_bad_shard_is_a_usage_error(tmp_path, text):
    with pytest.raises(ValueError):
        parse_shard(text)
    project(tmp_path)
    done = run_cli("suites", "--shard", text, cwd=tmp_path)
    assert done.returncode == 4 and "--shard" in done.stderr


def test_merge_keeps_the_agent_and_the_selection_of_the_shards(tmp_path):
    agents = "agents:\n  bot: {type: replay, dir: rec}\n  other: {type: replay, dir: rec}\n"
    project(tmp_path, config="embeddings: {enabled: false}\n" + agents)
    for i, agent in ((1, "bot"), (2, "bot"), (3, "bot"), (4, "other")):
        shard = f"{min(i, 3)}/3"
        done = run_cli("suites", "--shard", shard, "--agent", agent, "-k", "case", "--output-dir", f"s{i}", cwd=tmp_path)
        assert done.returncode in (0, 1), done.stdout + done.stderr
    mixed = run_cli("merge", "s1", "s2", "s4", "-o", "m", cwd=tmp_path)
    assert mixed.returncode == 4
    assert mixed.stderr == "evalrun merge: s4 ran a different --agent than s1: only shards of one run can be merged\n"
    # each shard's --last-failed ids (edited in, as a --lf shard would record them) are kept together
    only = {1: ["case-a"], 2: None, 3: ["case-b", "case-c"]}
    for i, ids in only.items():
        data = report(tmp_path, f"s{i}")
        data["selection"]["only"] = ids
        (tmp_path / f"s{i}" / "report.json").write_text(json.dumps(data))
    done = run_cli("merge", "s3", "s1", "s2", "-o", "merged", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    merged = report(tmp_path, "merged")
    assert merged["agent"] == "bot" and "agent: every live case was played by 'bot' (--agent)" in done.stdout
    assert merged["selection"] == {"filters": ["case"], "tags": [], "only": ["case-a", "case-b", "case-c"]}
