"""``scaled_dot_general`` (JAX's ``jax.nn.scaled_dot_general``): ``lax.dot_general`` whose
operands are block-quantized first (``configs[0]`` for lhs, ``configs[1]`` for rhs) and
multiplied with ``scaled_matmul``; its gradient quantizes the cotangent with ``configs[2]``
(JAX's custom VJP; nvfp4 zeroes the gradient of inputs clipped by the forward quantization).
Operands are brought to (B, M, K) form by transposing and reshaping, as JAX does.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ptojax import dtypes, lax
from ptojax import numpy as pnp
from ptojax.autodiff.custom_derivatives import custom_vjp
from ptojax.eval.leaves import ShapeDtypeStruct
from ptojax.nn.block_scaling import quantize, quantizable, scaled_matmul
from ptojax.ops.pure_callback import pure_callback
from ptojax.public import add_examples as _add_examples

_OUT_DTYPES = (dtypes.float32, dtypes.bfloat16, dtypes.float16)


def scaled_dot_general(lhs, rhs, dimension_numbers, preferred_element_type=np.float32,
                       configs=None, implementation=None):
    """``lax.dot_general`` of block-quantized ``lhs`` and ``rhs`` (``configs``: three
    ``get_scaled_dot_general_config`` results, for lhs, rhs and the gradient; None: a plain
    ``lax.dot_general``). As JAX's, which runs only on cuDNN (NotImplementedError on CPU)."""
    if implementation is not None:
        warnings.warn("Backend selector, now ignored. The system chooses the backend "
                      "automatically.", DeprecationWarning, stacklevel=2)
    if configs is None:
        return lax.dot_general(lhs, rhs, dimension_numbers,
                               preferred_element_type=preferred_element_type)
    lhs, rhs = pnp.asarray(lhs), pnp.asarray(rhs)
    out_dtype = dtypes.user_dtype(preferred_element_type, "scaled_dot_general")
    if out_dtype not in _OUT_DTYPES:   # JAX's check and text
        raise TypeError("Only support preferred_element_type in (f32, bf16, f16), but got "
                        f"{out_dtype}")
    (lc, rc), (lb, rb) = dimension_numbers
    numbers = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    return _scaled_dot(lhs, rhs, numbers, out_dtype, tuple(configs))


def _scaled_dot_impl(lhs, rhs, numbers, out_dtype, configs):
    (lc, rc), (lb, rb) = numbers
    a = _as_bmk(lhs, lc, lb)
    b = _as_bmk(rhs, rc, rb)
    out = _quantized_matmul(a, b, configs[0], configs[1], out_dtype)
    return out.reshape(_dot_shape(lhs.shape, rhs.shape, numbers))


def _quantized_matmul(a, b, a_config, b_config, out_dtype):
    a_q, a_scales = quantize(a, a_config)
    b_q, b_scales = quantize(b, b_config)
    if a_config.mode != "nvfp4":
        return scaled_matmul(a_q, b_q, a_scales, b_scales, out_dtype)
    out = scaled_matmul(a_q, b_q, a_scales, b_scales, dtypes.float32)
    return (out * (a_config.global_scale * b_config.global_scale)).astype(out_dtype)


def _scaled_dot_fwd(lhs, rhs, numbers, out_dtype, configs):
    return _scaled_dot_impl(lhs, rhs, numbers, out_dtype, configs), (lhs, rhs)


def _scaled_dot_bwd(numbers, out_dtype, configs, residuals, g):
    lhs, rhs = residuals
    (lc, rc), (lb, rb) = numbers
    grad_lhs = _transposed_product(g, lhs, rhs, numbers, out_dtype, (configs[2], configs[1]))
    swapped = ((rc, lc), (rb, lb))
    grad_rhs = _transposed_product(g, rhs, lhs, swapped, out_dtype, (configs[2], configs[0]),
                                   swap=True)
    if configs[2].mode == "nvfp4":   # straight-through, zero where the forward pass clipped
        largest = float(dtypes.finfo(configs[0].data_type).max)
        scale_max = float(dtypes.finfo(configs[0].scale_type).max)
        grad_lhs = pnp.where(pnp.abs(lhs) <= configs[0].global_scale * largest * scale_max,
                             grad_lhs, 0)
        grad_rhs = pnp.where(pnp.abs(rhs) <= configs[1].global_scale * largest * scale_max,
                             grad_rhs, 0)
    return grad_lhs.astype(lhs.dtype), grad_rhs.astype(rhs.dtype)


def _transposed_product(g, x, y, numbers, out_dtype, configs, swap=False):
    """The cotangent of ``x`` in ``dot_general(x, y)`` (``swap``: of ``y`` in
    ``dot_general(y, x)``, whose output axes put x's kept axes last): g contracted with y
    over y's kept axes, g quantized with ``configs[0]`` and y with ``configs[1]`` (nvfp4:
    an unquantized float product)."""
    (x_contract, y_contract), (x_batch, y_batch) = numbers
    x_kept = [d for d in range(x.ndim) if d not in x_contract and d not in x_batch]
    y_kept = [d for d in range(y.ndim) if d not in y_contract and d not in y_batch]
    nb = len(x_batch)
    if swap:
        g_y = list(range(nb, nb + len(y_kept)))
    else:
        g_y = list(range(nb + len(x_kept), nb + len(x_kept) + len(y_kept)))
    g_batch = list(range(nb))
    y_3d = _as_bmk(y, y_kept, y_batch)
    g_3d = _as_bmk(g, g_y, g_batch)
    if configs[0].mode != "nvfp4" and not quantizable(g_3d.shape[2], configs[0]):
        return _failing_gradient(x, g_3d.shape[2], configs[0])
    if configs[0].mode != "nvfp4":
        out = _quantized_matmul(g_3d, y_3d, configs[0], configs[1], out_dtype)
    else:
        out = pnp.matmul(g_3d, pnp.permute_dims(y_3d, (0, 2, 1)),
                         preferred_element_type=out_dtype)
    out = out.reshape(_dot_shape(g.shape, y.shape, ((g_y, y_kept), (g_batch, y_batch))))
    by_y = [x_contract[i] for i in np.argsort(y_contract)]
    order = np.argsort(list(x_batch) + x_kept + by_y)
    return lax.transpose(out, tuple(int(i) for i in order))


def _failing_gradient(x, size, config):
    """A gradient of ``x``'s shape that raises JAX's error when it is computed: the
    cotangent cannot be quantized in blocks along ``size``. (The backward rule is traced with
    the forward pass, which must still run, as in JAX.)"""
    message = (f"scaled_dot_general's gradient quantizes the cotangent ({config.mode}) along "
               f"the output's non-contracted axes of size {size}, which must be a multiple "
               f"of the block size {config.block_size}")

    def fail(*_):
        raise ValueError(message)
    return pure_callback(fail, ShapeDtypeStruct(x.shape, x.dtype), x,
                         vmap_method="broadcast_all")


_scaled_dot = custom_vjp(_scaled_dot_impl, nondiff_argnums=(2, 3, 4))
_scaled_dot.defvjp(_scaled_dot_fwd, _scaled_dot_bwd)


def _as_bmk(x, contract, batch):
    """``x`` as (batch, rows, contracted): its batch axes, then the others, then the
    contracted ones, in their order in ``x``, each group flattened."""
    contract, batch = set(contract), set(batch)
    batch_axes = [d for d in range(x.ndim) if d in batch]
    row_axes = [d for d in range(x.ndim) if d not in batch and d not in contract]
    contract_axes = [d for d in range(x.ndim) if d in contract]
    sizes = [math.prod(x.shape[d] for d in axes)
             for axes in (batch_axes, row_axes, contract_axes)]
    return pnp.transpose(x, batch_axes + row_axes + contract_axes).reshape(sizes)


def _dot_shape(lhs_shape, rhs_shape, numbers):
    """``dot_general``'s output shape: batch, lhs kept, rhs kept."""
    (lc, rc), (lb, rb) = numbers
    return (tuple(lhs_shape[d] for d in range(len(lhs_shape)) if d in lb)
            + tuple(lhs_shape[d] for d in range(len(lhs_shape)) if d not in lc and d not in lb)
            + tuple(rhs_shape[d] for d in range(len(rhs_shape)) if d not in rc and d not in rb))


_add_examples(globals(), """
scaled_dot_general: mxfp8 on both operands (the exact product is +-16.254).
    >>> x, y = pnp.linspace(-1, 1, 64).reshape(2, 32), pnp.ones((32, 2))
    >>> configs = [pto.nn.get_scaled_dot_general_config("mxfp8")] * 3
    >>> pto.nn.scaled_dot_general(x, y, (((1,), (0,)), ((), ())), configs=configs)
    Array([[-16.125, -16.125],
           [ 16.125,  16.125]], dtype=float32)
""")
