"""Flash attention as ``pto.kernel`` kernels, for ``pto.tile``'s attention rewrite
(``tile/attention.py``): forward with online softmax, and FlashAttention-2 backward kernels.

    forward   (q [H, Sq, D], k, v [H, Sk, D]) -> (o [H, Sq, D], lse [H, Sq])
              one program per query block, looping over key/value blocks with the running
              row max ``m``, denominator ``l`` and output accumulator as loop carries
    dk, dv    (q, k, v, delta, do, lse) -> (dk, dv): one program per key/value block, looping
              over the query blocks that see it; ``delta`` [H, Sq] is rowsum(do * o), computed
              once by the caller (every key block's program reads every query block: computed
              here, each program would read o's rows again and reduce them, per step)
    dq        (q, k, v, o, do, lse) -> dq: one program per query block

``scores = q k^T * scale`` with, when ``causal``, keys after their query masked to ``NEG``
(a causal loop stops at the diagonal). The S x S scores never reach GM. The bodies use the
ops layer directly (this module is below ``ptojax.numpy``); ``examples/flash_attention.py``
writes the same kernels with ``ptojax.numpy`` for readers.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptojax.kernel import body as B
from ptojax.kernel.api import make_call
from ptojax.kernel.spec import BlockSpec
from ptojax.eval.leaves import ShapeDtypeStruct
from ptojax.ops.arithmetic import add, div, max as maximum, mul, rem, sub
from ptojax.ops.broadcast import broadcast_in_dim
from ptojax.ops.logic import le, lt, select
from ptojax.ops.reductions import reduce_max
from ptojax.ops.broadcast import reduce_sum
from ptojax.ops.slicing import full
from ptojax.ops.transcendental import exp, log

NEG = -1e30          # "minus infinity" for masked scores (exp underflows to 0, no inf - inf)
F32 = np.float32


@dataclass(frozen=True)
class FlashShape:
    """The attention a set of flash kernels computes, and its blocking."""
    heads: int
    seq_q: int
    seq_k: int
    dim: int
    scale: float
    causal: bool
    block_q: int
    block_k: int
    valid_k: int = None     # keys that are real (the rest zero padding); None: all

    @property
    def ragged(self) -> bool:
        """Whether the last key block holds padding the forward must mask (not under a
        causal mask: only padded queries see padded keys there)."""
        return not self.causal and self.valid_k not in (None, self.seq_k)

    def __post_init__(self):
        if self.seq_q % self.block_q or self.seq_k % self.block_k:
            raise ValueError(f"flash attention: blocks {self.block_q}, {self.block_k} must "
                             f"divide the sequence lengths {self.seq_q}, {self.seq_k}")
        if self.causal and (self.seq_q != self.seq_k or self.block_q % self.block_k):
            raise ValueError("flash attention: a causal mask needs seq_q == seq_k and "
                             "block_k dividing block_q")
        if self.valid_k is not None and not self.seq_k - self.block_k < self.valid_k <= \
                self.seq_k:
            raise ValueError(f"flash attention: {self.valid_k} real keys must fill part of "
                             f"the last block of {self.seq_k}")


def _rows(x, cols):
    """A row vector [R] broadcast along ``cols`` columns: [R, cols]."""
    return broadcast_in_dim(x, (x.shape[0], cols), (0,))


def zigzag(i, n):
    """The block program ``i`` of ``n`` works on: 0, n-1, 1, n-2, ... (``i`` an int or a traced
    int32). Under a causal mask a block's work grows (or shrinks) with its index, and each
    core runs a contiguous run of programs, so pairing short and long blocks gives every core
    about the same work (without it the last core of the 910B forward had 4.7x the first's)."""
    if isinstance(i, int):
        return i // 2 + (i % 2) * (n - 1 - 2 * (i // 2))
    half = div(i, np.int32(2))
    return add(half, mul(rem(i, np.int32(2)), sub(np.int32(n - 1), mul(half, np.int32(2)))))


def _scaled(qk, f: FlashShape, row0, col0, masked):
    """The scores from ``qk = q kb^T``: times the scale, and when the block is ``masked``
    (block origins row0, col0) causally masked, or else its padded keys masked (the last
    block of a ragged ``f``)."""
    s = mul(qk, F32(f.scale))
    if not masked:
        return s
    rows, cols = s.shape
    if not f.causal:            # keys col0 + c >= valid_k are padding
        col = broadcast_in_dim(B.iota((1, cols), 1), s.shape, (0, 1))
        return select(lt(col, sub(np.int32(f.valid_k), col0)), s, full(s.shape, F32(NEG)))
    # column - row in the block, broadcast from two vectors
    above = sub(broadcast_in_dim(B.iota((1, cols), 1), s.shape, (0, 1)),
                broadcast_in_dim(B.iota((rows, 1), 0), s.shape, (0, 1)))
    return select(le(above, sub(row0, col0)), s, full(s.shape, F32(NEG)))


def _causal_loops(f: FlashShape, lo, diagonal, stop, step, init):
    """``fori`` over [lo, stop) with ``step(masked)``: with a causal mask the unmasked blocks
    [lo, diagonal) and [diagonal, stop) masked — the mask's iota/compare/select run only on
    the blocks the diagonal crosses; without one, one unmasked loop."""
    if not f.causal:
        return B.fori(lo, stop, step(False), init)
    return B.fori(diagonal, stop, step(True), B.fori(lo, diagonal, step(False), init))


def forward_kernel(f: FlashShape, target):
    nq = f.seq_q // f.block_q
    q_spec = BlockSpec((None, f.block_q, f.dim), lambda h, i: (h, zigzag(i, nq), 0))
    kv_spec = BlockSpec((None, f.seq_k, f.dim), lambda h, i: (h, 0, 0))
    bq, bk = f.block_q, f.block_k

    def flash_attention_forward(q_ref, k_ref, v_ref, o_ref, lse_ref):
        i = zigzag(B.program_id(1), nq)
        q = q_ref[...]

        nk = f.seq_k // bk

        def step(masked, ahead=True):
            def body(j, carry):
                # software-pipelined: the cube computes block j+1's scores and block j-1's
                # P @ V while the vector unit runs block j's softmax on scores carried from
                # the step before; P @ V is carried to the next step too, so the vector
                # unit's loads at the end of a step wait for work the cube issued a step
                # earlier. ``acc`` lags two blocks (``alpha_prev`` rescales it). The last
                # step has no next block (``ahead`` False).
                m, l, acc, alpha_prev, p_prev, qk, o_prev = carry
                nxt = B.ds(mul(add(j, np.int32(1)), np.int32(bk)), bk)
                qk_next = B.dot(q, k_ref[nxt, :], trans_b=True) if ahead else qk
                prev = maximum(sub(j, np.int32(1)), np.int32(0))
                o = B.dot(p_prev, v_ref[B.ds(mul(prev, np.int32(bk)), bk), :])
                s = _scaled(qk, f, mul(i, np.int32(bq)), mul(j, np.int32(bk)), masked)
                m_new = maximum(m, reduce_max(s, (1,)))
                p = exp(sub(s, _rows(m_new, bk)))
                alpha = exp(sub(m, m_new))
                l = add(mul(alpha, l), reduce_sum(p, (1,)))
                acc = mul(add(acc, o_prev), _rows(alpha_prev, f.dim))
                return m_new, l, acc, alpha, p, qk_next, o
            return body

        def first_block(j, carry):     # loops of one step: their L0 buffers are the loops'
            qk, o, p = carry
            keys = B.ds(mul(j, np.int32(bk)), bk)
            return B.dot(q, k_ref[keys, :], trans_b=True), B.dot(p, v_ref[keys, :]), p

        def last_block(j, carry):
            acc, alpha, p, o_prev = carry
            return (mul(add(acc, o_prev), _rows(alpha, f.dim)), alpha, p,
                    B.dot(p, v_ref[B.ds(mul(j, np.int32(bk)), bk), :]))

        # P starts at zero and P @ V at the zero P's product: both matmul results the vector
        # unit reads a step later (scores, P @ V) start in the cube's two-copy workspaces;
        # the first steps' P @ V add nothing
        zeros = full((bq, f.dim), F32(0))
        qk0, o0, p0 = B.fori(0, 1, first_block, (full((bq, bk), F32(0)), zeros,
                                                 full((bq, bk), F32(0))))
        init = (full((bq,), F32(NEG)), full((bq,), F32(0)), zeros, full((bq,), F32(1)),
                p0, qk0, o0)
        if f.causal:    # key blocks [0, diagonal) see every query of the block
            diagonal = mul(i, np.int32(bq // bk))
            last = add(diagonal, np.int32(bq // bk))
            first_of_last = sub(last, np.int32(1))
            carry = _causal_loops(f, 0, diagonal, first_of_last, step, init)
        else:
            last, first_of_last = nk, nk - 1
            carry = _causal_loops(f, 0, None, first_of_last, step, init)
        m, l, acc, alpha, p, _, o = B.fori(first_of_last, last,
                                           step(f.causal or f.ragged, ahead=False), carry)
        # block last - 2's P @ V (o) is added in a loop of one step that multiplies the last
        # block's P
        acc, _, _, o = B.fori(first_of_last, last, last_block, (acc, alpha, p, o))
        acc = add(acc, o)
        o_ref[...] = div(acc, _rows(l, f.dim))
        lse_ref[...] = add(m, log(l))

    return make_call(flash_attention_forward, target=target,
                     out_shape=(ShapeDtypeStruct((f.heads, f.seq_q, f.dim), F32),
                                ShapeDtypeStruct((f.heads, f.seq_q), F32)),
                     grid=(f.heads, nq), in_specs=[q_spec, kv_spec, kv_spec],
                     out_specs=[q_spec, BlockSpec((None, bq), lambda h, i: (h, zigzag(i, nq)))])


def dkdv_kernel(f: FlashShape, target):
    bq, bk = f.block_q, f.block_k
    nk = f.seq_k // bk
    whole_q = BlockSpec((None, f.seq_q, f.dim), lambda h, j: (h, 0, 0))
    kv_block = BlockSpec((None, bk, f.dim), lambda h, j: (h, zigzag(j, nk), 0))
    rows = BlockSpec((None, f.seq_q), lambda h, j: (h, 0))

    def flash_attention_dkdv(q_ref, k_ref, v_ref, delta_ref, do_ref, lse_ref, dk_ref, dv_ref):
        j = zigzag(B.program_id(1), nk)
        kb, vb = k_ref[...], v_ref[...]

        def step(masked, first):
            def body(i, carry):
                # software-pipelined by one query block: the cube multiplies the previous
                # block's P and dS into dV and dK while the vector unit computes this
                # block's (P and dS start at zero: the first step adds nothing)
                dk, dv, p_prev, ds_prev = carry
                rows_i = B.ds(mul(i, np.int32(bq)), bq)
                q, do = q_ref[rows_i, :], do_ref[rows_i, :]
                qk = B.dot(q, kb, trans_b=True)
                dp = B.dot(do, vb, trans_b=True)
                prev = B.ds(mul(maximum(sub(i, np.int32(1)), first), np.int32(bq)), bq)
                dv = add(dv, B.dot(p_prev, do_ref[prev, :], trans_a=True))
                dk_step = B.dot(ds_prev, q_ref[prev, :], trans_a=True)
                delta = delta_ref[rows_i]
                s = _scaled(qk, f, mul(i, np.int32(bq)), mul(j, np.int32(bk)), masked)
                p = exp(sub(s, _rows(lse_ref[rows_i], bk)))
                ds = mul(p, sub(dp, _rows(delta, bk)))
                return add(dk, mul(dk_step, F32(f.scale))), dv, p, ds
            return body

        def last_block(i, carry):       # a loop of one step: its L0 buffers are the loops'
            dk, dv, p, ds = carry
            rows_i = B.ds(mul(i, np.int32(bq)), bq)
            return (add(dk, mul(B.dot(ds, q_ref[rows_i, :], trans_a=True), F32(f.scale))),
                    add(dv, B.dot(p, do_ref[rows_i, :], trans_a=True)), p, ds)

        zeros, none = full((bk, f.dim), F32(0)), full((bq, bk), F32(0))
        init = (zeros, zeros, none, none)
        last = f.seq_q // bq
        if f.causal:    # the query block holding the diagonal is masked, later ones are not
            first = div(mul(j, np.int32(bk)), np.int32(bq))
            carry = B.fori(add(first, np.int32(1)), last, step(False, first),
                           B.fori(first, add(first, np.int32(1)), step(True, first), init))
        else:
            carry = B.fori(0, last, step(False, np.int32(0)), init)
        dk, dv, _, _ = B.fori(last - 1, last, last_block, carry)
        dk_ref[...] = dk
        dv_ref[...] = dv

    out = ShapeDtypeStruct((f.heads, f.seq_k, f.dim), F32)
    return make_call(flash_attention_dkdv, target=target, out_shape=(out, out),
                     grid=(f.heads, nk),
                     in_specs=[whole_q, kv_block, kv_block, rows, whole_q, rows],
                     out_specs=[kv_block, kv_block])


def dq_kernel(f: FlashShape, target):
    bq, bk = f.block_q, f.block_k
    nq = f.seq_q // bq
    whole_k = BlockSpec((None, f.seq_k, f.dim), lambda h, i: (h, 0, 0))
    q_block = BlockSpec((None, bq, f.dim), lambda h, i: (h, zigzag(i, nq), 0))

    def flash_attention_dq(q_ref, k_ref, v_ref, o_ref, do_ref, lse_ref, dq_ref):
        i = zigzag(B.program_id(1), nq)
        q, do = q_ref[...], do_ref[...]
        delta = reduce_sum(mul(do, o_ref[...]), (1,))
        lse = lse_ref[...]

        def step(masked):
            def body(j, carry):
                # software-pipelined by one key block: the cube multiplies the previous
                # block's dS by its keys while the vector unit computes this block's dS
                dq, ds_prev = carry
                cols = B.ds(mul(j, np.int32(bk)), bk)
                kb, vb = k_ref[cols, :], v_ref[cols, :]
                qk = B.dot(q, kb, trans_b=True)
                dp = B.dot(do, vb, trans_b=True)
                prev = maximum(sub(j, np.int32(1)), np.int32(0))
                o = B.dot(ds_prev, k_ref[B.ds(mul(prev, np.int32(bk)), bk), :])
                s = _scaled(qk, f, mul(i, np.int32(bq)), mul(j, np.int32(bk)), masked)
                p = exp(sub(s, _rows(lse, bk)))
                ds = mul(p, sub(dp, _rows(delta, bk)))
                return add(dq, mul(o, F32(f.scale))), ds
            return body

        def last_block(j, carry):       # a loop of one step: its L0 buffers are the loops'
            dq, ds = carry
            kb = k_ref[B.ds(mul(j, np.int32(bk)), bk), :]
            return add(dq, mul(B.dot(ds, kb), F32(f.scale))), ds

        # dS starts at zero: the first step's product adds nothing
        init = (full((bq, f.dim), F32(0)), full((bq, bk), F32(0)))
        if f.causal:
            diagonal = mul(i, np.int32(bq // bk))
            last = add(diagonal, np.int32(bq // bk))
            carry = _causal_loops(f, 0, diagonal, last, step, init)
        else:
            last = f.seq_k // bk
            carry = _causal_loops(f, 0, None, last, step, init)
        first_of_last = last - 1 if isinstance(last, int) else sub(last, np.int32(1))
        dq_ref[...] = B.fori(first_of_last, last, last_block, carry)[0]

    return make_call(flash_attention_dq, target=target,
                     out_shape=ShapeDtypeStruct((f.heads, f.seq_q, f.dim), F32),
                     grid=(f.heads, nq),
                     in_specs=[q_block, whole_k, whole_k, q_block, q_block,
                               BlockSpec((None, bq), lambda h, i: (h, zigzag(i, nq)))],
                     out_specs=q_block)
