"""Where an attention's heads sit: the maps between the program's q, k, v and output and the
leading-batch form ``[*lead, S, D]`` the flash kernels take (``tile/attention.py``).

Attention written with heads in the middle (``nn.dot_product_attention``'s ``[B, T, N, H]``)
computes its scores as ``einsum("btkgh,bskh->bkgts")``: a ``dot_general`` batching the
non-leading axes (b, k) followed by a transpose, and its output as
``einsum("bkgts,bskh->btkgh")``: a ``dot_general`` of the probabilities with ``v`` batching
(b, k) followed by a transpose. Read as

    scores  transpose(dot_general(q, k))  =  dot_general(q', k')    q' = transpose(q),
                                                                    k' = broadcast(transpose(k))
    output  dot_general(p, v)             =  transpose(dot_general(p, v'))

with q' ``[*lead, T, H]``, k' and v' ``[*lead, S, H]`` (the query's own free axes, such as
the group axis of grouped-query attention, broadcast into k' and v'). A ``Layout`` holds
these maps; the leading-batch form's own is the identity. They are linear, so the gradient
of the flash kernels' operands maps back by their vjp (a transpose; a sum over the groups
for a broadcast k', v').
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ptojax import dtypes
from ptojax.ops.broadcast import broadcast_in_dim
from ptojax.ops.shape import reshape, transpose


def _same(x):
    return x


@dataclass(frozen=True)
class Layout:
    """The maps of one attention's operands to the leading-batch form and of the output
    back: ``q(q) -> [*lead, T, D]``, ``k(k)``, ``v(v) -> [*lead, S, D]``, ``out(o [*lead,
    T, D]) -> the program's output``."""
    lead: tuple
    seq_q: int
    seq_k: int
    dim: int
    q: Callable = _same
    k: Callable = _same
    v: Callable = _same
    out: Callable = _same

    @property
    def leading(self) -> bool:
        return all(f is _same for f in (self.q, self.k, self.v, self.out))

    def lead_shape(self, seq) -> tuple:
        return tuple(self.lead) + (seq, self.dim)


def _free(ndim, *used) -> list:
    taken = {a for axes in used for a in axes}
    return [a for a in range(ndim) if a not in taken]


def single_contraction(e) -> bool:
    (lc, rc), _ = e.params["dimension_numbers"]
    return len(lc) == 1 and len(rc) == 1 and \
        all(a.type.dtype == dtypes.float32 for a in (*e.inputs, *e.outputs))


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


def scores_layout(e, t) -> Optional[tuple]:
    """``(lead, q map, k map)`` when ``t = transpose(e = dot_general(q, k))`` computes the
    scores ``[*lead, T, S]`` of heads in the middle, else None (the leading-batch form has no
    transpose)."""
    q, k = e.inputs
    (lc, rc), (lb, rb) = e.params["dimension_numbers"]
    lfree, rfree = _free(q.type.ndim, lc, lb), _free(k.type.ndim, rc, rb)
    if not single_contraction(e) or len(rfree) != 1:
        return None
    axes = [("b", i) for i in range(len(lb))] + [("l", a) for a in lfree] + [("r", rfree[0])]
    out = [axes[p] for p in t.params["permutation"]]
    if out[-1][0] != "r" or out[-2][0] != "l":
        return None
    lead = out[:-2]
    q_axes = tuple(lb[i] if kind == "b" else i for kind, i in lead) + (out[-2][1], lc[0])
    lead_batch = [p for p, (kind, _) in enumerate(lead) if kind == "b"]
    batch_of = [i for kind, i in lead if kind == "b"]
    lead_shape = tuple(t.outputs[0].type.shape[:-2])

    def q_map(qv):
        return transpose(qv, q_axes)

    def k_map(kv):
        return _to_lead(kv, [rb[i] for i in batch_of], lead_batch, lead_shape, rfree[0], rc[0])
    return lead_shape, q_map, k_map


def output_layout(e) -> Optional[tuple]:
    """``(v map, output map)`` when ``e = dot_general(p, v)`` with p ``[*lead, T, S]`` is an
    attention's output with heads in the middle; None for the leading-batch form or anything
    else."""
    p, v = e.inputs
    (lc, rc), (lb, rb) = e.params["dimension_numbers"]
    n = p.type.ndim
    if not single_contraction(e) or n < 3 or tuple(lc) != (n - 1,) or \
            any(a >= n - 2 for a in lb) or list(lb) != sorted(lb):
        return None
    rfree = _free(v.type.ndim, rc, rb)
    lfree = _free(n, lc, lb)
    if len(rfree) != 1 or (list(lb) == list(range(n - 2)) and list(rb) == list(range(n - 2))
                           and tuple(rc) == (n - 2,)):
        return None                       # already leading-batch
    lead_shape = tuple(p.type.shape[:-2])
    perm = tuple(lb) + tuple(lfree) + (n - 1,)

    def v_map(vv):
        return _to_lead(vv, list(rb), list(lb), lead_shape, rc[0], rfree[0])

    def out_map(o):
        return transpose(o, perm) if perm != tuple(range(n)) else o
    return v_map, out_map
