"""Rank updates of symmetric matrices, with every fact: ``cholesky_update`` (the Cholesky
factor of ``R^T R + w w^T`` from ``R``'s, in ``O(n^2)``) and ``symmetric_product``
(``alpha A A^T + beta C``, BLAS's ``syrk``) — JAX's ``lax.linalg`` primitives of those names.

Both are real only, as in JAX, and have no derivative there; here too (the product is cheap
to write with ``matmul`` where a derivative is needed). ``cholesky_update`` runs JAX's
algorithm on the host: row ``k`` of ``R`` and the remaining ``w`` are rotated by the Givens
rotation that zeroes ``w[k]`` against ``R[k, k]``. Unlike JAX's, both take stacks of
matrices (so they batch under vmap).
"""
from __future__ import annotations

import numpy as np

from ptojax.errors import DtypeError, ShapeError
from ptojax.ops.arithmetic import add
from ptojax.ops.checks import fmt_types
from ptojax.ops.matrix import matrix_transpose, tril
from ptojax.ops.decomposition_facts import _define, _stack_size, require_matrices
from ptojax.public import add_examples as _add_examples
from ptojax.trace import Primitive, Unsupported


def _same_dtype_and_stack(name, x, y, y_rank):
    if x.dtype != y.dtype:
        raise DtypeError(f"{name}: operands have different dtypes ({fmt_types((x, y))}); "
                         f"convert them to one dtype first")
    if tuple(x.shape[:-2]) != tuple(y.shape[:y.ndim - y_rank]):
        raise ShapeError(f"{name}: the operands' stacks (leading dimensions) differ "
                         f"({fmt_types((x, y))}); broadcast them to one stack first")


# cholesky_update -------------------------------------------------------------------------------
def _cholesky_update_abstract(r, w):
    require_matrices("cholesky_update", r)
    require_matrices("cholesky_update", w, rank=1)
    _same_dtype_and_stack("cholesky_update", r, w, 1)
    if r.shape[-1] != r.shape[-2] or w.shape[-1] != r.shape[-1]:
        raise ShapeError(f"Rank-1 update to Cholesky decomposition takes a square matrix and a "
                         f"vector of the same size as input. Got shapes {tuple(r.shape)} and "
                         f"{tuple(w.shape)} instead")
    return r.strip_weak()


def _cholesky_update(r, w):
    """JAX's Givens sweep, over the whole stack at once."""
    r, w = np.array(r), np.array(w)
    for k in range(r.shape[-1]):
        x, y = r[..., k, k], w[..., k]
        scale = np.maximum(np.abs(x), np.abs(y))
        moved = y != 0
        safe = np.where(moved, scale, 1)
        xs, ys = x / safe, y / safe
        inverse_norm = 1 / np.sqrt(xs * xs + ys * ys)
        c = np.where(moved, xs * inverse_norm, 1).astype(r.dtype)[..., None]
        s = np.where(moved, -ys * inverse_norm, 0).astype(r.dtype)[..., None]
        row = r[..., k, :].copy()
        r[..., k, :] = c * row - s * w
        w = c * w + s * row
    return r


cholesky_update_p = Primitive("cholesky_update", _cholesky_update_abstract, _cholesky_update)
_define(cholesky_update_p, Unsupported("cholesky_update has no derivative (as in JAX)"),
        cost=lambda eqn: _stack_size(eqn.inputs[0].type) * 6 * eqn.inputs[0].type.shape[-1] ** 2,
        reference=lambda jnp, lax: lambda r, w: lax.linalg.cholesky_update(r, w))


def cholesky_update(r_matrix, w_vector):
    """The upper Cholesky factor of ``R^T R + w w^T`` from the upper factor ``R`` of ``A``
    (``A = R^T R``), in ``O(n^2)``: a stack of square matrices ``r_matrix`` and vectors
    ``w_vector``."""
    return cholesky_update_p.bind(r_matrix, w_vector)


# symmetric_product -----------------------------------------------------------------------------
def _symmetric_product_abstract(a, c, *, alpha, beta):
    require_matrices("symmetric_product", a)
    require_matrices("symmetric_product", c)
    _same_dtype_and_stack("symmetric_product", a, c, 2)
    if a.shape[-2] != c.shape[-1] or c.shape[-2] != c.shape[-1]:
        raise ShapeError(f"symmetric_update expects a rectangular matrix of shape (m, n) and a "
                         f"square matrix of shape (n, n). Got shapes {tuple(a.shape)} and "
                         f"{tuple(c.shape)}.")
    return c.strip_weak()


def _symmetric_product(a, c, *, alpha, beta):
    product = a @ np.swapaxes(a, -1, -2)
    return (np.asarray(alpha, a.dtype) * product + np.asarray(beta, a.dtype) * c).astype(a.dtype)


symmetric_product_p = Primitive("symmetric_product", _symmetric_product_abstract,
                                _symmetric_product)
_define(symmetric_product_p, Unsupported("symmetric_product has no derivative (as in JAX); "
                                         "write alpha * a @ a.T + beta * c to differentiate"),
        cost=lambda eqn: _stack_size(eqn.inputs[0].type) * eqn.inputs[0].type.shape[-2] ** 2
        * eqn.inputs[0].type.shape[-1],
        reference=lambda jnp, lax: lambda a, c, alpha, beta: lax.linalg.symmetric_product(
            a, c, alpha=alpha, beta=beta))


def symmetric_product(a_matrix, c_matrix, *, alpha=1., beta=0., symmetrize_output=False):
    """``alpha A A^T + beta C`` for each ``(m, n)`` matrix ``A`` and symmetric ``(m, m)``
    ``C``. Only the lower triangle is promised (as in JAX); ``symmetrize_output`` mirrors it
    into the upper one."""
    out = symmetric_product_p.bind(a_matrix, c_matrix, alpha=float(alpha), beta=float(beta))
    if not symmetrize_output:
        return out
    from_lower = tril(out, -1)
    return add(tril(out), matrix_transpose(from_lower))


_add_examples(globals(), """
cholesky_update:
    >>> pto.lax.linalg.cholesky_update(pnp.eye(2), pnp.array([0.0, 1.0]))
    Array([[1.       , 0.       ],
           [0.       , 1.4142135]], dtype=float32)
symmetric_product:
    >>> pto.lax.linalg.symmetric_product(pnp.array([[1.0, 2.0]]), pnp.array([[1.0]]), beta=2.0)
    Array([[7.]], dtype=float32)
""")
