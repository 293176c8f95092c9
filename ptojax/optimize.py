"""IR → IR clean-ups run before execution: constant folding, algebraic simplification,
common-subexpression elimination and dead-code elimination. Each recurses into sub-IRs (loop
bodies, branches)."""
from __future__ import annotations

import numpy as np

from ptojax.eval.ieee import quietly
from ptojax.ir.core import IR, ClosedIR, Eqn, Literal, Params, Var, as_ir, sub_irs
from ptojax.ops.arithmetic import integer_pow_p, mul_p, neg_p
from ptojax.ops.broadcast import broadcast_in_dim_p
from ptojax.ops.convert import convert_element_type_p, copy_p, name_p
from ptojax.ir.symbolic import has_symbols
from ptojax.trace import Unsupported
from ptojax.ops.shape import expand_dims_p, reshape_p, squeeze_p, transpose_p

# Do not fold constants into literals bigger than this many elements.
FOLD_LIMIT = 1
# A primitive whose outputs are coupled (loop carries) has a ``dce`` fact:
# rule(eqn, used_outputs: list[bool]) -> Eqn without the unused outputs (and the inputs only
# they needed), its sub-IRs DCE'd.


def optimize(closed: ClosedIR) -> ClosedIR:
    ir = closed.ir
    ir = fold_constants(ir)
    ir = simplify(ir)
    ir = cse(ir)
    ir = dce(ir)
    return prune_consts(ClosedIR(ir, closed.consts))


def _map_sub_irs(eqn, fn) -> Params:
    """``eqn``'s params with ``fn`` applied to its sub-IRs, unless its primitive keeps them
    as they are (``cleanups`` fact Unsupported: tile kernel bodies)."""
    params = eqn.params
    if type(eqn.prim.facts.get("cleanups")) is Unsupported:
        return params
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


def has_effect(eqn) -> bool:
    """Whether running ``eqn`` has an effect (its primitive is ``effectful``, or a sub-IR it
    runs holds such an equation)."""
    return eqn.prim.effectful or any(has_effect(e) for sub in sub_irs(eqn.params)
                                     for e in as_ir(sub).eqns)


def dce(ir: IR, keep_inputs: bool = True, keep_effects: bool = True) -> IR:
    """Drop equations whose outputs are never used. Equations with effects stay, unless
    ``keep_effects`` is False (slicing out the computation of some values only)."""
    live = {v for v in ir.outvars if type(v) is Var}
    kept = []
    for eqn in reversed(ir.eqns):
        if any(v in live for v in eqn.outputs) or keep_effects and has_effect(eqn):
            rule = eqn.prim.fact("dce")
            if rule is not None:
                eqn = rule(eqn, [v in live for v in eqn.outputs])
            else:
                params = _map_sub_irs(eqn, dce)
                eqn = eqn if params is eqn.params else eqn.replace(params=params)
            kept.append(eqn)
            live.update(a for a in eqn.inputs if type(a) is Var)
    return IR(ir.constvars, ir.invars, reversed(kept), ir.outvars)


def cse(ir: IR) -> IR:
    """Merge equations that apply the same primitive to the same inputs with equal params."""
    rename: dict = {}
    seen: dict = {}
    eqns = []
    for eqn in ir.eqns:
        inputs = tuple(rename.get(a, a) if type(a) is Var else a for a in eqn.inputs)
        params = _map_sub_irs(eqn, cse)
        key = None
        if not has_effect(eqn):
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


@quietly
def fold_constants(ir: IR, keep_outvars: bool = False) -> IR:
    """Evaluate equations whose inputs are all literals when the result is a scalar, also in
    sub-IRs (a loop body's index arithmetic on literals ran on every step). A sub-IR keeps
    the equations computing its outputs (``keep_outvars``): its outputs stay variables."""
    known: dict = {}
    eqns = []
    kept = {v for v in ir.outvars if type(v) is Var} if keep_outvars else ()
    for eqn in ir.eqns:
        inputs = tuple(known.get(a, a) if type(a) is Var else a for a in eqn.inputs)
        foldable = (not eqn.prim.multiple_results and not eqn.prim.effectful
                    and all(type(a) is Literal for a in inputs)
                    and all(v.type.shape == () for v in eqn.outputs)
                    and eqn.outputs[0] not in kept
                    and not any(isinstance(p, (IR, ClosedIR)) for p in eqn.params.values())
                    and not has_symbols(tuple(eqn.params.values())))  # sizes: at run time
        if foldable:
            try:
                value = eqn.prim.impl(*(a.value for a in inputs), **eqn.params)
                known[eqn.outputs[0]] = Literal(np.asarray(value), eqn.outputs[0].type)
                continue
            except Exception:  # leave it to run time, where the error gets its context
                pass
        params = _map_sub_irs(eqn, _fold_sub_ir)
        if inputs != eqn.inputs or params is not eqn.params:
            eqn = eqn.replace(inputs=inputs, params=params)
        eqns.append(eqn)
    outvars = [known.get(v, v) if type(v) is Var else v for v in ir.outvars]
    return IR(ir.constvars, ir.invars, eqns, outvars)


def _fold_sub_ir(ir: IR) -> IR:
    return fold_constants(ir, keep_outvars=True)


def prune_consts(closed: ClosedIR) -> ClosedIR:
    """Drop constvars no equation or output uses."""
    ir = closed.ir
    used = {a for e in ir.eqns for a in e.inputs if type(a) is Var}
    used.update(v for v in ir.outvars if type(v) is Var)
    pairs = [(v, c) for v, c in zip(ir.constvars, closed.consts) if v in used]
    return ClosedIR(IR([v for v, _ in pairs], ir.invars, ir.eqns, ir.outvars),
                    [c for _, c in pairs])


# algebraic simplification -------------------------------------------------------------------
def simplify(ir: IR) -> IR:
    """Value-preserving rewrites of patterns transforms leave behind: ``x * 1`` and ``1 * x``
    (also with a broadcast 1), a broadcast scalar feeding an elementwise op next to a
    full-shaped operand (the scalar is used directly), ``integer_pow`` with ``y=1`` (``x``) and
    ``y=2`` (``x * x``, which CSE can share), ``neg(neg(x))``, chains of reshapes or of
    transposes, identity transposes/reshapes and same-type conversions."""
    rename: dict = {}
    defs: dict = {}  # var -> the equation defining it
    eqns = []
    for eqn in ir.eqns:
        inputs = tuple(rename.get(a, a) if type(a) is Var else a for a in eqn.inputs)
        eqn = Eqn(eqn.prim, inputs, eqn.outputs, _map_sub_irs(eqn, simplify),
                  eqn.source)
        if eqn.prim.elementwise and len(inputs) > 1:
            eqn = _use_scalars_directly(eqn, defs)
        eqn = _rewritten(eqn, defs)
        same_as = _identity_of(eqn, defs)
        if same_as is not None:
            rename[eqn.outputs[0]] = same_as
            continue
        for v in eqn.outputs:
            defs[v] = eqn
        eqns.append(eqn)
    outvars = [rename.get(v, v) if type(v) is Var else v for v in ir.outvars]
    return IR(ir.constvars, ir.invars, eqns, outvars)


def _scalar_broadcast(atom, defs):
    """The Literal ``atom`` is a broadcast of (or ``atom`` itself), else None."""
    if type(atom) is Literal:
        return atom
    eqn = defs.get(atom)
    if eqn is not None and eqn.prim is broadcast_in_dim_p and \
            type(eqn.inputs[0]) is Literal:
        return eqn.inputs[0]
    return None


def _is_one(atom, defs) -> bool:
    lit = _scalar_broadcast(atom, defs)
    return lit is not None and lit.value.dtype.kind in "fiu" and lit.value == 1


def _use_scalars_directly(eqn, defs):
    """Elementwise ops broadcast rank-0 operands: a broadcast literal can be the literal."""
    inputs = [_scalar_broadcast(a, defs) or a for a in eqn.inputs]
    if all(a is b for a, b in zip(inputs, eqn.inputs)):
        return eqn
    try:
        types = eqn.prim.out_types([a.type for a in inputs], eqn.params)
    except Exception:
        return eqn
    if any(not t.same_shape_dtype(v.type) for t, v in zip(types, eqn.outputs)):
        return eqn
    return eqn.replace(inputs=tuple(inputs))


def _identity_of(eqn, defs):
    """The atom ``eqn``'s single output equals, if the equation does nothing, else None."""
    if len(eqn.outputs) != 1:
        return None
    prim, ins, out = eqn.prim, eqn.inputs, eqn.outputs[0]

    def keeps_type(a):
        return type(a) is Var and a.type.same_shape_dtype(out.type)

    if prim is mul_p:
        for a, b in (ins, ins[::-1]):
            if _is_one(b, defs) and keeps_type(a):
                return a
    elif prim is integer_pow_p and eqn.params["y"] == 1 or prim is copy_p or prim is name_p:
        return ins[0] if keeps_type(ins[0]) else None
    elif prim is neg_p:
        inner = defs.get(ins[0])
        if inner is not None and inner.prim is neg_p and keeps_type(inner.inputs[0]):
            return inner.inputs[0]
    elif prim is transpose_p:
        perm = eqn.params["permutation"]
        if tuple(perm) == tuple(range(len(perm))) and keeps_type(ins[0]):
            return ins[0]
    elif prim in (reshape_p, convert_element_type_p):
        if type(ins[0]) is Var and ins[0].type == out.type:
            return ins[0]
    return None


def _rewritten(eqn, defs):
    """``integer_pow[y=2] x`` as ``mul x x``; a reshape of a reshape (or squeeze/expand_dims)
    as one reshape; a transpose of a transpose as one transpose."""
    prim = eqn.prim
    if prim is integer_pow_p and eqn.params["y"] == 2:
        x = eqn.inputs[0]
        return Eqn(mul_p, (x, x), eqn.outputs, Params(), eqn.source)
    if prim is reshape_p:
        inner = defs.get(eqn.inputs[0])
        if inner is not None and inner.prim in (reshape_p, squeeze_p, expand_dims_p):
            return eqn.replace(inputs=inner.inputs)
    if prim is transpose_p:
        inner = defs.get(eqn.inputs[0])
        if inner is not None and inner.prim is transpose_p:
            first, second = inner.params["permutation"], eqn.params["permutation"]
            composed = tuple(first[p] for p in second)
            return eqn.replace(inputs=inner.inputs,
                               params=eqn.params.replace(permutation=composed))
    return eqn
