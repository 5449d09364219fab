"""Mutants of the arguments, by type: dates, numbers, ids and codes, a string replaced by another value
seen in the conversation, a boolean flipped, a key dropped, a list item dropped."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .context import MutationContext, choose, holds_secret
from .mutant import CallSite, Mutant, copied, dotted, dropped_at, leaves, replaced_at, set_arguments
from .values import OPERATORS, wrong_dates, wrong_id, wrong_numbers


def mutants(context: MutationContext) -> Iterator[Mutant]:
    seen = context.seen_strings()
    for site in context.sites:
        if not site.arguments:
            continue
        for path, value in leaves(site.arguments):
            if not holds_secret(value):
                for what, new in _wrong_values(value, seen, context):
                    yield _changed(context, site, path, value, new, what)
            yield _dropped(context, site, path, value)


def _wrong_values(value: Any, seen: list[str], context: MutationContext) -> list[tuple[str, Any]]:
    if isinstance(value, bool):
        return [("boolean_flip", not value)]
    if isinstance(value, (int, float)):
        return wrong_numbers(value)
    if isinstance(value, list) and value:
        return []  # a list loses each of its items in turn (_dropped)
    if not isinstance(value, str):
        return []
    out: list[tuple[str, Any]] = [*wrong_dates(value), *wrong_id(value, context.rng)]
    others = [s for s in seen if s.strip().lower() != value.strip().lower()]
    if others:
        out.append(("other_value", choose(context.rng, others)))
    return out


def _changed(context: MutationContext, site: CallSite, path: tuple, old: Any, new: Any, operator: str) -> Mutant:
    def make() -> list[dict]:
        messages = copied(context.messages)
        set_arguments(messages, site, replaced_at(site.arguments, path, new))
        return messages

    where = dotted(path)
    return Mutant("arguments", operator, f"{site.name}: `{where}` {_short(old)} -> {_short(new)} "
                  f"({OPERATORS[operator]})", make,
                  message=site.message_index + 1, call_index=site.call_index, arg_path=where, before=old, after=new)


def _dropped(context: MutationContext, site: CallSite, path: tuple, old: Any) -> Mutant:
    def make() -> list[dict]:
        messages = copied(context.messages)
        set_arguments(messages, site, dropped_at(site.arguments, path))
        return messages

    where = dotted(path)
    operator = "drop_item" if isinstance(path[-1], int) else "drop_key"
    return Mutant("arguments", operator, f"{site.name}: `{where}` ({_short(old)}) dropped", make,
                  message=site.message_index + 1, call_index=site.call_index, arg_path=where, before=old)


def _short(value: Any, limit: int = 60) -> str:
    import json

    from ..util.secrets import redact

    text = redact(json.dumps(value, ensure_ascii=False, default=str))  # before the cut: no part of a secret left
    return text if len(text) <= limit else text[:limit - 1] + "…"
