"""The state a model agent's played tools keep, and the suite's `effects:` that change it.

A case's `initial_state:` is where it starts (empty by default). Each call evalrun answers applies the
effects of what answered it: the goal whose `output` was given (its `effects:`), or the case's
`tool_effects:` entry for a tool answered from `tool_outputs`. An effect is one of

    {set: PATH, value: V}     PATH now holds V (objects on the way are created)
    {append: PATH, value: V}  V is added to the list at PATH (created when missing)
    {delete: PATH}            PATH is removed (nothing happens when it is absent)

with `arg: APATH` in place of `value` to write the call's argument at that dot path (`*`: all of them).
PATH is a dot path; a part that is a number indexes a list. An effect that cannot apply (appending to
text, say) is an AgentError naming the effect: the suite, not the agent, needs fixing.
"""
from __future__ import annotations

import copy
from typing import Any

from runner.suite.models import StateEffect

from ._base import AgentError

_MISSING = object()


def apply_effects(state: dict, effects: list[StateEffect], arguments: Any, where: str) -> None:
    """Apply `effects` to `state` in place, in order; `arguments` are the call's (an object, or None)."""
    for n, effect in enumerate(effects):
        what = f"{where}, effect {n + 1} ({_describe(effect)})"
        value = _value(effect, arguments)
        parts = effect.path.split(".")
        if effect.delete is not None:
            parent = _walk(state, parts[:-1], create=False, what=what)
            if isinstance(parent, dict):
                parent.pop(parts[-1], None)
            elif isinstance(parent, list) and _index(parts[-1], parent) is not None:
                del parent[_index(parts[-1], parent)]  # type: ignore[arg-type]
            continue
        parent = _walk(state, parts[:-1], create=True, what=what)
        key = parts[-1]
        if effect.set is not None:
            _put(parent, key, value, what)
            continue
        current = _get(parent, key)
        if current is _MISSING:
            _put(parent, key, [value], what)
        elif isinstance(current, list):
            current.append(value)
        else:
            raise AgentError(f"{what}: `{effect.path}` holds {type(current).__name__}, not a list to append to")


def _value(effect: StateEffect, arguments: Any) -> Any:
    if effect.arg is None:
        return copy.deepcopy(effect.value)
    if effect.arg == "*":
        return copy.deepcopy(arguments if arguments is not None else {})
    node = arguments
    for part in effect.arg.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and _index(part, node) is not None:
            node = node[_index(part, node)]  # type: ignore[index]
        else:
            return None  # an argument the call lacks writes null
    return copy.deepcopy(node)


def _walk(state: dict, parts: list[str], *, create: bool, what: str) -> Any:
    node: Any = state
    for n, part in enumerate(parts):
        child = _get(node, part)
        if child is _MISSING:
            if not create:
                return None
            child = {}
            _put(node, part, child, what)
        elif not isinstance(child, (dict, list)):
            raise AgentError(f"{what}: `{'.'.join(parts[:n + 1])}` holds {type(child).__name__}, not an object")
        node = child
    return node


def _get(node: Any, key: str) -> Any:
    if isinstance(node, dict):
        return node.get(key, _MISSING)
    if isinstance(node, list):
        index = _index(key, node)
        return _MISSING if index is None else node[index]
    return _MISSING


def _put(node: Any, key: str, value: Any, what: str) -> None:
    if isinstance(node, dict):
        node[key] = value
    elif isinstance(node, list) and _index(key, node) is not None:
        node[_index(key, node)] = value  # type: ignore[index]
    else:
        raise AgentError(f"{what}: cannot write `{key}` into a list (use an item number below {len(node)})")


def _index(part: str, items: list) -> int | None:
    return int(part) if part.isdigit() and int(part) < len(items) else None


def _describe(effect: StateEffect) -> str:
    operation = "set" if effect.set is not None else "append" if effect.append is not None else "delete"
    return f"{operation} {effect.path}"
