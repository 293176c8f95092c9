"""Flash attention written with ``pto.kernel``: forward with online softmax and a causal mask,
and backward kernels, joined by ``pto.custom_vjp`` so ``pto.grad`` runs them.

The S x S scores never reach GM: each program owns a block of queries of one head and loops
over key/value blocks (``pto.kernel.fori``), keeping the running row maximum ``m``, the
running denominator ``l`` and the output accumulator in the kernel's buffers. The forward
also stores the log-sum-exp of each row, which the backward kernels use to recompute the
probabilities block by block (FlashAttention-2):

    dK, dV kernel   one program per key/value block: loops over the query blocks that see it
    dQ kernel       one program per query block: loops over the key/value blocks it sees

    python examples/flash_attention.py                 # compare with unfused attention
    python examples/flash_attention.py --seq 256 --heads 2 --dim 32

Nothing here has run on Ascend hardware: the kernels run through ptojax's reference
semantics, its tile interpreter and its host build, and their PTO-AS / PTO C++ is printed
with ``--show pto``.
"""
from __future__ import annotations

import argparse
import math

import numpy as np

import ptojax as pto
import ptojax.numpy as pnp

K = pto.kernel
NEG = -1e30          # "minus infinity" for masked scores (exp underflows to 0, no inf - inf)


def _causal(s, row0, col0):
    """Scores ``s`` with keys after their query masked out."""
    rows, cols = s.shape                                  # column - row within the block
    above = K.iota((1, cols), 1) - K.iota((rows, 1), 0)
    return pnp.where(above <= row0 - col0, s, NEG)


def zigzag(i, n):
    """The block program ``i`` of ``n`` works on: 0, n-1, 1, n-2, ... With a causal mask a
    block's work grows with its index, and the cores run contiguous runs of programs, so
    pairing short and long blocks gives every core about the same work."""
    half = i // 2
    return half + (i % 2) * (n - 1 - 2 * half)


def forward_kernel(heads, seq, dim, causal=True, block_q=64, block_k=64):
    """(q, k, v) [heads, seq, dim] -> (out [heads, seq, dim], lse [heads, seq])."""
    assert seq % block_q == 0 and seq % block_k == 0 and block_q % block_k == 0
    scale = 1.0 / math.sqrt(dim)
    nq = seq // block_q
    q_spec = pto.BlockSpec((None, block_q, dim), lambda h, i: (h, zigzag(i, nq), 0))
    kv_spec = pto.BlockSpec((None, seq, dim), lambda h, i: (h, 0, 0))

    @K(out_shape=(pto.ShapeDtypeStruct((heads, seq, dim), np.float32),
                  pto.ShapeDtypeStruct((heads, seq), np.float32)),
       grid=(heads, seq // block_q), in_specs=[q_spec, kv_spec, kv_spec],
       out_specs=[q_spec, pto.BlockSpec((None, block_q), lambda h, i: (h, zigzag(i, nq)))])
    def flash_attention_forward(q_ref, k_ref, v_ref, o_ref, lse_ref):
        i = zigzag(K.program_id(1), nq)
        q = q_ref[...]
        nk = seq // block_k

        def step(masked, ahead=True):
            def body(j, carry):
                # software-pipelined: the cube computes the next key block's scores and the
                # previous block's P @ V while the vector unit runs this block's softmax on
                # scores carried from the step before; P @ V comes back a step later still
                # (``o_prev``, carried), so the vector unit's loads at the end of a step wait
                # for work the cube issued a step earlier. ``acc`` lags two blocks: it is at
                # the row maximum of the step before until ``alpha_prev`` rescales it.
                m, l, acc, alpha_prev, p_prev, s, o_prev = carry
                # (the last step has no next block: ``ahead`` False)
                s_next = K.dot(q, k_ref[K.ds((j + 1) * block_k, block_k), :],
                               trans_b=True) if ahead else s
                v_prev = v_ref[K.ds(pnp.maximum(j - 1, 0) * block_k, block_k), :]
                o = K.dot(p_prev, v_prev)               # P goes to the cube before s is read
                s = s * scale
                if masked:
                    s = _causal(s, i * block_q, j * block_k)
                m_new = pnp.maximum(m, s.max(axis=-1))
                p = pnp.exp(s - m_new[:, None])
                alpha = pnp.exp(m - m_new)
                l = alpha * l + p.sum(axis=-1)
                acc = (acc + o_prev) * alpha_prev[:, None]
                return m_new, l, acc, alpha, p, s_next, o
            return body

        # the first block's scores, as a loop of one step (so its L0 buffers are the other
        # loops'); P starts at zero and P @ V at the zero P's product, so both matmul results
        # the vector unit reads a step later (scores and P @ V) start in the cube's two-copy
        # workspaces: the first steps' P @ V add nothing
        zeros = pnp.zeros((block_q, dim), np.float32)

        def first_block(j, carry):
            s, o, p = carry
            return (K.dot(q, k_ref[K.ds(j * block_k, block_k), :], trans_b=True),
                    K.dot(p, v_ref[K.ds(j * block_k, block_k), :]), p)
        s0, o0, p0 = K.fori(0, 1, first_block, (pnp.zeros((block_q, block_k), np.float32),
                                                zeros, pnp.zeros((block_q, block_k), np.float32)))
        init = (pnp.full((block_q,), NEG, np.float32), pnp.zeros((block_q,), np.float32),
                zeros, pnp.ones((block_q,), np.float32), p0, s0, o0)
        if causal:      # only the key blocks on the diagonal need the mask
            diagonal = i * (block_q // block_k)
            last = diagonal + block_q // block_k
            carry = K.fori(0, diagonal, step(False), init)
            carry = K.fori(diagonal, last - 1, step(True), carry)
        else:
            last = nk
            carry = K.fori(0, last - 1, step(False), init)
        m, l, acc, alpha, p, _, o = K.fori(last - 1, last, step(causal, ahead=False), carry)
        # the last two blocks' P @ V: block last - 2's (o) is added in a loop of one step that
        # multiplies the last block's P (so its L0 buffers and workspaces are the other loops')
        def last_block(j, carry):
            acc, alpha, p, o_prev = carry
            return (acc + o_prev) * alpha[:, None], alpha, p, \
                K.dot(p, v_ref[K.ds(j * block_k, block_k), :])
        acc, _, _, o = K.fori(last - 1, last, last_block, (acc, alpha, p, o))
        acc = acc + o
        o_ref[...] = acc / l[:, None]
        lse_ref[...] = m + pnp.log(l)

    return flash_attention_forward


def dkdv_kernel(heads, seq, dim, causal=True, block_q=64, block_k=64):
    """(q, k, v, delta, do, lse) -> (dk, dv): one program per key/value block; ``delta`` is
    rowsum(do * o) [heads, seq], computed once outside (each query block is read once per key
    block here)."""
    assert seq % block_q == 0 and seq % block_k == 0 and block_q % block_k == 0
    scale = 1.0 / math.sqrt(dim)
    nk = seq // block_k
    whole = pto.BlockSpec((None, seq, dim), lambda h, j: (h, 0, 0))
    kv_block = pto.BlockSpec((None, block_k, dim), lambda h, j: (h, zigzag(j, nk), 0))
    rows = pto.BlockSpec((None, seq), lambda h, j: (h, 0))
    out = pto.ShapeDtypeStruct((heads, seq, dim), np.float32)

    @K(out_shape=(out, out), grid=(heads, nk),
       in_specs=[whole, kv_block, kv_block, rows, whole, rows],
       out_specs=[kv_block, kv_block])
    def flash_attention_dkdv(q_ref, k_ref, v_ref, delta_ref, do_ref, lse_ref, dk_ref, dv_ref):
        j = zigzag(K.program_id(1), nk)
        kb, vb = k_ref[...], v_ref[...]

        def step(masked):
            def body(i, carry):
                dk, dv = carry
                rows_i = K.ds(i * block_q, block_q)
                q, do = q_ref[rows_i, :], do_ref[rows_i, :]
                delta = delta_ref[rows_i]
                s = K.dot(q, kb, trans_b=True) * scale
                if masked:
                    s = _causal(s, i * block_q, j * block_k)
                p = pnp.exp(s - lse_ref[rows_i][:, None])
                dv = dv + K.dot(p, do, trans_a=True)
                dp = K.dot(do, vb, trans_b=True)
                ds = p * (dp - delta[:, None])
                dk = dk + K.dot(ds, q, trans_a=True) * scale
                return dk, dv
            return body

        zeros = pnp.zeros((block_k, dim), np.float32)
        if causal:      # only the query block holding the diagonal needs the mask
            diagonal = (j * block_k) // block_q
            carry = K.fori(diagonal, diagonal + 1, step(True), (zeros, zeros))
            dk, dv = K.fori(diagonal + 1, seq // block_q, step(False), carry)
        else:
            dk, dv = K.fori(0, seq // block_q, step(False), (zeros, zeros))
        dk_ref[...] = dk
        dv_ref[...] = dv

    return flash_attention_dkdv


def dq_kernel(heads, seq, dim, causal=True, block_q=64, block_k=64):
    """(q, k, v, o, do, lse) -> dq: one program per query block."""
    assert seq % block_q == 0 and seq % block_k == 0 and block_q % block_k == 0
    scale = 1.0 / math.sqrt(dim)
    nq = seq // block_q
    whole = pto.BlockSpec((None, seq, dim), lambda h, i: (h, 0, 0))
    q_block = pto.BlockSpec((None, block_q, dim), lambda h, i: (h, zigzag(i, nq), 0))

    @K(out_shape=pto.ShapeDtypeStruct((heads, seq, dim), np.float32),
       grid=(heads, nq),
       in_specs=[q_block, whole, whole, q_block, q_block,
                 pto.BlockSpec((None, block_q), lambda h, i: (h, zigzag(i, nq)))],
       out_specs=q_block)
    def flash_attention_dq(q_ref, k_ref, v_ref, o_ref, do_ref, lse_ref, dq_ref):
        i = zigzag(K.program_id(1), nq)
        q, do = q_ref[...], do_ref[...]
        delta = (do * o_ref[...]).sum(axis=-1)
        lse = lse_ref[...]

        def step(masked):
            def body(j, dq):
                cols = K.ds(j * block_k, block_k)
                kb, vb = k_ref[cols, :], v_ref[cols, :]
                s = K.dot(q, kb, trans_b=True) * scale
                if masked:
                    s = _causal(s, i * block_q, j * block_k)
                p = pnp.exp(s - lse[:, None])
                ds = p * (K.dot(do, vb, trans_b=True) - delta[:, None])
                return dq + K.dot(ds, kb) * scale
            return body

        zeros = pnp.zeros((block_q, dim), np.float32)
        if causal:      # only the key blocks on the diagonal need the mask
            diagonal = i * (block_q // block_k)
            dq = K.fori(0, diagonal, step(False), zeros)
            dq_ref[...] = K.fori(diagonal, diagonal + block_q // block_k, step(True), dq)
        else:
            dq_ref[...] = K.fori(0, seq // block_k, step(False), zeros)

    return flash_attention_dq


def flash_attention(heads, seq, dim, causal=True, block_q=64, block_k=64, forward_blocks=None):
    """Differentiable attention(q, k, v) on [heads, seq, dim] float32 arrays. The backward
    kernels take (block_q, block_k); the forward ``forward_blocks`` (default the same): its
    buffers allow larger query blocks than the dK/dV kernel's (910B, D=64: 64 vs 32 rows)."""
    sizes = (heads, seq, dim, causal, block_q, block_k)
    fwd = forward_kernel(heads, seq, dim, causal, *(forward_blocks or (block_q, block_k)))
    dkdv, dq = dkdv_kernel(*sizes), dq_kernel(*sizes)

    @pto.custom_vjp
    def attention(q, k, v):
        return fwd(q, k, v)[0]

    def attention_fwd(q, k, v):
        o, lse = fwd(q, k, v)
        return o, (q, k, v, o, lse)

    def attention_bwd(res, do):
        q, k, v, o, lse = res
        dk, dv = dkdv(q, k, v, pnp.sum(do * o, axis=-1), do, lse)
        return dq(q, k, v, o, do, lse), dk, dv

    attention.defvjp(attention_fwd, attention_bwd)
    return attention


def unfused_attention(q, k, v, causal=True):
    """The same attention with whole S x S scores (ptojax arrays)."""
    scale = 1.0 / math.sqrt(q.shape[-1])
    s = pnp.einsum("hqd,hkd->hqk", q, k) * scale
    if causal:
        seq = q.shape[1]
        s = pnp.where(pnp.tril(pnp.ones((seq, seq), bool)), s, NEG)
    return pnp.einsum("hqk,hkd->hqd", pto.nn.softmax(s, axis=-1), v)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--heads", type=int, default=2, help="attention heads")
    parser.add_argument("--seq", type=int, default=128, help="sequence length")
    parser.add_argument("--dim", type=int, default=32, help="head dimension")
    parser.add_argument("--block", type=int, default=64, help="rows per kernel block")
    parser.add_argument("--show", choices=("pto", "pto-cpp", "cost"), default=None,
                        help="also print the kernel's PTO-AS, PTO C++ or cost estimate")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    q, k, v, w = (rng.standard_normal((args.heads, args.seq, args.dim)).astype(np.float32)
                  for _ in range(4))
    attention = flash_attention(args.heads, args.seq, args.dim, True, args.block, args.block)

    def loss(f):
        return lambda q, k, v: pnp.sum(f(q, k, v) * w)

    out = pto.jit(attention)(q, k, v)
    ref = unfused_attention(q, k, v)
    print(f"forward: max |flash - unfused| = {float(np.abs(np.asarray(out - ref)).max()):.2e}")
    grads = pto.jit(pto.grad(loss(attention), argnums=(0, 1, 2)))(q, k, v)
    ref_grads = pto.grad(loss(unfused_attention), argnums=(0, 1, 2))(q, k, v)
    for name, g, r in zip("qkv", grads, ref_grads):
        print(f"d{name}: max |flash - unfused| = {float(np.abs(np.asarray(g - r)).max()):.2e}")
    if args.show:
        lowered = pto.jit(pto.grad(loss(attention), argnums=(0, 1, 2))).lower(q, k, v)
        print(lowered.cost() if args.show == "cost" else lowered.as_text(args.show))


if __name__ == "__main__":
    main()
