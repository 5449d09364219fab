"""Extensions from other packages: check families, agent kinds, report formats and transcript formats that an
installed distribution declares as entry points. Standard library only: it is imported by the registries.

Every extension kind has one registry, built the same way: evalrun's own entries (the modules of its package,
each declaring what it adds next to its code), then the entry points of the kind's group, loaded the first time
the registry is asked for something. An entry point's name is the name it registers (a check type, an agent
kind, a format); its object is what the kind's registry takes:

    evalrun.checks       a CheckFamily, or a list/tuple of them (runner.checks.base)
    evalrun.agents       a module (or object) with KIND, Options and create(), as runner/run/agents/*.py
    evalrun.formats      a ReportFormat (runner.report.base)
    evalrun.transcripts  a TranscriptFormat (runner.transcripts.formats.base): name, sniff(data), normalize(data)

A plugin that cannot be used (its import fails, its object is of the wrong kind, its name is taken by a built-in
or by another plugin) is left out with one line on stderr naming the distribution, the entry point and the fix;
it never replaces a built-in and it never ends the process with a traceback.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["GROUPS", "Plugin", "PluginProblem", "declared", "load", "names"]

GROUPS = {"checks": "evalrun.checks", "agents": "evalrun.agents", "formats": "evalrun.formats",
          "transcripts": "evalrun.transcripts"}

_said: set[str] = set()  # problems already printed in this process (each registry may be rebuilt)


@dataclass(frozen=True)
class Plugin:
    """One loaded entry point: the name it registers, its object, and where it comes from (for messages)."""

    name: str
    obj: Any
    where: str  # "entry point evalrun.checks:shout (shout = pkg.mod:FAMILY) of distribution evalrun-example 0.1"


class PluginProblem(Exception):
    """What is wrong with a plugin's object, said by the registry that checks it (the loader adds where)."""


def _entry_points(group: str) -> list[Any]:
    if not _may_declare(group):
        return []
    from importlib.metadata import entry_points  # 20-60 ms: only when some distribution declares the group

    return sorted(entry_points(group=group), key=lambda ep: (ep.name, ep.value))


def _may_declare(group: str) -> bool:
    """Whether an installed distribution on sys.path may declare entry points of `group`: its entry_points.txt
    names the group. A quick look (a few ms) so that a process with no plugin never imports importlib.metadata
    (runner/frontends/cli/startup.py keeps that out of every run); importlib.metadata decides when this says yes."""
    header = f"[{group}]"
    for folder in sys.path:
        try:
            entries = os.scandir(folder or ".")
        except OSError:  # a zip file, a missing folder: importlib.metadata reads those when there is a candidate
            continue
        with entries:
            for entry in entries:
                if entry.name.endswith((".dist-info", ".egg-info")):
                    try:
                        with open(os.path.join(entry.path, "entry_points.txt"), encoding="utf-8") as points:
                            if header in points.read():
                                return True
                    except OSError:
                        continue
    return False


def _where(group: str, entry_point: Any) -> str:
    dist = getattr(entry_point, "dist", None)
    named = f"{dist.metadata['Name']} {dist.version}" if dist is not None else "an unknown distribution"
    return f"entry point {group}:{entry_point.name} ({entry_point.name} = {entry_point.value}) of distribution {named}"


def declared(kind: str) -> bool:
    """Whether some installed distribution may add extensions of `kind` (a quick look, nothing imported)."""
    return _may_declare(GROUPS[kind])


def names(kind: str) -> tuple[str, ...]:
    """The names the installed plugins of `kind` declare, read from their metadata: nothing is imported."""
    return tuple(dict.fromkeys(ep.name for ep in _entry_points(GROUPS[kind])))


def load(kind: str, taken: Iterable[str], check: Callable[[str, Any], Any]) -> list[Plugin]:
    """The usable plugins of `kind`, in name order. `taken`: the built-in names (a plugin may not take one);
    `check(name, obj)` returns what the registry keeps (the object, or a form of it) or raises PluginProblem.
    Every plugin left out is said once on stderr."""
    group = GROUPS[kind]
    used = set(taken)
    found: list[Plugin] = []
    for entry_point in _entry_points(group):
        where = _where(group, entry_point)
        problem = _problem(entry_point, used, check)
        if isinstance(problem, str):
            _say(f"evalrun: {where} is left out: {problem}")
            continue
        used.add(entry_point.name)
        found.append(Plugin(entry_point.name, problem.obj, where))
    return found


@dataclass(frozen=True)
class _Kept:
    obj: Any


def _problem(entry_point: Any, used: set[str], check: Callable[[str, Any], Any]) -> str | _Kept:
    name = entry_point.name
    if name in used:
        return (f"the name '{name}' is already taken (by evalrun itself or by another plugin); a plugin never "
                "replaces one: give the entry point another name")
    try:
        obj = entry_point.load()
    except Exception as exc:
        return f"importing it failed: {type(exc).__name__}: {_one_line(exc)} (fix or uninstall the distribution)"
    try:
        return _Kept(check(name, obj))
    except PluginProblem as exc:
        return str(exc)
    except Exception as exc:
        return f"its object cannot be used: {type(exc).__name__}: {_one_line(exc)}"


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else "(no message)"


def _say(line: str) -> None:
    if line in _said:
        return
    _said.add(line)
    try:
        print(line, file=sys.stderr)
    except (OSError, ValueError, AttributeError):  # no stderr (closed, or None): nothing to say it on
        pass


def kind_word(obj: Any) -> str:
    """A short description of what an object is, for 'expected X, got Y'."""
    return f"{type(obj).__module__}.{type(obj).__qualname__}" if obj is not None else "None"


def expect(obj: Any, wanted: type, what: str, hint: str | None = None) -> Any:
    """`obj` when it is a `wanted`, else PluginProblem('it is a X, not a <what>')."""
    if isinstance(obj, wanted):
        return obj
    raise PluginProblem(f"it is {kind_word(obj)}, not {what}" + (f" ({hint})" if hint else ""))
