"""``tridiagonal_solve``: ``A X = B`` for tridiagonal ``A`` given by its three diagonals, with
every fact — JAX's ``lax.linalg.tridiagonal_solve`` primitive.

``dl[i] = A[i, i-1]`` (``dl[0]`` unused), ``d[i] = A[i, i]``, ``du[i] = A[i, i+1]``
(``du[-1]`` unused), ``b`` of shape ``(..., m, n)``; all share the stack. The host runs
LAPACK's ``gtsv`` (Gaussian elimination with partial pivoting, a second superdiagonal filling
in where rows swap), over the whole stack at once: a singular matrix gives NaNs, as JAX's CPU
backend. ``perturb_singular`` replaces a zero (or tiny) pivot by ``eps * max|U|`` so that a
singular system gets a finite solution (what inverse iteration needs).

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


def _gtsv(dl, d, du, b, *, perturb_singular):
    """LAPACK's ``gtsv`` over the stack (see the module)."""
    m = d.shape[-1]
    lower = np.array(dl[..., 1:])           # LAPACK's DL: A[i+1, i]
    d, du, x = np.array(d), np.array(du), np.array(b)
    fill = np.zeros_like(d)                 # the second superdiagonal U[i, i+2]
    tiny = _perturbation(d, du, lower) if perturb_singular else None
    for i in range(m - 1):
        swap = _magnitude(d[..., i]) < _magnitude(lower[..., i])
        pivot = np.where(swap, lower[..., i], d[..., i])
        other = np.where(swap, d[..., i], lower[..., i])          # the row eliminated
        if tiny is not None:
            pivot = np.where(_magnitude(pivot) < tiny, tiny, pivot)
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
    if tiny is not None:
        d[..., m - 1] = np.where(_magnitude(d[..., m - 1]) < tiny, tiny, d[..., m - 1])
    singular = np.any(d == 0, axis=-1)
    d = np.where(d == 0, 1, d)
    for i in reversed(range(m)):
        if i + 1 < m:
            x[..., i, :] -= du[..., i, None] * x[..., i + 1, :]
        if i + 2 < m:
            x[..., i, :] -= fill[..., i, None] * x[..., i + 2, :]
        x[..., i, :] /= d[..., i, None]
    return np.where(singular[..., None, None], np.nan, x).astype(b.dtype)


def _perturbation(d, du, lower):
    """``eps * max|A|`` per matrix: the size a perturbed pivot gets."""
    scale = np.max(np.concatenate([_magnitude(d), _magnitude(du[..., :-1]), _magnitude(lower)],
                                  axis=-1), axis=-1, initial=0)
    eps = np.finfo(d.dtype).eps
    return (eps * np.where(scale == 0, 1, scale)).astype(np.finfo(d.dtype).dtype)


tridiagonal_solve_p = Primitive("tridiagonal_solve", _abstract, _gtsv, linear=True)


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
