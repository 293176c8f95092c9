"""``pto.random``'s further distributions, each a transform of the basic draws of ``core.py``
by JAX's formula (the same draws, the same keys split the same way, the same operations in
the same order), so that the samples built on uniform or normal draws equal JAX's up to the
last-bit differences of ``log``/``tan``/``erf_inv`` and of XLA's fused multiply-adds.
Those built on ``gamma`` (``t``, ``chisquare``, ``f``, ``generalized_normal``, ``ball``)
draw JAX's samples to the last bits of ``normal``/``log`` (see ``gamma.py``).
"""
from __future__ import annotations

import operator

import numpy as np

from ptojax import dtypes, lax
from ptojax import numpy as pnp
from ptojax.numpy._promote import asarray as _asarray
from ptojax.errors import SamplerDtypeError
from ptojax.random.core import (_check_broadcasts, _check_key, _float_dtype, _shape, bernoulli,
                                normal, split, uniform)
from ptojax.random.gamma import gamma, loggamma
from ptojax.source_info import user_frame
from ptojax.public import add_examples


def _params_shape(name, shape, *params):
    """JAX's sampler shape: the parameters' broadcast shape when ``shape`` is None, else
    ``shape``, to which every parameter must broadcast."""
    shapes = [tuple(np.shape(p)) for p in params]
    if shape is None:
        return tuple(np.broadcast_shapes(*shapes))
    shape = _shape(shape)
    for s in shapes:
        _check_broadcasts(name, s, shape)
    return shape


def _param(value, dtype, shape=None):
    value = _asarray(value, dtype)
    return value if shape is None else pnp.broadcast_to(value, shape)


def _int_dtype(name, dtype):
    dtype = dtypes.user_dtype(int if dtype is None else dtype)
    if not dtypes.is_integer(dtype):
        raise SamplerDtypeError(f"{name}: dtype must be an integer dtype, got {dtype}",
                                user_frame())
    return dtype


def _two_keys(key):
    keys = split(key)
    return keys[0], keys[1]


# from uniform draws --------------------------------------------------------------------------
def exponential(key, shape=(), dtype=None):
    """Exponential(1) samples: ``-log1p(-u)`` for ``u`` uniform in [0, 1)."""
    key, dtype = _check_key("exponential", key), _float_dtype("exponential", dtype)
    u = uniform(key, _shape(shape), dtype)
    return lax.neg(lax.log1p(lax.neg(u)))


def laplace(key, shape=(), dtype=None):
    """Laplace(0, 1) samples: ``sign(u) * log1p(-|u|)`` for ``u`` uniform in (-1, 1)."""
    key, dtype = _check_key("laplace", key), _float_dtype("laplace", dtype)
    u = uniform(key, _shape(shape), dtype, -1.0 + float(dtypes.finfo(dtype).epsneg), 1.0)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def logistic(key, shape=(), dtype=None):
    """Standard logistic samples: ``log(u) - log1p(-u)`` for ``u`` uniform in [tiny, 1)."""
    key, dtype = _check_key("logistic", key), _float_dtype("logistic", dtype)
    u = uniform(key, _shape(shape), dtype, float(dtypes.finfo(dtype).tiny), 1.0)
    return lax.sub(lax.log(u), lax.log1p(lax.neg(u)))


def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy samples: ``tan(pi * (u - 1/2))`` for ``u`` uniform in [eps, 1)."""
    key, dtype = _check_key("cauchy", key), _float_dtype("cauchy", dtype)
    u = uniform(key, _shape(shape), dtype, float(dtypes.finfo(dtype).eps), 1.0)
    return lax.tan(lax.mul(lax.sub(u, 0.5), np.pi))


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull samples: ``(-log1p(-u)) ** (1 / concentration) * scale``."""
    key, dtype = _check_key("weibull_min", key), _float_dtype("weibull_min", dtype)
    u = uniform(key, _shape(shape), dtype, 0.0, 1.0)
    inverse = 1.0 / concentration if type(concentration) in (int, float) \
        else pnp.divide(1.0, concentration)
    return pnp.multiply(pnp.power(pnp.negative(pnp.log1p(pnp.negative(u))), inverse), scale)


def pareto(key, b, shape=None, dtype=None):
    """Pareto(``b``) samples: ``exp(e / b)`` for ``e`` exponential."""
    key, dtype = _check_key("pareto", key), _float_dtype("pareto", dtype)
    shape = _params_shape("pareto", shape, b)
    return lax.exp(pnp.divide(exponential(key, shape, dtype), _param(b, dtype)))


def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh(``scale``) samples: ``scale * sqrt(-2 log u)``."""
    key, dtype = _check_key("rayleigh", key), _float_dtype("rayleigh", dtype)
    shape = _params_shape("rayleigh", shape, scale)
    u = uniform(key, shape, dtype)
    return lax.mul(_param(scale, dtype, shape), lax.sqrt(lax.mul(lax.log(u), -2.0)))


def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular(``left``, ``mode``, ``right``) samples by inverting the CDF."""
    key, dtype = _check_key("triangular", key), _float_dtype("triangular", dtype)
    shape = _params_shape("triangular", shape, left, mode, right)
    left, mode, right = (_param(v, dtype, shape) for v in (left, mode, right))
    width = right - left
    u = uniform(key, shape, dtype)
    below = left + lax.sqrt(u * width * (mode - left))
    above = right - lax.sqrt((1 - u) * width * (right - mode))
    return lax.select(u < (mode - left) / width, below, above)


def geometric(key, p, shape=None, dtype=None):
    """Geometric(``p``) samples on {1, 2, ...}: ``floor(log u / log1p(-p)) + 1``."""
    key, dtype = _check_key("geometric", key), _int_dtype("geometric", dtype)
    shape = _params_shape("geometric", shape, p)
    p = _asarray(p)
    p = p if dtypes.is_inexact(p.dtype) else p.astype(dtypes.canonicalize(float))
    u = uniform(key, shape, p.dtype)
    u = pnp.where(u == 0, 1, u)
    log_q = pnp.broadcast_to(lax.log1p(lax.neg(p)), shape)
    return (lax.floor(lax.div(lax.log(u), log_q)) + 1).astype(dtype)


# from normal and bernoulli draws --------------------------------------------------------------
def lognormal(key, sigma=np.float32(1), shape=None, dtype=None):
    """Log-normal samples: ``exp(sigma * n)`` for ``n`` standard normal."""
    key, dtype = _check_key("lognormal", key), _float_dtype("lognormal", dtype)
    shape = _params_shape("lognormal", shape, sigma)
    return lax.exp(pnp.multiply(normal(key, shape, dtype), _param(sigma, dtype)))


def rademacher(key, shape=(), dtype=None):
    """Samples of -1 and 1 with equal probability (int by default)."""
    key = _check_key("rademacher", key)
    dtype = dtypes.user_dtype(int if dtype is None else dtype)
    b = bernoulli(key, 0.5, _shape(shape)).astype(dtype)
    return (2 * b - 1).astype(dtype)


def maxwell(key, shape=(), dtype=None):
    """Maxwell samples: the length of a standard normal 3-vector."""
    key, dtype = _check_key("maxwell", key), _float_dtype("maxwell", dtype)
    n = normal(key, (*_shape(shape), 3), dtype)
    return pnp.sqrt(pnp.sum(n * n, axis=-1))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Maxwell samples with a random sign, scaled and shifted. As JAX, the parameters' shape
    is appended to ``shape`` (and taken as ``shape`` when that is empty)."""
    key = _check_key("double_sided_maxwell", key)
    dtype = _float_dtype("double_sided_maxwell", dtype)
    params = tuple(np.broadcast_shapes(np.shape(loc), np.shape(scale)))
    shape = _shape(shape) or params
    shape = shape + params
    maxwell_key, sign_key = _two_keys(key)
    return rademacher(sign_key, shape, dtype) * maxwell(maxwell_key, shape, dtype) * scale + loc


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian, ``mean``, shape 1) samples by Michael, Schucany and Haas's
    transformation of a normal and a uniform draw."""
    key, dtype = _check_key("wald", key), _float_dtype("wald", dtype)
    shape = _params_shape("wald", shape, mean)
    normal_key, uniform_key = _two_keys(key)
    mean = _param(mean, dtype, shape)
    y = lax.integer_pow(normal(normal_key, shape, dtype), 2)
    z = uniform(uniform_key, shape, dtype)
    mean_sq = lax.integer_pow(mean, 2)
    root = lax.sqrt(4 * mean * y + mean_sq * lax.integer_pow(y, 2))
    x = mean + mean_sq * y / 2 - mean / 2 * root
    return lax.select(lax.le(z, mean / (mean + x)), x, mean_sq / x)


def orthogonal(key, n, shape=(), dtype=None, m=None):
    """Haar-random matrices of shape ``(*shape, n, m)`` (``m`` defaults to ``n``) with
    orthonormal columns (or rows, when ``n < m``): the Q of a normal matrix's QR, its columns'
    signs fixed by R's diagonal."""
    key, dtype = _check_key("orthogonal", key), _float_dtype("orthogonal", dtype)
    n = operator.index(n)
    m = n if m is None else operator.index(m)
    z = normal(key, (*_shape(shape), max(n, m), min(n, m)), dtype)
    q, r = pnp.linalg.qr(z)
    x = q * pnp.expand_dims(pnp.sign(pnp.diagonal(r, axis1=-2, axis2=-1)), -2)
    return pnp.swapaxes(x, -1, -2) if n < m else x


# from gamma draws -----------------------------------------------------------------------------
def chisquare(key, df, shape=None, dtype=None):
    """Chi-square(``df``) samples: twice Gamma(``df / 2``)."""
    key, dtype = _check_key("chisquare", key), _float_dtype("chisquare", dtype)
    shape = _params_shape("chisquare", shape, df)
    half_df = lax.div(_param(df, dtype), 2.0)
    return lax.mul(pnp.exp(loggamma(key, half_df, shape, dtype)), 2.0)


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F(``dfnum``, ``dfden``) samples: the ratio of two scaled chi-square draws."""
    key, dtype = _check_key("f", key), _float_dtype("f", dtype)
    shape = _params_shape("f", shape, dfnum, dfden)
    dfnum, dfden = _param(dfnum, dtype), _param(dfden, dtype)
    den_key, num_key = _two_keys(key)
    num = lax.div(chisquare(num_key, dfnum, shape, dtype), dfnum)
    den = lax.div(chisquare(den_key, dfden, shape, dtype), dfden)
    return lax.div(num, den)


def t(key, df, shape=None, dtype=None):
    """Student's t(``df``) samples: ``n * sqrt(df / (2 g))`` for ``n`` normal and ``g``
    Gamma(``df / 2``)."""
    key, dtype = _check_key("t", key), _float_dtype("t", dtype)
    shape = _params_shape("t", shape, df)
    normal_key, gamma_key = _two_keys(key)
    n = normal(normal_key, shape, dtype)
    half_df = lax.div(_param(df, dtype), 2.0)
    return n * pnp.sqrt(half_df / gamma(gamma_key, half_df, shape, dtype))


def generalized_normal(key, p, shape=(), dtype=None):
    """Generalized normal samples (density proportional to ``exp(-|x| ** p)``): a random sign
    times Gamma(``1 / p``) to the power ``1 / p``."""
    key = _check_key("generalized_normal", key)
    dtype = _float_dtype("generalized_normal", dtype)
    shape = _shape(shape)
    gamma_key, sign_key = _two_keys(key)
    g = gamma(gamma_key, 1 / p, shape, dtype)
    return rademacher(sign_key, shape, dtype) * g ** (1 / p)


def ball(key, d, p=2, shape=(), dtype=None):
    """Points uniform in the ``d``-dimensional unit ``p``-norm ball, of shape
    ``(*shape, d)``."""
    key, dtype = _check_key("ball", key), _float_dtype("ball", dtype)
    d, shape = operator.index(d), _shape(shape)
    normal_key, exponential_key = _two_keys(key)
    g = generalized_normal(normal_key, p, (*shape, d), dtype)
    e = exponential(exponential_key, shape, dtype)
    return g / (((pnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


# keys -------------------------------------------------------------------------------------------
add_examples(globals(), """
exponential:
    >>> pto.random.exponential(pto.random.key(0), (3,))
    Array([2.950128  , 3.8434246 , 0.40390354], dtype=float32)
laplace:
    >>> pto.random.laplace(pto.random.key(0), (3,))
    Array([-2.2569816 , -3.1502788 ,  0.40859547], dtype=float32)
logistic:
    >>> pto.random.logistic(pto.random.key(0), (3,))
    Array([ 2.896376 ,  3.8217716, -0.6978392], dtype=float32)
cauchy:
    >>> pto.random.cauchy(pto.random.key(0), (3,))
    Array([ 6.0274944 , 14.837895  , -0.58172226], dtype=float32)
weibull_min:
    >>> pto.random.weibull_min(pto.random.key(0), 1.0, 2.0, (3,))
    Array([1.7175937 , 1.9604654 , 0.63553405], dtype=float32)
pareto:
    >>> pto.random.pareto(pto.random.key(0), 3.0, (3,))
    Array([2.673467 , 3.6007476, 1.1441184], dtype=float32)
rayleigh:
    >>> pto.random.rayleigh(pto.random.key(0), 1.0, (3,))
    Array([0.32787833, 0.20810027, 1.4844142 ], dtype=float32)
triangular:
    >>> pto.random.triangular(pto.random.key(0), 0.0, 0.5, 1.0, (3,))
    Array([0.8382394, 0.8965106, 0.4076098], dtype=float32)
geometric:
    >>> pto.random.geometric(pto.random.key(0), 0.3, (4,))
    Array([1, 1, 4, 3], dtype=int32)
lognormal:
    >>> pto.random.lognormal(pto.random.key(0), 0.5, (3,))
    Array([2.2508795, 2.7528381, 0.8050932], dtype=float32)
rademacher:
    >>> pto.random.rademacher(pto.random.key(0), (4,))
    Array([-1, -1,  1,  1], dtype=int32)
maxwell:
    >>> pto.random.maxwell(pto.random.key(0), (3,))
    Array([2.6310966 , 0.99103296, 0.96493053], dtype=float32)
double_sided_maxwell:
    >>> pto.random.double_sided_maxwell(pto.random.key(0), 0.0, 1.0, (3,))
    Array([ 1.5457212,  1.5741276, -2.0825307], dtype=float32)
wald:
    >>> pto.random.wald(pto.random.key(0), 1.0, (3,))
    Array([0.38059747, 0.41566533, 0.48107237], dtype=float32)
orthogonal:
    >>> pto.random.orthogonal(pto.random.key(0), 2)
    Array([[ 0.9661029 ,  0.25815722],
           [-0.25815722,  0.9661029 ]], dtype=float32)
chisquare:
    >>> pto.random.chisquare(pto.random.key(0), 3.0, (3,))
    Array([2.205084 , 2.4899669, 1.4557135], dtype=float32)
f:
    >>> pto.random.f(pto.random.key(0), 4.0, 10.0, (3,))
    Array([2.1871014 , 0.24663894, 0.23254594], dtype=float32)
t:
    >>> pto.random.t(pto.random.key(0), 5.0, (3,))
    Array([ 0.75895  , -2.0559173, -1.2818336], dtype=float32)
generalized_normal:
    >>> pto.random.generalized_normal(pto.random.key(0), 1.5, (3,))
    Array([ 1.0603918 ,  0.08920828, -1.3751339 ], dtype=float32)
ball:
    >>> pto.random.ball(pto.random.key(0), 2)
    Array([0.917222  , 0.39276883], dtype=float32)
""")
