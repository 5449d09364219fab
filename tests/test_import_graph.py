"""No import circles in the runner package, lazy (in-function) imports included; and the modules that
once formed one import alone, in any order, in a fresh interpreter."""
from __future__ import annotations

import ast
import functools
import itertools
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli_helpers import REPO, cli_env

PACKAGE = REPO / "runner"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(tree: ast.AST, *, annotations: bool = False):
    """Every import statement, at any depth, except those under `if TYPE_CHECKING:` (annotations only:
    they never run, so they cannot close a circle at import time) unless `annotations`."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if not annotations and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


@functools.cache
def _parsed(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once per test process (the tests here read ~330 modules each; nothing
    changes them during a run, and nothing mutates a tree)."""
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.cache
def _import_graph() -> dict[str, frozenset[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _imports(_parsed(path)):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                stem = f"{base}.{node.module}" if node.level and node.module else (base if node.level else node.module or "")
                targets = [f"{stem}.{alias.name}" if f"{stem}.{alias.name}" in modules else stem for alias in node.names]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and target != "runner":
                    graph[name].add(target)
    return {name: frozenset(targets) for name, targets in graph.items()}


def import_graph() -> dict[str, set[str]]:
    """module -> runner modules it imports anywhere in its text (top level or inside a function)."""
    return {name: set(targets) for name, targets in _import_graph().items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = itertools.count()
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = next(counter)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = next(counter)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_lazy_imports():
    graph = import_graph()
    assert "runner.config.model" in graph["runner.authoring.schema"]  # imported inside build_schema


def test_no_import_circles_in_the_runner_package():
    assert cycles(import_graph()) == []


def _top_folder(module: str) -> str | None:
    """The top-level package (or root module) of runner a module belongs to; None for runner itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] != "__main__" else None


def folder_imports() -> dict[tuple[str, str], list[str]]:
    """(importing folder, imported folder) -> where (path:line), for every import from one of runner/'s
    top-level packages into another, at any depth, annotation-only imports included: a folder that needs a
    higher one's names for its annotations still leans on it."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    found: dict[tuple[str, str], list[str]] = {}
    for name, path in sorted(modules.items()):
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _imports(_parsed(path), annotations=True):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = package
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                targets = [f"{base}.{node.module}" if node.module else base] if node.level else [node.module or ""]
            for target in targets:
                source, imported = _top_folder(name), _top_folder(target) if target.startswith("runner.") else None
                if source and imported and source != imported:
                    where = f"{path.relative_to(REPO)}:{node.lineno}"
                    found.setdefault((source, imported), []).append(where)
    return found


def folder_cycles(imports: dict[tuple[str, str], list[str]]) -> list[str]:
    """Each folder-level import circle as its pairs, `a -> b: path:line, ...`, one line per pair."""
    graph: dict[str, set[str]] = {}
    for source, imported in imports:
        graph.setdefault(source, set()).add(imported)
        graph.setdefault(imported, set())
    lines = []
    for component in cycles(graph):
        lines.append("circle: " + ", ".join(component))
        lines += [f"  {source} -> {imported}: {', '.join(imports[(source, imported)][:4])}"
                  + (f" ({len(imports[(source, imported)])} in all)" if len(imports[(source, imported)]) > 4 else "")
                  for source in component for imported in component if (source, imported) in imports]
    return lines


def test_the_folder_circle_finder_names_the_pairs_and_the_lines():
    imports = {("suite", "checks"): ["runner/suite/load.py:19"], ("checks", "suite"): ["runner/checks/base.py:15"],
               ("checks", "util"): ["runner/checks/base.py:3"]}
    assert folder_cycles(imports) == ["circle: checks, suite", "  checks -> suite: runner/checks/base.py:15",
                                      "  suite -> checks: runner/suite/load.py:19"]


def test_the_folders_of_runner_form_layers():
    """Issue 27: runner/'s top-level packages form floors; a folder imports only folders below it, so no two
    folders import each other, directly or round a longer circle. The fix is moving down what the lower folder
    needs (a model, a constant, a lookup) or moving the importing code up to where it belongs."""
    imports = folder_imports()
    for pair in STILL_CIRCULAR:
        assert pair in imports, f"{pair[0]} no longer imports {pair[1]}: take the pair off STILL_CIRCULAR"
    left = {pair: where for pair, where in imports.items() if pair not in STILL_CIRCULAR}
    circles = folder_cycles(left)
    assert circles == [], "folders of runner/ that import each other:\n" + "\n".join(circles)


# Folder pairs that still close a circle, each with why it is not moved yet; the list only shrinks (the test
# above fails when a pair is gone and still listed).
STILL_CIRCULAR: dict[tuple[str, str], str] = {
    ("suite", "checks"): "reading a suite checks each `checks:` entry against the check registry (check_problem, "
                         "vacuities, ADK criteria): the validation wants to be handed in by the caller, or move up",
    ("config", "run"): "evalrun.yaml's `agents:` is a union of every agent kind's Options, which live beside "
                       "each kind in run/agents",
}


def test_runner_root_holds_packages_and_three_modules():
    modules = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert modules == ["__init__.py", "__main__.py", "layout.py"], modules


@pytest.mark.parametrize("order", list(itertools.permutations(
    ["runner.authoring.schema", "runner.suite.load", "runner.config.load"])))
def test_the_once_circular_modules_import_in_any_order(order):
    code = "; ".join(f"import {name}" for name in order) + "; from runner.authoring.schema import build_schema; build_schema('config')"
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=cli_env(), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr


# The house rules of issue 27 (DESIGN.md): front ends on top, the session the only door to the executors,
# the shared names and the config search light enough for `--help`, the pytest plugin and watch.
FRONTEND_IMPORTERS = {  # the package's own entry points, which are front ends by nature
    "runner": "evaluate/aevaluate/evaluate_file are re-exported (lazily) from runner.frontends.python",
    "runner.__main__": "`python -m runner` is the command line",
}
STDLIB_ONLY = ("runner.layout", "runner.config.discovery")
ALLOWED_IN_STDLIB_ONLY = {"runner.layout"}  # itself standard library only (checked by the same test)


def _stdlib_and_runner_imports(module: str) -> tuple[set[str], set[str]]:
    """(top-level names of absolute imports, runner modules) a module imports anywhere but under TYPE_CHECKING."""
    path = PACKAGE.joinpath(*module.split(".")[1:]).with_suffix(".py")
    tops = {alias.name.split(".")[0] for node in _imports(_parsed(path))
            if isinstance(node, ast.Import) for alias in node.names}
    tops |= {node.module.split(".")[0] for node in _imports(_parsed(path))
             if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module}
    return tops - {"runner"}, import_graph()[module]


def test_only_front_ends_import_a_front_end():
    offenders = sorted(f"{module} -> {target}" for module, targets in import_graph().items()
                       if not module.startswith("runner.frontends") and module not in FRONTEND_IMPORTERS
                       for target in targets if target.startswith("runner.frontends"))
    assert offenders == []


def test_only_front_ends_import_argparse():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        module = _module_name(path)
        if module.startswith("runner.frontends"):
            continue
        for node in _imports(_parsed(path)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if node.__class__ is ast.Import or node.level == 0:
                offenders += [module for name in names if name.split(".")[0] == "argparse"]
    assert offenders == []


def test_only_the_session_imports_the_executors():
    offenders = sorted(f"{module} -> {target}" for module, targets in import_graph().items()
                       if not module.startswith(("runner.session", "runner.run.executors"))
                       for target in targets if target.startswith("runner.run.executors"))
    assert offenders == []


def test_nothing_inside_the_package_imports_the_runner_api_facade():
    assert sorted(module for module, targets in import_graph().items() if "runner.api" in targets) == []


@pytest.mark.parametrize("module", STDLIB_ONLY)
def test_the_shared_names_and_the_config_search_import_the_standard_library_only(module):
    tops, own = _stdlib_and_runner_imports(module)
    assert tops <= set(sys.stdlib_module_names) | {"__future__"}, tops - set(sys.stdlib_module_names)
    assert own <= ALLOWED_IN_STDLIB_ONLY, own
