"""``dot_product_attention``: JAX's scaled dot-product attention (its ``"xla"`` form) with
multi-head, grouped-query and multi-query heads, bias, boolean, causal, local-window and
sequence-length masks.

Shapes use JAX's letters: B batch, T query length, S key/value length, N query heads, K
key/value heads, G = N // K query heads per key/value head, H head size. Logits are computed
in ``promote(query.dtype, float32)`` and the softmax in float32.
"""
from __future__ import annotations

import math

import numpy as np

from ptojax import dtypes, lax
from ptojax import numpy as pnp
from ptojax.errors import DtypeError, ShapeError, UnsupportedError
from ptojax.nn.softmax_family import logsumexp, softmax
from ptojax.source_info import user_frame


def _as_4d(x):
    x = pnp.asarray(x)
    return pnp.expand_dims(x, tuple(range(4 - x.ndim))) if x.ndim < 4 else x


def _check(name, x, shape, dtype):
    """``x`` has rank ``len(shape)``, those sizes (-1: any) and ``dtype`` (None: any)."""
    if x is None:
        return
    if x.ndim != len(shape) or any(n != -1 and m != n for m, n in zip(x.shape, shape)):
        want = tuple("?" if n == -1 else n for n in shape)
        raise ShapeError(f"dot_product_attention: {name} must have shape {want}, got "
                         f"{x.aval}", user_frame(2))
    if dtype is not None and x.dtype != dtype:
        raise DtypeError(f"dot_product_attention: {name} must have dtype {dtype}, got "
                         f"{x.aval}", user_frame(2))


def _grouped(t, num_groups):
    """A (B, N|1, T, S) bias or mask as (B, K|1, G|1, T, S)."""
    if t is None:
        return None
    b, n, tt, s = t.shape
    if n == 1:
        return pnp.expand_dims(t, 2)
    return pnp.reshape(t, (b, n // num_groups, num_groups, tt, s))


def _large_negative(dtype):
    top = min(float(dtypes.finfo(dtype).max), float(np.finfo(np.float32).max))
    return pnp.asarray(-0.7 * top, dtype)


def _mask(logits_shape, mask, is_causal, window, q_lengths, kv_lengths):
    """The combined boolean mask (broadcasting to the (B, K, G, T, S) logits), or None."""
    t, s = logits_shape[-2:]
    parts = [] if mask is None else [mask]
    query_pos = lax.broadcasted_iota(dtypes.int32, (t, s), 0)
    key_pos = lax.broadcasted_iota(dtypes.int32, (t, s), 1)
    if is_causal:
        parts.append(pnp.less_equal(key_pos, query_pos))
    if window is not None:
        left, right = window
        parts.append(pnp.logical_and(pnp.less_equal(query_pos, pnp.add(key_pos, left)),
                                     pnp.greater_equal(query_pos,
                                                       pnp.subtract(key_pos, right))))
    if q_lengths is not None:
        parts.append(pnp.less(query_pos, q_lengths[:, None, None, None, None]))
    if kv_lengths is not None:
        parts.append(pnp.less(key_pos, kv_lengths[:, None, None, None, None]))
    if not parts:
        return None
    combined = parts[0]
    for p in parts[1:]:
        combined = pnp.logical_and(combined, p)
    return combined


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None,
                          key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual=False):
    """Scaled dot-product attention ``softmax(Q K^T * scale + bias) V`` per head.

    Args:
      query: ``(B, T, N, H)`` or ``(T, N, H)``.
      key: ``(B, S, K, H)`` or ``(S, K, H)``; ``N`` must be a multiple of ``K`` (``K == N``:
        multi-head, ``K == 1``: multi-query, else grouped-query attention).
      value: same shape and dtype as ``key``.
      bias: optional, 4-D (or fewer dims, left-padded), broadcasting to ``(B, N, T, S)``.
      mask: optional boolean, broadcasting to ``(B, N, T, S)``; True keeps a logit.
      scale: the logits' scale, default ``1 / sqrt(H)``.
      is_causal: mask out keys after each query position.
      query_seq_lengths: optional int32 ``(B,)``: query positions past it are masked and
        their outputs are 0.
      key_value_seq_lengths: optional int32 ``(B,)``: key positions past it are masked.
      local_window_size: ``(left, right)`` (or an int for both): each query attends to keys
        within that window.
      implementation: None or ``"xla"`` (the only form here).
      return_residual: also return the logsumexp of the logits, shape ``(B, T, N)``.

    Returns:
      The attention output, shaped like ``query`` (and the residual if requested).

    Example:
      >>> q = pnp.ones((1, 2, 1, 4)); kv = pnp.ones((1, 3, 1, 4))
      >>> pto.nn.dot_product_attention(q, kv, kv).shape
      (1, 2, 1, 4)
    """
    if implementation not in (None, "xla"):
        if implementation == "cudnn":
            raise UnsupportedError("dot_product_attention: implementation='cudnn' needs an "
                                   "NVIDIA GPU; use implementation=None or 'xla'",
                                   user_frame())
        raise ValueError(f"dot_product_attention: unsupported implementation "
                         f"{implementation!r}; use None or 'xla'")
    out_shape = pnp.asarray(query).shape
    q, k, v = _as_4d(query), _as_4d(key), _as_4d(value)
    bias = None if bias is None else _as_4d(bias)
    mask = None if mask is None else _as_4d(mask)
    q_lengths = None if query_seq_lengths is None else pnp.asarray(query_seq_lengths)
    kv_lengths = None if key_value_seq_lengths is None else pnp.asarray(key_value_seq_lengths)
    b, s, num_kv, h = k.shape
    _check("value", v, (b, s, num_kv, h), k.dtype)
    _check("query", q, (b, -1, -1, h), k.dtype)
    _check("mask", mask, (-1,) * 4, dtypes.bool_)
    _check("bias", bias, (-1,) * 4, None)
    _check("query_seq_lengths", q_lengths, (b,), dtypes.int32)
    _check("key_value_seq_lengths", kv_lengths, (b,), dtypes.int32)
    t, n = q.shape[1], q.shape[2]
    if n % num_kv:
        raise ShapeError(f"dot_product_attention: the number of query heads ({n}) must be a "
                         f"multiple of the number of key/value heads ({num_kv})", user_frame())
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    scale = 1.0 / math.sqrt(h) if scale is None else scale
    groups = n // num_kv
    q = pnp.reshape(q, (b, t, num_kv, groups, h))
    logits_dtype, _ = dtypes.promote(((q.dtype, False), (dtypes.float32, False)))
    logits = pnp.einsum("btkgh,bskh->bkgts", q, k, preferred_element_type=logits_dtype)
    logits = pnp.multiply(logits, pnp.asarray(scale, logits_dtype))
    if bias is not None:
        logits = pnp.add(logits, _grouped(bias, groups)).astype(logits_dtype)
    combined = _mask(logits.shape, _grouped(mask, groups), is_causal, local_window_size,
                     q_lengths, kv_lengths)
    if combined is not None:
        logits = pnp.where(combined, logits, _large_negative(logits.dtype))
    logits = logits.astype(dtypes.float32)
    probs = softmax(logits, axis=-1).astype(k.dtype)
    encoded = pnp.einsum("bkgts,bskh->btkgh", probs, v)
    if q_lengths is not None:
        valid = pnp.less(lax.broadcasted_iota(dtypes.int32, (1, t), 1), q_lengths[:, None])
        encoded = pnp.multiply(encoded, valid[:, :, None, None, None].astype(encoded.dtype))
    encoded = pnp.reshape(encoded, out_shape)
    if not return_residual:
        return encoded
    lse = logsumexp(logits, axis=-1).astype(k.dtype)                   # (B, K, G, T)
    lse = pnp.reshape(pnp.transpose(lse, (0, 3, 1, 2)), out_shape[:-1])
    return encoded, lax.stop_gradient(lse)
