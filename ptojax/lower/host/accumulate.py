"""Products added into an accumulator: ``beta * acc + x' @ g'`` as one GEMM with ``beta``.

A momentum optimizer's ``v = mass * v + dW`` where ``dW = x.T @ g`` is a weight gradient
(``add(mul(mass, v), dot_general(x, g))``), or a gradient accumulation ``acc + x.T @ g``,
computes the product into a buffer of its own, then reads it again with ``v`` to write the
new ``v``. BLAS adds a product into its output scaled by ``beta`` as it goes
(``eval/blas.py``); so the cpu backend rewrites these sums, before tiling, into one
``dot_accumulate`` equation (``ops/dot_accumulate.py``) that writes ``v``'s buffer in place.
The gradient is never written out, and the kernel updating the parameter reads ``v`` and
``p`` instead of ``v``, ``dW`` and ``p`` (a loop's 784x512 weight: 5 passes over 1.6 MB
become 3, plus the GEMM's read of ``v``).

Rewritten: an ``add`` of float32/float64 matrices of at least ``MIN_ELEMENTS``, one operand a
``dot_general`` of two matrices contracting one axis each, no batch axes, read by nothing
else; the other ``mul(beta, acc)`` with ``beta`` a scalar literal (the product read by
nothing else), or any other matrix ``acc`` of the same type that is not a broadcast
(``beta = 1``; a bias added to a batch stays a broadcast fused into the next kernel) -- where
``acc`` is a buffer the executor may write and that dies there: a donated input (a loop
body's carry, ``carries.py``) or a fresh intermediate, read only by the sum. Otherwise the
accumulator would first be copied (a jitted step's velocity is the caller's): measured no
faster than the unfused sum, whose kernel computes ``v`` and ``p`` in one pass. A product's
operand that is a ``transpose`` (``x.T @ g`` as written) is read untransposed with the other
axis contracted, BLAS's transpose flag (as the tiler reads transposes into products). The
result keeps the ``add``'s variable, so stage-by-stage checks (``tools/check_numerics``)
still find it.
"""
from __future__ import annotations

from ptojax.eval.blas import GEMM_DTYPES
from ptojax.ir.core import IR, ClosedIR, Eqn, Literal, Var
from ptojax.ops.arithmetic import add_p, mul_p
from ptojax.ops.broadcast import broadcast_in_dim_p
from ptojax.ops.dot_accumulate import dot_accumulate_p
from ptojax.ops.linalg import dot_general_p
from ptojax.ops.shape import transpose_p

# below this many elements the sum stays unfused: the GEMM call's overhead (~5-10 us through
# ctypes) outweighs the pass over the accumulator it saves
MIN_ELEMENTS = 1 << 15


def accumulating_products(closed: ClosedIR, donated=frozenset()) -> ClosedIR:
    """``closed`` with each product added into an accumulator it may write (module
    docstring) one ``dot_accumulate`` equation; ``closed`` itself when there is none.
    ``donated``: the inputs the program may overwrite (a loop body's carries)."""
    ir = closed.ir
    uses = _use_counts(ir)
    producer = {v: e for e in ir.eqns for v in e.outputs}
    writable = {ir.invars[i] for i in donated}
    fused, dropped = {}, set()
    for eqn in ir.eqns:
        found = _accumulation(eqn, producer, uses, dropped, writable)
        if found is not None:
            new, consumed = found
            fused[eqn] = new
            dropped.update(consumed)
    if not fused:
        return closed
    eqns = [fused.get(e, e) for e in ir.eqns if e not in dropped]
    return ClosedIR(IR(ir.constvars, ir.invars, eqns, ir.outvars), closed.consts)


def _use_counts(ir) -> dict:
    uses: dict = {}
    for eqn in ir.eqns:
        for a in eqn.inputs:
            if type(a) is Var:
                uses[a] = uses.get(a, 0) + 1
    for v in ir.outvars:
        if type(v) is Var:
            uses[v] = uses.get(v, 0) + 2     # a result is never folded away
    return uses


def _accumulation(eqn, producer, uses, dropped, writable):
    """``(the dot_accumulate equation replacing add ``eqn``, the equations it absorbs)``, or
    None when ``eqn`` is not such a sum."""
    if eqn.prim is not add_p or len(eqn.inputs) != 2:
        return None
    out = eqn.outputs[0].type
    if out.ndim != 2 or out.dtype not in GEMM_DTYPES \
            or any(type(d) is not int for d in out.shape) or out.size < MIN_ELEMENTS:
        return None     # (a size known only at run time: left to the kernels)
    for k in (0, 1):
        dot = _single_use_product(eqn.inputs[k], producer, uses, dropped, out)
        if dot is None:
            continue
        other = eqn.inputs[1 - k]
        # beta * acc: acc itself takes the product (not a fresh copy of beta * acc: no gain)
        chosen = _scaled(other, producer, uses, dropped, out)
        if chosen is None and _plain_accumulator(other, producer, out):
            chosen = (other, 1.0, ())
        if chosen is None or not _written_in_place(chosen[0], producer, uses, writable):
            continue
        acc, beta, absorbed = chosen
        (lc, rc), _ = dot.params["dimension_numbers"]
        lhs, lc, lhs_t = _through_transpose(dot.inputs[0], lc[0], producer, uses, dropped)
        rhs, rc, rhs_t = _through_transpose(dot.inputs[1], rc[0], producer, uses, dropped)
        new = Eqn(dot_accumulate_p, [acc, lhs, rhs], list(eqn.outputs),
                  {"dimension_numbers": (((lc,), (rc,)), ((), ())), "beta": beta},
                  eqn.source)
        return new, (dot, *absorbed, *lhs_t, *rhs_t)
    return None


def _written_in_place(acc, producer, uses, writable) -> bool:
    """Whether the executor will own ``acc``'s buffer and see it die at the sum: a donated
    input or a fresh result of an equation (a ufunc's, a product's), read only by the sum
    (or by the scaling it absorbs)."""
    if uses.get(acc) != 1:
        return False
    if acc in writable:
        return True
    made = producer.get(acc)
    return made is not None and ((made.prim.ufunc is not None and not made.params)
                                 or made.prim.fresh_outputs)


def _through_transpose(atom, axis, producer, uses, dropped):
    """``(operand, its contracted axis, the transpose absorbed)``: a matrix operand that is a
    ``transpose`` of another read as that other matrix, the other axis contracted (BLAS's
    transpose flag, not a copy). The transpose goes with it when nothing else reads it."""
    made = producer.get(atom) if type(atom) is Var else None
    if made is None or made.prim is not transpose_p or made in dropped \
            or tuple(made.params["permutation"]) != (1, 0) or type(made.inputs[0]) is not Var:
        return atom, axis, ()
    return made.inputs[0], 1 - axis, ((made,) if uses.get(atom) == 1 else ())


def _single_use_product(atom, producer, uses, dropped, out):
    """The ``dot_general`` equation computing ``atom``, when it is a product of two matrices
    of ``out``'s dtype contracting one axis each, with no batch axes, read only once."""
    if type(atom) is not Var or uses.get(atom) != 1:
        return None
    dot = producer.get(atom)
    if dot is None or dot.prim is not dot_general_p or dot in dropped:
        return None
    (lc, rc), (lb, rb) = dot.params["dimension_numbers"]
    lhs, rhs = dot.inputs
    if lb or rb or len(lc) != 1 or len(rc) != 1 or lhs.type.ndim != 2 or rhs.type.ndim != 2 \
            or any(type(d) is not int for d in (*lhs.type.shape, *rhs.type.shape)):
        return None
    if not lhs.type.dtype == rhs.type.dtype == atom.type.dtype == out.dtype \
            or atom.type.shape != out.shape:
        return None
    preferred = dot.params.get("preferred_element_type")
    return dot if preferred is None or preferred == out.dtype else None


def _scaled(atom, producer, uses, dropped, out):
    """``(acc, beta, (the mul,))`` when ``atom`` is ``mul(beta, acc)`` read only here, with
    ``beta`` a scalar literal and ``acc`` of ``out``'s type."""
    if type(atom) is not Var or uses.get(atom) != 1:
        return None
    mul = producer.get(atom)
    if mul is None or mul.prim is not mul_p or mul in dropped:
        return None
    for k in (0, 1):
        beta, acc = mul.inputs[k], mul.inputs[1 - k]
        if type(beta) is Literal and beta.type.dtype == out.dtype and type(acc) is Var \
                and acc.type.shape == out.shape and acc.type.dtype == out.dtype:
            return acc, float(beta.value), (mul,)
    return None


def _plain_accumulator(atom, producer, out) -> bool:
    """``atom`` can be the accumulator of ``beta = 1``: a matrix of ``out``'s type that is
    not a broadcast."""
    if type(atom) is not Var or atom.type.shape != out.shape or atom.type.dtype != out.dtype:
        return False
    made = producer.get(atom)
    return made is None or made.prim is not broadcast_in_dim_p
