"""``lax.linalg.qdwh``: the polar decomposition ``x = u h`` of one ``(m, n)`` matrix
(``m >= n``) by the QR-based dynamically weighted Halley iteration (Nakatsukasa, Bai and Gygi,
2010), as JAX's — also what ``scipy.linalg.polar(method='qdwh')`` runs.

``x`` is scaled below unit 2-norm (by ``1/sqrt(|x|_1 |x|_inf)``), then rational steps
``u <- e u + (a - e) u (c u^H u + I)^-1`` whose weights ``(a, b, c)`` follow a lower bound
``l`` on the smallest singular value, starting at ``eps``: they depend on ``eps`` only, so
they are computed here in Python. Steps with ``c > 100`` use a QR of ``[sqrt(c) u; I]`` for
stability, the others a Cholesky factor; then Halley steps (``a, b, c = 3, 1, 3``) until
``|u - u_prev|_F <= (5 eps)^(1/3)`` or ``max_iterations`` steps in all (the weighted steps
count; each Cholesky step tests the change), and one Newton-Schulz refinement. The result is
``(u, h, num_iters, is_converged)``. Written with the primitives' functions and a
``while_loop`` (so it jits, vmaps, and has a forward-mode derivative; no reverse one, as in
JAX). Complex matrices go through their real embedding ``[[re, -im], [im, re]]`` (ptojax's QR
is real only): its polar factors embed ``x``'s (they are unique), though its step count may
differ from JAX's.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.control_flow import fori_loop, while_loop
from ptojax.errors import ShapeError
from ptojax.ops.arithmetic import abs as abs_
from ptojax.ops.broadcast import reduce_sum
from ptojax.ops.complex_parts import complex as complex_, imag, real
from ptojax.ops.convert import convert_element_type
from ptojax.ops.decomposition_facts import check_operand
from ptojax.ops.decompositions import cholesky, qr, triangular_solve
from ptojax.ops.dynamic_slicing import dynamic_index_in_dim
from ptojax.ops.logic import select
from ptojax.ops.matrix import conjugate_transpose as mH, eye, matmul
from ptojax.ops.operand import as_operand
from ptojax.ops.reductions import reduce_max
from ptojax.ops.slicing import concatenate, slice_in_dim
from ptojax.ops.transcendental import rsqrt, sqrt
from ptojax.public import add_examples as _add_examples

_DEFAULT_ITERATIONS = 10
_CHOLESKY_CUTOFF = 100


def qdwh(x, *, is_hermitian=False, max_iterations=None, eps=None, dynamic_shape=None):
    """``(u, h, num_iters, is_converged)``: the polar decomposition ``x = u h`` of a full-rank
    ``(m, n)`` matrix (``m >= n``; ``u`` orthonormal columns, ``h`` Hermitian positive
    definite) by QDWH (see the module), the number of steps taken and whether the iteration
    converged within ``max_iterations`` (10). With ``dynamic_shape=(m', n')`` only the
    leading ``m' x n'`` block of ``x`` is decomposed, the rest treated as zero.
    ``is_hermitian`` is accepted and unused, as in JAX."""
    x = as_operand("qdwh", x)
    if x.ndim != 2:
        raise ShapeError(f"qdwh: needs one matrix (m, n), got shape {tuple(x.shape)} (vmap "
                         f"it over a stack)")
    check_operand("qdwh", x, complex_ok=True)
    m, n = x.shape
    if m < n:
        raise ShapeError("The input matrix of shape M x N must have M >= N.")
    max_iterations = _DEFAULT_ITERATIONS if max_iterations is None else int(max_iterations)
    eps = float(np.finfo(np.dtype(x.dtype)).eps) if eps is None else float(eps)
    x = convert_element_type(x, x.dtype)
    if dynamic_shape is not None:
        x = select(_block_mask(x.shape, *dynamic_shape), x, x * 0)
    if not dtypes.is_complex(x.dtype):
        return _qdwh(x, max_iterations, eps)
    embedded = concatenate([concatenate([real(x), -imag(x)], 1),
                            concatenate([imag(x), real(x)], 1)], 0)
    u, h, steps, converged = _qdwh(embedded, max_iterations, eps)
    return (_top_left_complex(u, m, n), _top_left_complex(h, n, n), steps, converged)


def _block_mask(shape, rows, cols):
    index = np.indices(shape)
    return (index[0] < rows) & (index[1] < cols)


def _top_left_complex(embedded, m, n):
    """``re + i im`` from the embedding's blocks ``[[re, .], [im, .]]``."""
    top = slice_in_dim(slice_in_dim(embedded, 0, m, axis=0), 0, n, axis=1)
    below = slice_in_dim(slice_in_dim(embedded, m, 2 * m, axis=0), 0, n, axis=1)
    return complex_(top, below)


def _constant(values, dtype):
    """``values`` as an array of ``dtype``, converted by numpy (under jit, converting a
    float64 numpy constant with ``convert_element_type`` keeps float64)."""
    return convert_element_type(np.asarray(values, np.dtype(dtype)), dtype)


def _frobenius(x):
    return sqrt(reduce_sum(abs_(x) * abs_(x), (0, 1)))


def weights(eps, max_iterations=_DEFAULT_ITERATIONS):
    """The ``(a, b, c)`` of each dynamically weighted step, from the lower bound ``l = eps``
    on the scaled matrix's smallest singular value until it reaches 1."""
    bound, tolerance, out = eps, 10.0 * eps / 2.0, []
    while bound + tolerance < 1 and len(out) < max_iterations:
        l2 = bound * bound
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1.0 + dd) ** (1 / 2)
        a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** (1 / 2)
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        bound = bound * (a + b * l2) / (1 + c * l2)
        out.append((a, b, c))
    return out


def _qr_step(u, coefficients):
    """``e u + (a - e) / sqrt(c) q1 q2^H`` with ``[sqrt(c) u; I] = [q1; q2] r``."""
    scale, root_c, e = coefficients[0], coefficients[1], coefficients[2]
    m, n = u.shape
    q, _ = qr(concatenate([u * root_c, eye(n, u.dtype)], 0), full_matrices=False)
    q1, q2 = slice_in_dim(q, 0, m, axis=0), slice_in_dim(q, m, m + n, axis=0)
    return u * e + matmul(q1, mH(q2)) * scale


def _cholesky_step(u, coefficients):
    """``e u + (a - e) u (c u^H u + I)^-1`` by the Cholesky factor of ``c u^H u + I``."""
    a_minus_e, c, e = coefficients[0], coefficients[1], coefficients[2]
    n = u.shape[1]
    factor = cholesky(matmul(mH(u), u) * c + eye(n, u.dtype), symmetrize_input=False)
    z = triangular_solve(factor, u, left_side=False, lower=True, transpose_a=True)
    z = triangular_solve(factor, z, left_side=False, lower=True)
    return u * e + z * a_minus_e


def _weighted_steps(u, table, step, tolerance):
    """``u`` after one ``step`` per row of ``table`` (a ``fori_loop``), and whether the last
    step still moved ``u`` by more than ``tolerance`` (True without a test or a step)."""
    moving = convert_element_type(np.bool_(True), dtypes.bool_)
    if not len(table):
        return u, moving
    table = _constant(table, u.dtype)

    def body(k, state):
        u, _ = state
        new = step(u, dynamic_index_in_dim(table, k, keepdims=False))
        changed = moving if tolerance is None else _frobenius(new - u) > tolerance
        return new, changed
    return fori_loop(0, len(table), body, (u, moving))


def _qdwh(x, max_iterations, eps):
    """``(u, h, num_iters, is_converged)`` of one real ``(m, n)`` matrix, ``m >= n``."""
    one_norm = reduce_max(reduce_sum(abs_(x), (0,)), (0,))
    inf_norm = reduce_max(reduce_sum(abs_(x), (1,)), (0,))
    inverse_alpha = select(one_norm == 0, one_norm * 0 + 1, rsqrt(one_norm) * rsqrt(inf_norm))
    u = x * inverse_alpha
    tolerance = float(np.cbrt(10.0 * eps / 2.0))
    coefficients = weights(eps, max_iterations)
    qr_table = [((a - b / c) / c ** 0.5, c ** 0.5, b / c) for a, b, c in coefficients
                if c > _CHOLESKY_CUTOFF]
    cholesky_table = [(a - b / c, c, b / c) for a, b, c in coefficients
                      if c <= _CHOLESKY_CUTOFF]
    u, _ = _weighted_steps(u, qr_table, _qr_step, None)
    u, moving = _weighted_steps(u, cholesky_table, _cholesky_step, tolerance)
    halley = _constant([3 - 1 / 3, 3.0, 1 / 3], x.dtype)

    def keep_going(state):
        k, _, moving = state
        return moving & (k < max_iterations)

    def halley_step(state):
        k, u, _ = state
        new = _cholesky_step(u, halley)
        return k + 1, new, _frobenius(new - u) > tolerance

    start = convert_element_type(np.int32(len(coefficients)), dtypes.int32)
    steps, u, moving = while_loop(keep_going, halley_step, (start, u, moving))
    u = u * 1.5 - matmul(u, matmul(mH(u), u)) * 0.5        # Newton-Schulz refinement
    h = matmul(mH(u), x)
    return u, (h + mH(h)) * 0.5, steps, ~moving


_add_examples(globals(), """
qdwh:
    >>> u, h, num_iters, is_converged = pto.lax.linalg.qdwh(pnp.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> (u @ h).round(4)
    Array([[1., 2.],
           [3., 4.]], dtype=float32)
""")
