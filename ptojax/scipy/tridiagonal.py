"""``scipy.linalg.eigh_tridiagonal``: eigenvalues of a real symmetric (or complex Hermitian)
tridiagonal matrix, as JAX's, by parallel bisection on Sturm sequence counts.

The count of eigenvalues below ``x`` is the number of negative pivots of ``T - x I``'s LDL^T
recurrence ``q_i = d_i - e_{i-1}^2 / q_{i-1} - x`` (a pivot at most ``pivmin`` counts as
negative and is clamped to ``-pivmin``, so nothing divides by zero). Each wanted eigenvalue
``k`` has an interval, first the Gershgorin bounds widened slightly, halved until it is
narrower than ``eps * |T|`` (or ``tol``): its lower end moves up when at most ``k``
eigenvalues lie below the midpoint. Eigenvectors (``eigvals_only=False``), which JAX finds by
inverse iteration from random vectors, come here from the dense symmetric eigensolver on the
assembled matrix (so their signs, or complex phases, may differ from JAX's).
"""
from __future__ import annotations

import numpy as np

from ptojax import numpy as pnp
from ptojax.control_flow import fori_loop, while_loop
from ptojax.numpy._promote import asarray
from ptojax.ops import decompositions as dec
from ptojax.public import add_examples

_SUPPORTED = (np.float32, np.float64, np.complex64, np.complex128)


def eigh_tridiagonal(d, e, *, eigvals_only=False, select="a", select_range=None, tol=None,
                     key=None):
    """The ascending eigenvalues of the tridiagonal matrix with diagonal ``d`` and
    off-diagonal ``e`` (all, or those of indices ``select_range[0]..select_range[1]`` for
    ``select='i'``), by bisection (see the module). ``key`` is accepted and not used: the
    eigenvectors of ``eigvals_only=False`` come from the dense symmetric eigensolver."""
    alpha, beta = asarray(d, op="eigh_tridiagonal"), asarray(e, op="eigh_tridiagonal")
    if alpha.dtype != beta.dtype:
        raise TypeError(f"diagonal and off-diagonal values must have same dtype, got "
                        f"{alpha.dtype} and {beta.dtype}")
    if alpha.dtype not in _SUPPORTED:
        raise TypeError(f"Only float32 and float64 inputs are supported as inputs to "
                        f"eigh_tridiagonal, got {alpha.dtype} and {beta.dtype}")
    n = alpha.shape[0]
    if n <= 1:
        values = pnp.real(alpha)
        return values if eigvals_only else (values, pnp.eye(n, dtype=alpha.dtype))
    targets = _target_counts(n, select, select_range)
    if pnp.iscomplexobj(alpha):
        alpha, beta_sq = pnp.real(alpha), pnp.real(beta * pnp.conj(beta))
        beta_abs = pnp.sqrt(beta_sq)
    else:
        beta_abs, beta_sq = pnp.abs(beta), pnp.square(beta)
    values = _bisection(alpha, beta_abs, beta_sq, targets, tol)
    if eigvals_only:
        return values
    if pnp.iscomplexobj(beta):
        return values, _hermitian_eigenvectors(alpha, beta)[:, np.asarray(targets)]
    matrix = pnp.diag(alpha) + pnp.diag(beta, 1) + pnp.diag(beta, -1)
    vectors, _ = dec.eigh(matrix)
    return values, vectors[:, np.asarray(targets)]


def _hermitian_eigenvectors(alpha, beta):
    """The eigenvectors of the Hermitian tridiagonal matrix (real diagonal ``alpha``, complex
    ``beta`` above it, as JAX's), from its real symmetric embedding ``[[re, -im], [im, re]]``
    (ptojax's ``eigh`` is real only): each eigenvalue appears there twice, and an eigenvector
    ``[x; y]`` of the embedding gives the unit eigenvector ``x + iy``; one of each pair is
    kept."""
    n = alpha.shape[0]
    matrix = pnp.diag(alpha).astype(beta.dtype) + pnp.diag(beta, 1) + pnp.diag(pnp.conj(beta), -1)
    real = pnp.block([[matrix.real, -matrix.imag], [matrix.imag, matrix.real]])
    vectors, _ = dec.eigh(real)
    vectors = vectors[:, ::2]
    return vectors[:n] + 1j * vectors[n:]


def _target_counts(n, select, select_range):
    if select == "a":
        return np.arange(n, dtype=np.int32)
    if select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        return np.arange(select_range[0], select_range[1] + 1, dtype=np.int32)
    if select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented (as "
                                  "in JAX: the number of eigenvalues would be dynamic)")
    raise ValueError("'select must have a value in {'a', 'i', 'v'}.")


def _bisection(alpha, beta_abs, beta_sq, targets, tol):
    """The eigenvalues of counts ``targets`` (see the module)."""
    n = alpha.shape[0]
    info = np.finfo(alpha.dtype)
    row_sums = pnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]])
    largest, smallest = pnp.max(alpha + row_sums), pnp.min(alpha - row_sums)
    t_norm = pnp.maximum(pnp.abs(smallest), pnp.abs(largest))
    one = np.ones([], alpha.dtype)
    safe_min = np.maximum(one / info.max, (one + info.eps) * info.tiny)
    pivmin = safe_min * pnp.maximum(1, pnp.max(beta_sq))
    first_perturbation = pnp.square(info.eps * beta_abs[0])
    abs_tol = info.eps * t_norm
    if tol is not None:
        abs_tol = pnp.maximum(tol, abs_tol)
    slack = np.asarray(n, alpha.dtype) * 2.1 * info.eps * t_norm
    shape = targets.shape
    lower = pnp.broadcast_to(smallest - slack - 2 * 2.1 * pivmin, shape)
    upper = pnp.broadcast_to(largest + slack + 2.1 * pivmin, shape)
    targets = pnp.asarray(targets)

    def keep_going(state):
        i, lower, _, upper = state
        return pnp.logical_and(i < info.nmant + 1, abs_tol < pnp.max(upper - lower))

    def halve(state):
        i, lower, mid, upper = state
        counts = _sturm_counts(alpha, beta_sq, pivmin, first_perturbation, mid)
        lower = pnp.where(counts <= targets, mid, lower)
        upper = pnp.where(counts > targets, mid, upper)
        return i + 1, lower, 0.5 * (lower + upper), upper

    _, _, mid, _ = while_loop(keep_going, halve, (0, lower, 0.5 * (lower + upper), upper))
    return mid


def _sturm_counts(alpha, beta_sq, pivmin, first_perturbation, x):
    """How many eigenvalues lie below each ``x``: the negative pivots of ``T - x I``."""
    q = alpha[0] - x
    count = (q < 0).astype(np.int32)
    q = pnp.where(alpha[0] == x, first_perturbation, q)

    def step(i, state):
        q, count = state
        q = alpha[i] - beta_sq[i - 1] / q - x
        negative = q <= pivmin
        return pnp.where(negative, pnp.minimum(q, -pivmin), q), count + negative.astype(np.int32)

    _, count = fori_loop(1, alpha.shape[0], step, (q, count))
    return count


add_examples(globals(), """
eigh_tridiagonal:
    >>> d, e = pnp.array([1.0, 2.0, 3.0, 4.0]), pnp.array([1.0, 1.0, 1.0])
    >>> pto.scipy.linalg.eigh_tridiagonal(d, e, eigvals_only=True)
    Array([0.2547188, 1.8227171, 3.1772828, 4.745281 ], dtype=float32)
""")
