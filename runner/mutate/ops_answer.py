"""Mutants of the answer (each assistant text that achieved a text goal, and the last one): negated, a number
or date in it changed, a keyword removed, replaced by another turn's answer, emptied."""
from __future__ import annotations

import re
from collections.abc import Iterator

from .context import MutationContext, holds_secret
from .mutant import Mutant, copied
from .values import wrong_in_text

_AUXILIARY = re.compile(r"\b(is|are|was|were|will|can|has|have|had|does|do|did|could|would|should)\b", re.I)


def mutants(context: MutationContext) -> Iterator[Mutant]:
    for index in context.answer_messages:
        text = context.messages[index]["content"]
        yield _with(context, index, "negate", "negated", _negated(text))
        # a fact changed or a word removed could leave a near copy of a secret, which no mask hides
        if not holds_secret(text):
            changed = wrong_in_text(text)
            if changed is not None:
                yield _with(context, index, "change_fact", changed[0], changed[1])
            for keyword in context.keywords:
                pattern = re.compile(re.escape(keyword), re.I)
                if pattern.search(text):
                    yield _with(context, index, "drop_keyword", f"keyword {keyword!r} removed", pattern.sub("", text))
        others = [context.messages[i]["content"] for i in context.answer_messages if i != index]
        others += [context.messages[i]["content"] for i in range(len(context.messages))
                   if i != index and context.messages[i].get("role") == "assistant"
                   and isinstance(context.messages[i].get("content"), str) and context.messages[i]["content"].strip()]
        others = [o for o in dict.fromkeys(others) if o.strip() != text.strip()]
        if others:
            yield _with(context, index, "other_answer", "replaced by another turn's answer", others[0])
        yield _with(context, index, "empty", "emptied", "")


def _negated(text: str) -> str:
    """"X is Y" -> "X is not Y"; a text without an auxiliary verb gets "no longer" in front of it."""
    match = _AUXILIARY.search(text)
    if match:
        return text[:match.end()] + " not" + text[match.end():]
    return "No longer: " + text


def _with(context: MutationContext, index: int, operator: str, what: str, new: str) -> Mutant:
    def make() -> list[dict]:
        messages = copied(context.messages)
        messages[index]["content"] = new
        return messages

    return Mutant("answer", operator, f"answer {what}", make, message=index + 1,
                  before=context.messages[index]["content"], after=new)
