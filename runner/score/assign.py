"""Choose which trajectory event achieves which goal: the combinatorial core of goal-graph scoring.

Another module decides which events *could* achieve each goal (its candidate slots). Here we pick
one slot per goal so that as many goals as possible are achieved, subject to:

1. an exclusive slot (a tool call) achieves at most one goal; a non-exclusive slot (a text
   message) may achieve several. Slots are identified by `key`; slots sharing a key are expected to
   agree on `exclusive`.
2. for every order edge (a, b) with BOTH a and b placed, position(a) < position(b) strictly.
   A goal whose predecessor is unplaced may still be placed; the caller reports the gap.

Greedy first-fit is wrong (goals A=t(x) and B=t(*) with calls [t(x), t(y)]: greedy gives call 0 to
B and loses A), so we search exactly; see `assign_goals`.
"""
from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

_NEVER = (float("-inf"),)  # sorts before every position
_ALWAYS = (float("inf"),)  # sorts after every position


@dataclass(frozen=True)
class Slot:
    key: int                   # identifies the event (tool call index, or a text's own key: see score/case.py)
    position: tuple[int, int]  # ordering in the conversation; tuples compare lexicographically
    exclusive: bool            # True: used by at most one goal (tool calls); False: shareable (texts)


@dataclass
class Assignment:
    placed: dict[str, Slot] = field(default_factory=dict)  # goal name -> the slot that achieves it


def visit_order(goals: list[str], before: list[tuple[str, str]]) -> list[str]:
    """Topological order of `goals` that otherwise keeps `goals` order (Kahn's algorithm, always
    taking the earliest-listed ready goal). Goals stuck on a cycle follow, in `goals` order."""
    names = list(dict.fromkeys(goals))
    index = {g: i for i, g in enumerate(names)}
    successors: list[set[int]] = [set() for _ in names]
    for a, b in before:
        if a in index and b in index and a != b:
            successors[index[a]].add(index[b])
    waiting = [0] * len(names)
    for succ in successors:
        for j in succ:
            waiting[j] += 1
    ready = [i for i, w in enumerate(waiting) if w == 0]
    heapq.heapify(ready)
    result = []
    while ready:
        i = heapq.heappop(ready)
        result.append(i)
        for j in successors[i]:
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(ready, j)
    done = set(result)
    result += [i for i in range(len(names)) if i not in done]
    return [names[i] for i in result]


def assign_goals(goals: list[str], candidates: dict[str, list[Slot]],
                 before: list[tuple[str, str]]) -> Assignment:
    """Return an assignment placing the maximum number of goals.

    Tie-break (exact rule): goals are visited in `visit_order(goals, before)`: a topological order
    that keeps `goals` order wherever the edges allow. Each goal's candidates are ranked by
    (position, key), duplicates dropped, and "unplaced" ranks after all of them. Among all maximum
    assignments we return the one whose vector of ranks, read in visit order, is lexicographically
    smallest. Equivalently: each goal in visit order takes its earliest candidate that still allows
    a maximum assignment given the earlier goals' choices, and stays unplaced only if none does.

    Edges naming unknown goals are ignored. A self-loop (a, a) can never hold, so `a` stays
    unplaced; goals on a longer cycle are visited after the rest, and the cycle only forbids
    positions that cannot satisfy it. Nothing loops on cyclic input.

    Algorithm: first the greedy leaf (each goal takes its earliest usable slot); if it reaches
    a maximum-matching ceiling it is optimal and is the tie-break winner, which is the usual
    case. Otherwise a depth-first search in visit order asks "can goals from here on add `need`
    more?", trying candidates earliest first, then "unplaced"; the top level asks for the
    ceiling, then one less, until it succeeds. Each state is memoised with the need proven and a
    ceiling: the optimum if keys never clashed (its own memoised DP, respects order edges),
    tightened before the state is first searched by a maximum bipartite matching of the
    remaining goals onto still-usable slots (sees clashes, ignores edges among them). A state is
    only what the future can see: used keys it could want and, per constrained goal, which of
    its candidates the placed neighbours still allow. The problem is NP-hard in general (tied
    positions plus edges encode independent set), so dense adversarial graphs can still be slow.
    """
    order = visit_order(goals, before)
    n = len(order)
    index = {g: i for i, g in enumerate(order)}

    # later_succ[i] / later_pred[i]: later-visited goals that must come after / before goal i.
    later_succ: list[list[int]] = [[] for _ in range(n)]
    later_pred: list[list[int]] = [[] for _ in range(n)]
    constrained_from = [n] * n  # first visited goal that can narrow this goal's window
    self_looped = set()
    for a, b in before:
        if a not in index or b not in index:
            continue
        ia, ib = index[a], index[b]
        if ia == ib:
            self_looped.add(ia)
        elif ia < ib:
            later_succ[ia].append(ib)
            constrained_from[ib] = min(constrained_from[ib], ia)
        else:
            later_pred[ib].append(ia)
            constrained_from[ia] = min(constrained_from[ia], ib)

    # Exclusive keys become bits so "used" is an int: cheap to copy, mask and memoise.
    bit_of: dict[int, int] = {}
    cands: list[list[tuple[tuple[int, int], int, Slot]]] = []  # (position, bit or 0, slot)
    for i, g in enumerate(order):
        slots = [] if i in self_looped else sorted(set(candidates.get(g) or ()),
                                                   key=lambda s: (s.position, s.key))
        cands.append([(s.position, bit_of.setdefault(s.key, 1 << len(bit_of)) if s.exclusive
                       else 0, s) for s in slots])
    positions = [[c[0] for c in row] for row in cands]

    # future_mask[i]: bits goals >= i could use. watched[i]: goals >= i whose window can be
    # narrowed by goals < i, i.e. the windows a state at i must remember.
    future_mask = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        future_mask[i] = future_mask[i + 1]
        for c in cands[i]:
            future_mask[i] |= c[1]
    watched = [[j for j in range(i, n) if constrained_from[j] < i] for i in range(n + 1)]

    loose_cap = [0] * (n + 1)  # goals >= i that have any candidate at all
    for i in range(n - 1, -1, -1):
        loose_cap[i] = loose_cap[i + 1] + bool(cands[i])

    low = [_NEVER] * n    # a goal's slot must come strictly after low[j] ...
    high = [_ALWAYS] * n  # ... and strictly before high[j], given the goals placed so far
    used = 0              # bits of exclusive keys taken so far

    def place(i: int, c) -> list:
        nonlocal used
        undo = [(j, low[j], high[j]) for j in later_succ[i] + later_pred[i]]
        for j in later_succ[i]:
            low[j] = max(low[j], c[0])
        for j in later_pred[i]:
            high[j] = min(high[j], c[0])
        used |= c[1]
        return undo

    def unplace(c, undo: list) -> None:
        nonlocal used
        used &= ~c[1]
        for j, lo, hi in undo:
            low[j], high[j] = lo, hi

    def usable(j: int) -> list:
        lo, hi = low[j], high[j]
        return [c for c in cands[j] if lo < c[0] < hi and not used & c[1]]

    def windows(i: int) -> tuple:
        """Which candidates of each watched goal the placed goals still allow."""
        return tuple((bisect_right(positions[j], low[j]), bisect_left(positions[j], high[j]))
                     for j in watched[i])

    def state(i: int) -> tuple:
        return (i, used & future_mask[i], windows(i))

    loose_memo: dict[tuple, int] = {}

    def loose(i: int) -> int:
        """Max goals >= i placeable if keys never clashed: a bound that respects order edges."""
        if i == n:
            return 0
        key = (i, windows(i))
        value = loose_memo.get(key)
        if value is None:
            value = loose(i + 1)
            for c in cands[i]:
                if value > loose_cap[i + 1] or not low[i] < c[0] < high[i]:
                    continue
                free = (c[0], 0)  # keys ignored
                undo = place(i, free)
                value = max(value, 1 + loose(i + 1))
                unplace(free, undo)
            loose_memo[key] = value
        return value

    def ceiling(i: int) -> int:
        """Max matching of goals >= i onto usable slots: an upper bound on what they can add."""
        count = 0
        owner: dict[int, int] = {}  # bit -> goal holding it
        options: dict[int, list[int]] = {}
        for j in range(i, n):
            bits = [c[1] for c in usable(j)]
            if not bits:
                continue
            if 0 in bits:  # a text slot never runs out
                count += 1
                continue
            options[j] = bits
            free = next((b for b in bits if b not in owner), None)
            if free is not None:  # greedy first; augmenting paths fix the rest below
                owner[free] = j
                count += 1

        def augment(j: int, seen: set) -> bool:  # Kuhn's augmenting path
            for b in options[j]:
                if b not in seen:
                    seen.add(b)
                    if b not in owner or augment(owner[b], seen):
                        owner[b] = j
                        return True
            return False

        holders = set(owner.values())
        for j in options:
            if j not in holders and augment(j, set()):
                count += 1
        del augment  # it calls itself through its own cell: a cycle left to the garbage collector otherwise
        return count

    # state -> [need proven, choice proving it, ceiling, whether the ceiling used a matching]
    memo: dict[tuple, list] = {}

    def solve(i: int, need: int) -> bool:
        """Can goals >= i add at least `need` placements from the current state?"""
        if need <= 0:
            return True
        if i == n:
            return False
        key = state(i)
        entry = memo.get(key)
        if entry is None:
            entry = memo[key] = [0, None, loose(i), False]
        if need <= entry[0]:
            return True
        if need <= entry[2] and not entry[3]:
            # About to search: worth a matching too, which sees key clashes that loose() ignores.
            entry[2], entry[3] = min(entry[2], ceiling(i)), True
        if need > entry[2]:
            return False
        for c in usable(i) + [None]:
            if c is None:
                ok = solve(i + 1, need)
            else:
                undo = place(i, c)
                ok = solve(i + 1, need - 1)
                unplace(c, undo)
            if ok:
                entry[0], entry[1] = need, c
                return True
        entry[2] = need - 1
        return False

    try:
        # Fast path: the very first leaf of the search (each goal takes its earliest usable slot) is
        # the tie-break winner whenever it reaches the ceiling, which is the usual case.
        best = ceiling(0)
        placed: dict[str, Slot] = {}
        trail = []
        for i in range(n):
            options = usable(i)
            if options:
                trail.append((options[0], place(i, options[0])))
                placed[order[i]] = options[0][2]
        for c, undo in reversed(trail):
            unplace(c, undo)
        if len(placed) == best:
            return Assignment(placed)

        need = min(best, loose(0))
        while not solve(0, need):
            need -= 1

        # Replay the proven choices. On the optimal path each state was proven at exactly its own
        # optimum, so its stored choice is the tie-break winner; a state never stored adds nothing.
        placed = {}
        for i in range(n):
            entry = memo.get(state(i))
            if entry is None:
                break
            c = entry[1]
            if c is not None:
                place(i, c)
                placed[order[i]] = c[2]
        return Assignment(placed)
    finally:  # loose and solve call themselves through their own cells: break those cycles, or every case
        del loose, solve  # leaves ~75 objects (its slots among them) to the garbage collector
