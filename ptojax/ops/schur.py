"""``schur``: the complex Schur decomposition ``A = Z T Z^H`` of square matrices (``T`` upper
triangular, ``Z`` unitary), with every fact; the step ``scipy.linalg.sqrtm`` builds on.

numpy has no Schur routine, so the host computes it here (in complex128, per matrix of the
stack): Householder reduction to Hessenberg form, then the implicitly shifted QR iteration
(Wilkinson shifts, exceptional shifts after 10 and 20 stalled steps, deflation when a
subdiagonal entry falls below ``eps * (|t_kk| + |t_k+1,k+1|)``), each step a chase of Givens
rotations applied to all of ``T`` and accumulated in ``Z``. A matrix that does not converge
in ``30 n`` steps per eigenvalue gets NaNs, as LAPACK failures do elsewhere. Results are
complex64 for float32/complex64 input, complex128 otherwise. As in JAX, the decomposition has
no derivative (it is not unique); a Schur form's diagonal order may differ from LAPACK's.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import UnsupportedError
from ptojax.ir.types import TensorType
from ptojax.ops import lapack
from ptojax.ops.decomposition_facts import NOT_TILED, _define, check_operand, require_matrices
from ptojax.trace import Primitive, Unsupported

_COMPLEX = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128,
            dtypes.complex64: dtypes.complex64, dtypes.complex128: dtypes.complex128}
_EPS = np.finfo(np.float64).eps


def _schur_abstract(x):
    require_matrices("schur", x, square=True, complex_ok=True)
    out = TensorType(tuple(x.shape), _COMPLEX[x.dtype])
    return [out, out]


def _schur(x):
    dtype = _COMPLEX[x.dtype]

    def decompose(stack):
        t = np.empty(stack.shape, dtype)
        z = np.empty(stack.shape, dtype)
        for index in np.ndindex(*stack.shape[:-2]):
            t[index], z[index] = complex_schur(stack[index])
        return [t, z]
    return lapack.nan_on_failure(decompose, x)


schur_p = Primitive("schur", _schur_abstract, _schur, multiple_results=True)


def complex_schur(a):
    """``(T, Z)`` of one square matrix, in complex128 (a LinAlgError if it does not
    converge)."""
    t = np.array(a, np.complex128)
    n = t.shape[0]
    z = np.eye(n, dtype=np.complex128)
    _to_hessenberg(t, z)
    hi, stalled, budget = n - 1, 0, 30 * max(n, 1)
    while hi > 0:
        lo = _active_block_start(t, hi)
        if lo == hi:            # t[hi, hi] has converged
            hi, stalled = hi - 1, 0
            continue
        budget -= 1
        if budget < 0:
            raise np.linalg.LinAlgError("schur: the QR iteration did not converge")
        stalled += 1
        _qr_step(t, z, lo, hi, _shift(t, hi, stalled))
    return np.triu(t), z


def _to_hessenberg(t, z):
    """``t`` reduced in place to upper Hessenberg form by Householder reflections, which are
    accumulated in ``z``."""
    n = t.shape[0]
    for k in range(n - 2):
        x = t[k + 1:, k]
        norm = np.linalg.norm(x)
        if norm == 0.0:
            continue
        phase = x[0] / abs(x[0]) if x[0] != 0 else 1.0
        v = x.copy()
        v[0] += phase * norm
        v /= np.linalg.norm(v)
        t[k + 1:, :] -= 2.0 * np.outer(v, v.conj() @ t[k + 1:, :])
        t[:, k + 1:] -= 2.0 * np.outer(t[:, k + 1:] @ v, v.conj())
        z[:, k + 1:] -= 2.0 * np.outer(z[:, k + 1:] @ v, v.conj())
        t[k + 2:, k] = 0.0


def _active_block_start(t, hi) -> int:
    """The first row of the unreduced block ending at ``hi``, zeroing the negligible
    subdiagonal entry above it."""
    lo = hi
    while lo > 0:
        scale = abs(t[lo - 1, lo - 1]) + abs(t[lo, lo])
        if abs(t[lo, lo - 1]) <= _EPS * (scale if scale else 1.0):
            t[lo, lo - 1] = 0.0
            break
        lo -= 1
    return lo


def _shift(t, hi, stalled):
    """Wilkinson's shift (the eigenvalue of the trailing 2x2 block nearer ``t[hi, hi]``), or
    an exceptional shift when the iteration stalls."""
    if stalled in (10, 20):
        return t[hi, hi] + abs(t[hi, hi - 1])
    a, b, c, d = t[hi - 1, hi - 1], t[hi - 1, hi], t[hi, hi - 1], t[hi, hi]
    half_gap = (a - d) / 2
    root = np.sqrt(half_gap * half_gap + b * c)
    mean = (a + d) / 2
    first, second = mean + root, mean - root
    return first if abs(first - d) < abs(second - d) else second


def _qr_step(t, z, lo, hi, mu):
    """One implicitly shifted QR step on rows/columns ``lo..hi``: the bulge chase."""
    x, y = t[lo, lo] - mu, t[lo + 1, lo]
    for k in range(lo, hi):
        if k > lo:
            x, y = t[k, k - 1], t[k + 1, k - 1]
        g = _givens(x, y)
        first = lo if k == lo else k - 1
        t[k:k + 2, first:] = g @ t[k:k + 2, first:]
        last = min(k + 3, hi + 1)
        t[:last, k:k + 2] = t[:last, k:k + 2] @ g.conj().T
        z[:, k:k + 2] = z[:, k:k + 2] @ g.conj().T
        if k > lo:
            t[k + 1, k - 1] = 0.0


def _givens(x, y):
    """The unitary 2x2 ``G`` (real diagonal) with ``G @ [x, y] = [r, 0]``."""
    r = np.hypot(abs(x), abs(y))
    if r == 0.0:
        return np.eye(2, dtype=np.complex128)
    if x == 0:
        c, s = 0.0, np.conj(y) / abs(y)
    else:
        c, s = abs(x) / r, (x / abs(x)) * np.conj(y) / r
    return np.array([[c, s], [-np.conj(s), c]], np.complex128)


def _schur_jvp(primals, tangents):
    raise UnsupportedError("schur has no derivative (as in JAX: the decomposition is not "
                           "unique)")


def _schur_flops(eqn) -> int:
    """Hessenberg reduction and the shifted QR iteration with vectors: about ``25 n^3``."""
    x = eqn.inputs[0].type
    return int(np.prod(x.shape[:-2], dtype=np.int64)) * 25 * x.shape[-1] ** 3


_define(schur_p, _schur_jvp, cost=_schur_flops, tile=NOT_TILED,
        reference=Unsupported("a Schur form is not unique (JAX's LAPACK one may order the "
                              "diagonal differently); checked through sqrtm and A = Z T Z^H"))


def schur(x):
    """``(T, Z)``: the complex Schur form of each square matrix of ``x`` (see the module)."""
    check_operand("schur", x, square=True, complex_ok=True)
    return tuple(schur_p.bind(x))
