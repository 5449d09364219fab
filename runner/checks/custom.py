"""`python`: a team's own check, `function: module:name`, importable from the folder of evalrun.yaml
(as python agents are) or installed.

The function declares the parameters it wants, by name, among: `case` (the Case), `trajectory` (the
Trajectory), `messages` (the conversation, OpenAI-style dicts), `tool_calls` (dicts: name, arguments,
result, is_error), `final_text` (the last assistant text, or None) and `options` (the check's
`options:` mapping); `**kwargs` receives them all. It may be `async`. It returns one of
- a bool: passed or failed (score 1 or 0);
- a number from 0 to 1: the score, against `threshold` (default 1);
- a dict, or any object with these attributes: `score` (0-1) and/or `passed` (bool), and optionally
  `reason` (shown as the explanation) and `evidence` (a dict kept in the report).
Anything else, an exception, or no answer within `timeout_s` makes the check `unscored`, with the
reason (and the traceback in the evidence) — never a pass.
"""
from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
import threading
import traceback
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field

from .base import CheckContext, CheckFamily, CheckOptions, Verdict

_PARAMETERS = ("case", "trajectory", "messages", "tool_calls", "final_text", "options")


class PythonCheckOptions(CheckOptions):
    model_config = ConfigDict(
        extra="forbid", title="Check: python",
        json_schema_extra={"description": "Your own function decides: it gets the case and the conversation and "
                           "returns a bool, a 0-1 score, or {score, passed, reason, evidence}.",
                           "examples": [{"type": "python", "function": "checks.hr:polite_refusal"}]})

    type: Literal["python"] = Field(title="Check type", description="python.", examples=["python"])
    function: str = Field(
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$",
        title="Function", description="`package.module:function`, importable from the folder of evalrun.yaml (or "
        "installed). Sync or async.", examples=["checks.hr:polite_refusal"])
    options: dict[str, Any] = Field(
        default_factory=dict, title="Options", description="Passed to the function as its `options` parameter.",
        examples=[{"max_sentences": 3}])
    timeout_s: float = Field(
        60, gt=0, title="Timeout (seconds)",
        description="How long the function may take; after that the check is unscored.", examples=[10])


class CheckFunctionError(Exception):
    """The function could not be loaded or called: the check is unscored with this reason."""

    def __init__(self, reason: str, trace: str = ""):
        super().__init__(reason)
        self.trace = trace


def load_function(spec: str, base_dir: Path) -> Any:
    module_name, _, attribute = spec.partition(":")
    folder = str(base_dir.resolve())
    if folder not in sys.path:
        sys.path.insert(0, folder)  # importable relative to the config file's folder, like python agents
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise CheckFunctionError(f"cannot import module '{module_name}' (looked in {folder} and the installed "
                                     "packages)") from None
        raise CheckFunctionError(f"importing module '{module_name}' failed: {type(exc).__name__}: {exc}",
                                 traceback.format_exc()) from None
    except BaseException as exc:  # a module that fails while importing: show where
        raise CheckFunctionError(f"importing module '{module_name}' failed: {type(exc).__name__}: {exc}",
                                 traceback.format_exc()) from None
    function = getattr(module, attribute, None)
    if not callable(function):
        raise CheckFunctionError(f"module '{module_name}' has no function '{attribute}'")
    return function


def _arguments(function: Any, options: PythonCheckOptions, ctx: CheckContext) -> dict[str, Any]:
    trajectory = ctx.trajectory
    available = {
        "case": ctx.case, "trajectory": trajectory, "messages": trajectory.messages,
        "tool_calls": [{"name": c.name, "arguments": c.arguments, "result": c.result, "is_error": c.is_error}
                       for c in trajectory.tool_calls],
        "final_text": trajectory.final_text, "options": options.options,
    }
    parameters = inspect.signature(function).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return available
    unknown = [name for name, p in parameters.items()
               if name not in available and p.default is inspect.Parameter.empty
               and p.kind not in (inspect.Parameter.VAR_POSITIONAL,)]
    if unknown:
        raise CheckFunctionError(f"its parameter(s) {', '.join(unknown)} are not among those a check gets: "
                                 f"{', '.join(_PARAMETERS)}")
    return {name: value for name, value in available.items() if name in parameters}


def _call(function: Any, arguments: dict[str, Any], timeout_s: float) -> Any:
    """Call the function (awaiting it when async) in a daemon thread, so a hung check cannot hold the run."""
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            value = function(**arguments)
            if inspect.isawaitable(value):
                value = asyncio.run(_awaited(value))
            outcome["value"] = value
        except BaseException as exc:  # reported as the check's error
            outcome["error"] = (f"{type(exc).__name__}: {exc}", traceback.format_exc())

    thread = threading.Thread(target=work, name="evalrun-python-check", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        raise CheckFunctionError(f"it did not return within {timeout_s:g} s (timeout_s)")
    if "error" in outcome:
        raise CheckFunctionError(f"it raised {outcome['error'][0]}", outcome["error"][1])
    return outcome["value"]


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def verdict_of(value: Any) -> Verdict:
    """The function's return value as a Verdict (see the module's docstring for what it may return)."""
    if isinstance(value, bool):
        return Verdict(score=float(value), passed=value, explanation=f"the function returned {value}")
    if isinstance(value, (int, float)):
        return _scored(float(value), None, "", {})
    if isinstance(value, dict):
        fields = value
        unknown = sorted(set(value) - {"score", "passed", "reason", "evidence"})
        if unknown:
            raise CheckFunctionError(f"it returned a dict with unknown key(s) {', '.join(map(str, unknown))} "
                                     "(expected score, passed, reason, evidence)")
    elif hasattr(value, "score") or hasattr(value, "passed"):
        fields = {k: getattr(value, k) for k in ("score", "passed", "reason", "evidence") if hasattr(value, k)}
    else:
        raise CheckFunctionError(f"it returned {type(value).__name__} {value!r:.80}; expected a bool, a 0-1 number, "
                                 "a dict or an object with score/passed/reason")
    score, passed = fields.get("score"), fields.get("passed")
    if score is None and passed is None:
        raise CheckFunctionError("it returned neither a score nor passed")
    if passed is not None and not isinstance(passed, bool):
        raise CheckFunctionError(f"its `passed` is {type(passed).__name__} {passed!r:.40}, not true or false")
    if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
        raise CheckFunctionError(f"its `score` is {type(score).__name__} {score!r:.40}, not a number")
    evidence = fields.get("evidence") or {}
    if not isinstance(evidence, dict):
        raise CheckFunctionError(f"its `evidence` is {type(evidence).__name__}, not a mapping")
    reason = fields.get("reason")
    return _scored(float(score) if score is not None else float(passed), passed,  # type: ignore[arg-type]  # one is set
                   "" if reason is None else str(reason), evidence)


def _scored(score: float, passed: bool | None, reason: str, evidence: dict) -> Verdict:
    if not 0 <= score <= 1:
        raise CheckFunctionError(f"its score {score:g} is outside 0-1")
    return Verdict(score=score, passed=passed, explanation=reason or f"the function scored {score:.3g}",
                   evidence=evidence)


def run_python(options: PythonCheckOptions, ctx: CheckContext) -> Verdict:
    base_dir = ctx.base_dir or Path(ctx.case.source.path).parent
    where = f"function '{options.function}'"
    try:
        function = load_function(options.function, base_dir)
        verdict = verdict_of(_call(function, _arguments(function, options, ctx), options.timeout_s))
    except CheckFunctionError as error:
        return Verdict(unscored=f"{where}: {error}", evidence={"traceback": error.trace} if error.trace else {})
    return verdict


FAMILIES = (
    CheckFamily(types=("python",), description="Your own Python function decides.", options=PythonCheckOptions,
                run=run_python),
)
