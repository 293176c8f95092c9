"""IR rewrites that let more of a program tile: expansions and transposes folded into
matmuls.

A primitive without a PTO instruction of its own (``erfc``, ``lgamma``) may tile as an
*expansion* (its ``TileForm.expand``): its equation is replaced by the equations of an
equivalent formula in tileable primitives, and the formula's result keeps the equation's
output variable, so everything downstream (and ``check_numerics``) sees the same values.

The cube loads either operand of a matmul transposed (a column-major ``TLOAD``), so a 2-D
``transpose`` (or one of the last two axes of a batched matmul's operand) feeding a
``dot_general`` is folded into the matmul's contracting dimensions, and a ``transpose`` of
a matmul's result becomes a matmul with swapped operands (``(a b)^T = b^T a^T``). ``grad``
produces both patterns for every matmul; folding them keeps the backward pass in cube
kernels instead of leaving transposes as tensor ops.
"""
from __future__ import annotations

import functools

from ptojax.errors import TileError
from ptojax.ir.core import IR, Eqn, Literal, Var
from ptojax.ops.convert import copy_p
from ptojax.ops.linalg import dot_general_p
from ptojax.ops.shape import transpose_p
from ptojax.optimize import dce
from ptojax.tile.convolution import canonical_conv, phase_split_conv
from ptojax.tile.rules import conv_c0, direct_conv_reason
from ptojax.trace import trace_flat


# expansions ------------------------------------------------------------------------------------
def _expansion_of(eqn, target=None):
    """The expand function for ``eqn``, or None when it stays as it is. A convolution the
    on-chip im2col kernel takes is rewritten into its canonical layout instead
    (``tile/convolution.py``)."""
    form = eqn.prim.fact("tile")
    if form is None or form.kind not in ("expand", "conv") or (form.check and form.check(eqn)):
        return None
    if form.cube and target is not None and \
            eqn.inputs[0].type.dtype.name not in target.cube_macs_per_cycle:
        return None
    if form.kind == "conv" and target is not None and \
            not target.cube_convolves(eqn.inputs[0].type.dtype):
        return None
    if form.kind == "conv" and target is not None:
        c0 = conv_c0(eqn.inputs[0].type.dtype, target)
        if direct_conv_reason(eqn, target) is None:
            return None if direct_conv_reason(eqn, target, layout_free=False) is None else \
                functools.partial(canonical_conv, c0=c0)
        if direct_conv_reason(eqn, target, phases=True) is None:
            return functools.partial(phase_split_conv, c0=c0)
    return form.expand


def expand(ir: IR, target=None) -> IR:
    """``ir`` with every expandable equation replaced by its formula's equations (those
    aiming at the cube only where ``target``'s cube takes their dtype)."""
    if not any(_expansion_of(e, target) for e in ir.eqns):
        return ir
    eqns = []
    for eqn in ir.eqns:
        fn = _expansion_of(eqn, target)
        eqns.extend(_expanded(eqn, fn) if fn else [eqn])
    return IR(ir.constvars, ir.invars, eqns, ir.outvars)


def _expanded(eqn, fn) -> list:
    formula = trace_flat(lambda *xs: [fn(*xs, **eqn.params)], [a.type for a in eqn.inputs],
                         f"{eqn.prim.name} expansion")
    if formula.consts:
        raise TileError(f"the tile expansion of {eqn.prim.name} captured constants; write "
                        f"it with Python scalars only")
    sub = formula.ir
    (result,) = sub.outvars
    rename = dict(zip(sub.invars, eqn.inputs))
    produced = {v for e in sub.eqns for v in e.outputs}
    if type(result) is Literal or result not in produced:   # the formula is an identity
        return [Eqn(copy_p, [rename.get(result, result)], eqn.outputs, {}, eqn.source)]
    rename[result] = eqn.outputs[0]
    return [Eqn(e.prim, [rename.get(a, a) if type(a) is Var else a for a in e.inputs],
                [rename.get(v, v) for v in e.outputs], e.params, eqn.source)
            for e in sub.eqns]


def _plain_2d_dot(eqn) -> bool:
    """A matmul over 2-D operands, or over [*batch, x, y] operands with leading batch dims."""
    if eqn.prim is not dot_general_p:
        return False
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    a, b = eqn.inputs
    nb = len(lb)
    return tuple(lb) == tuple(rb) == tuple(range(nb)) and a.type.ndim == nb + 2 and \
        b.type.ndim == nb + 2 and len(lc) == 1 and len(rc) == 1


def _swap_2d(eqn) -> bool:
    """A transpose swapping the last two axes (keeping any leading axes in place)."""
    if eqn.prim is not transpose_p:
        return False
    perm = tuple(eqn.params["permutation"])
    n = len(perm)
    return n >= 2 and perm == (*range(n - 2), n - 1, n - 2)


def fold_transposes(ir: IR) -> IR:
    """Fold (batched) 2-D transposes into the matmuls that produce or consume them."""
    producer = {v: e for e in ir.eqns for v in e.outputs}
    eqns = []
    for eqn in ir.eqns:
        if _swap_2d(eqn):
            src = producer.get(eqn.inputs[0])
            if src is not None and _plain_2d_dot(src):
                (lc, rc), batch = src.params["dimension_numbers"]
                eqn = Eqn(dot_general_p, (src.inputs[1], src.inputs[0]), eqn.outputs,
                          src.params.replace(dimension_numbers=((rc, lc), batch)), eqn.source)
                producer[eqn.outputs[0]] = eqn
        elif _plain_2d_dot(eqn):
            eqn = _absorb_operand_transposes(eqn, producer)
        eqns.append(eqn)
    return dce(IR(ir.constvars, ir.invars, eqns, ir.outvars))


def _absorb_operand_transposes(eqn, producer):
    (lc, rc), batch = eqn.params["dimension_numbers"]
    inputs = list(eqn.inputs)
    contract = [lc[0], rc[0]]
    for i in (0, 1):
        src = producer.get(inputs[i]) if type(inputs[i]) is Var else None
        if src is not None and _swap_2d(src):
            inputs[i] = src.inputs[0]
            nb = len(batch[0])
            contract[i] = 2 * nb + 1 - contract[i]     # nb <-> nb + 1
    if inputs == list(eqn.inputs):
        return eqn
    dims = (((contract[0],), (contract[1],)), batch)
    return Eqn(dot_general_p, inputs, eqn.outputs,
               eqn.params.replace(dimension_numbers=dims), eqn.source)
