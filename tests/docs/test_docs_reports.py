"""docs/reference/reports.md: its report.json example is a report (it validates against the report's schema and
model) with the shape of the real report of the run it names, made here; every line of results.jsonl is one of
report.json's `cases`, as the page says; and the page's field tables list every field of report.json's models."""
from __future__ import annotations

import json
import os
import re
import shutil

import pytest
from jsonschema import Draft202012Validator

from runner.frontends.cli import main
from runner.results.models import RunReport
from tests.helpers.cli_helpers import REPO

PAGE = REPO / "docs" / "reference" / "reports.md"


def _example() -> dict:
    [block] = re.findall(r"^```json\n(.*?)^```$", PAGE.read_text(encoding="utf-8"), flags=re.M | re.S)
    return json.loads(block)


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    """The run the example names, made on a copy of the bundled suites (embeddings off: the shape is the same)."""
    root = tmp_path_factory.mktemp("reports")
    shutil.copytree(REPO / "suites", root / "suites")
    with open(root / "suites" / "evalrun.yaml", "a", encoding="utf-8") as config:
        config.write("\nembeddings: {enabled: false}\n")
    saved = os.getcwd()
    os.chdir(root)
    try:
        code = main(["suites/hr/timeoff.yaml", "-k", "hr-timeoff-basic", "--output-dir", "out", "-q"])
    finally:
        os.chdir(saved)
    assert code in (0, 1)
    return root / "out"


def test_the_example_is_a_valid_report():
    example = _example()
    schema = json.loads((REPO / "schemas" / "report.schema.json").read_text(encoding="utf-8"))
    problems = sorted(e.message for e in Draft202012Validator(schema).iter_errors(example))
    assert problems == []
    RunReport.model_validate(example)


def _shape_differences(documented, real, where="report.json") -> list[str]:
    """Where the documented example has a key the real report lacks, or a value of another JSON type."""
    if documented is None or real is None:
        return []
    if isinstance(documented, dict):
        if not isinstance(real, dict):
            return [f"{where}: an object in the example, {type(real).__name__} in the real report"]
        if where.endswith(("config", "arguments")):  # free-form: the run's own settings and the agent's arguments
            return []
        found = [f"{where}.{k}: not in the real report" for k in documented if k not in real]
        for key in documented:
            if key in real:
                found += _shape_differences(documented[key], real[key], f"{where}.{key}")
        return found
    if isinstance(documented, list):
        if not isinstance(real, list):
            return [f"{where}: a list in the example, {type(real).__name__} in the real report"]
        return [d for item in documented[:1] for d in _shape_differences(item, real[0], f"{where}[0]")] if real else []
    numbers = (int, float)
    same = (isinstance(documented, numbers) and isinstance(real, numbers) and not isinstance(real, bool)) \
        or type(documented) is type(real)
    return [] if same else [f"{where}: {type(documented).__name__} in the example, {type(real).__name__} really"]


def test_the_example_has_the_shape_of_the_real_report(real_run):
    real = json.loads((real_run / "report.json").read_text(encoding="utf-8"))
    example = _example()
    assert [c["id"] for c in real["cases"]] == [c["id"] for c in example["cases"]] == ["hr-timeoff-basic"]
    assert real["selection"]["filters"] == example["selection"]["filters"]
    assert _shape_differences(example, real) == []
    assert list(example) == list(real)  # the same top-level fields, in the same order
    assert list(example["cases"][0]) == list(real["cases"][0])


def test_each_line_of_results_jsonl_is_one_of_the_reports_cases(real_run):
    real = json.loads((real_run / "report.json").read_text(encoding="utf-8"))
    lines = [json.loads(line) for line in (real_run / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert lines == real["cases"]


def test_the_field_tables_list_every_field_of_the_report_models():
    from tests.helpers.docs_reference import model_of, sections, table_rows

    sections = sections(PAGE.read_text(encoding="utf-8"))
    assert table_rows(sections["report.json"]) == {f.alias or n for n, f in RunReport.model_fields.items()}
    seen = {"RunReport"}
    todo = [RunReport]
    while todo:
        model = todo.pop()
        for field in model.model_fields.values():
            nested = model_of(field.annotation)
            if nested is not None and nested.__name__ not in seen:
                seen.add(nested.__name__)
                todo.append(nested)
                assert table_rows(sections[nested.__name__]) == {f.alias or n for n, f in nested.model_fields.items()}, \
                    nested.__name__
    assert len(seen) > 10
