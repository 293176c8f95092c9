"""Loop carries updated in place: each step of a loop may overwrite the carries it is given.

A loop's carry buffers are dead once the next step has read them (the step returns the new
carries), so the step can write its results over them, as XLA updates a while loop's carries
in place. The cpu backend runs a loop body as a ``HostExecutable`` of its own
(``backend._loop_runners``) whose executors treat the carry inputs as *donated*
(``eval/executable.py``): an elementwise result, or a host kernel's output
(``kernel_aliases.py``), takes the buffer of a carry that dies there. A momentum optimizer's
``v = 0.9 v + g; p = p - lr v`` then updates the parameters and velocities in place, step
after step, instead of allocating both afresh.

The loop must only donate buffers it owns. ``CarrySteps`` is one run of a loop's body:

- the first step gets copies of the initial carries (they are the caller's arrays);
- after each step, a new carry is the loop's own only if the executor that ran reported it
  fresh (``fresh_outputs``: a buffer it allocated, or was donated, and no other result
  shares); any other (a view of a const, a const itself, a nested loop's result) is copied
  before the next step donates it.

Only carries of at least ``DONATE_MIN_ELEMENTS`` elements are donated: below that, writing
in place saves nothing a step would notice, while each donated carry costs a check per step.
"""
from __future__ import annotations

import numpy as np

DONATE_MIN_ELEMENTS = 1 << 12


def donated_carries(in_types, first: int, count: int) -> frozenset:
    """The positions, among the body's inputs ``first .. first + count - 1`` (its carries),
    of the carries worth donating."""
    return frozenset(p for p in range(first, first + count)
                     if in_types[p].ndim > 0 and in_types[p].size >= DONATE_MIN_ELEMENTS)


class CarrySteps:
    """``step(*args)`` for one run of a loop: the body (``run``, with ``fresh_outputs``)
    called with the carries at ``positions`` donated, copying any the loop does not own."""

    def __init__(self, body, positions, first: int):
        self.body = body
        self.positions = sorted(positions)
        self.first = first
        self.owned = {p: False for p in self.positions}   # the initial carries: the caller's

    def __call__(self, *args):
        owned = self.owned
        if not all(owned.values()):
            args = list(args)
            for p in self.positions:
                if not owned[p]:
                    args[p] = np.array(args[p], copy=True)
        outs = self.body.run(*args)
        fresh = self.body.fresh_outputs        # read after the run: never newer than it
        for p in self.positions:
            owned[p] = fresh[p - self.first]
        return outs
