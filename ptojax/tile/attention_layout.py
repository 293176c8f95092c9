"""Attention written with heads in the middle (``nn.dot_product_attention``'s ``[B, T, N, H]``)
rewritten into the leading-batch form ``tile/attention.py`` recognizes.

``dot_product_attention`` computes its scores as ``einsum("btkgh,bskh->bkgts")``: a
``dot_general`` batching the non-leading axes (b, k) followed by a transpose, and its output
as ``einsum("bkgts,bskh->btkgh")``: a ``dot_general`` of the probabilities with ``v`` batching
(b, k) followed by a transpose. Here

    scores  transpose(dot_general(q, k))  ->  dot_general(q', k')    q' = transpose(q),
                                                                     k' = broadcast(transpose(k))
    output  dot_general(p, v)             ->  transpose(dot_general(p, v'))

with q' ``[*lead, T, H]``, k' and v' ``[*lead, S, H]`` (the query's own free axes, such as
the group axis, broadcast into k' and v'), and p ``[*lead, T, S]`` a softmax (a division).
The results are the same values; only where the heads sit changes, so the S x S equations
between are the leading-batch ones the attention matcher expects. ``fuse_attention`` uses the
rewritten program only when an attention is then fused.
"""
from __future__ import annotations

from ptojax import dtypes
from ptojax.ir.core import IR, ClosedIR, Eqn, Var
from ptojax.ops.arithmetic import div_p
from ptojax.ops.broadcast import broadcast_in_dim
from ptojax.ops.linalg import dot_general, dot_general_p
from ptojax.ops.shape import reshape, transpose, transpose_p
from ptojax.optimize import dce
from ptojax.trace import trace_flat


def _free(ndim, *used) -> list:
    taken = {a for axes in used for a in axes}
    return [a for a in range(ndim) if a not in taken]


def _single_contraction(e) -> bool:
    (lc, rc), _ = e.params["dimension_numbers"]
    return len(lc) == 1 and len(rc) == 1 and \
        all(a.type.dtype == dtypes.float32 for a in (*e.inputs, *e.outputs)) and \
        all(type(a) is Var for a in e.inputs)


def _to_lead(rhs, rb, lead_batch, lead_shape, s_axis, h_axis):
    """``rhs`` as ``[*lead, S, H]``: its batch axes ``rb`` moved to the lead positions
    ``lead_batch`` (in order), broadcast along the other lead axes."""
    order = sorted(range(len(rb)), key=lambda i: lead_batch[i])
    moved = transpose(rhs, tuple(rb[i] for i in order) + (s_axis, h_axis))
    n = len(lead_shape) + 2
    shape = tuple(lead_shape) + (rhs.shape[s_axis], rhs.shape[h_axis])
    if all(lead_shape[a] == 1 for a in range(len(lead_shape)) if a not in lead_batch):
        return reshape(moved, shape)       # no group axis to broadcast along: a free reshape
    return broadcast_in_dim(moved, shape, tuple(sorted(lead_batch)) + (n - 2, n - 1))


def _scores(e, t):
    """The leading-batch form of scores ``t = transpose(e = dot_general(q, k))``, or None."""
    q, k = e.inputs
    (lc, rc), (lb, rb) = e.params["dimension_numbers"]
    lfree, rfree = _free(q.type.ndim, lc, lb), _free(k.type.ndim, rc, rb)
    if len(rfree) != 1:
        return None
    axes = [("b", i) for i in range(len(lb))] + [("l", a) for a in lfree] + [("r", rfree[0])]
    out = [axes[p] for p in t.params["permutation"]]
    if out[-1][0] != "r" or out[-2][0] != "l":
        return None
    lead = out[:-2]
    n = len(out)
    if [a for a in lead if a[0] == "b"] == [("b", i) for i in range(len(lb))] and \
            all(a[0] == "b" for a in lead):
        return None                       # already leading-batch: the matcher's own form
    q_axes = tuple(lb[i] if kind == "b" else i for kind, i in lead) + (out[-2][1], lc[0])
    lead_batch = [p for p, (kind, _) in enumerate(lead) if kind == "b"]
    batch_of = [i for kind, i in lead if kind == "b"]
    lead_shape = t.outputs[0].type.shape[:-2]

    def scores(qv, kv):
        qc = transpose(qv, q_axes)
        kc = _to_lead(kv, [rb[i] for i in batch_of], lead_batch, lead_shape, rfree[0], rc[0])
        dims = tuple(range(n - 2))
        return [dot_general(qc, kc, (((n - 1,), (n - 1,)), (dims, dims)),
                            preferred_element_type=e.params.get("preferred_element_type"))]
    return trace_flat(scores, [q.type, k.type], "attention scores")


def _output(e, p_is_softmax):
    """The leading-batch form of ``e = dot_general(p, v)`` with p ``[*lead, T, S]``, or
    None."""
    p, v = e.inputs
    (lc, rc), (lb, rb) = e.params["dimension_numbers"]
    n = p.type.ndim
    if not p_is_softmax or n < 3 or tuple(lc) != (n - 1,) or any(a >= n - 2 for a in lb) or \
            list(lb) != sorted(lb):
        return None
    rfree = _free(v.type.ndim, rc, rb)
    lfree = _free(n, lc, lb)
    if len(rfree) != 1 or (list(lb) == list(range(n - 2)) and list(rb) == list(range(n - 2))
                           and tuple(rc) == (n - 2,)):
        return None                       # already leading-batch
    lead_shape = p.type.shape[:-2]
    perm = tuple(lb) + tuple(lfree) + (n - 1,)

    def output(pv, vv):
        vc = _to_lead(vv, list(rb), list(lb), lead_shape, rc[0], rfree[0])
        dims = tuple(range(n - 2))
        o = dot_general(pv, vc, (((n - 1,), (n - 2,)), (dims, dims)),
                        preferred_element_type=e.params.get("preferred_element_type"))
        return [transpose(o, perm) if perm != tuple(range(n)) else o]
    return trace_flat(output, [p.type, v.type], "attention output")


def _spliced(sub: ClosedIR, inputs, output) -> list:
    rename = dict(zip(sub.ir.invars, inputs))
    rename[sub.ir.outvars[0]] = output
    return [Eqn(e.prim, [rename.get(a, a) if type(a) is Var else a for a in e.inputs],
                [rename.get(o, o) for o in e.outputs], e.params, e.source)
            for e in sub.ir.eqns]


def leading_batch_attention(closed: ClosedIR):
    """``closed`` with middle-axis attention dot_generals rewritten (module docstring), or
    None when there are none."""
    ir = closed.ir
    users: dict = {}
    for i, e in enumerate(ir.eqns):
        for a in e.inputs:
            if type(a) is Var:
                users.setdefault(a, []).append(i)
    producer = {v: e for e in ir.eqns for v in e.outputs}
    outvars = {v for v in ir.outvars if type(v) is Var}
    replaced: dict = {}           # equation index -> its replacement equations
    for i, e in enumerate(ir.eqns):
        if e.prim is not dot_general_p or not _single_contraction(e):
            continue
        out = e.outputs[0]
        p = e.inputs[0]
        softmax = getattr(producer.get(p), "prim", None) is div_p
        sub = _output(e, softmax)
        if sub is not None and not sub.consts:
            replaced[i] = _spliced(sub, e.inputs, out)
            continue
        used = users.get(out, [])
        t = ir.eqns[used[0]] if len(used) == 1 else None
        if not softmax and t is not None and t.prim is transpose_p and out not in outvars:
            sub = _scores(e, t)
            if sub is not None and not sub.consts:
                replaced[i] = []
                replaced[used[0]] = _spliced(sub, e.inputs, t.outputs[0])
    if not replaced:
        return None
    eqns = [x for i, e in enumerate(ir.eqns) for x in replaced.get(i, [e])]
    return ClosedIR(dce(IR(ir.constvars, ir.invars, eqns, ir.outvars)), closed.consts)
