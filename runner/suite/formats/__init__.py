"""Suite formats of other tools, read as they are into evalrun's own cases.

`read_foreign(path, doc)` is the loader's one hook: it says whether a file is one of these formats (by its
name or its content) and, if so, what it holds. A file that looks like one of them but is broken is an
error with its position, never passed over. Each format is one module: adk.py (Google ADK eval sets, its
older list formats, the Agentflow eval set) with adk_config.py (their eval configs); agentflow/ reads an Agentflow
eval set whose config is Agentflow's own with Agentflow's meaning.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ...util.diagnostics import Diagnostic
from ..models import Case
from ..reader import Document
from .kinds import CONFIG_FILE_NAMES

EVAL_SET_SUFFIXES = (".evalset.json", ".test.json")


@dataclass
class ForeignFile:
    kind: str  # "ADK eval set", "Agentflow eval set", "ADK eval config", ...
    cases: list[Case] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    is_suite: bool = True  # False: a config, checked but holding no cases
    named_ids: set[str] = field(default_factory=set)


def is_eval_config_name(path: Path) -> bool:
    return path.name in CONFIG_FILE_NAMES


def read_foreign(path: Path, doc: Document, *, eval_config: Path | None = None) -> ForeignFile | None:
    """The file as a foreign suite, or None when it is not one (then the loader reads it as its own)."""
    from .kinds import shape_of  # the heavy modules (ADK's models) only for a file that is one of these

    name = path.name.lower()
    named_eval_set = name.endswith(EVAL_SET_SUFFIXES)
    if is_eval_config_name(path) and _is_eval_config(path, doc):
        from .adk_config import eval_config_of
        from .agentflow.detect import is_agentflow_config

        if is_agentflow_config(doc.data) or (is_agentflow_config(doc.data, agentflow_eval_set=True)
                                             and _beside_agentflow_eval_set(path)):  # only read when it decides
            from .agentflow.config import config_of

            return ForeignFile("Agentflow eval config", diagnostics=config_of(doc).diagnostics, is_suite=False)

        return ForeignFile("ADK eval config", diagnostics=eval_config_of(doc).diagnostics, is_suite=False)
    if doc.data is None:  # unreadable: an error when its name says what it should have been
        return ForeignFile("ADK eval set", diagnostics=doc.diagnostics) if named_eval_set and doc.diagnostics else None
    kind = shape_of(doc.data) if name.endswith(".json") else None  # ADK and Agentflow write JSON
    if kind is None:
        if not named_eval_set:
            return None
        doc.error((), f"{path.name} is not an eval set: ADK and Agentflow eval sets are an object with "
                      "`eval_set_id` and `eval_cases`, or ADK's older list of turns ({query, expected_tool_use, "
                      "reference}) or of sessions ({name, data})", "not-an-eval-set")
        return ForeignFile("ADK eval set", diagnostics=doc.diagnostics)
    from . import adk

    if kind == adk.AGENTFLOW:  # read with Agentflow's meaning when its config is Agentflow's own
        from .agentflow.evalset import agentflow_config_for, read_agentflow_eval_set

        config = agentflow_config_for(path, eval_config)
        if config is not None:
            read = read_agentflow_eval_set(doc, config)
            return ForeignFile(kind, cases=read.cases, diagnostics=read.diagnostics, named_ids=read.named_ids)
    read = adk.read_eval_file(path, doc, kind, eval_config)
    return ForeignFile(kind, cases=read.cases, diagnostics=read.diagnostics, named_ids=read.named_ids)


def _is_eval_config(path: Path, doc: Document) -> bool:
    """A test_config.json or eval_config.json is ADK's (or Agentflow's) when it has their keys, or when an eval
    set lies beside it; another tool's file of that name is left to the loader's other rules."""
    if isinstance(doc.data, dict) and ({"criteria", "user_simulator_config"} & set(doc.data)):
        return True
    try:
        return any(entry.name.lower().endswith(EVAL_SET_SUFFIXES) for entry in path.parent.iterdir())
    except OSError:
        return False


def _beside_agentflow_eval_set(path: Path) -> bool:
    """Whether an eval set beside this config is Agentflow's (which makes a config naming no criterion Agentflow's)."""
    import json

    from .kinds import AGENTFLOW, shape_of

    try:
        for entry in path.parent.iterdir():
            small_eval_set = entry.name.lower().endswith(EVAL_SET_SUFFIXES) and entry.stat().st_size < 5_000_000
            if small_eval_set and shape_of(json.loads(entry.read_text(encoding="utf-8"))) == AGENTFLOW:
                return True
    except (OSError, ValueError, RecursionError):
        return False
    return False
