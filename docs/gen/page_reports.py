"""docs/reference/reports.md: a hand-written page whose field tables are generated from report.json's model
(runner.results.models.RunReport, read through its JSON Schema): the text between the page's two markers is
replaced, the rest is kept as written."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from reference_md import Problems, options_table, prose

START = "<!-- generated: report fields (python docs/gen/reference.py) -->"
END = "<!-- end of generated -->"


def render(page: Path) -> str:
    from runner.authoring.schema import build_schema

    text = page.read_text(encoding="utf-8")
    if text.count(START) != 1 or text.count(END) != 1 or text.index(START) > text.index(END):
        raise ValueError(f"{page}: the markers {START!r} and {END!r} must each appear once, in this order")
    problems = Problems()
    schema = build_schema("report")
    defs = schema["$defs"]
    lines = ["", "### report.json", "", "The top level of report.json.", ""]
    lines += options_table(schema, "report.json (RunReport)", problems, link=_link, label="field")
    for name in _reachable(schema, defs):
        node = defs[name]
        description = problems.need(node.get("description"), f"report model {name} has no docstring")
        lines += ["", f"### {name}", "", prose(description), ""]
        lines += options_table(node, f"report model {name}", problems, link=_link, label="field")
    problems.raise_if_any()
    head, rest = text.split(START, 1)
    return head + START + "\n" + "\n".join(lines).strip("\n").join(["\n", "\n"]) + END + rest.split(END, 1)[1]


def _link(name: str) -> str:
    return f"[{name}](#{name.lower()})"


def _reachable(schema: dict[str, Any], defs: dict[str, Any]) -> list[str]:
    """The models report.json is made of, breadth first from the top, each once (a stable order)."""
    order: list[str] = []
    queue = [schema]
    while queue:
        node = queue.pop(0)
        for name in _refs(node):
            if name not in order:
                order.append(name)
                queue.append(defs[name])
    return order


def _refs(node: Any) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        if "$ref" in node:
            found.append(node["$ref"].rsplit("/", 1)[-1])
        for key in sorted(node) if "properties" not in node else ["properties", *sorted(set(node) - {"properties"})]:
            if key in ("$defs",):
                continue
            found += _refs(node[key])
    elif isinstance(node, list):
        for value in node:
            found += _refs(value)
    return found
