"""Tests for runner.score.assign: optimal goal-to-slot assignment with order edges."""
import itertools
import threading

from hypothesis import given, settings, strategies as st

from runner.score.assign import Slot, assign_goals, visit_order


def call(i, turn=None):
    """Tool call i, at its own turn unless told otherwise."""
    return Slot(key=i, position=(i if turn is None else turn, 0), exclusive=True)


def text(i):
    return Slot(key=10_000 + i, position=(i, 1), exclusive=False)


def placed_keys(assignment):
    return {goal: slot.key for goal, slot in assignment.placed.items()}


def brute_force_assign(goals, candidates, before):
    """Oracle: the maximum number of placed goals, by trying every choice for every goal
    (dropping a partial choice as soon as it breaks a constraint)."""
    best = 0

    def extend(chosen, rest):
        nonlocal best
        if violations(chosen, before):
            return
        if not rest:
            best = max(best, sum(slot is not None for slot in chosen.values()))
            return
        goal, rest = rest[0], rest[1:]
        for slot in [None] + list(candidates.get(goal, [])):
            extend({**chosen, goal: slot}, rest)

    extend({}, list(goals))
    return best


def violations(chosen, before):
    """Constraint breaches of a goal -> slot (or None) map, checked independently of the module."""
    problems = []
    exclusive_users = {}
    for goal, slot in chosen.items():
        if slot is not None and slot.exclusive:
            if slot.key in exclusive_users:
                problems.append(f"key {slot.key} used by {exclusive_users[slot.key]} and {goal}")
            exclusive_users[slot.key] = goal
    for a, b in before:
        sa, sb = chosen.get(a), chosen.get(b)
        if sa is not None and sb is not None and not sa.position < sb.position:
            problems.append(f"{a} must come before {b}")
    return problems


def test_repeated_tool_greedy_trap():
    # A needs t(x) (call 0 only); B accepts any t call. Greedy would hand call 0 to B.
    result = assign_goals(["B", "A"], {"A": [call(0)], "B": [call(0), call(1)]}, [])
    assert placed_keys(result) == {"A": 0, "B": 1}


def test_order_edge_forces_later_call():
    # A's only call is 1, so B (after A) must skip its earlier candidate 0 and take 2.
    result = assign_goals(["A", "B"], {"A": [call(1)], "B": [call(0), call(2)]}, [("A", "B")])
    assert placed_keys(result) == {"A": 1, "B": 2}


def test_order_violated_keeps_the_first_visited_goal():
    # B's only call precedes A's only call: only one fits. Goals are visited in topological
    # order, so A (the predecessor) wins however the suite lists them.
    cands = {"A": [call(1)], "B": [call(0)]}
    assert placed_keys(assign_goals(["A", "B"], cands, [("A", "B")])) == {"A": 1}
    assert placed_keys(assign_goals(["B", "A"], cands, [("A", "B")])) == {"A": 1}
    # Without the edge both fit; with an unrelated conflict the earlier-listed goal wins.
    assert placed_keys(assign_goals(["B", "A"], {"A": [call(0)], "B": [call(0)]}, [])) == {"B": 0}


def test_visit_order():
    assert visit_order(["C", "B", "A"], [("A", "B"), ("B", "C")]) == ["A", "B", "C"]
    assert visit_order(["D", "B", "A", "C"], [("A", "B")]) == ["D", "A", "B", "C"]
    # A cycle: the free goal first, then the stuck ones in listed order.
    assert visit_order(["A", "B", "C"], [("A", "B"), ("B", "A")]) == ["C", "A", "B"]


def test_tied_positions_cannot_satisfy_an_edge():
    cands = {"A": [call(0, turn=3)], "B": [call(1, turn=3)]}
    assert placed_keys(assign_goals(["A", "B"], cands, [("A", "B")])) == {"A": 0}
    assert placed_keys(assign_goals(["A", "B"], cands, [])) == {"A": 0, "B": 1}


def test_text_slot_shared_by_two_goals():
    message = text(4)
    result = assign_goals(["X", "Y"], {"X": [message], "Y": [message]}, [])
    assert result.placed == {"X": message, "Y": message}


def test_exclusive_slot_not_shared():
    result = assign_goals(["X", "Y"], {"X": [call(4)], "Y": [call(4)]}, [])
    assert placed_keys(result) == {"X": 4}


def test_goal_without_candidates():
    result = assign_goals(["A", "B", "C"], {"A": [call(0)], "B": []}, [("A", "B"), ("B", "C")])
    assert placed_keys(result) == {"A": 0}


def test_missing_predecessor_does_not_block():
    result = assign_goals(["A", "B"], {"B": [call(0)]}, [("A", "B")])
    assert placed_keys(result) == {"B": 0}


def test_chain():
    cands = {g: [call(0), call(1), call(2)] for g in "ABC"}
    result = assign_goals(["A", "B", "C"], cands, [("A", "B"), ("B", "C")])
    assert placed_keys(result) == {"A": 0, "B": 1, "C": 2}
    # Listed in reverse, the chain still forces the same placement.
    result = assign_goals(["C", "B", "A"], cands, [("A", "B"), ("B", "C")])
    assert placed_keys(result) == {"A": 0, "B": 1, "C": 2}


def test_diamond():
    # A -> B, A -> C, B -> D, C -> D; B and C both want the middle calls.
    cands = {"A": [call(0), call(1)], "B": [call(1), call(2)], "C": [call(1), call(2)],
             "D": [call(2), call(3)]}
    edges = [("A", "B"), ("A", "C"), ("B", "D"), ("C", "D")]
    result = assign_goals(["A", "B", "C", "D"], cands, edges)
    assert placed_keys(result) == {"A": 0, "B": 1, "C": 2, "D": 3}


def test_earliest_candidate_preferred_among_optima():
    cands = {"A": [call(5), call(2), call(7)]}  # not sorted on input
    assert placed_keys(assign_goals(["A"], cands, [])) == {"A": 2}


def test_cycle_does_not_hang():
    cands = {g: [call(0), call(1), call(2)] for g in "ABC"}
    edges = [("A", "B"), ("B", "C"), ("C", "A")]
    result = run_with_timeout(lambda: assign_goals(["A", "B", "C"], cands, edges))
    # All three cannot be ordered around a cycle; two can (C would need to be after B and
    # before A at once).
    assert placed_keys(result) == {"A": 0, "B": 1}
    assert brute_force_assign(["A", "B", "C"], cands, edges) == 2
    assert not violations(result.placed, edges)
    # A self-loop can never be satisfied, so that goal stays unplaced.
    result = run_with_timeout(lambda: assign_goals(["A", "B"], cands, [("A", "A")]))
    assert placed_keys(result) == {"B": 0}


def test_unknown_goals_in_edges_and_candidates_ignored():
    result = assign_goals(["A"], {"A": [call(0)], "Z": [call(1)]}, [("Z", "A"), ("A", "Q")])
    assert placed_keys(result) == {"A": 0}


def test_contention_hidden_behind_early_choices_is_quick():
    # Greedy hands the first 15 goals their early x calls, starving 16 goals that need an x.
    x = [call(i) for i in range(15)]
    late = [call(100 + i) for i in range(15)]
    goals = [f"g{i}" for i in range(31)]
    cands = {goals[i]: [x[i], late[i]] for i in range(15)}
    cands.update({goals[i]: x for i in range(15, 31)})
    result = run_with_timeout(lambda: assign_goals(goals, cands, []))
    assert placed_keys(result) == {**{goals[i]: 100 + i for i in range(15)},
                                   **{goals[15 + i]: i for i in range(15)}}


def test_many_goals_on_the_same_calls_is_quick():
    slots = [call(i) for i in range(30)]
    result = run_with_timeout(lambda: assign_goals([f"g{i}" for i in range(30)],
                                                   {f"g{i}": slots for i in range(30)}, []))
    assert placed_keys(result) == {f"g{i}": i for i in range(30)}
    # One call fewer than goals: the last goal loses out.
    result = run_with_timeout(lambda: assign_goals([f"g{i}" for i in range(30)],
                                                   {f"g{i}": slots[:29] for i in range(30)}, []))
    assert placed_keys(result) == {f"g{i}": i for i in range(29)}


def run_with_timeout(fn, seconds=5.0):
    box = []
    worker = threading.Thread(target=lambda: box.append(fn()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert box, f"took longer than {seconds}s"
    return box[0]


@st.composite
def instances(draw):
    n_goals = draw(st.integers(0, 6))
    n_slots = draw(st.integers(0, 7))
    goals = [f"g{i}" for i in range(n_goals)]
    # Few distinct turns so that positions tie now and then.
    slots = [Slot(key=k, position=(draw(st.integers(0, 4)), draw(st.integers(0, 1))),
                  exclusive=draw(st.booleans())) for k in range(n_slots)]
    candidates = {g: draw(st.lists(st.sampled_from(slots), max_size=n_slots, unique=True))
                  if slots else [] for g in goals}
    # A DAG: edges (i < j) over a random permutation of the goals.
    topo = draw(st.permutations(goals))
    pairs = [(topo[i], topo[j]) for i in range(n_goals) for j in range(i + 1, n_goals)]
    before = draw(st.lists(st.sampled_from(pairs), max_size=8)) if pairs else []
    return goals, candidates, before


@settings(max_examples=500, deadline=None)
@given(instances())
def test_matches_brute_force(instance):
    goals, candidates, before = instance
    result = assign_goals(goals, candidates, before)
    assert len(result.placed) == brute_force_assign(goals, candidates, before)
    assert not violations(result.placed, before)
    for goal, slot in result.placed.items():
        assert slot in candidates[goal]


def brute_force_tie_break(goals, candidates, before):
    """The documented winner: among maximum assignments, the smallest vector of candidate ranks
    (candidates sorted by (position, key), unplaced ranking last) read in visit order."""
    goals = visit_order(goals, before)
    ranked = {g: sorted(candidates.get(g, []), key=lambda s: (s.position, s.key)) for g in goals}
    options = [list(range(len(ranked[g]) + 1)) for g in goals]  # last rank = unplaced
    best = None
    for ranks in itertools.product(*options):
        chosen = {g: ranked[g][r] if r < len(ranked[g]) else None for g, r in zip(goals, ranks, strict=True)}
        if violations(chosen, before):
            continue
        score = (-sum(s is not None for s in chosen.values()), ranks)
        if best is None or score < best[0]:
            best = (score, {g: s for g, s in chosen.items() if s is not None})
    return best[1]


@settings(max_examples=300, deadline=None)
@given(instances())
def test_tie_break_matches_documented_rule(instance):
    goals, candidates, before = instance
    assert assign_goals(goals, candidates, before).placed == brute_force_tie_break(
        goals, candidates, before)


def test_an_assignment_leaves_no_garbage_cycles():
    """Each scored case assigns its goals once: the search's self-calling helpers must not stay behind as
    reference cycles, which only the cyclic collector frees (~75 objects a case, 40,000 in a 640-case run,
    and the collection at the run's end took 30-50 ms of CPU). Both the fast path and the search."""
    import gc

    trap = {"A": [call(0)], "B": [call(0), call(1)]}  # greedy gives call 0 to A, and B takes call 1: fast path
    search = {"A": [call(0), call(1)], "B": [call(0)]}  # greedy gives call 0 to A and loses B: the search runs
    def left_by_the_search() -> list:
        # only the search's own helpers count: other threads of this process (a server a fixture started) may
        # leave garbage of their own meanwhile
        return [o for o in gc.garbage if getattr(o, "__qualname__", "").startswith("assign_goals.<locals>")]

    # Only the youngest generation is collected: with the collector off, everything the call allocates stays
    # there, and a full collection walks the whole heap of this process (~1 s each late in a serial run).
    for candidates, expected in ((trap, {"A": 0, "B": 1}), (search, {"A": 1, "B": 0})):
        gc.collect(0)  # the youngest generation starts empty: what is in it afterwards, the call made
        gc.disable()
        gc.set_debug(gc.DEBUG_SAVEALL)  # what the collector finds is kept in gc.garbage, to be looked at
        try:
            assert placed_keys(assign_goals(["A", "B"], candidates, [])) == expected
            gc.collect(0)
            assert left_by_the_search() == []
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()
