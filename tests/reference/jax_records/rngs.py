"""Input generators mimicking JAX's rng kinds (jax._src.test_util.rand_*), written from their
documented behaviour: ``generate(kind, shape, dtype, rng)``.

kind is a name, optionally with numeric parameters: "default", "default(10)" (scale),
"small", "positive", "nonzero", "not_small", "not_small(1e8)" (offset), "small_positive",
"uniform(lo,hi)", "some_equal", "some_nan", "some_inf", "some_inf_and_nan", "some_zero",
"int(lo,hi)" (hi exclusive), "small_float" (small for inexact dtypes, default otherwise),
"bool", "fullrange" (random bits), "unique" (a permutation of arange), "sorted" /
"sorted_desc" (sorted distinct default values), "const(v)", "special" (NaN, infinities, 0,
+-1, +-2, +-100, the largest finite value, its square root and twice that). ``shape`` is a
tuple, "np" (a numpy scalar) or "py" (a Python scalar).
"""
import re

import ml_dtypes
import numpy as np


def np_dtype(name) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def parse(kind):
    """"uniform(-0.9,0.9)" -> ("uniform", (-0.9, 0.9))."""
    m = re.fullmatch(r"(\w+)(?:\((.*)\))?", kind)
    args = tuple(float(a) for a in m.group(2).split(",")) if m.group(2) else ()
    return m.group(1), args


def dims(shape):
    return () if shape in ("np", "py") else tuple(shape)


def _cast(values, dtype):
    """Real values of any dtype; unsigned dtypes take the absolute value (as JAX)."""
    if dtype.kind == "u":
        values = np.abs(values)
    if dtype.kind == "b":
        return np.asarray(values).astype(bool)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.asarray(values).astype(dtype)


def _scaled(draw, scale=1.0, post=lambda rng, x: x):
    """JAX's _rand_dtype: scale * draw(), cast, complex as re + 1j im, then post."""
    def gen(rng, shape, dtype):
        make = lambda: _cast(scale * draw(rng, shape), dtype)
        vals = make() + 1j * make() if dtype.kind == "c" else make()
        return post(rng, np.asarray(vals, dtype))
    return gen


_normal = lambda rng, shape: rng.standard_normal(shape)
_unit = lambda rng, shape: rng.random(shape)


def _nonzero(rng, x):
    return np.where(x == 0, np.ones((), x.dtype), x)


def _plus_one(rng, x):
    return (x + np.ones((), x.dtype)).astype(x.dtype)


def _some_equal(rng, x):
    if x.size == 0:
        return x
    return np.where(rng.random(x.shape) < 0.5, x.ravel()[0], x)


def _with_specials(values, prob):
    """Replaces a fraction ``prob`` of float entries by each of ``values``."""
    def post(rng, x):
        if x.dtype.kind not in "fc":
            return x
        for v in values:
            x = np.where(rng.random(x.shape) < prob, np.asarray(v, x.dtype), x)
        return x
    return post


def _special(rng, shape, dtype):
    big = float(ml_dtypes.finfo(dtype).max)
    vals = [np.nan, -np.inf, -100., -2., -1., 0., 1., 2., 100., np.inf, big, np.sqrt(big),
            np.sqrt(big) * 2.]
    return np.resize(np.asarray(vals).astype(dtype), shape)


def _int(lo, hi):
    return lambda rng, shape, dtype: rng.integers(int(lo), int(hi), size=shape).astype(dtype)


def _unique(rng, shape, dtype):
    return rng.permutation(int(np.prod(shape))).reshape(shape).astype(dtype)


def _sorted(descending):
    def gen(rng, shape, dtype):
        vals = np.unique(_cast(3 * rng.standard_normal(shape), dtype).ravel())
        vals = np.resize(vals, int(np.prod(shape)))
        vals = np.sort(vals)
        return (vals[::-1] if descending else vals).reshape(shape).astype(dtype)
    return gen


def _fullrange(rng, shape, dtype):
    raw = rng.integers(0, 255, size=int(np.prod(shape)) * dtype.itemsize, dtype=np.uint8)
    vals = raw.view(dtype).reshape(shape)
    if dtype.kind == "f":
        vals = np.where(np.isnan(vals), np.asarray(np.nan, dtype), vals)
    return vals


def _not_small(offset):
    return lambda rng, x: (x + np.where(x > 0, offset, -offset)).astype(x.dtype)


def _some_zero(rng, x):
    return np.where(rng.random(x.shape) < 0.5, np.zeros((), x.dtype), x)


def _uniform(lo=0.0, hi=1.0):
    return _scaled(lambda rng, shape: lo + (hi - lo) * rng.random(shape))


# kind name -> (parameters -> generator(rng, dims, dtype))
KINDS = {
    "default": lambda scale=3.0: _scaled(_normal, scale),
    "small": lambda: _scaled(_normal, 1e-3),
    "positive": lambda: _scaled(_unit, 2.0, _plus_one),
    "nonzero": lambda: _scaled(_normal, 3.0, _nonzero),
    "not_small": lambda offset=10.0: _scaled(_normal, 3.0, _not_small(offset)),
    "small_positive": lambda: _scaled(_unit, 2e-5),
    "uniform": _uniform,
    "some_equal": lambda: _scaled(_normal, 100.0, _some_equal),
    "some_nan": lambda: _scaled(_normal, 3.0, _with_specials([np.nan], 0.1)),
    "some_inf": lambda: _scaled(_normal, 3.0, _with_specials([np.inf, -np.inf], 0.1)),
    "some_inf_and_nan": lambda: _scaled(_normal, 3.0,
                                        _with_specials([np.inf, -np.inf, np.nan], 0.1)),
    "some_zero": lambda: _scaled(_normal, 3.0, _some_zero),
    "bool": lambda: lambda rng, shape, dtype: (rng.random(shape) < 0.5).astype(dtype),
    "int": _int,
    "fullrange": lambda: _fullrange,
    "unique": lambda: _unique,
    "sorted": lambda: _sorted(False),
    "sorted_desc": lambda: _sorted(True),
    "special": lambda: _special,
    "const": lambda v: lambda rng, shape, dtype: np.full(shape, v).astype(dtype),
}


def generate(kind, shape, dtype, rng):
    """An input of ``shape`` (or scalar kind) and dtype name ``dtype``."""
    dtype = np_dtype(dtype)
    name, args = parse(kind)
    if name == "small_float":        # lax_test's reductions: small floats, default integers
        name = "small" if dtype.kind in "fc" else "default"
    value = KINDS[name](*args)(rng, dims(shape), dtype)
    value = np.asarray(value, dtype)
    if shape == "np":
        return value[()]
    if shape == "py":
        return value.item()
    return value
