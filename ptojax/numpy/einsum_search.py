"""Contraction-order search for einsum: the strategies opt_einsum defines (and JAX's
``einsum``/``einsum_path`` use), re-implemented over index sets.

A term is a frozenset of labels; ``sizes`` maps each label to its size. Every strategy returns
a path in *linear* form: a list of position tuples into the current operand list, where each
step removes its operands and appends the result at the end (as ``einsum_path`` reports it).
Internally the searches name tensors by static single assignment ids (inputs 0..n-1, then one
new id per result) and convert at the end.

- ``optimal``: depth-first over every pair at every step, pruned by the best FLOP count so far.
- ``branch`` (``branch-all``/``branch-2``/``branch-1``): the same search visiting only the
  ``nbranch`` cheapest candidates by memory removed, pruning paths far behind the best one.
- ``greedy``: Hadamard products of identical terms first, then repeatedly the pair that frees
  the most memory, then outer products smallest first.
- ``auto``: ``optimal`` up to 4 operands, ``branch-all`` up to 6, ``branch-2`` up to 8,
  ``branch-1`` up to 14, ``greedy`` beyond.
"""
from __future__ import annotations

import heapq
import itertools
import math
from collections import defaultdict


def term_size(labels, sizes) -> int:
    """The number of elements of a tensor indexed by ``labels``."""
    return math.prod(sizes[c] for c in labels)


def flop_count(labels, inner: bool, num_terms: int, sizes) -> int:
    """opt_einsum's FLOP estimate of one contraction over ``labels`` of ``num_terms`` tensors:
    one multiply per extra term per element, plus one add when labels are summed away."""
    return term_size(labels, sizes) * (max(1, num_terms - 1) + int(inner))


def ssa_to_linear(ssa_path):
    """A path of static single assignment ids as positions in the shrinking operand list."""
    live = list(range(sum(map(len, ssa_path)) - len(ssa_path) + 1))
    next_id = len(live)
    linear = []
    for step in ssa_path:
        positions = sorted(live.index(i) for i in step)
        for p in reversed(positions):
            del live[p]
        live.append(next_id)
        next_id += 1
        linear.append(tuple(positions))
    return linear


def _pair_result(terms, output, remaining, i, j, sizes):
    """The labels of terms[i] x terms[j] still needed (by the output or another remaining
    term) and the FLOPs of that contraction."""
    both = terms[i] | terms[j]
    needed = output.union(*(terms[k] for k in remaining if k != i and k != j))
    result = both & needed
    return result, flop_count(both, bool((terms[i] & terms[j]) - needed), 2, sizes)


def optimal(inputs, output, sizes):
    """The path of least total FLOPs, by exhaustive depth-first search."""
    best = {"flops": math.inf, "path": (tuple(range(len(inputs))),)}
    cache = {}

    def search(path, terms, remaining, flops):
        if len(remaining) == 1:
            best["flops"], best["path"] = flops, path
            return
        for i, j in itertools.combinations(remaining, 2):
            i, j = min(i, j), max(i, j)
            key = (terms[i], terms[j])
            if key not in cache:
                cache[key] = _pair_result(terms, output, remaining, i, j, sizes)
            result, step_flops = cache[key]
            if flops + step_flops >= best["flops"]:
                continue
            search(path + ((i, j),), terms + (result,),
                   remaining - {i, j} | {len(terms)}, flops + step_flops)

    search((), tuple(inputs), set(range(len(inputs))), 0)
    return ssa_to_linear(best["path"])


def branch(inputs, output, sizes, nbranch=None, cutoff_flops_factor=4):
    """Branch and bound: at each step try the ``nbranch`` (all if None) candidate pairs that
    remove the most memory (outer products only when nothing else is left), dropping a path
    when it is no better than the best (FLOPs, then largest intermediate) or more than
    ``cutoff_flops_factor`` times the best FLOPs seen at the same depth."""
    best = {"flops": math.inf, "size": math.inf, "path": None}
    progress = defaultdict(lambda: math.inf)
    size_of = {t: term_size(t, sizes) for t in inputs}
    cache = {}

    def assess(terms, remaining, flops, size, i, j):
        key = (terms[i], terms[j])
        if key not in cache:
            cache[key] = _pair_result(terms, output, remaining, i, j, sizes)
        result, step_flops = cache[key]
        if result not in size_of:
            size_of[result] = term_size(result, sizes)
        new_flops, new_size = flops + step_flops, max(size, size_of[result])
        if (new_flops, new_size) >= (best["flops"], best["size"]):
            return None
        depth = len(terms)
        if new_flops < progress[depth]:
            progress[depth] = new_flops
        elif new_flops > cutoff_flops_factor * progress[depth]:
            return None
        memory_removed = size_of[result] - size_of[terms[i]] - size_of[terms[j]]
        return memory_removed, step_flops, new_flops, new_size, (i, j), result

    def candidates(terms, remaining, flops, size, outer):
        heap = []
        for i, j in itertools.combinations(remaining, 2):
            i, j = min(i, j), max(i, j)
            if outer or not terms[i].isdisjoint(terms[j]):
                found = assess(terms, remaining, flops, size, i, j)
                if found:
                    heapq.heappush(heap, found)
        return heap

    def search(path, terms, remaining, flops, size):
        if len(remaining) == 1:
            best.update(flops=flops, size=size, path=path)
            return
        heap = (candidates(terms, remaining, flops, size, outer=False)
                or candidates(terms, remaining, flops, size, outer=True))
        tried = 0
        while heap and (nbranch is None or tried < nbranch):
            _, _, new_flops, new_size, (i, j), result = heapq.heappop(heap)
            search(path + ((i, j),), terms + (result,),
                   (remaining - {i, j}) | {len(terms)}, new_flops, new_size)
            tried += 1

    search((), tuple(inputs), set(range(len(inputs))), 0, 0)
    return ssa_to_linear(best["path"])


class _GreedyState:
    """The terms still to contract (keyed by their index set, valued by ssa id), which terms
    use each contractible label, and which labels two / three or more terms share."""

    def __init__(self, inputs, output, sizes):
        self.sizes = sizes
        # a label every term has is only contracted at the very end: treat it as output
        self.output = frozenset(output) | frozenset.intersection(*inputs)
        self.ids = itertools.count(len(inputs))
        self.ssa_path = []
        self.live = {}
        for ssa_id, term in enumerate(inputs):
            if term in self.live:       # identical terms: their Hadamard product, eagerly
                self.ssa_path.append((self.live[term], ssa_id))
                self.live[term] = next(self.ids)
            else:
                self.live[term] = ssa_id
        self.users = defaultdict(set)
        for term in self.live:
            for c in term - self.output:
                self.users[c].add(term)
        self.shared = {n: {c for c, ts in self.users.items() if len(ts) >= n} for n in (2, 3)}
        self.footprint = {t: term_size(t, sizes) for t in self.live}

    def candidate(self, a, b):
        """((memory removed, later id, earlier id), earlier term, later term, result)."""
        both, common = a | b, a & b
        result = ((both & self.output) | (common & self.shared[3])
                  | ((both - common) & self.shared[2]))
        removed = term_size(result, self.sizes) - self.footprint[a] - self.footprint[b]
        if self.live[a] > self.live[b]:
            a, b = b, a
        return (removed, self.live[b], self.live[a]), a, b, result

    def push_best(self, queue, a, others):
        heapq.heappush(queue, min(self.candidate(a, b) for b in others))

    def contract(self, a, b, result):
        self.ssa_path.append((self.live.pop(a), self.live.pop(b)))
        for term in (a, b):
            for c in term - self.output:
                self.users[c].remove(term)
        if result in self.live:         # equal to a live term: multiply them right away
            self.ssa_path.append((self.live[result], next(self.ids)))
        else:
            for c in result - self.output:
                self.users[c].add(result)
        self.live[result] = next(self.ids)
        for c in (a | b) - self.output:
            n = len(self.users[c])
            for k in (2, 3):
                (self.shared[k].add if n >= k else self.shared[k].discard)(c)
        self.footprint[result] = term_size(result, self.sizes)


def greedy(inputs, output, sizes):
    """Greedy: contract the pair that removes the most memory until no pair shares a label,
    then take outer products smallest first."""
    if len(inputs) == 1:
        return [(0,)]
    state = _GreedyState(inputs, output, sizes)
    queue = []
    for c, users in state.users.items():
        ordered = sorted(users, key=state.live.__getitem__)
        for k, a in enumerate(ordered[:-1]):
            state.push_best(queue, a, ordered[k + 1:])
    while queue:
        _, a, b, result = heapq.heappop(queue)
        if a not in state.live or b not in state.live:
            continue                    # a stale candidate: one of its terms is gone
        state.contract(a, b, result)
        partners = {t for c in result for t in state.users[c]} - {result}
        if partners:
            state.push_best(queue, result, list(partners))
    _outer_products_smallest_first(state)
    return ssa_to_linear(state.ssa_path)


def _outer_products_smallest_first(state):
    out = state.output
    heap = [(term_size(t & out, state.sizes), i, t) for t, i in state.live.items()]
    heapq.heapify(heap)
    _, id_a, a = heapq.heappop(heap)
    while heap:
        _, id_b, b = heapq.heappop(heap)
        state.ssa_path.append((min(id_a, id_b), max(id_a, id_b)))
        result = (a | b) & out
        _, id_a, a = heapq.heappushpop(
            heap, (term_size(result, state.sizes), next(state.ids), result))


def auto(inputs, output, sizes):
    """opt_einsum's 'auto': exhaustive for few operands, narrower searches for more."""
    n = len(inputs)
    if n <= 4:
        return optimal(inputs, output, sizes)
    if n <= 8:
        return branch(inputs, output, sizes, nbranch=None if n <= 6 else 2)
    if n <= 14:
        return branch(inputs, output, sizes, nbranch=1)
    return greedy(inputs, output, sizes)


STRATEGIES = {
    "auto": auto,
    "optimal": optimal,
    "branch-all": branch,
    "branch-2": lambda inputs, output, sizes: branch(inputs, output, sizes, nbranch=2),
    "branch-1": lambda inputs, output, sizes: branch(inputs, output, sizes, nbranch=1),
    "greedy": greedy,
    "eager": greedy,
    "opportunistic": greedy,
}
