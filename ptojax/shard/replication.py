"""Which mesh axes each value of a per-device program is replicated over.

``shard_map`` uses this to reject ``out_specs`` that claim a value is the same on every device
of an axis when the program computes different values there. A value is replicated over the
axes its inputs are all replicated over, except that collectives change it:

    psum / pmax / pmin / all_gather over A      replicated over A as well
    psum_scatter / all_to_all / ppermute over A  varies over A
    axis_index over A                            varies over A, replicated over the rest

Call-like equations are analysed through their body; other equations with sub-IRs (control
flow) conservatively take the intersection of their inputs.
"""
from __future__ import annotations

from ptojax.ir.core import ClosedIR, Literal, Var
from ptojax.shard.collectives import (all_gather_p, all_to_all_p, pmax_p, pmin_p, ppermute_p,
                                      psum_p, psum_scatter_p)

_GATHERING = frozenset({psum_p, pmax_p, pmin_p, all_gather_p})
_SCATTERING = frozenset({psum_scatter_p, all_to_all_p, ppermute_p})


def replicated_axes(closed: ClosedIR, in_reps, all_axes) -> list:
    """Per output of ``closed``, the frozenset of mesh axes it is replicated over, given that
    input ``i`` is replicated over ``in_reps[i]``."""
    ir = closed.ir
    everything = frozenset(all_axes)
    env = {v: everything for v in ir.constvars}
    env.update(zip(ir.invars, in_reps))

    def rep(a):
        return everything if type(a) is Literal else env[a]

    for eqn in ir.eqns:
        ins = [rep(a) for a in eqn.inputs]
        outs = _eqn_reps(eqn, ins, everything)
        env.update(zip(eqn.outputs, outs))
    return [rep(v) if type(v) is Var else everything for v in ir.outvars]


def _eqn_reps(eqn, ins, everything) -> list:
    common = everything.intersection(*ins)
    if eqn.prim.collective:
        axes = frozenset(eqn.params["axes"])
        if eqn.prim in _GATHERING:
            return [common | axes]
        if eqn.prim in _SCATTERING:
            return [common - axes]
        return [everything - axes]  # axis_index
    if eqn.prim.call_like:
        return replicated_axes(eqn.params["body"], ins, everything)
    return [common] * len(eqn.outputs)
