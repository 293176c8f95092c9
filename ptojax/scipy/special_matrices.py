"""``scipy.linalg``'s special-matrix constructors, as JAX's: Toeplitz, Hankel, circulant,
companion, Fiedler, Leslie and convolution matrices built from vectors (stacks of vectors give
stacks of matrices, their leading dimensions broadcast together), and the fixed matrices of an
order ``n`` (Hilbert, Pascal, Helmert, Hadamard, DFT and the inverses JAX has).

The vector-built ones gather their entries from the input with a constant index matrix (so
``grad`` and ``vmap`` come from the gather's rules); the fixed ones are elementwise formulas in
floating point, as JAX's (no ``exact=True``: large orders lose precision, as in JAX).
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ptojax import dtypes, lax
from ptojax import numpy as pnp
from ptojax.numpy._promote import (asarray, broadcast_shapes, convert, promote_inexact,
                                   result_type)
from ptojax.public import add_examples
from ptojax.scipy.special import comb, gammaln


def _vector(op, x):
    return pnp.atleast_1d(asarray(x, op=op))


def _promoted(op, *arrays):
    dtype, weak = result_type(*arrays, op=op)
    return [convert(a, dtype, weak) for a in arrays]


def _gather(vector, index):
    """``vector[..., index]`` for a constant integer matrix ``index`` (a stack over the
    leading dimensions of ``vector``)."""
    return vector[..., pnp.asarray(np.asarray(index, np.int32))]


def _strong(x):
    """``x`` with a strong type: JAX's Toeplitz and Hankel matrices come from a convolution,
    whose result is never weakly typed."""
    return lax.convert_element_type(x, x.dtype)


def _broadcast_leading(op, *vectors):
    """The vectors with their leading (batch) dimensions broadcast together."""
    batch = broadcast_shapes(op, *(tuple(v.shape[:-1]) for v in vectors))
    return [pnp.broadcast_to(v, (*batch, v.shape[-1])) for v in vectors]


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column ``c`` and first row ``r`` (``r[0]`` ignored;
    ``conj(c)`` by default); stacks of ``c``/``r`` give stacks of matrices."""
    c = asarray(c, op="toeplitz")
    r = pnp.conjugate(c) if r is None else asarray(r, op="toeplitz")
    c, r = _promoted("toeplitz", pnp.atleast_1d(c), pnp.atleast_1d(r))
    c, r = _broadcast_leading("toeplitz", c, r)
    m, n = c.shape[-1], r.shape[-1]
    if m == 0 or n == 0:
        return pnp.zeros((*c.shape[:-1], m, n), c.dtype)
    diagonals = pnp.concatenate([pnp.flip(c, -1), r[..., 1:]], axis=-1)
    return _strong(_gather(diagonals, (m - 1) - np.arange(m)[:, None] + np.arange(n)[None, :]))


def hankel(c, r=None):
    """The Hankel matrix with first column ``c`` and last row ``r`` (``r[0]`` ignored; zeros by
    default); stacks of ``c``/``r`` give stacks of matrices."""
    c = asarray(c, op="hankel")
    r = pnp.zeros_like(c) if r is None else asarray(r, op="hankel")
    if c.ndim == 0:
        raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
    if r.ndim == 0:
        raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
    c, r = _broadcast_leading("hankel", *_promoted("hankel", c, r))
    m, n = c.shape[-1], r.shape[-1]
    if m == 0 or n == 0:
        return pnp.zeros((*c.shape[:-1], m, n), c.dtype)
    antidiagonals = pnp.concatenate([c, r[..., 1:]], axis=-1)
    return _strong(_gather(antidiagonals, np.arange(m)[:, None] + np.arange(n)[None, :]))


def circulant(c):
    """The circulant matrix with first column ``c`` (each column the previous one rolled down
    by one); stacks of ``c`` give stacks of matrices."""
    c = _vector("circulant", c)
    n = c.shape[-1]
    return _gather(c, (np.arange(n)[:, None] - np.arange(n)[None, :]) % max(n, 1))


def leslie(f, s):
    """The Leslie matrix: fecundities ``f`` (length ``N``) as its first row and survival
    coefficients ``s`` (length ``N - 1``) on its first subdiagonal."""
    f, s = _vector("leslie", f), _vector("leslie", s)
    if f.shape[-1] < 2:
        raise ValueError(f"The length of f along the last axis must be at least 2; got shape "
                         f"{tuple(f.shape)}.")
    if s.shape[-1] != f.shape[-1] - 1:
        raise ValueError(f"Incorrect lengths for f and s. The length of s along the last axis "
                         f"must be one less than the length of f; got f shape "
                         f"{tuple(f.shape)} and s shape {tuple(s.shape)}.")
    f, s = _broadcast_leading("leslie", *_promoted("leslie", f, s))
    n = f.shape[-1]
    rows, cols = np.arange(n)[:, None], np.arange(n)[None, :]
    below = _gather(s, np.minimum(cols, n - 2) + 0 * rows)
    sub = pnp.where(pnp.asarray(cols == rows - 1), below, pnp.zeros((), s.dtype))
    return pnp.where(pnp.asarray(rows == 0), f[..., None, :], sub)


def companion(a):
    """The companion matrix of the polynomial with coefficients ``a`` (highest first): first
    row ``-a[1:] / a[0]``, ones on the first subdiagonal. Like JAX, ``a[0] == 0`` is not
    checked (it gives infs/NaNs)."""
    (a,) = promote_inexact("companion", a)
    a = pnp.atleast_1d(a)
    if a.shape[-1] < 2:
        raise ValueError(f"The length of `a` along the last axis must be at least 2; got "
                         f"shape {tuple(a.shape)}.")
    first_row = -a[..., 1:] / a[..., :1]
    m = a.shape[-1] - 1
    ones = pnp.eye(m, m, k=-1, dtype=a.dtype)
    return pnp.where(pnp.asarray(np.arange(m)[:, None] == 0), first_row[..., None, :], ones)


def fiedler(a):
    """The symmetric Fiedler matrix ``|a[i] - a[j]|`` of ``a``."""
    a = _vector("fiedler", a)
    return pnp.abs(a[..., :, None] - a[..., None, :])


def fiedler_companion(a):
    """The pentadiagonal Fiedler companion matrix of the polynomial with coefficients ``a``
    (highest first), with the roots as eigenvalues. ``a[0] == 0`` is not checked (infs/NaNs),
    as in JAX."""
    (a,) = promote_inexact("fiedler_companion", a)
    a = pnp.atleast_1d(a)
    if a.shape[-1] == 0:
        raise ValueError(f"fiedler_companion requires the last axis of 'a' to have nonzero "
                         f"length, but got an array of shape {tuple(a.shape)}.")
    n = a.shape[-1] - 1
    batch = tuple(a.shape[:-1])
    if n == 0:
        return pnp.zeros((*batch, 0, 0), a.dtype)
    a = a / a[..., :1]
    if n == 1:
        return -a[..., 1:, None]
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    even, odd = i % 2 == 0, i % 2 == 1
    upper = _gather(-a, np.minimum(i + 2, n) + 0 * j)
    lower = _gather(-a, np.minimum(i + 1, n) + 0 * j)
    out = pnp.zeros((*batch, n, n), a.dtype)
    one = pnp.ones((), a.dtype)
    for mask, value in [((i == 0) & (j == 0), -a[..., 1, None, None]),
                        ((i == 1) & (j == 0), one), ((j == i + 1) & even, upper),
                        ((j == i + 2) & even, one), ((j == i - 1) & even & (i >= 2), lower),
                        ((j == i - 2) & odd & (i >= 3), one)]:
        out = pnp.where(pnp.asarray(mask), value, out)
    return out


def convolution_matrix(a, n, mode="full"):
    """The matrix ``A`` with ``A @ v == convolve(a, v, mode)`` for ``v`` of length ``n``:
    ``(k, n)`` with ``k`` ``m + n - 1`` ('full'), ``max(m, n)`` ('same') or
    ``max(m, n) - min(m, n) + 1`` ('valid')."""
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    a = asarray(a, op="convolution_matrix")
    if a.ndim == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a scalar.")
    m = a.shape[-1]
    if m < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {tuple(a.shape)}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    pad = [(0, 0)] * (a.ndim - 1) + [(0, n - 1)]
    padded, reversed_padded = pnp.pad(a, pad), pnp.pad(pnp.flip(a, -1), pad)
    total = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        begin, end = trim // 2, trim - trim // 2
    elif mode == "valid":
        begin = end = min(n, m) - 1
    else:
        begin = end = 0
    return toeplitz(padded[..., begin:total - end],
                    reversed_padded[..., total - n - begin:total - begin])


# matrices of an order n -------------------------------------------------------------------------
def _order(n):
    return operator.index(n)


def _float_grid(n, dtype=None):
    a = pnp.arange(_order(n), dtype=dtypes.default_float() if dtype is None else dtype)
    return a[:, None], a[None, :]


def hilbert(n):
    """The Hilbert matrix ``1 / (i + j + 1)`` of order ``n``."""
    i, j = _float_grid(n)
    return 1 / (i + j + 1)


def invhilbert(n):
    """The inverse of the Hilbert matrix of order ``n``, from its closed form in binomial
    coefficients (floating point: no ``exact=True``, as in JAX)."""
    n = _order(n)
    i, j = _float_grid(n)
    s = i + j
    return ((-1.0) ** s * (s + 1.0) * comb(n + i, n - j - 1) * comb(n + j, n - i - 1)
            * comb(s, i) ** 2)


def _binomial(n, k):
    return pnp.exp(gammaln(n + 1.0) - gammaln(n - k + 1.0) - gammaln(k + 1.0))


def _kind(kind, message):
    kind = "symmetric" if kind is None else kind
    valid = ["symmetric", "lower", "upper"]
    if kind not in valid:
        raise ValueError(f"{message}: {valid}; got {kind}")
    return kind


def pascal(n, kind=None):
    """The Pascal matrix of order ``n`` ('symmetric', 'lower' or 'upper' ``kind``), in float32
    from log-gamma binomials (approximate for large ``n``, as JAX's)."""
    kind = _kind(kind, "Expected kind to be on of")
    i, j = _float_grid(n, np.float32)
    lower = _binomial(i, j)
    if kind == "lower":
        return lower
    if kind == "upper":
        return lower.T
    return pnp.dot(lower, lower.T)


def invpascal(n, kind=None):
    """The inverse of the Pascal matrix of order ``n`` ('symmetric', 'lower' or 'upper'
    ``kind``), in floating point (no ``exact=True``, as in JAX)."""
    kind = _kind(kind, "Expected kind to be one of")
    i, j = _float_grid(n)
    lower = (-1.0) ** (i - j) * _binomial(i, j)
    if kind == "lower":
        return lower
    if kind == "upper":
        return lower.T
    return pnp.dot(lower.T, lower)


def helmert(n, full=False):
    """The Helmert contrast matrix ``(n - 1, n)`` (``(n, n)`` with its first row
    ``1 / sqrt(n)`` when ``full``)."""
    n = _order(n)
    if n < 1:
        raise ValueError(f"n must be a positive integer; got {n}.")
    i, j = np.arange(n - 1)[:, None], np.arange(n)[None, :]
    k = pnp.asarray(i + 1).astype(dtypes.default_float())
    denominator = pnp.sqrt(k * (k + 1))
    h = pnp.where(pnp.asarray(j <= i), 1.0 / denominator,
                  pnp.where(pnp.asarray(j == i + 1), -k / denominator,
                            pnp.zeros_like(denominator)))
    if full:
        first = pnp.full((1, n), 1.0 / pnp.sqrt(n), dtype=h.dtype)
        h = pnp.concatenate([first, h], axis=0)
    return h


def hadamard(n, dtype=int):
    """The ``n x n`` Hadamard matrix of Sylvester's construction (``n`` a power of 2)."""
    n = _order(n)
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    h = pnp.ones((1, 1), dtype=dtype)
    for _ in range(int(math.log2(n))):
        h = pnp.block([[h, h], [h, -h]])
    return h


def dft(n, scale=None, *, dtype=None):
    """The ``n x n`` discrete Fourier transform matrix ``exp(-2 pi i j k / n)``, divided by
    ``sqrt(n)`` or ``n`` for ``scale`` 'sqrtn' or 'n'."""
    n = _order(n)
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    if dtype is None:
        dtype = dtypes.default_complex()
    else:
        dtype = dtypes.user_dtype(dtype, "dft")
        if not dtypes.is_complex(dtype):
            raise ValueError(f"dtype must be a complex floating-point type; got {dtype}.")
    a = pnp.arange(n, dtype=dtype)
    omegas = pnp.exp(-2j * np.pi * a[:, None] * a[None, :] / n)
    if scale == "sqrtn":
        omegas = omegas / pnp.sqrt(n)
    elif scale == "n":
        omegas = omegas / n
    return omegas



add_examples(globals(), """
toeplitz:
    >>> pto.scipy.linalg.toeplitz(pnp.array([1, 2, 3]))
    Array([[1, 2, 3],
           [2, 1, 2],
           [3, 2, 1]], dtype=int32)
hankel:
    >>> pto.scipy.linalg.hankel(pnp.array([1, 2, 3]), pnp.array([9, 4, 5]))
    Array([[1, 2, 3],
           [2, 3, 4],
           [3, 4, 5]], dtype=int32)
circulant:
    >>> pto.scipy.linalg.circulant(pnp.array([1, 2, 3]))
    Array([[1, 3, 2],
           [2, 1, 3],
           [3, 2, 1]], dtype=int32)
leslie:
    >>> pto.scipy.linalg.leslie(pnp.array([0.5, 2.0, 1.0]), pnp.array([0.25, 0.75]))
    Array([[0.5 , 2.  , 1.  ],
           [0.25, 0.  , 0.  ],
           [0.  , 0.75, 0.  ]], dtype=float32)
companion:
    >>> pto.scipy.linalg.companion(pnp.array([1.0, -10.0, 31.0, -30.0]))
    Array([[ 10., -31.,  30.],
           [  1.,   0.,   0.],
           [  0.,   1.,   0.]], dtype=float32)
fiedler:
    >>> pto.scipy.linalg.fiedler(pnp.array([1, 4, 12]))
    Array([[ 0,  3, 11],
           [ 3,  0,  8],
           [11,  8,  0]], dtype=int32)
fiedler_companion:
    >>> pto.scipy.linalg.fiedler_companion(pnp.array([1.0, -16.0, 86.0, -176.0, 105.0]))
    Array([[  16.,  -86.,    1.,    0.],
           [   1.,    0.,    0.,    0.],
           [   0.,  176.,    0., -105.],
           [   0.,    1.,    0.,    0.]], dtype=float32)
convolution_matrix:
    >>> pto.scipy.linalg.convolution_matrix(pnp.array([-1, 4, -2]), 4, mode="same")
    Array([[ 4, -1,  0,  0],
           [-2,  4, -1,  0],
           [ 0, -2,  4, -1],
           [ 0,  0, -2,  4]], dtype=int32)
hilbert:
    >>> pto.scipy.linalg.hilbert(2)
    Array([[1.        , 0.5       ],
           [0.5       , 0.33333334]], dtype=float32)
invhilbert:
    >>> pto.scipy.linalg.invhilbert(2).round(3)
    Array([[ 4., -6.],
           [-6., 12.]], dtype=float32)
pascal:
    >>> pto.scipy.linalg.pascal(3)
    Array([[1., 1., 1.],
           [1., 2., 3.],
           [1., 3., 6.]], dtype=float32)
invpascal:
    >>> pto.scipy.linalg.invpascal(3, kind="upper").round(3)
    Array([[ 1., -1.,  1.],
           [-0.,  1., -2.],
           [ 0., -0.,  1.]], dtype=float32)
helmert:
    >>> pto.scipy.linalg.helmert(2, full=True).round(3)
    Array([[ 0.707,  0.707],
           [ 0.707, -0.707]], dtype=float32)
hadamard:
    >>> pto.scipy.linalg.hadamard(4)
    Array([[ 1,  1,  1,  1],
           [ 1, -1,  1, -1],
           [ 1,  1, -1, -1],
           [ 1, -1, -1,  1]], dtype=int32)
dft:
    >>> pto.scipy.linalg.dft(2)
    Array([[ 1.+0.000000e+00j,  1.+0.000000e+00j],
           [ 1.+0.000000e+00j, -1.+8.742278e-08j]], dtype=complex64)
""")
