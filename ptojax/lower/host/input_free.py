"""Tensor-level equations of a compiled host program that read no input, computed once.

An ``iota`` (the counters of a random draw), a reshape of it, a ``broadcast_in_dim`` of a
literal: equations whose operands are all literals or constants compute the same array every
call. ``optimize.fold_constants`` folds only scalars into literals (an IR must stay small to
print and hash), so such arrays are recomputed by every call of a jitted function and every
step of a compiled loop body — each a numpy call between kernels (a VAE epoch step's
``iota`` + ``reshape`` for its 32x10 normal draw: ~40 us of CPU per step, their code and
numpy's cold after the step's large products). ``input_free_as_consts`` evaluates them when
the program is built and passes the results as constants, which the executor never writes
into (only arrays it allocated or was donated are updated in place). Only up to
``MAX_ELEMENTS`` elements each (a constant holds its memory for the program's lifetime);
``tile_kernel`` equations stay (a kernel computes an ``iota`` in registers), as do
equations with effects, collectives, sub-IRs or run-time sizes.
"""
from __future__ import annotations

import numpy as np

from ptojax.eval.ieee import quietly
from ptojax.ir.core import IR, ClosedIR, Literal, Var
from ptojax.ir.symbolic import has_symbols
from ptojax.ir.core import sub_irs
from ptojax.tile.kernel import tile_kernel_p

MAX_ELEMENTS = 1 << 16


def _computable(eqn, known) -> bool:
    prim = eqn.prim
    return (prim is not tile_kernel_p and not prim.effectful and not prim.collective
            and not prim.binds_axes
            and all(type(a) is Literal or a in known for a in eqn.inputs)
            and sum(v.type.size for v in eqn.outputs) <= MAX_ELEMENTS
            and not any(True for _ in sub_irs(eqn.params))
            and not has_symbols(tuple(eqn.params.values())))


@quietly
def input_free_as_consts(closed: ClosedIR) -> ClosedIR:
    """``closed`` with its small input-free tensor equations evaluated into constants (see
    the module docstring); ``closed`` itself when there are none."""
    ir = closed.ir
    known = dict(zip(ir.constvars, closed.consts))
    start = len(known)
    eqns = []
    for eqn in ir.eqns:
        if _computable(eqn, known):
            try:
                values = eqn.prim.impl(*(a.value if type(a) is Literal else known[a]
                                         for a in eqn.inputs), **eqn.params)
            except Exception:   # left to run time, where the error gets its context
                values = None
            if values is not None:
                values = values if eqn.prim.multiple_results else [values]
                for v, value in zip(eqn.outputs, values):
                    known[v] = _owned_constant(value, v.type)
                continue
        eqns.append(eqn)
    if len(known) == start:
        return closed
    used = {a for e in eqns for a in e.inputs if type(a) is Var}
    used.update(v for v in ir.outvars if type(v) is Var)
    constvars = [v for v in known if v in used]
    return ClosedIR(IR(constvars, ir.invars, eqns, ir.outvars), [known[v] for v in constvars])


def _owned_constant(value, type_):
    """``value`` as a contiguous read-only array of ``type_`` (an ``iota`` impl returns a
    broadcast view of its ramp)."""
    array = np.ascontiguousarray(np.asarray(value, dtype=type_.dtype).reshape(type_.shape))
    array = array.copy() if not array.flags.owndata else array
    array.flags.writeable = False
    return array
