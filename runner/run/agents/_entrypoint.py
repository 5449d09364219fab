"""Entry points (`package.module:attribute` in evalrun.yaml): the object one names, imported from the folder
of evalrun.yaml or the installed packages, and an AgentError that says which part failed: the module missing
(or shadowed by an installed package), its import raising (where), the attribute absent (what there is)."""
from __future__ import annotations

import importlib
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._base import AgentError, excerpt


def load_object(entrypoint: str, base_dir: Path, *,
                missing_package: Callable[[str], str | None] = lambda name: None) -> Any:
    """The object `entrypoint` names. `missing_package(name)`: a message when the missing module is one an
    extra installs (google-adk for `type: adk`)."""
    module_name, _, attribute = entrypoint.partition(":")
    folder = str(Path(base_dir).resolve())
    if folder not in sys.path:
        sys.path.insert(0, folder)  # "importable relative to the config file's folder"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or module_name
        hint = missing_package(missing)
        if hint:
            raise AgentError(f"entrypoint '{entrypoint}': importing '{module_name}' {hint}") from None
        raise AgentError(module_not_found(entrypoint, module_name, missing, folder)) from None
    except BaseException as exc:  # a module that fails while importing: show where
        raise AgentError(f"entrypoint '{entrypoint}': importing module '{module_name}' failed: "
                         f"{exception_summary(exc)}") from None
    target: Any = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            known = sorted(n for n in dir(target) if not n.startswith("_") and callable(getattr(target, n, None)))
            hint = f" (it has: {', '.join(known[:10])})" if known else ""
            raise AgentError(f"entrypoint '{entrypoint}': '{module_name}' has no attribute '{attribute}'{hint}")
        target = getattr(target, part)
    return target


def module_not_found(entrypoint: str, module_name: str, missing: str, folder: str) -> str:
    """Why an entry point's module cannot be imported. A folder without __init__.py loses to an installed
    package of the same name wherever it sits on the path (`agents/` beside evalrun.yaml and the `agents`
    package of openai-agents): say so, since the folder is plainly there."""
    import importlib.util
    import os

    message = (f"entrypoint '{entrypoint}': cannot import module '{module_name}' (no module named '{missing}', "
               f"searched from {folder} and the installed packages)")
    top = module_name.split(".", 1)[0]
    local = os.path.join(folder, top)
    if top != module_name and os.path.isdir(local) and not os.path.isfile(os.path.join(local, "__init__.py")):
        try:
            installed = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            installed = None
        origin = getattr(installed, "origin", None)
        if origin and not os.path.realpath(origin).startswith(os.path.realpath(local) + os.sep):
            message += (f"; the folder {top}/ here has no __init__.py, so the installed package '{top}' "
                        f"({os.path.dirname(origin)}) is imported instead: add {top}/__init__.py or rename the folder")
    return message


def exception_summary(exc: BaseException) -> str:
    """`ValueError: message (at file.py:12 in respond)`: the innermost frame is where to look."""
    if isinstance(exc, RuntimeError) and isinstance(exc.__cause__, (StopIteration, StopAsyncIteration)):
        exc = exc.__cause__  # Python's stand-in for a StopIteration leaving a coroutine: name what was raised
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()
    summary = " ".join(line.strip() for line in text) if text else type(exc).__name__
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1]
        summary += f" (at {Path(last.filename).name}:{last.lineno} in {last.name})"
    return excerpt(summary, 400)  # the message may hold text the agent wrote
