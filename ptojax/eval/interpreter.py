"""Evaluate an IR equation by equation through ``bind``.

With no trace active this is the numpy interpreter (the reference backend). While a trace is
active it re-emits the equations into that trace — which is how a transformed IR lands in an
outer ``jit``/``grad``/``vmap``. Each re-emitted equation keeps its original source line.
"""
from __future__ import annotations

import numpy as np

from ptojax import source_info
from ptojax.ir.core import ClosedIR, Var
from ptojax.eval.array import Array
from ptojax.trace import bind


def eval_ir(closed, args, consts=None) -> list:
    """Outputs of ``closed`` (a ClosedIR, or an IR with ``consts``) applied to ``args``."""
    if isinstance(closed, ClosedIR):
        ir, consts = closed.ir, closed.consts
    else:
        ir, consts = closed, consts or ()
    if len(args) != len(ir.invars):
        raise TypeError(f"eval_ir: the IR takes {len(ir.invars)} arguments, got {len(args)}")
    env = dict(zip(ir.constvars, consts))
    env.update((v, _as_argument(a, v)) for v, a in zip(ir.invars, args))
    with source_info.replaying() as at:
        for eqn in ir.eqns:
            inputs = [env[a] if type(a) is Var else a for a in eqn.inputs]
            at(eqn.source)
            out = bind(eqn.prim, inputs, eqn.params)
            if eqn.prim.multiple_results:
                env.update(zip(eqn.outputs, out))
            else:
                env[eqn.outputs[0]] = out
    return [env[v] if type(v) is Var else Array(v.value, v.type.weak_type) for v in ir.outvars]


def _as_argument(x, var):
    """A Python scalar passed for ``var`` takes its type (a Python float argument of jit is
    traced at float64: it keeps its full value)."""
    if type(x) in (float, int, bool):
        return Array(np.asarray(x, var.type.dtype), var.type.weak_type)
    return x


ClosedIR.interpreter = staticmethod(eval_ir)
