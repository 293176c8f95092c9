"""``tridiagonal_solve``: ``A X = B`` for tridiagonal ``A`` given by its three diagonals, with
every fact — JAX's ``lax.linalg.tridiagonal_solve`` primitive.

``dl[i] = A[i, i-1]`` (``dl[0]`` unused), ``d[i] = A[i, i]``, ``du[i] = A[i, i+1]``
(``du[-1]`` unused), ``b`` of shape ``(..., m, n)``; all share the stack. The host runs
LAPACK's ``gtsv`` (Gaussian elimination with partial pivoting, a second superdiagonal filling
in where rows swap), over the whole stack at once: a singular matrix gives NaNs, as JAX's CPU
backend. ``perturb_singular`` runs JAX's other kernel (LAPACK's ``lagtf``/``lagts`` scheme: row
swaps by relative pivot size, and a pivot that would overflow the solution pushed away from 0
by ``eps * max|U|``), so that a singular system gets a finite solution (what inverse
iteration needs).

Derivatives are JAX's: the solve is linear in ``b`` (its transpose solves with ``A^T``, the
diagonals shifted), and ``dX = A^-1 (dB - dA X)``. A batch of right-hand sides against
unbatched diagonals becomes more columns of ``b``.
"""
from __future__ import annotations

import numpy as np

from ptojax.errors import DtypeError, ShapeError, UnsupportedError
from ptojax.ops.arithmetic import add_tangents, mul, neg, sub
from ptojax.ops.broadcast import to_front, zeros_like
from ptojax.ops.checks import fmt_types
from ptojax.ops.decomposition_facts import (COMPLEX_LINALG_DTYPES, _define, _stack_size,
                                            require_linalg_dtype)
from ptojax.ops.lapack import _magnitude
from ptojax.ops.shape import expand_dims, move_axis, reshape
from ptojax.ops.slicing import concatenate, pad, slice_in_dim
from ptojax.ops.tangents import Zero, is_undefined, is_zero
from ptojax.public import add_examples as _add_examples
from ptojax.trace import Primitive


def _abstract(dl, d, du, b, *, perturb_singular):
    if b.ndim < 2:
        raise ShapeError(f"Input 3 to tridiagonal_solve must have rank at least 2, but got "
                         f"shape={tuple(b.shape)}")
    if not (dl.shape == d.shape == du.shape):
        raise ShapeError(f"tridiagonal_solve requires that all diagonal arguments have the same "
                         f"shape, got {fmt_types((dl, d, du))}")
    if tuple(dl.shape) != tuple(b.shape[:-1]):
        raise ShapeError(f"tridiagonal_solve requires that the leading ndim-1 dimensions of b "
                         f"equal the dimensions of the diagonal arguments, got "
                         f"{fmt_types((dl, d, du, b))}")
    if len({x.dtype for x in (dl, d, du, b)}) != 1:
        raise DtypeError(f"lax.tridiagonal_solve requires arguments to have the same dtypes, "
                         f"got {fmt_types((dl, d, du, b))}")
    if b.dtype not in COMPLEX_LINALG_DTYPES:
        require_linalg_dtype("tridiagonal_solve", b)
    return b.strip_weak()


def _solve(dl, d, du, b, *, perturb_singular):
    return (_perturbed if perturb_singular else _gtsv)(dl, d, du, b)


def _gtsv(dl, d, du, b):
    """LAPACK's ``gtsv`` over the stack (see the module)."""
    m = d.shape[-1]
    lower = np.array(dl[..., 1:])           # LAPACK's DL: A[i+1, i]
    d, du, x = np.array(d), np.array(du), np.array(b)
    fill = np.zeros_like(d)                 # the second superdiagonal U[i, i+2]
    for i in range(m - 1):
        swap = _magnitude(d[..., i]) < _magnitude(lower[..., i])
        pivot = np.where(swap, lower[..., i], d[..., i])
        other = np.where(swap, d[..., i], lower[..., i])          # the row eliminated
        fact = other / np.where(pivot == 0, 1, pivot)
        next_du = du[..., i + 1] if i + 1 < m - 1 else np.zeros_like(d[..., i])
        top = (np.where(swap, d[..., i + 1], du[..., i]),            # new U[i, i+1]
               np.where(swap, next_du, 0))                            # new U[i, i+2]
        bottom = (np.where(swap, du[..., i] - fact * d[..., i + 1], d[..., i + 1] - fact
                           * du[..., i]),                             # new d[i+1]
                  np.where(swap, -fact * next_du, next_du))            # new du[i+1]
        b_top = np.where(swap[..., None], x[..., i + 1, :], x[..., i, :])
        b_low = np.where(swap[..., None], x[..., i, :], x[..., i + 1, :])
        x[..., i, :], x[..., i + 1, :] = b_top, b_low - fact[..., None] * b_top
        d[..., i], du[..., i], fill[..., i] = pivot, top[0], top[1]
        d[..., i + 1] = bottom[0]
        if i + 1 < m - 1:
            du[..., i + 1] = bottom[1]
    singular = np.any(d == 0, axis=-1)
    d = np.where(d == 0, 1, d)
    for i in reversed(range(m)):
        if i + 1 < m:
            x[..., i, :] -= du[..., i, None] * x[..., i + 1, :]
        if i + 2 < m:
            x[..., i, :] -= fill[..., i, None] * x[..., i + 2, :]
        x[..., i, :] /= d[..., i, None]
    return np.where(singular[..., None, None], np.nan, x).astype(b.dtype)


def _perturbed(dl, d, du, b):
    """JAX's ``perturb_singular`` solve (LAPACK's ``lagtf``/``lagts`` scheme) over the stack:
    elimination with row swaps chosen by pivots relative to their rows' sizes, then back
    substitution in which a pivot below 1 that would overflow the solution is pushed away
    from 0 by ``eps * max|U|`` (doubling until it no longer would)."""
    m = d.shape[-1]
    u = np.zeros(d.shape + (3,), d.dtype)            # U's diagonal and two superdiagonals
    u[..., 0, 0], u[..., 0, 1] = d[..., 0], du[..., 0] if m > 1 else 0
    x = np.array(b)
    largest = np.maximum(np.abs(u[..., 0, 0]), np.abs(u[..., 0, 1]))
    row_size = np.abs(u[..., 0, 0]) + np.abs(u[..., 0, 1])
    for k in range(m - 1):
        inner = k < m - 2
        sub, diag, sup = dl[..., k + 1], d[..., k + 1], du[..., k + 1] if inner else 0 * d[..., 0]
        next_size = np.abs(sub) + np.abs(diag) + np.abs(sup)
        pivot = u[..., k, 0]
        relative = np.where(pivot == 0, 0, np.abs(pivot) / np.where(row_size == 0, 1, row_size))
        swap = (sub != 0) & (np.abs(sub) / np.where(next_size == 0, 1, next_size) > relative)
        keep_factor = np.where(sub == 0, 0, sub / np.where(pivot == 0, 1, pivot))
        swap_factor = pivot / np.where(sub == 0, 1, sub)
        factor = np.where(swap, swap_factor, keep_factor)
        above = u[..., k, 1].copy()
        u[..., k + 1, 0] = np.where(swap, above - factor * diag, diag - factor * above)
        u[..., k + 1, 1] = np.where(swap, -factor * sup, sup)
        u[..., k, 0] = np.where(swap, sub, pivot)
        u[..., k, 1] = np.where(swap, diag, above)
        u[..., k, 2] = np.where(swap, sup, 0)
        x_k, b_next = x[..., k, :].copy(), b[..., k + 1, :]
        x[..., k, :] = np.where(swap[..., None], b_next, x_k)
        x[..., k + 1, :] = np.where(swap[..., None], x_k - factor[..., None] * b_next,
                                    b_next - factor[..., None] * x_k)
        row_size = np.where(swap, np.abs(u[..., k + 1, 0]) + np.abs(u[..., k + 1, 1]),
                            next_size)
        if inner:
            largest = np.maximum(largest, np.abs(u[..., k, :]).max(axis=-1))
    largest = np.maximum(largest, np.abs(u[..., m - 1, 0]))
    step = np.finfo(d.dtype).eps * largest
    for k in reversed(range(m)):
        rhs = x[..., k, :].copy()
        if k + 1 < m:
            rhs -= u[..., k, 1, None] * x[..., k + 1, :]
        if k + 2 < m:
            rhs -= u[..., k, 2, None] * x[..., k + 2, :]
        pivot, rhs = _push_from_zero(u[..., k, 0], rhs, step)
        x[..., k, :] = rhs * (1 / pivot)[..., None]
    return x.astype(b.dtype)


def _push_from_zero(pivot, rhs, step):
    """``(pivot, rhs)`` with a pivot below 1 moved away from 0 (by ``step``, doubling, with
    the pivot's sign) while ``rhs / pivot`` would overflow, or both scaled up when the pivot
    is below the safe minimum but the quotient is safe."""
    finfo = np.finfo(pivot.dtype)
    safe_min = finfo.tiny if 1 / finfo.max < finfo.tiny else (1 / finfo.max) * (1 + finfo.eps)
    big = 1 / safe_min
    pivot, rhs = pivot.copy(), rhs.copy()
    step = np.copysign(np.maximum(np.abs(step), safe_min), np.real(pivot))
    largest_rhs = np.abs(rhs).max(axis=-1, initial=0)
    active = np.abs(pivot) < 1
    while np.any(active):
        size = np.abs(pivot)
        tiny = size < safe_min
        push = active & np.where(tiny, (size == 0) | (largest_rhs * safe_min > size),
                                 largest_rhs > size * big)
        rescale = active & tiny & ~push
        pivot = np.where(push, pivot + step, np.where(rescale, pivot * big, pivot))
        rhs = np.where(rescale[..., None], rhs * big, rhs)
        step = np.where(push, step * 2, step)
        active = push & (np.abs(pivot) < 1)
    return pivot, rhs


tridiagonal_solve_p = Primitive("tridiagonal_solve", _abstract, _solve, linear=True)


def tridiagonal_product(dl, d, du, x):
    """``A x`` for the tridiagonal ``A`` of ``(dl, d, du)``."""
    rows = x.ndim - 2
    below = mul(expand_dims(slice_in_dim(dl, 1, dl.shape[-1], axis=dl.ndim - 1), (dl.ndim,)),
                slice_in_dim(x, 0, x.shape[-2] - 1, axis=rows))
    above = mul(expand_dims(slice_in_dim(du, 0, du.shape[-1] - 1, axis=du.ndim - 1),
                            (du.ndim,)), slice_in_dim(x, 1, x.shape[-2], axis=rows))
    config = [(0, 0, 0)] * x.ndim
    shift_down, shift_up = list(config), list(config)
    shift_down[rows], shift_up[rows] = (1, 0, 0), (0, 1, 0)
    out = mul(expand_dims(d, (d.ndim,)), x)
    return add_tangents(add_tangents(out, pad(below, 0, shift_down)), pad(above, 0, shift_up))


def _jvp(primals, tangents, *, perturb_singular):
    *diagonals, _ = primals
    *diagonal_tangents, tb = tangents
    x = tridiagonal_solve_p.bind(*primals, perturb_singular=perturb_singular)
    if all(is_zero(t) for t in diagonal_tangents):
        rhs = tb
    else:
        changed = tridiagonal_product(*[zeros_like(p) if is_zero(t) else t
                                        for p, t in zip(diagonals, diagonal_tangents)], x)
        rhs = neg(changed) if is_zero(tb) else sub(tb, changed)
    if is_zero(rhs):
        return x, Zero(x.aval)
    return x, tridiagonal_solve_p.bind(*diagonals, rhs, perturb_singular=perturb_singular)


def _transpose(ct, dl, d, du, b, *, perturb_singular):
    """Linear in ``b`` only: ``A^T`` has ``du`` shifted down as its lower diagonal and ``dl``
    shifted up as its upper one."""
    if any(is_undefined(x) for x in (dl, d, du)):
        raise UnsupportedError("tridiagonal_solve is linear in b only, not in the diagonals")
    last = dl.ndim - 1
    config = [(0, 0, 0)] * last
    dl_t = pad(slice_in_dim(du, 0, du.shape[-1] - 1, axis=last), 0, config + [(1, 0, 0)])
    du_t = pad(slice_in_dim(dl, 1, dl.shape[-1], axis=last), 0, config + [(0, 1, 0)])
    return [None, None, None,
            tridiagonal_solve_p.bind(dl_t, d, du_t, ct, perturb_singular=perturb_singular)]


def _batch(args, dims, *, perturb_singular):
    """Right-hand sides batched against unbatched diagonals become more columns of ``b``;
    otherwise the batch joins the stack at the front."""
    *diagonals, b = args
    *diagonal_dims, db = dims
    if all(dim is None for dim in diagonal_dims):
        b = move_axis(b, db, b.ndim - 1)
        shape = b.shape
        flat = reshape(b, (*shape[:-2], shape[-2] * shape[-1]))
        out = tridiagonal_solve_p.bind(*diagonals, flat, perturb_singular=perturb_singular)
        return reshape(out, shape), b.ndim - 1
    out = tridiagonal_solve_p.bind(*[to_front(x, dim) for x, dim in zip(args, dims)],
                                   perturb_singular=perturb_singular)
    return out, 0


_define(tridiagonal_solve_p, _jvp, transpose=_transpose, batch=_batch, rank=1,
        cost=lambda eqn: 8 * _stack_size(eqn.inputs[3].type) * eqn.inputs[3].type.shape[-2]
        * eqn.inputs[3].type.shape[-1],
        reference=lambda jnp, lax: lambda dl, d, du, b, perturb_singular:
            lax.linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=perturb_singular))


def tridiagonal_solve(dl, d, du, b, *, perturb_singular=False):
    """``X`` with ``A X = b`` for the tridiagonal ``A`` with lower diagonal ``dl``
    (``dl[..., 0]`` unused), diagonal ``d`` and upper diagonal ``du`` (``du[..., -1]``
    unused), each ``(..., m)``; ``b`` is ``(..., m, n)``. A singular ``A`` gives NaNs, or
    with ``perturb_singular`` a finite solution with tiny pivots perturbed."""
    return tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=bool(perturb_singular))


_add_examples(globals(), """
tridiagonal_solve:
    >>> dl, d, du = pnp.array([0.0, 1.0, 1.0]), pnp.full(3, 2.0), pnp.array([1.0, 1.0, 0.0])
    >>> pto.lax.linalg.tridiagonal_solve(dl, d, du, pnp.array([[3.0], [4.0], [3.0]]))
    Array([[1.],
           [1.],
           [1.]], dtype=float32)
""")
