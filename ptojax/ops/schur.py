"""``schur``: the Schur decomposition ``A = Z T Z^H`` of square matrices (``T`` upper
triangular, or quasi-triangular for the real form, ``Z`` unitary), with every fact; what
``scipy.linalg.schur``, ``sqrtm``, ``funm`` and ``solve_sylvester`` build on.

numpy has no Schur routine, so the host computes it here (in complex128, per matrix of the
stack): Householder reduction to Hessenberg form, then the implicitly shifted QR iteration
(Wilkinson shifts, exceptional shifts after 10 and 20 stalled steps, deflation when a
subdiagonal entry falls below ``eps * (|t_kk| + |t_k+1,k+1|)``), each step a chase of Givens
rotations applied to all of ``T`` and accumulated in ``Z``. A matrix that does not converge
in ``30 n`` steps per eigenvalue gets NaNs, as LAPACK failures do elsewhere. Results are
complex64 for float32/complex64 input, complex128 otherwise; with ``real=True`` a real input
gets the real Schur form instead, in its own dtype (``real_schur``: Francis double-shift
steps, 2x2 diagonal blocks for complex pairs, standardized as LAPACK's to equal diagonals).
As in JAX, the decomposition has no derivative (it is not unique); a Schur form's diagonal
order may differ from LAPACK's.
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


def _output_dtype(dtype, real):
    return dtype if real and not dtypes.is_complex(dtype) else _COMPLEX[dtype]


def _schur_abstract(x, real=False):
    require_matrices("schur", x, square=True, complex_ok=True)
    out = TensorType(tuple(x.shape), _output_dtype(x.dtype, real))
    return [out, out]


def _schur(x, real=False):
    dtype = _output_dtype(x.dtype, real)
    one = real_schur if dtype == x.dtype and not dtypes.is_complex(dtype) else complex_schur

    def decompose(stack):
        t = np.empty(stack.shape, dtype)
        z = np.empty(stack.shape, dtype)
        for index in np.ndindex(*stack.shape[:-2]):
            t[index], z[index] = one(stack[index])
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


def real_schur(a):
    """``(T, Z)`` of one real square matrix in float64: ``T`` quasi upper triangular (2x2
    diagonal blocks, with equal diagonals, for complex eigenvalue pairs), ``Z`` orthogonal (a
    LinAlgError if it does not converge)."""
    t = np.array(a, np.float64)
    n = t.shape[0]
    z = np.eye(n)
    _to_hessenberg(t, z)
    hi, stalled, budget = n - 1, 0, 30 * max(n, 1)
    while hi > 0:
        lo = _active_block_start(t, hi)
        if lo >= hi - 1:        # a converged 1x1 or 2x2 block
            if lo == hi - 1:
                _standardize_block(t, z, lo)
            hi, stalled = lo - 1, 0
            continue
        budget -= 1
        if budget < 0:
            raise np.linalg.LinAlgError("schur: the QR iteration did not converge")
        stalled += 1
        _double_shift_step(t, z, lo, hi, stalled)
    return np.triu(t, -1), z


def _reflector(x):
    """``(v, beta)`` with ``(I - beta v v^T) x`` a multiple of the first unit vector."""
    alpha = -np.copysign(np.linalg.norm(x), x[0])
    v = np.array(x, np.float64)
    v[0] -= alpha
    norm2 = v @ v
    return v, (2.0 / norm2 if norm2 else 0.0)


def _reflect(t, z, k, v, beta, first_col, last_row):
    """``t <- P t P`` on rows/columns ``k..k+len(v)`` (``t``'s columns from ``first_col``,
    rows up to ``last_row``), and ``z <- z P``."""
    rows = slice(k, k + len(v))
    t[rows, first_col:] -= beta * np.outer(v, v @ t[rows, first_col:])
    t[:last_row, rows] -= beta * np.outer(t[:last_row, rows] @ v, v)
    z[:, rows] -= beta * np.outer(z[:, rows] @ v, v)


def _double_shift_step(t, z, lo, hi, stalled):
    """One Francis double-shift QR step on rows/columns ``lo..hi`` (the shifts are the
    trailing 2x2 block's eigenvalues, or exceptional ones when the iteration stalls)."""
    if stalled in (10, 20):
        s = abs(t[hi, hi - 1]) + abs(t[hi - 1, hi - 2])
        x = 0.75 * s + t[hi, hi]
        trace, det = 2 * x, x * x + 0.4375 * s * s
    else:
        trace = t[hi - 1, hi - 1] + t[hi, hi]
        det = t[hi - 1, hi - 1] * t[hi, hi] - t[hi - 1, hi] * t[hi, hi - 1]
    x = t[lo, lo] * t[lo, lo] + t[lo, lo + 1] * t[lo + 1, lo] - trace * t[lo, lo] + det
    y = t[lo + 1, lo] * (t[lo, lo] + t[lo + 1, lo + 1] - trace)
    w = t[lo + 1, lo] * t[lo + 2, lo + 1]
    for k in range(lo, hi - 1):
        v, beta = _reflector([x, y, w])
        _reflect(t, z, k, v, beta, max(lo, k - 1), min(k + 4, hi + 1))
        x, y = t[k + 1, k], t[k + 2, k]
        if k < hi - 2:
            w = t[k + 3, k]
    v, beta = _reflector([x, y])
    _reflect(t, z, hi - 1, v, beta, hi - 2, hi + 1)
    for k in range(lo, hi - 1):          # the bulge's rounding remnants
        t[k + 2:hi + 1, k] = 0.0


def _standardize_block(t, z, k):
    """The 2x2 diagonal block at ``k`` made upper triangular when its eigenvalues are real,
    else rotated to equal diagonal entries (LAPACK's standard form)."""
    a, b, c, d = t[k, k], t[k, k + 1], t[k + 1, k], t[k + 1, k + 1]
    p = 0.5 * (a - d)
    disc = p * p + b * c
    if disc >= 0:
        root = p + np.copysign(np.sqrt(disc), p)     # an eigenvalue minus d
        tau = np.hypot(root, c)
        cs, sn = (root / tau, c / tau) if tau else (1.0, 0.0)
    else:
        sigma = b + c
        tau = np.hypot(sigma, a - d)     # (0 only when the block is already standard)
        cs = np.sqrt(0.5 * (1 + abs(sigma) / tau)) if tau else 1.0
        sn = -(p / (tau * cs)) * np.copysign(1.0, sigma) if tau else 0.0
    g = np.array([[cs, -sn], [sn, cs]])
    t[k:k + 2, k:] = g.T @ t[k:k + 2, k:]
    t[:k + 2, k:k + 2] = t[:k + 2, k:k + 2] @ g
    z[:, k:k + 2] = z[:, k:k + 2] @ g
    if disc >= 0:
        t[k + 1, k] = 0.0
    else:
        t[k, k] = t[k + 1, k + 1] = 0.5 * (t[k, k] + t[k + 1, k + 1])


def _schur_jvp(primals, tangents, **params):
    raise UnsupportedError("schur has no derivative (as in JAX: the decomposition is not "
                           "unique)")


def _schur_flops(eqn) -> int:
    """Hessenberg reduction and the shifted QR iteration with vectors: about ``25 n^3``."""
    x = eqn.inputs[0].type
    return int(np.prod(x.shape[:-2], dtype=np.int64)) * 25 * x.shape[-1] ** 3


_define(schur_p, _schur_jvp, cost=_schur_flops, tile=NOT_TILED,
        reference=Unsupported("a Schur form is not unique (JAX's LAPACK one may order the "
                              "diagonal differently); checked through sqrtm and A = Z T Z^H"))


def schur(x, real=False):
    """``(T, Z)``: the complex Schur form of each square matrix of ``x`` (see the module), or
    with ``real`` and real ``x`` the real (quasi-triangular) one."""
    check_operand("schur", x, square=True, complex_ok=True)
    return tuple(schur_p.bind(x, real=bool(real)))
