"""IR → IR clean-ups run before execution: dead-code elimination, common-subexpression
elimination and constant folding. Each recurses into sub-IRs (loop bodies, branches)."""
from __future__ import annotations

import numpy as np

from ptojax.ir.core import IR, ClosedIR, Eqn, Literal, Params, Var

# Primitives whose results must not be merged or folded (none are effectful today; the set is
# where such a primitive would be declared).
EFFECTFUL: set = set()
# Do not fold constants into literals bigger than this many elements.
FOLD_LIMIT = 1


def optimize(closed: ClosedIR) -> ClosedIR:
    ir = closed.ir
    ir = fold_constants(ir)
    ir = cse(ir)
    ir = dce(ir)
    return prune_consts(ClosedIR(ir, closed.consts))


def _map_sub_irs(params: Params, fn) -> Params:
    changed = {}
    for k, v in params.items():
        if isinstance(v, ClosedIR):
            changed[k] = ClosedIR(fn(v.ir), v.consts)
        elif isinstance(v, IR):
            changed[k] = fn(v)
        elif isinstance(v, tuple) and any(isinstance(x, (IR, ClosedIR)) for x in v):
            changed[k] = tuple(ClosedIR(fn(x.ir), x.consts) if isinstance(x, ClosedIR)
                               else fn(x) if isinstance(x, IR) else x for x in v)
    return params.replace(**changed) if changed else params


def dce(ir: IR, keep_inputs: bool = True) -> IR:
    """Drop equations whose outputs are never used."""
    live = {v for v in ir.outvars if type(v) is Var}
    kept = []
    for eqn in reversed(ir.eqns):
        if eqn.prim in EFFECTFUL or any(v in live for v in eqn.outputs):
            params = _map_sub_irs(eqn.params, dce)
            kept.append(eqn if params is eqn.params else eqn.replace(params=params))
            live.update(a for a in eqn.inputs if type(a) is Var)
    return IR(ir.constvars, ir.invars, reversed(kept), ir.outvars)


def cse(ir: IR) -> IR:
    """Merge equations that apply the same primitive to the same inputs with equal params."""
    rename: dict = {}
    seen: dict = {}
    eqns = []
    for eqn in ir.eqns:
        inputs = tuple(rename.get(a, a) if type(a) is Var else a for a in eqn.inputs)
        params = _map_sub_irs(eqn.params, cse)
        key = None
        if eqn.prim not in EFFECTFUL:
            try:
                key = (eqn.prim, tuple(a if type(a) is Var else ("lit", a) for a in inputs),
                       params)
                hash(key)
            except TypeError:
                key = None
        if key is not None and key in seen:
            for old, new in zip(eqn.outputs, seen[key]):
                rename[old] = new
            continue
        if key is not None:
            seen[key] = eqn.outputs
        eqns.append(Eqn(eqn.prim, inputs, eqn.outputs, params, eqn.source))
    outvars = [rename.get(v, v) if type(v) is Var else v for v in ir.outvars]
    return IR(ir.constvars, ir.invars, eqns, outvars)


def fold_constants(ir: IR) -> IR:
    """Evaluate equations whose inputs are all literals when the result is a scalar."""
    known: dict = {}
    eqns = []
    for eqn in ir.eqns:
        inputs = tuple(known.get(a, a) if type(a) is Var else a for a in eqn.inputs)
        foldable = (eqn.prim not in EFFECTFUL and not eqn.prim.multiple_results
                    and all(type(a) is Literal for a in inputs)
                    and all(v.type.size <= FOLD_LIMIT and v.type.shape == ()
                            for v in eqn.outputs)
                    and not any(isinstance(p, (IR, ClosedIR)) for p in eqn.params.values()))
        if foldable:
            try:
                value = eqn.prim.impl(*(a.value for a in inputs), **eqn.params)
                known[eqn.outputs[0]] = Literal(np.asarray(value), eqn.outputs[0].type)
                continue
            except Exception:  # leave it to run time, where the error gets its context
                pass
        eqns.append(eqn if inputs == eqn.inputs else eqn.replace(inputs=inputs))
    outvars = [known.get(v, v) if type(v) is Var else v for v in ir.outvars]
    return IR(ir.constvars, ir.invars, eqns, outvars)


def prune_consts(closed: ClosedIR) -> ClosedIR:
    """Drop constvars no equation or output uses."""
    ir = closed.ir
    used = {a for e in ir.eqns for a in e.inputs if type(a) is Var}
    used.update(v for v in ir.outvars if type(v) is Var)
    pairs = [(v, c) for v, c in zip(ir.constvars, closed.consts) if v in used]
    return ClosedIR(IR([v for v, _ in pairs], ir.invars, ir.eqns, ir.outvars),
                    [c for _, c in pairs])
