"""Mutants of the tool calls: one dropped, one made twice, two neighbours swapped, a sibling tool called
instead, an extra write-like call."""
from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from itertools import pairwise

from .context import MutationContext, choose
from .mutant import CallSite, Mutant, call_of, copied, result_index


def mutants(context: MutationContext) -> Iterator[Mutant]:
    yield from _dropped(context)
    yield from _duplicated(context)
    yield from _swapped(context)
    yield from _siblings(context)
    yield from _extra_write(context)


def _dropped(context: MutationContext) -> Iterator[Mutant]:
    for site in context.sites:
        def make(site: CallSite = site) -> list[dict]:
            messages = copied(context.messages)
            answer = result_index(messages, site)
            if answer is not None:
                del messages[answer]
            holder = messages[site.message_index]
            del holder["tool_calls"][site.position]
            if not holder["tool_calls"]:
                del holder["tool_calls"]
                if not (isinstance(holder.get("content"), str) and holder["content"].strip()):
                    del messages[site.message_index]
            return messages

        yield Mutant("calls", "drop_call", f"call {site.call_index} to {site.name} dropped", make,
                     message=site.message_index + 1, call_index=site.call_index, before=site.name)


def _duplicated(context: MutationContext) -> Iterator[Mutant]:
    for site in context.sites:
        def make(site: CallSite = site) -> list[dict]:
            messages = copied(context.messages)
            call = copy.deepcopy(call_of(messages, site))
            call["id"] = f"{call.get('id') or 'call'}-again"
            answer = result_index(messages, site)
            at = (answer if answer is not None else site.message_index) + 1
            new = [{"role": "assistant", "content": None, "tool_calls": [call]}]
            if answer is not None:
                new.append({**copy.deepcopy(messages[answer]), "tool_call_id": call["id"]})
            messages[at:at] = new
            return messages

        yield Mutant("calls", "duplicate_call", f"call {site.call_index} to {site.name} made twice", make,
                     message=site.message_index + 1, call_index=site.call_index, before=site.name)


def _swapped(context: MutationContext) -> Iterator[Mutant]:
    """Neighbours trade places: each call's name and arguments move to the other's slot, results with them."""
    for first, second in pairwise(context.sites):
        if (first.name, first.arguments) == (second.name, second.arguments):
            continue

        def make(first: CallSite = first, second: CallSite = second) -> list[dict]:
            messages = copied(context.messages)
            a, b = call_of(messages, first), call_of(messages, second)
            a["function"], b["function"] = b["function"], a["function"]
            ra, rb = result_index(messages, first), result_index(messages, second)
            if ra is not None and rb is not None:
                messages[ra]["content"], messages[rb]["content"] = messages[rb].get("content"), messages[ra].get("content")
            return messages

        yield Mutant("calls", "swap_calls", f"calls {first.call_index} ({first.name}) and {second.call_index} "
                     f"({second.name}) swapped", make, message=first.message_index + 1,
                     call_index=first.call_index, before=[first.name, second.name], after=[second.name, first.name])


def _siblings(context: MutationContext) -> Iterator[Mutant]:
    for site in context.sites:
        others = [name for name in context.tools if name != site.name]
        if not others:
            continue
        sibling = choose(context.rng, others)

        def make(site: CallSite = site, sibling: str = sibling) -> list[dict]:
            messages = copied(context.messages)
            call_of(messages, site)["function"]["name"] = sibling
            return messages

        yield Mutant("calls", "sibling_tool", f"call {site.call_index} to {site.name} made to {sibling} instead",
                     make, message=site.message_index + 1, call_index=site.call_index, before=site.name,
                     after=sibling)


def _extra_write(context: MutationContext) -> Iterator[Mutant]:
    """A write-like tool the agent knew, called once more before its last answer, with the arguments of the
    last call to it (or none)."""
    if not context.write_tools:
        return
    tool = choose(context.rng, context.write_tools)
    arguments = next((s.arguments for s in reversed(context.sites) if s.name == tool and s.arguments), {})
    at = (context.answer_messages or [len(context.messages)])[-1]

    def make() -> list[dict]:
        messages = copied(context.messages)
        call = {"id": "mutant-extra", "type": "function",
                "function": {"name": tool, "arguments": json.dumps(arguments, ensure_ascii=False)}}
        messages[at:at] = [{"role": "assistant", "content": None, "tool_calls": [call]},
                           {"role": "tool", "tool_call_id": "mutant-extra", "content": "ok"}]
        return messages

    yield Mutant("calls", "extra_write", f"an extra call to {tool}", make, message=at + 1,
                 call_index=sum(1 for s in context.sites if s.message_index < at), after=tool)
