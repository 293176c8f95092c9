"""Matrix decompositions and the triangular solve, with every fact: ``cholesky``,
``triangular_solve``, ``lu``, ``lu_pivots_to_permutation``, ``qr``, ``geqrf`` here, ``eigh``
and ``svd`` in ``spectral.py`` (re-exported here), the shared checks and facts in
``decomposition_facts.py`` — JAX's ``lax.linalg`` primitives, with its operands, results and
derivative rules.

Every primitive takes stacks of matrices: the last two dimensions (the last one for pivots)
are the matrix, the leading ones a stack that all operands share, so vmap moves its batch
dimension to the front, and a sharded stack splits along its stack dimensions (the matrix
dimensions stay whole; a triangular solve's right-hand sides split too). They run on the host
(numpy's LAPACK, and ``ops/lapack.py`` for what numpy lacks) in the input's precision —
float32 stays float32 — and have no tile form yet. A factorization that fails (cholesky of a
matrix that is not positive definite, an SVD that does not converge) gives NaNs, as in JAX.

The derivative rules are JAX's (see each rule); they compose these primitives with
``dot_general`` and elementwise ops, so gradients of gradients work.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import DtypeError, ShapeError, UnsupportedError
from ptojax.ir.types import TensorType
from ptojax.ops import lapack, sharding_rules as sr
from ptojax.ops.arithmetic import add, add_tangents, div, neg, sub
from ptojax.ops.broadcast import to_front
from ptojax.ops.checks import fmt_types
from ptojax.ops.complex_parts import conj_p
from ptojax.ops.matrix import (eye, inverse_permutation, matrix_transpose as mT, matmul,
                               symmetrize, take_columns, take_rows, tril, triu)
from ptojax.ops.shape import move_axis, reshape
from ptojax.ops.slicing import concatenate
from ptojax.ops.tangents import Zero, is_undefined, is_zero, zero_jvp
from ptojax.trace import Primitive, Unsupported
from ptojax.public import add_examples as _add_examples
from ptojax.ops.decomposition_facts import (_cols, _define, _matrix_type, _pad_to, _rows,
                                            _stack_size, check_operand, require_matrices)
from ptojax.ops.spectral import eigh, eigh_p, svd, svd_p  # noqa: F401  (re-exported, as before)


# cholesky --------------------------------------------------------------------------------------
def _cholesky_abstract(x):
    require_matrices("cholesky", x, square=True, complex_ok=True)
    return x.strip_weak()


def _cholesky(x):
    """The lower factor (NaNs below the diagonal where ``x`` is not positive definite)."""
    def lower_factor(a):
        return [np.linalg.cholesky(a)]
    return np.tril(lapack.nan_on_failure(lower_factor, x)[0])


cholesky_p = Primitive("cholesky", _cholesky_abstract, _cholesky)


def _cholesky_jvp(primals, tangents):
    """``dL = L phi(L^-1 dA L^-H)`` with ``phi`` the lower triangle, diagonal halved
    (Murray 2016, arXiv:1602.07527), as JAX."""
    (x,), (t,) = primals, tangents
    lower = cholesky_p.bind(x)
    if is_zero(t):
        return lower, Zero(lower.aval)
    t_linv = triangular_solve(lower, t, left_side=False, lower=True, transpose_a=True,
                              conjugate_a=True)
    inner = triangular_solve(lower, t_linv, left_side=True, lower=True)
    n = x.shape[-1]
    phi = div(tril(inner), add(eye(n, x.dtype, x.shape[:-2]), 1))
    return lower, matmul(lower, phi)


_define(cholesky_p, _cholesky_jvp,
        cost=lambda eqn: _stack_size(eqn.inputs[0].type) * eqn.inputs[0].type.shape[-1] ** 3 // 3,
        reference=lambda jnp, lax: lambda x: lax.linalg.cholesky(x, symmetrize_input=False))


def cholesky(x, *, symmetrize_input=True):
    """The lower Cholesky factor ``L`` of each symmetric (complex: Hermitian)
    positive-definite matrix (``x = L L^H``; NaNs where ``x`` is not positive definite). With
    ``symmetrize_input`` the factor is of ``(x + x^H) / 2``; without, only the lower triangle
    of ``x`` is read."""
    check_operand("cholesky", x, square=True, complex_ok=True)
    return cholesky_p.bind(symmetrize(x) if symmetrize_input else x)


# triangular_solve ------------------------------------------------------------------------------
def _triangular_solve_abstract(a, b, *, left_side, lower, transpose_a, conjugate_a,
                               unit_diagonal):
    require_matrices("triangular_solve", a, square=True, complex_ok=True)
    require_matrices("triangular_solve", b, complex_ok=True)
    if a.dtype != b.dtype:
        raise DtypeError(f"triangular_solve: operands have different dtypes "
                         f"({fmt_types((a, b))}); convert them to one dtype first")
    if a.shape[:-2] != b.shape[:-2]:
        raise ShapeError(f"triangular_solve: the stacks of a and b differ ({fmt_types((a, b))});"
                         f" broadcast them to one stack first")
    side = -2 if left_side else -1
    if b.shape[side] != a.shape[-1]:
        raise ShapeError(f"triangular_solve: a {a} cannot solve b {b} from the "
                         f"{'left' if left_side else 'right'}: b's dimension {b.ndim + side} "
                         f"must be {a.shape[-1]}")
    return b.strip_weak()


triangular_solve_p = Primitive("triangular_solve", _triangular_solve_abstract,
                               lapack.triangular_solve, linear=True)


def _solve_with_tangent_of_a(ta, x, a, *, left_side, lower, transpose_a, conjugate_a,
                             unit_diagonal):
    """The tangent of ``x = op(A)^-1 B`` along ``dA``: ``-op(A)^-1 op(dA) x`` (or
    ``-x op(dA) op(A)^-1``), with ``dA`` restricted to the triangle the solve reads; the
    cheaper of the two association orders, as JAX."""
    params = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
                  conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    k = 1 if unit_diagonal else 0
    g = neg(tril(ta, -k) if lower else triu(ta, k))
    g = conj_p.bind(g) if conjugate_a and dtypes.is_complex(g.dtype) else g
    g = mT(g) if transpose_a else g
    m, n = x.shape[-2:]
    if left_side:
        if m > n:
            return triangular_solve_p.bind(a, matmul(g, x), **params)
        return matmul(triangular_solve_p.bind(a, g, **params), x)
    if m < n:
        return triangular_solve_p.bind(a, matmul(x, g), **params)
    return matmul(x, triangular_solve_p.bind(a, g, **params))


def _triangular_solve_jvp(primals, tangents, **params):
    (a, b), (ta, tb) = primals, tangents
    x = triangular_solve_p.bind(a, b, **params)
    tx = Zero(x.aval) if is_zero(tb) else triangular_solve_p.bind(a, tb, **params)
    if not is_zero(ta):
        tx = add_tangents(tx, _solve_with_tangent_of_a(ta, x, a, **params))
    return x, tx


def _triangular_solve_transpose(ct, a, b, *, transpose_a, **params):
    """Linear in ``b`` only: its cotangent solves with ``op(A)^T``."""
    if is_undefined(a):
        raise UnsupportedError("triangular_solve is linear in b only, not in the matrix a")
    return [None, triangular_solve_p.bind(a, ct, transpose_a=not transpose_a, **params)]


def _triangular_solve_batch(args, dims, *, left_side, **params):
    """A batch of right-hand sides against one stack of ``a`` becomes more columns (rows,
    solving from the right) of ``b``; a batched ``a`` joins the stack at the front."""
    (a, b), (da, db) = args, dims
    if da is not None:
        out = triangular_solve_p.bind(to_front(a, da), to_front(b, db), left_side=left_side,
                                      **params)
        return out, 0
    axis = b.ndim - 1 if left_side else b.ndim - 2   # next to the solve's free dimension
    b = move_axis(b, db, axis)
    shape = b.shape
    if left_side:
        b = reshape(b, (*shape[:-3], shape[-3], shape[-2] * shape[-1]))
    else:
        b = reshape(b, (*shape[:-3], shape[-3] * shape[-2], shape[-1]))
    out = triangular_solve_p.bind(a, b, left_side=left_side, **params)
    return reshape(out, shape), axis


def _triangular_solve_factors(eqn) -> sr.OpRule:
    """The stack and the independent right-hand sides (b's columns, solving from the left;
    its rows from the right) split; a's matrix and the solved dimension stay whole."""
    f = sr.Factors()
    a, b = (sr.shape_of(x) for x in eqn.inputs)
    stack = [f.new(n) for n in a[:-2]]
    free = f.new(b[-1]) if eqn.params["left_side"] else f.new(b[-2])
    b_dims = stack + ([(), free] if eqn.params["left_side"] else [free, ()])
    return f.rule([stack + [(), ()], b_dims], [b_dims])


def _triangular_solve_flops(eqn) -> int:
    a, b = (x.type for x in eqn.inputs)
    return b.size * a.shape[-1]


_define(triangular_solve_p, _triangular_solve_jvp,
        transpose=_triangular_solve_transpose, batch=_triangular_solve_batch,
        shard=sr.ShardRule(_triangular_solve_factors), cost=_triangular_solve_flops,
        reference=lambda jnp, lax: lambda a, b, **params: lax.linalg.triangular_solve(
            a, b, **params))


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False,
                     conjugate_a=False, unit_diagonal=False):
    """``op(a) x = b`` (``left_side``) or ``x op(a) = b`` for triangular ``a``, reading only
    its ``lower`` (or upper) triangle; ``op`` transposes when ``transpose_a``. A ``b`` of one
    dimension fewer than ``a`` is a stack of vectors."""
    vector = b.ndim == a.ndim - 1
    if vector:
        b = reshape(b, (*b.shape, 1) if left_side else (*b.shape[:-1], 1, b.shape[-1]))
    out = triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                  transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a),
                                  unit_diagonal=bool(unit_diagonal))
    return reshape(out, out.shape[:-1] if left_side else (*out.shape[:-2], out.shape[-1])) \
        if vector else out


# lu --------------------------------------------------------------------------------------------
def _lu_abstract(x):
    require_matrices("lu", x)
    m, n = x.shape[-2:]
    return [x.strip_weak(), TensorType((*x.shape[:-2], min(m, n)), dtypes.int32),
            TensorType((*x.shape[:-2], m), dtypes.int32)]


lu_p = Primitive("lu", _lu_abstract, lambda x: list(lapack.lu(x)), multiple_results=True)


def _lu_jvp(primals, tangents):
    """``L^-1 dA[perm] U^-1 = L^-1 dL + dU U^-1``: the strict lower part gives ``dL``, the
    upper part ``dU`` (de Hoog, Anderssen & Lukas), as JAX; ``L`` and ``U`` are padded to
    square with an identity block for wide and tall matrices."""
    (a,), (t,) = primals, tangents
    lu, pivots, permutation = outs = lu_p.bind(a)
    zero_ints = [Zero(pivots.aval), Zero(permutation.aval)]
    if is_zero(t):
        return outs, [Zero(lu.aval), *zero_ints]
    *stack, m, n = a.shape
    k = min(m, n)
    lower = add(_pad_to(tril(_cols(lu, 0, k), -1), m, m), eye(m, a.dtype, stack))
    upper = _pad_to(triu(_rows(lu, 0, k)), n, n)
    if k < n:  # a wide matrix: ones on the rest of the diagonal
        upper = add(upper, sub(eye(n, a.dtype, stack), _pad_to(eye(k, a.dtype, stack), n, n)))
    la = triangular_solve(lower, take_rows(t, permutation), left_side=True, lower=True,
                          unit_diagonal=True)
    lau = triangular_solve(upper, la, left_side=False, lower=False)
    dlu = add(matmul(lower, tril(lau, -1)), matmul(triu(lau), upper))
    return outs, [dlu, *zero_ints]


def _lu_flops(eqn) -> int:
    m, n = eqn.inputs[0].type.shape[-2:]
    k = min(m, n)
    return _stack_size(eqn.inputs[0].type) * round(2 * (m * n * k - (m + n) * k * k / 2
                                                        + k ** 3 / 3))


_define(lu_p, _lu_jvp, cost=_lu_flops,
        reference=lambda jnp, lax: lambda x: list(lax.linalg.lu(x)))


def lu(x):
    """``(lu, pivots, permutation)`` of ``P x = L U`` with partial pivoting: ``lu`` holds
    ``U`` and the unit-lower ``L`` below the diagonal; ``pivots[j]`` is the row swapped with
    row ``j`` (int32); ``permutation`` orders the rows (``x[permutation] = L U``)."""
    return tuple(lu_p.bind(x))


def lu_solve(lu, permutation, b, trans=0):
    """``x`` with ``A x = b`` (``trans`` 0) or ``A^T x = b`` (1, or 2 for the conjugate
    transpose) from ``(lu, _, permutation) = lu(A)``; ``b`` is ``(..., m, k)`` with ``A``'s
    stack."""
    if trans == 0:
        x = triangular_solve(lu, take_rows(b, permutation), left_side=True, lower=True,
                             unit_diagonal=True)
        return triangular_solve(lu, x, left_side=True, lower=False)
    conj = trans == 2
    x = triangular_solve(lu, b, left_side=True, lower=False, transpose_a=True,
                         conjugate_a=conj)
    x = triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True,
                         transpose_a=True, conjugate_a=conj)
    return take_rows(x, inverse_permutation(permutation))


# lu_pivots_to_permutation ----------------------------------------------------------------------
def _pivots_abstract(pivots, *, permutation_size):
    require_matrices("lu_pivots_to_permutation", pivots, rank=1)
    if pivots.dtype != dtypes.int32:
        raise DtypeError(f"lu_pivots_to_permutation: pivots must be int32, got {pivots}")
    if permutation_size < pivots.shape[-1]:
        raise ShapeError(f"lu_pivots_to_permutation: permutation_size {permutation_size} is "
                         f"smaller than the {pivots.shape[-1]} pivots of {pivots}")
    return TensorType((*pivots.shape[:-1], permutation_size), dtypes.int32)


lu_pivots_to_permutation_p = Primitive(
    "lu_pivots_to_permutation", _pivots_abstract,
    lambda pivots, permutation_size: lapack.pivots_to_permutation(pivots, permutation_size))
_define(lu_pivots_to_permutation_p, zero_jvp(lu_pivots_to_permutation_p), rank=1,
        cost=lambda eqn: 0,
        reference=lambda jnp, lax: lambda p, permutation_size:
            lax.linalg.lu_pivots_to_permutation(p, permutation_size))


def lu_pivots_to_permutation(pivots, permutation_size):
    """The permutation that the row swaps ``pivots`` (as from ``lu``) make of
    ``range(permutation_size)``."""
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=int(permutation_size))


# qr --------------------------------------------------------------------------------------------
def _qr_abstract(x, *, pivoting, full_matrices):
    require_matrices("qr", x)
    m, n = x.shape[-2:]
    k = m if full_matrices else min(m, n)
    # q and r keep a weak operand weak, as JAX's
    outs = [_matrix_type(x, (m, k)).update(weak_type=x.weak_type),
            _matrix_type(x, (k, n)).update(weak_type=x.weak_type)]
    return outs + [TensorType((*x.shape[:-2], n), dtypes.int32)] if pivoting else outs


def _qr(x, *, pivoting, full_matrices):
    mode = "complete" if full_matrices else "reduced"
    if not pivoting:
        return list(np.linalg.qr(x, mode=mode))
    order = lapack.qr_column_order(x)
    q, r = np.linalg.qr(np.take_along_axis(x, order[..., None, :], axis=-1), mode=mode)
    return [q, r, order]


qr_p = Primitive("qr", _qr_abstract, _qr, multiple_results=True)


def _thin_qr_jvp(q, r, dx):
    """Tangents of ``x = q r`` for ``m >= n`` (Townsend's derivation): with
    ``C = q^T dx r^-1`` and ``dO`` the skew-symmetric part of its strict lower triangle,
    ``dq = q (dO - C) + dx r^-1`` and ``dr = (C - dO) r``."""
    dx_rinv = triangular_solve(r, dx)
    c = matmul(mT(q), dx_rinv)
    below = tril(c, -1)
    d_omega = sub(below, mT(below))
    return add(matmul(q, sub(d_omega, c)), dx_rinv), matmul(sub(c, d_omega), r)


def _qr_jvp(primals, tangents, *, pivoting, full_matrices):
    """JAX's rule: the thin rule on the leading square block of wide matrices, and for
    ``full_matrices`` of tall ones the completion of ``dq`` (arXiv:2409.13374, eq. 32-33)."""
    (x,), (dx,) = primals, tangents
    outs = qr_p.bind(x, pivoting=pivoting, full_matrices=full_matrices)
    q, r = outs[:2]
    extra = [Zero(outs[2].aval)] if pivoting else []
    if is_zero(dx):
        return outs, [Zero(q.aval), Zero(r.aval), *extra]
    if pivoting:
        dx = take_columns(dx, outs[2])
    m, n = x.shape[-2:]
    if m < n:
        dq, dr1 = _thin_qr_jvp(q, _cols(r, 0, m), _cols(dx, 0, m))
        x2 = take_columns(x, outs[2]) if pivoting else x
        dr2 = add(matmul(mT(dq), _cols(x2, m, n)), matmul(mT(q), _cols(dx, m, n)))
        return outs, [dq, concatenate([dr1, dr2], dr1.ndim - 1), *extra]
    q_mn = _cols(q, 0, n) if full_matrices else q
    r_nn = _rows(r, 0, n) if full_matrices else r
    dq, dr = _thin_qr_jvp(q_mn, r_nn, dx)
    if full_matrices and m > n:
        dq, dr = _complete_qr_tangents(q, q_mn, dq, dr, m, n)
    return outs, [dq, dr, *extra]


def _complete_qr_tangents(q, q_mn, dq_mn, dr_nn, m, n):
    """The last ``m - n`` columns of ``dq`` for a complete QR of a tall matrix, and ``dr``
    padded with zero rows."""
    q_nn, q_pn, q_mp = _rows(q_mn, 0, n), _rows(q_mn, n, m), _cols(q, n, m)
    dq_nn, dq_pn = _rows(dq_mn, 0, n), _rows(dq_mn, n, m)
    lu, _, permutation = lu_p.bind(sub(q_nn, eye(n, q.dtype, q.shape[:-2])))
    z_pn_t = lu_solve(lu, permutation, mT(q_pn), trans=1)
    z_pn = mT(z_pn_t)
    dq_mp = sub(matmul(dq_mn, z_pn_t),
                matmul(add(q_mn, matmul(q_mp, z_pn)), mT(sub(dq_pn, matmul(z_pn, dq_nn)))))
    return concatenate([dq_mn, dq_mp], dq_mn.ndim - 1), _pad_to(dr_nn, m, n)


def _qr_flops(eqn) -> int:
    """Householder QR and forming Q: about ``4 M k^2 - 4 k^3 / 3`` for ``M x k`` (Golub & Van
    Loan)."""
    m, n = eqn.inputs[0].type.shape[-2:]
    big, k = max(m, n), min(m, n)
    return _stack_size(eqn.inputs[0].type) * round(4 * big * k * k - 4 * k ** 3 / 3)


_define(qr_p, _qr_jvp, cost=_qr_flops,
        reference=lambda jnp, lax: lambda x, pivoting, full_matrices: list(lax.linalg.qr(
            x, pivoting=pivoting, full_matrices=full_matrices)))


def qr(x, *, pivoting=False, full_matrices=True):
    """``(q, r)`` with ``x = q r``, ``q`` orthogonal (``(m, m)``, or ``(m, min(m, n))``
    without ``full_matrices``) and ``r`` upper triangular; with ``pivoting``,
    ``(q, r, p)`` with ``x[:, p] = q r`` and ``|diag(r)|`` non-increasing."""
    return tuple(qr_p.bind(x, pivoting=bool(pivoting), full_matrices=bool(full_matrices)))


# geqrf -----------------------------------------------------------------------------------------
def _geqrf_abstract(x):
    require_matrices("geqrf", x)
    return [x.strip_weak(), TensorType((*x.shape[:-2], min(x.shape[-2:])), x.dtype)]


def _geqrf(x):
    h, taus = np.linalg.qr(x, mode="raw")
    return [np.ascontiguousarray(np.swapaxes(h, -1, -2)), taus]


geqrf_p = Primitive("geqrf", _geqrf_abstract, _geqrf, multiple_results=True)
_define(geqrf_p, Unsupported("the Householder form of QR has no derivative (as in JAX); "
                             "differentiate qr instead"),
        cost=lambda eqn: _qr_flops(eqn) // 2,
        reference=lambda jnp, lax: lambda x: _geqrf_by_jax_qr(jnp, x))


def _geqrf_by_jax_qr(jnp, x):
    """JAX exposes geqrf as ``jnp.linalg.qr(mode="raw")`` (its result transposed)."""
    h, taus = jnp.linalg.qr(x, mode="raw")
    return [jnp.swapaxes(h, -1, -2), taus]


def geqrf(x):
    """LAPACK's QR: ``(a, taus)`` with ``r`` in the upper triangle of ``a`` and ``q`` as
    Householder reflectors (below the diagonal, scaled by ``taus``)."""
    return tuple(geqrf_p.bind(x))


_add_examples(globals(), """
cholesky:
    >>> pto.lax.linalg.cholesky(pnp.array([[4.0, 2.0], [2.0, 3.0]]))
    Array([[2.       , 0.       ],
           [1.       , 1.4142135]], dtype=float32)
eigh:
    >>> v, w = pto.lax.linalg.eigh(pnp.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> w
    Array([1., 3.], dtype=float32)
lu:
    >>> lu, pivots, permutation = pto.lax.linalg.lu(pnp.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> permutation
    Array([1, 0], dtype=int32)
lu_pivots_to_permutation:
    >>> pto.lax.linalg.lu_pivots_to_permutation(pnp.array([2, 2, 2], dtype=pnp.int32), 3)
    Array([2, 0, 1], dtype=int32)
qr:
    >>> q, r = pto.lax.linalg.qr(pnp.array([[4.0, 2.0], [2.0, 3.0]]))
    >>> pnp.abs(r)
    Array([[4.472136 , 3.130495 ],
           [0.       , 1.7888544]], dtype=float32)
svd:
    >>> pto.lax.linalg.svd(pnp.array([[4.0, 2.0], [2.0, 3.0]]), compute_uv=False)
    Array([5.561553 , 1.4384472], dtype=float32)
triangular_solve:
    >>> lower = pnp.array([[2.0, 0.0], [1.0, 1.0]])
    >>> pto.lax.linalg.triangular_solve(lower, pnp.array([[4.0, 3.0]]), lower=True)
    Array([[0.5, 3. ]], dtype=float32)
""")
