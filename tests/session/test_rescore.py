"""`evalrun rescore RUN_DIR` through the real CLI: it scores the cases the run selected (its -k, --tag,
--shard, --last-failed, recorded in report.json), answers from the judge's cache unless told not to,
and takes its suites and evalrun.yaml from the command line or the current project, never from the
run folder, which is data (it may be a CI artifact from a fork)."""
from __future__ import annotations

import json
import re

from tests.fakes.openai_server import FakeOpenAI
from tests.helpers.cli_helpers import run_cli, tool_call_messages, write, write_json


def judge_replying_match(request) -> str:
    """A judge that says "match" to everything, tagged with the call's verdict token."""
    prompt = json.dumps(request["messages"])
    token = re.search(r"V[0-9A-F]{20}", prompt)
    return json.dumps({"reason": "same meaning", "match": True, "score": 0.9,
                       "verdict_id": token.group(0) if token else None})


def evalrun(root, *args, **env):
    return run_cli(*args, cwd=root, env=env)


def judged_project(root, base_url: str, ids_and_tags: dict[str, list[str]]):
    write(root / "evalrun.yaml", f"""
        embeddings: {{enabled: false}}
        judge: {{model: openai/fake-judge, api_base: "{base_url}", max_retries: 0}}
        """)
    cases = "".join(f"""
          - id: {case_id}
            tags: {json.dumps(tags)}
            transcript: t.json
            goal_details:
              - type: tool_call
                name: cancel
                tool_name: cancel_booking
                args: {{reason: "{case_id}: plans changed"}}
                arg_matching: {{reason: fuzzy}}""" for case_id, tags in ids_and_tags.items())
    write(root / "suites" / "s.yaml", "cases:" + cases + "\n")
    write_json(root / "suites" / "t.json", tool_call_messages("cancel_booking", {"reason": "my plans changed"}))


def report_of(root, folder) -> dict:
    return json.loads((root / folder / "report.json").read_text())


def ids_of(root, folder) -> list[str]:
    return [case["id"] for case in report_of(root, folder)["cases"]]


def test_rescore_scores_the_runs_own_selection_from_the_judges_cache(tmp_path):
    ids = {"alpha-1": ["smoke"], "alpha-2": [], "alpha-3": ["smoke", "slow"], "beta-1": ["smoke"], "beta-2": []}
    with FakeOpenAI() as fake:
        fake.default = judge_replying_match
        judged_project(tmp_path, fake.base_url, ids)
        first = evalrun(tmp_path, "suites", "-k", "alpha", "--tag", "smoke", "--output-dir", "out")
        assert first.returncode == 0, first.stdout + first.stderr
        assert ids_of(tmp_path, "out") == ["alpha-1", "alpha-3"]
        asked = len(fake.requests)
        assert asked == 2

        again = evalrun(tmp_path, "rescore", "out", "--output-dir", "again")
        assert again.returncode == 0, again.stdout + again.stderr
        assert ids_of(tmp_path, "again") == ["alpha-1", "alpha-3"]  # not every case of the saved paths
        assert len(fake.requests) == asked  # every verdict came from the judge's cache
        assert report_of(tmp_path, "out")["selection"] == {"filters": ["alpha"], "tags": ["smoke"], "only": None}
        assert report_of(tmp_path, "again")["selection"] == report_of(tmp_path, "out")["selection"]

        narrowed = evalrun(tmp_path, "rescore", "out", "-k", "alpha-3", "--output-dir", "narrowed")
        assert narrowed.returncode == 0, narrowed.stdout + narrowed.stderr
        assert ids_of(tmp_path, "narrowed") == ["alpha-3"]  # -k narrows the run's selection further
        assert report_of(tmp_path, "narrowed")["selection"]["only"] == ["alpha-3"]

        fresh = evalrun(tmp_path, "rescore", "out", "--no-cache", "--output-dir", "fresh")
        assert fresh.returncode == 0, fresh.stdout + fresh.stderr
        assert len(fake.requests) == asked + 2  # asked for: the judge is asked again


def test_rescore_of_a_shard_and_of_a_last_failed_run_keeps_their_cases(tmp_path):
    with FakeOpenAI() as fake:
        fake.default = judge_replying_match
        judged_project(tmp_path, fake.base_url, {f"case-{n}": [] for n in range(8)})
        shard = evalrun(tmp_path, "suites", "--shard", "2/3", "--output-dir", "shard")
        assert shard.returncode == 0, shard.stdout + shard.stderr
        again = evalrun(tmp_path, "rescore", "shard", "--output-dir", "shard-again")
        assert again.returncode == 0, again.stdout + again.stderr
        assert ids_of(tmp_path, "shard-again") == ids_of(tmp_path, "shard") and report_of(tmp_path, "shard-again")["shard"] == "2/3"

        fake.default = lambda request: (judge_replying_match(request).replace("true", "false")
                                        if "case-5" in json.dumps(request) else judge_replying_match(request))
        assert evalrun(tmp_path, "suites", "--no-cache").returncode == 1  # case-5 fails: the latest report's failure
        rerun = evalrun(tmp_path, "suites", "--lf")
        assert rerun.returncode == 1, rerun.stdout + rerun.stderr
        latest = tmp_path / ".evalrun" / "reports" / "latest"
        assert [c["id"] for c in json.loads((latest / "report.json").read_text())["cases"]] == ["case-5"]
        rescored = evalrun(tmp_path, "rescore", str(latest), "--output-dir", "lf-again")
        assert ids_of(tmp_path, "lf-again") == ["case-5"], rescored.stdout + rescored.stderr
        assert report_of(tmp_path, "lf-again")["selection"]["only"] == ["case-5"]


EVIL_CHECK = """
    import os, pathlib

    def pwn(final_text, options):
        pathlib.Path(os.environ["MARKER"]).write_text("ran " + os.environ.get("VICTIM_KEY", ""))
        return {"passed": True, "reason": "fine"}
    """


def test_a_run_folder_from_elsewhere_cannot_choose_the_suites_or_the_config(tmp_path):
    """A CI artifact of a fork's pull request: its report.json names the fork's suites (with a `python`
    check that runs code) and the fork's evalrun.yaml (a judge at the fork's api_base, to receive the
    user's key). Rescoring it from the user's project runs neither."""
    marker = tmp_path / "pwned"
    env = {"MARKER": str(marker), "VICTIM_KEY": "sk-victim-0123456789"}
    with FakeOpenAI() as fork_server:
        fork_server.default = judge_replying_match
        evil, victim = tmp_path / "fork", tmp_path / "mine"
        write(evil / "evalrun.yaml", f"""
            embeddings: {{enabled: false}}
            judge: {{model: openai/fake-judge, api_base: "{fork_server.base_url}", api_key_env: VICTIM_KEY,
                     max_retries: 0}}
            """)
        write(evil / "team" / "__init__.py", "")
        write(evil / "team" / "checks.py", EVIL_CHECK)
        write(evil / "suites" / "s.yaml", """
            cases:
              - id: lookup
                transcript: t.json
                goal_details:
                  - {type: tool_call, name: look, tool_name: lookup, args: {q: the order}, arg_matching: {q: fuzzy}}
                checks:
                  - {type: python, function: team.checks:pwn}
            """)
        write_json(evil / "suites" / "t.json", tool_call_messages("lookup", {"q": "the order please"}))
        made = evalrun(evil, "suites", "--output-dir", str(tmp_path / "artifact"), **env)
        assert made.returncode == 0 and marker.exists(), made.stdout + made.stderr  # in the fork, it runs
        marker.unlink()
        calls_by_the_fork = len(fork_server.requests)

        write(victim / "evalrun.yaml", "embeddings: {enabled: false}\n")
        (victim / ".git").mkdir()  # the user's project is a repository: the artifact lies outside it
        write(victim / "suites" / "s.yaml", """
            cases:
              - id: lookup
                transcript: t.json
                goal_details:
                  - {type: tool_call, name: look, tool_name: lookup, args: {q: the order please}}
            """)
        write_json(victim / "suites" / "t.json", tool_call_messages("lookup", {"q": "the order please"}))

        refused = evalrun(victim, "rescore", "../artifact", **env)
        assert refused.returncode == 4, refused.stdout + refused.stderr
        assert refused.stderr.splitlines()[-1].startswith(
            f"evalrun rescore: ../artifact/report.json names suites outside this project (.): "
            f"'{evil.resolve() / 'suites'}'. A run folder cannot choose what runs")
        mine = evalrun(victim, "rescore", "../artifact", "suites", "--output-dir", "out", **env)
        assert mine.returncode == 0, mine.stdout + mine.stderr
        assert mine.stderr.splitlines()[0] == "config: evalrun.yaml"  # the project's own, not the fork's
        assert report_of(victim, "out")["config"]["judge"] is None
        assert not marker.exists()  # the fork's check never ran
        assert len(fork_server.requests) == calls_by_the_fork  # and its server never heard from us


def test_a_tampered_report_header_is_refused_with_the_field_named(tmp_path):
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\n")
    write(tmp_path / "suites" / "s.yaml", """
        transcript: t.json
        goal_details: [{type: tool_call, name: look, tool_name: lookup, args: {q: x}}]
        """)
    write_json(tmp_path / "suites" / "t.json", tool_call_messages("lookup", {"q": "x"}))
    assert evalrun(tmp_path, "suites", "--output-dir", "out").returncode == 0
    report = tmp_path / "out" / "report.json"
    report.write_text(report.read_text().replace('"runs": ', '"runs_": ').replace(
        '"repeats": null', '"repeats": {"runs": "3", "policy": "all", "pass_at_k": {}, "pass_hat_k": {}}'))
    done = evalrun(tmp_path, "rescore", "out")
    assert done.returncode == 4
    assert done.stderr.splitlines()[-1] == ("evalrun rescore: out/report.json is not a valid evalrun report: "
                                            "summary.repeats.runs: Input should be a valid integer (got \"3\")")
