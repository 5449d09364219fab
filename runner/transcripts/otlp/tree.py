"""A trace's spans as a tree: roots, each span's children in time order, and the walk a reader takes."""
from __future__ import annotations

from .spans import Span

__all__ = ["span_order", "span_tree", "walk_order"]


def walk_order(spans: list[Span]) -> list[Span]:
    roots, children, _ = span_tree(spans)
    out: list[Span] = []
    stack = list(reversed(roots))
    while stack:
        span = stack.pop()
        out.append(span)
        stack.extend(reversed(children.get(span.span_id, [])))
    return out


def span_order(span: Span) -> tuple:
    return (span.start, span.end, span.position)


def span_tree(spans: list[Span]) -> tuple[list[Span], dict[str, list[Span]], list[Span]]:
    """The trace's roots (spans whose parent is not in the file) and each span's children. Spans whose
    parents form a loop (a hostile or corrupt file) would be reached from no root: the earliest of each
    loop becomes a root (and is returned as looped), so no span is dropped unseen."""
    by_id = {s.span_id: s for s in spans}
    children: dict[str, list[Span]] = {}
    roots = []
    for span in spans:
        if span.parent_id and span.parent_id in by_id and span.parent_id != span.span_id:
            children.setdefault(span.parent_id, []).append(span)
        else:
            roots.append(span)
    reached = _reached(roots, children)
    looped = []
    while len(reached) < len(spans):
        loose = min((s for s in spans if s.span_id not in reached), key=span_order)
        children[loose.parent_id or ""] = [c for c in children.get(loose.parent_id or "", []) if c is not loose]
        roots.append(loose)
        looped.append(loose)
        reached |= _reached([loose], children)
    for kids in children.values():
        kids.sort(key=span_order)
    return sorted(roots, key=span_order), children, looped


def _reached(roots: list[Span], children: dict[str, list[Span]]) -> set[str]:
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        span = stack.pop()
        if span.span_id in seen:
            continue
        seen.add(span.span_id)
        stack.extend(children.get(span.span_id, []))
    return seen
