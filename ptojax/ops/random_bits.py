"""``threefry2x32``: the Threefry-2x32 block cipher (20 rounds), the counter-based hash behind
``ptojax.random``.

``threefry2x32(k1, k2, x1, x2) -> (y1, y2)`` encrypts the 64-bit block ``(x1, x2)`` under the
64-bit key ``(k1, k2)``, elementwise: the four operands are uint32 of one shape (rank-0
operands broadcast, as for every elementwise primitive) and so are both results. Because each
output element depends only on the key and its own counter, the op tiles and shards like any
other elementwise op. The algorithm is Threefry-2x32 of Salmon et al., "Parallel random
numbers: as easy as 1, 2, 3" (SC 2011): rotations (13, 15, 26, 6) and (17, 29, 16, 24), a
key injection every four rounds with the parity word 0x1BD11BDA.
"""
from __future__ import annotations

import math

import numpy as np

from ptojax import dtypes
from ptojax.errors import DtypeError, ShapeError
from ptojax.ir.types import TensorType
from ptojax.ops import sharding_rules as sr
from ptojax.ops.checks import broadcast_scalars, fmt_types
from ptojax.ops.costs import output_size
from ptojax.ops.elementwise import align_elementwise, elementwise_dim
from ptojax.ops.tangents import zero_jvp
from ptojax.trace import Primitive, Unsupported

ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
KEY_PARITY = 0x1BD11BDA
NUM_INJECTIONS = 5  # 5 key injections after 4 rounds each: 20 rounds
MASK = 0xFFFFFFFF


def _threefry2x32_abstract(*operands):
    if len(operands) != 4:
        raise ShapeError(f"threefry2x32 takes 4 operands, got {len(operands)}")
    if any(t.dtype != dtypes.uint32 for t in operands):
        raise DtypeError(f"threefry2x32: every operand must be uint32, got "
                         f"{fmt_types(operands)}")
    shape = broadcast_scalars("threefry2x32", operands)
    out = TensorType(shape, dtypes.uint32)
    return [out, out]


def _key_words(k1, k2, shape):
    """The three key words, with the injection offsets i + 1 folded into the second one per
    injection: rank-0 keys (the usual case) as uint32 scalars, added to the whole block by
    one ufunc each; otherwise 1-d arrays of the block's size."""
    if k1.ndim == 0 and k2.ndim == 0:
        a, b = int(k1), int(k2)
        words = (a, b, a ^ b ^ KEY_PARITY)
        return ([np.uint32(w) for w in words],
                [np.uint32((words[(i + 2) % 3] + i + 1) & 0xFFFFFFFF)
                 for i in range(NUM_INJECTIONS)])
    k1, k2 = (np.broadcast_to(k, shape).reshape(-1) for k in (k1, k2))
    words = (k1, k2, k1 ^ k2 ^ np.uint32(KEY_PARITY))
    return list(words), [words[(i + 2) % 3] + np.uint32(i + 1) for i in range(NUM_INJECTIONS)]


def _threefry_words(k1: int, k2: int, x1: int, x2: int):
    """One block in Python integers (a key fold or split: numpy's per-call cost would be
    the whole of it)."""
    keys = (k1, k2, k1 ^ k2 ^ KEY_PARITY)
    y1, y2 = (x1 + k1) & MASK, (x2 + k2) & MASK
    for i in range(NUM_INJECTIONS):
        for distance in ROTATIONS[i % 2]:
            y1 = (y1 + y2) & MASK
            y2 = ((y2 << distance) & MASK | y2 >> (32 - distance)) ^ y1
        y1 = (y1 + keys[(i + 1) % 3]) & MASK
        y2 = (y2 + keys[(i + 2) % 3] + i + 1) & MASK
    return y1, y2


def _threefry2x32(k1, k2, x1, x2):
    k1, k2, x1, x2 = (np.asarray(a, np.uint32) for a in (k1, k2, x1, x2))
    shape = np.broadcast_shapes(k1.shape, k2.shape, x1.shape, x2.shape)
    if math.prod(shape) == 1:
        words = _threefry_words(*(int(a.reshape(-1)[0]) for a in (k1, k2, x1, x2)))
        return [np.full(shape, w, np.uint32) for w in words]
    keys, offset_keys = _key_words(k1, k2, shape)
    # Fresh 1-d blocks updated in place (a small block's cost is the ufunc calls, five per
    # round); numpy wraps uint32 arithmetic silently for arrays (0-d would warn).
    y1 = np.add(np.broadcast_to(x1, shape).reshape(-1), keys[0], dtype=np.uint32)
    y2 = np.add(np.broadcast_to(x2, shape).reshape(-1), keys[1], dtype=np.uint32)
    spill = np.empty_like(y2)
    add, shl, shr, bor, bxor = (np.add, np.left_shift, np.right_shift, np.bitwise_or,
                                np.bitwise_xor)
    for i in range(NUM_INJECTIONS):
        for distance in ROTATIONS[i % 2]:
            add(y1, y2, out=y1)
            shl(y2, np.uint32(distance), out=spill)          # y2 rotated left by distance
            shr(y2, np.uint32(32 - distance), out=y2)
            bor(y2, spill, out=y2)
            bxor(y2, y1, out=y2)
        add(y1, keys[(i + 1) % 3], out=y1)
        add(y2, offset_keys[i], out=y2)
    return [y1.reshape(shape), y2.reshape(shape)]


threefry2x32_p = Primitive("threefry2x32", _threefry2x32_abstract, _threefry2x32,
                           multiple_results=True, elementwise=True)


def _threefry2x32_batch(args, dims):
    outs = threefry2x32_p.bind(*align_elementwise(args, dims))
    dim = elementwise_dim(args, dims)
    return outs, [dim, dim]


threefry2x32_p.define(
    jvp=zero_jvp(threefry2x32_p), batch=_threefry2x32_batch, shard=sr.elementwise(),
    tile=Unsupported("no tile form yet: kept as a tensor op between kernels"),
    cost=output_size,
    reference=Unsupported("no JAX primitive takes the same operands; bit-exact with "
                          "jax.random through the numpy impl (tests/test_random.py)"))
