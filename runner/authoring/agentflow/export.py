"""Run as a script by `evalrun convert --from agentflow-python`, with an interpreter that has Agentflow / 10xGraph:
it imports a 10xGraph project's Python evals as `10xgraph eval` discovers them and prints their eval sets and
configs (model_dump, the shape to_file writes) as one JSON document. It imports nothing of evalrun, so that it runs
in the project's own environment.

    PYTHON export.py TARGET   (a file, or a folder searched for *_eval.py then eval_*.py)

Per file, the first protocol that applies (as 10xgraph-api 0.9's eval command): `get_scenarios()` / `SCENARIOS`
(user simulations: listed, not exported); `get_eval_set()` with `get_eval_config()` / `EVAL_CONFIG`; public functions
annotated `-> EvalSet` (each an eval set) with one annotated `-> EvalConfig`. Without a config of its own, a file
takes the nearest `confeval.py` (from the target's folder up to the working folder, then ./evals), else the eval
command's built-in default (tool_name_match 1.0, rouge_match 0.5, node_order 0.8).
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import sys
import traceback
from pathlib import Path
from typing import Any


def _evaluation() -> Any:
    for name in ("tenxgraph", "agentflow"):
        try:
            return importlib.import_module(f"{name}.qa.evaluation")
        except ImportError:
            continue
    raise SystemExit(json.dumps({"fatal": "neither tenxgraph nor agentflow can be imported by this interpreter "
                                          f"({sys.executable})"}))


def discover(target: Path) -> list[Path]:
    if target.is_file():
        return [target]
    found: list[Path] = []
    for pattern in ("*_eval.py", "eval_*.py"):
        found += [p for p in sorted(target.rglob(pattern)) if p not in found]
    return found


def load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"_evalrun_export_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.path.insert(0, str(path.parent))
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _annotated(module: Any, cls: Any) -> list[Any]:
    found = []
    for name, value in vars(module).items():
        if name.startswith("_") or not inspect.isfunction(value) or value.__module__ != module.__name__:
            continue
        try:
            returns = inspect.signature(value, eval_str=True).return_annotation
        except Exception:
            returns = getattr(value, "__annotations__", {}).get("return")
        if (isinstance(returns, type) and issubclass(returns, cls)) or returns in (cls.__name__,):
            found.append(value)
    return found


def own_config(module: Any, ev: Any) -> Any | None:
    if callable(getattr(module, "get_eval_config", None)):
        return module.get_eval_config()
    return getattr(module, "EVAL_CONFIG", None)


def global_config(target: Path, ev: Any) -> tuple[Any | None, str | None]:
    start = (target if target.is_dir() else target.parent).resolve()
    cwd = Path.cwd().resolve()
    folders = [start, *start.parents]
    if cwd in folders:
        folders = folders[: folders.index(cwd) + 1]
    for folder in [*folders, cwd / "evals"]:
        path = folder / "confeval.py"
        if path.is_file():
            module = load(path)
            config = own_config(module, ev)
            if config is not None:
                return config, str(path)
    return None, None


def cli_default(ev: Any) -> Any:
    return ev.EvalConfig(criteria=ev.CriteriaConfig(
        tool_name_match=ev.CriterionConfig.tool_name_match(threshold=1.0),
        rouge_match=ev.CriterionConfig.rouge_match(threshold=0.5),
        node_order=ev.CriterionConfig.node_order(threshold=0.8)))


def export(target: Path) -> dict[str, Any]:
    ev = _evaluation()
    fallback, fallback_from = global_config(target, ev)
    files: list[dict[str, Any]] = []
    for path in discover(target):
        entry: dict[str, Any] = {"file": str(path), "eval_sets": []}
        files.append(entry)
        try:
            module = load(path)
            if callable(getattr(module, "get_scenarios", None)) or getattr(module, "SCENARIOS", None):
                entry["skipped"] = "user simulations (SCENARIOS): not exported; write them as evalrun stories"
                continue
            if callable(getattr(module, "get_eval_set", None)):
                sets = [module.get_eval_set()]
                config = own_config(module, ev)
            else:
                sets = [function() for function in _annotated(module, ev.EvalSet)]
                configs = [function() for function in _annotated(module, ev.EvalConfig)]
                config = configs[0] if configs else own_config(module, ev)
            if not sets:
                entry["skipped"] = "no eval entry point found"
                continue
            source = "the file" if config is not None else fallback_from or "the eval command's default"
            config = config if config is not None else (fallback if fallback is not None else cli_default(ev))
            entry["config_from"] = source
            entry["config"] = json.loads(json.dumps(config.model_dump(mode="json"), default=str))
            entry["eval_sets"] = [json.loads(json.dumps(s.model_dump(mode="json"), default=str)) for s in sets]
        except Exception as exc:  # a file that fails to load: named, the others go on (as the eval command)
            entry["error"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return {"library": ev.__name__.split(".")[0], "files": files}


if __name__ == "__main__":
    sys.path.insert(0, str(Path.cwd()))  # the project's modules, as the eval command puts the cwd first
    print(json.dumps(export(Path(sys.argv[1]))))
