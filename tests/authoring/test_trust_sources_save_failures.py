"""--save-failures FILE, as a careless user and a hostile id would use it (issue 26, item 1): each case keeps
its own conversation in the copy (ids alike once made file-safe never share a recording), a suite written by
hand is never overwritten, and the file reruns from any folder with the command it states, its live cases
included; a run that finds no evalrun.yaml says so instead of blaming one."""
from __future__ import annotations

import json
import re
from pathlib import Path

from tests.helpers.cli_helpers import tool_call_messages, write, write_json

LONG = "refund-the-whole-order-of-a-customer-who-was-charged-twice-for-one-lamp-and-wa"  # 78: with "-x1" and "-x2" two ids alike in their first 80
assert len(LONG) == 78



def refund_project(root: Path) -> dict[str, int]:
    """Four cases in pairs whose ids are alike once file-safe (and in their first 80 characters), each
    expecting one amount and recorded refunding the other case's amount: every case fails on its own
    conversation and would pass on its twin's. The expected amount of each case, by id."""
    expected = {"refund order": 10, "refund-order": 1000, f"{LONG}-x1": 20, f"{LONG}-x2": 2000}
    twins = {"refund order": "refund-order", "refund-order": "refund order",
             f"{LONG}-x1": f"{LONG}-x2", f"{LONG}-x2": f"{LONG}-x1"}
    cases = ""
    for n, (case_id, amount) in enumerate(expected.items()):
        write_json(root / "suites" / "recorded" / f"r{n}.json",
                   tool_call_messages("refund", {"amount": expected[twins[case_id]]}))
        cases += (f"  - id: {json.dumps(case_id)}\n"
                  f"    goal_details: [{{type: tool_call, name: refund, tool_name: refund, args: {{amount: {amount}}}}}]\n"
                  f"    transcript: recorded/r{n}.json\n")
    write(root / "suites" / "refunds.yaml", "cases:\n" + cases)
    return expected


def verdicts(report: Path) -> dict[str, tuple[str, list[str]]]:
    return {c["id"]: (c["status"], c["failures"]) for c in json.loads(report.read_text())["cases"]}


def test_ids_alike_once_file_safe_keep_their_own_conversations_in_the_rerun(tmp_path, evalrun):
    expected = refund_project(tmp_path)
    code, _, err = evalrun(tmp_path, "run", "suites", "--output-dir", "first", "--save-failures", "saved/f.yaml")
    assert code == 1
    assert "saved 4 cases that did not pass to saved/f.yaml: evalrun run saved/f.yaml\n" in err
    first = verdicts(tmp_path / "first" / "report.json")
    assert {i: status for i, (status, _) in first.items()} == dict.fromkeys(expected, "failed")

    copies = sorted(p.name for p in (tmp_path / "saved" / "f.transcripts").iterdir())
    assert len(copies) == 4  # one copy per case: none shared
    assert all(re.fullmatch(r"[\w.-]{1,60}-[0-9a-f]{10}\.json", name) for name in copies), copies
    text = (tmp_path / "saved" / "f.yaml").read_text()
    named = re.findall(r"transcript:\s+(f\.transcripts/\S+)", text)
    assert len(set(named)) == 4

    code, _, _ = evalrun(tmp_path / "saved", "run", "f.yaml", "--output-dir", "again")
    assert code == 1  # on main: the twins shared one copy, so one of each pair passed on the other's refund
    assert verdicts(tmp_path / "saved" / "again" / "report.json") == first


def test_a_saved_copy_keeps_its_name_from_one_save_to_the_next(tmp_path, evalrun):
    refund_project(tmp_path)
    evalrun(tmp_path, "run", "suites", "--output-dir", "first", "--save-failures", "saved/f.yaml")
    before = (tmp_path / "saved" / "f.yaml").read_text().split("\n", 2)[2]
    evalrun(tmp_path, "run", "suites", "--output-dir", "second", "--save-failures", "saved/f.yaml")
    assert (tmp_path / "saved" / "f.yaml").read_text().split("\n", 2)[2] == before  # ours: overwritten alike
    assert len(list((tmp_path / "saved" / "f.transcripts").iterdir())) == 4


def test_a_suite_written_by_hand_is_never_overwritten(tmp_path, evalrun):
    refund_project(tmp_path)
    hand = write(tmp_path / "mine.yaml", "# my own suite\ncases: []\n").read_text()
    code, out, err = evalrun(tmp_path, "run", "suites", "--output-dir", "first", "--save-failures", "mine.yaml")
    assert code == 4  # said before the run: nothing was run
    assert err.splitlines()[-1] == (
        "evalrun run: error: --save-failures: mine.yaml exists and was not written by --save-failures (its first "
        "line is not the header --save-failures writes), so it is not overwritten: choose another FILE, or delete "
        "this one first")
    assert (tmp_path / "mine.yaml").read_text() == hand
    assert not (tmp_path / "first").exists() and out == ""

    (tmp_path / "folder.yaml").mkdir()
    code, _, err = evalrun(tmp_path, "run", "suites", "--save-failures", "folder.yaml")
    assert code == 4 and err.splitlines()[-1] == ("evalrun run: error: --save-failures: folder.yaml is a folder; "
                                                  "give the path of a .yaml file to write")


def test_a_suite_that_appears_during_the_run_is_not_overwritten(tmp_path, evalrun, monkeypatch):
    """The check is made again when the file is written: a suite saved meanwhile (an editor) is kept."""
    import runner.authoring.write.failures as failures

    refund_project(tmp_path)
    real = failures.save_failures

    def meanwhile(results, target, *args, **kwargs):
        write(target, "cases: []  # typed during the run\n")
        return real(results, target, *args, **kwargs)

    monkeypatch.setattr(failures, "save_failures", meanwhile)
    code, _, err = evalrun(tmp_path, "run", "suites", "--output-dir", "first", "--save-failures", "late.yaml")
    assert code == 1  # the run's own verdict stands
    assert "--save-failures: late.yaml exists and was not written by --save-failures" in err
    assert (tmp_path / "late.yaml").read_text() == "cases: []  # typed during the run\n"


LIVE_AGENT = """
    def respond(messages, context):
        return [{"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                 "function": {"name": "refund", "arguments": '{"amount": 7}'}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "ok"},
                {"role": "assistant", "content": "Refunded."}]
    """


def test_the_saved_file_reruns_from_any_folder_with_the_command_it_states(tmp_path, evalrun):
    project = tmp_path / "project"
    write(project / "suites" / "evalrun.yaml", """
        embeddings: {enabled: false}
        agents:
          shop: {type: python, entrypoint: "shop_agent:respond"}
        """)
    write(project / "suites" / "shop_agent.py", LIVE_AGENT)
    write(project / "suites" / "live.yaml", """
        id: live-refund
        agent: shop
        starting_sentence: Refund my order please.
        goal_details: [{type: tool_call, name: refund, tool_name: refund, args: {amount: 70}}]
        """)
    code, _, err = evalrun(project, "run", "suites", "--output-dir", "first", "--save-failures", "out/f.yaml")
    assert code == 1
    assert ("saved 1 case that did not pass to out/f.yaml: evalrun run out/f.yaml --config suites/evalrun.yaml "
            "(out/f.yaml lies outside the folder of suites/evalrun.yaml, so a rerun does not find it by itself)") in err
    header = (project / "out" / "f.yaml").read_text().splitlines()[1]
    config = (project / "suites" / "evalrun.yaml").resolve()
    assert header == f"# Rerun them alone: evalrun run out/f.yaml --config {config}"
    before = verdicts(project / "first" / "report.json")

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, _, _ = evalrun(elsewhere, "run", str(project / "out" / "f.yaml"), "--config", str(config),
                         "--output-dir", "again")
    assert code == 1 and verdicts(elsewhere / "again" / "report.json") == before  # played by its agent again

    code, _out, err = evalrun(elsewhere, "run", str(project / "out" / "f.yaml"), "--output-dir", "bare")
    assert code == 3
    assert err.splitlines()[0] == "config: none found (searched ../project/out); using defaults"
    error = json.loads((elsewhere / "bare" / "report.json").read_text())["cases"][0]["error"]
    assert error.startswith("the case is played live by agent 'shop', but this run found no evalrun.yaml to "
                            "declare it (it is looked for next to the suite files and in the folders above them")
    assert "give it with --config PATH/evalrun.yaml" in error and "has no `agents:` section" not in error


def test_a_file_inside_the_configs_folder_needs_no_config_to_rerun(tmp_path, evalrun):
    """In a repository a run looks for evalrun.yaml up to its root from wherever it is started: a file saved
    below the config's folder finds it by itself."""
    (tmp_path / ".git").mkdir()
    refund_project(tmp_path)
    write(tmp_path / "suites" / "evalrun.yaml", "embeddings: {enabled: false}\n")
    code, _, err = evalrun(tmp_path, "run", "suites", "--output-dir", "first", "--save-failures",
                           "suites/again/f.yaml")
    assert code == 1
    assert "saved 4 cases that did not pass to suites/again/f.yaml: evalrun run suites/again/f.yaml\n" in err
    assert (tmp_path / "suites" / "again" / "f.yaml").read_text().splitlines()[1] == \
        "# Rerun them alone: evalrun run suites/again/f.yaml"
