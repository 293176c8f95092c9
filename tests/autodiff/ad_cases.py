"""Differentiation cases, one or more per primitive: a ptojax function that applies the
primitive, the same function written with JAX, and float64 arguments drawn by hypothesis.

``CASES[name].build(data, J)`` returns ``(pto_fn, jax_fn, args)``: every argument is a float64
array to differentiate; integer operands, indices and params are drawn too and captured by
the two functions. ``jax_fn`` is None where JAX defines no derivative (then only finite
differences judge the rule). ``J`` holds ``jax``, ``lax`` and ``jnp`` (tests get JAX from a
fixture, so this module imports nothing from it).
"""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from ptojax import dtypes, lax
from ptojax.ir.types import TensorType
from helpers import P, positive_definite, separated_spectrum
from ptojax.ops.decompositions import geqrf
from ptojax.ops.eig import eig as _eig
from ptojax.ops.fft import FftType
from ptojax.ops.gather_scatter import gather as point_gather
from ptojax.ops.gather_scatter import scatter as point_scatter
from ptojax.trace import PRIMITIVES



class Case:
    """One way of differentiating a primitive. ``fd_eps``/``fd_rtol`` tune the finite-
    difference check and ``rtol`` the exact ones (JAX, adjoint identity) for functions that
    round through a lower precision; ``finite_differences=False`` where the derivative is by
    definition not the numerical one (stop_gradient); ``jax_reference=False`` where JAX has
    no derivative to compare with (the case's jax_fn is then None)."""

    def __init__(self, prims, build, fd_eps=1e-6, fd_rtol=1e-6, rtol=1e-9,
                 finite_differences=True, jax_reference=True):
        self.prims = prims
        self.build = build
        self.fd_eps = fd_eps
        self.fd_rtol = fd_rtol
        self.rtol = rtol
        self.finite_differences = finite_differences
        self.jax_reference = jax_reference


CASES: dict[str, Case] = {}


def case(name, *prims, **options):
    def register(build):
        CASES[name] = Case(prims, build, **options)
        return build
    return register


# values --------------------------------------------------------------------------------------
def shape_of(data, min_rank=0, max_rank=3, min_size=1):
    rank = data.draw(st.integers(min_rank, max_rank))
    return tuple(data.draw(st.lists(st.integers(min_size, 3), min_size=rank, max_size=rank)))


def rng_of(data):
    return np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))


DOMAINS = {
    "real": lambda r, s: r.standard_normal(s),
    "positive": lambda r, s: np.abs(r.standard_normal(s)) + 0.5,
    "nonzero": lambda r, s: np.where(r.random(s) < 0.5, -1, 1) * (np.abs(r.standard_normal(s))
                                                                  + 0.5),
    "unit": lambda r, s: r.uniform(-0.9, 0.9, s),
    "above_one": lambda r, s: np.abs(r.standard_normal(s)) + 1.5,
    "tan": lambda r, s: r.uniform(-1.2, 1.2, s),
}


def _type(x):
    return TensorType(x.shape, dtypes.canonicalize(x.dtype))


def values(rng, shape, domain="real"):
    return np.asarray(DOMAINS[domain](rng, shape), np.float64)


# elementwise ---------------------------------------------------------------------------------
UNARY = {
    "neg": "real", "abs": "nonzero", "sign": "nonzero", "floor": "real", "ceil": "real",
    "exp": "real", "exp2": "real", "log": "positive", "log1p": "positive", "expm1": "real",
    "sqrt": "positive", "rsqrt": "positive", "cbrt": "nonzero", "tanh": "real",
    "logistic": "real", "sin": "real", "cos": "real", "tan": "tan", "asin": "unit",
    "acos": "unit", "atan": "real", "sinh": "real", "cosh": "real", "asinh": "real",
    "acosh": "above_one", "atanh": "unit", "erf": "real", "erf_inv": "unit", "erfc": "real",
    "lgamma": "positive", "digamma": "positive", "bessel_i0e": "nonzero",
    "bessel_i1e": "nonzero",
}


def _unary_case(name, domain):
    prim = PRIMITIVES[name]

    @case(name, prim)
    def build(data, J):
        x = values(rng_of(data), shape_of(data), domain)
        return (lambda a: prim.bind(a)), getattr(J.lax, name), [x]


for _name, _domain in UNARY.items():
    _unary_case(_name, _domain)


@case("copy", P.copy_p)
def _copy(data, J):
    x = values(rng_of(data), shape_of(data))
    return (lambda a: P.copy_p.bind(a)), (lambda a: J.jnp.array(a, copy=True)), [x]


@case("name", P.name_p)
def _checkpoint_name(data, J):
    x = values(rng_of(data), shape_of(data))
    return (lambda a: lax.mul(P.name_p.bind(lax.sin(a), name="s"), a)), \
        (lambda a: J.lax.sin(a) * a), [x]


@case("stop_gradient", P.stop_gradient_p, finite_differences=False)
def _stop_gradient(data, J):
    x = values(rng_of(data), shape_of(data))
    return (lambda a: lax.mul(lax.stop_gradient(lax.sin(a)), a)), \
        (lambda a: J.lax.stop_gradient(J.lax.sin(a)) * a), [x]


@case("round", P.round_p)
def _round(data, J):
    method = data.draw(st.sampled_from(["half_even", "half_away"]))
    jax_method = {"half_even": J.lax.RoundingMethod.TO_NEAREST_EVEN,
                  "half_away": J.lax.RoundingMethod.AWAY_FROM_ZERO}[method]
    x = values(rng_of(data), shape_of(data))
    return (lambda a: lax.mul(P.round_p.bind(a, method=method), a)), \
        (lambda a: J.lax.round(a, jax_method) * a), [x]


@case("integer_pow", P.integer_pow_p)
def _integer_pow(data, J):
    y = data.draw(st.integers(-3, 4))
    x = values(rng_of(data), shape_of(data), "nonzero")
    return (lambda a: lax.integer_pow(a, y)), (lambda a: J.lax.integer_pow(a, y)), [x]


BINARY = {"add": ("real", "real"), "sub": ("real", "real"), "mul": ("real", "real"),
          "div": ("real", "nonzero"), "rem": ("real", "nonzero"),
          "pow": ("positive", "real"), "max": ("real", "real"), "min": ("real", "real"),
          "atan2": ("real", "real")}


def _binary_operands(data, domains):
    """Two operands of one shape, or one of them rank 0 (elementwise ops broadcast it)."""
    rng, shape = rng_of(data), shape_of(data)
    scalar = data.draw(st.sampled_from([None, 0, 1]))
    return [values(rng, () if i == scalar else shape, d) for i, d in enumerate(domains)]


def _binary_case(name, domains):
    prim = PRIMITIVES[name]

    @case(name, prim)
    def build(data, J):
        jax_op = getattr(J.lax, name)
        return (lambda a, b: prim.bind(a, b)), \
            (lambda a, b: jax_op(*J.jnp.broadcast_arrays(a, b))), \
            _binary_operands(data, domains)


for _name, _domains in BINARY.items():
    _binary_case(_name, _domains)


@case("nextafter", P.nextafter_p, jax_reference=False)
def _nextafter(data, J):  # JAX defines no derivative; ours is that of x (a one-ulp step)
    return (lambda a, b: P.nextafter_p.bind(a, b)), None, _binary_operands(data, ("real",
                                                                                   "real"))


COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")


def _comparison_case(name):
    prim = PRIMITIVES[name]

    @case(name, prim)
    def build(data, J):
        rng, shape = rng_of(data), shape_of(data)
        x, y = values(rng, shape), values(rng, shape)
        jax_op = getattr(J.lax, name)
        return (lambda a, b: lax.select(prim.bind(a, b), lax.sin(a), b)), \
            (lambda a, b: J.lax.select(jax_op(a, b), J.lax.sin(a), b)), [x, y]


for _name in COMPARISONS:
    _comparison_case(_name)


@case("is_finite", P.is_finite_p)
def _is_finite(data, J):
    x = values(rng_of(data), shape_of(data))
    return (lambda a: lax.select(lax.is_finite(lax.div(1.0, a)), a, lax.neg(a))), \
        (lambda a: J.lax.select(J.lax.is_finite(1.0 / a), a, -a)), [x]


def _bits(a, J=None):
    """Integer bits derived from a float array (so integer primitives sit inside a
    differentiated function)."""
    if J is None:
        return lax.convert_element_type(lax.floor(lax.mul(a, 4.0)), dtypes.int32)
    return J.lax.convert_element_type(J.lax.floor(a * 4.0), J.jnp.int32)


INTEGER_OPS = {"and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
               "shift_left": "shift_left", "shift_right_logical": "shift_right_logical",
               "shift_right_arithmetic": "shift_right_arithmetic", "mulhi": "mulhi",
               "population_count": "population_count", "clz": "clz"}


def _integer_op_case(name, jax_name):
    prim = PRIMITIVES[name]
    unary = name in ("population_count", "clz")

    # XLA:CPU fails to compile a scalar mulhi inside JAX's jitted jvp reference
    @case(name, prim, jax_reference=name != "mulhi")
    def build(data, J):
        x = (np.floor(values(rng_of(data), shape_of(data)) * 4) + 0.5) / 4   # mid-step of _bits
        jax_op = getattr(J.lax, jax_name)

        def pto_fn(a):
            bits = _bits(a)
            k = prim.bind(bits) if unary else prim.bind(bits, lax.full((), 3, dtypes.int32))
            return lax.mul(lax.convert_element_type(k, dtypes.float64), a)

        def jax_fn(a):
            bits = _bits(a, J)
            k = jax_op(bits) if unary else jax_op(bits, J.jnp.full(bits.shape, 3, "int32"))
            return k.astype(J.jnp.float64) * a
        return pto_fn, jax_fn, [x]


for _name, _jax_name in INTEGER_OPS.items():
    _integer_op_case(_name, _jax_name)


@case("bitcast_convert_type", P.bitcast_convert_type_p)
def _bitcast(data, J):
    # each value in the middle of its step of bits >> 20 (a float32's top 12 bits), away
    # from zero: far from the steps, so finite differences never cross one
    bits = values(rng_of(data), shape_of(data), "nonzero").astype(np.float32).view(np.int32)
    x = ((bits & ~0xFFFFF) | 0x80000).view(np.float32).astype(np.float64)

    def pto_fn(a):
        k = lax.bitcast_convert_type(lax.convert_element_type(a, dtypes.float32), dtypes.int32)
        return lax.mul(lax.convert_element_type(lax.shift_right_logical(k, 20), dtypes.float64),
                       a)

    def jax_fn(a):
        k = J.lax.bitcast_convert_type(a.astype(J.jnp.float32), J.jnp.int32)
        return J.lax.shift_right_logical(k, J.jnp.int32(20)).astype(J.jnp.float64) * a
    return pto_fn, jax_fn, [x]


@case("reduce_precision", P.reduce_precision_p)
def _reduce_precision(data, J):
    """Full float64 precision with float32's exponent range (the values stay inside it), so
    the map JAX treats as linear is the identity and the adjoint identity holds exactly."""
    x = values(rng_of(data), shape_of(data))
    return (lambda a: lax.mul(lax.reduce_precision(a, 8, 52), a)), \
        (lambda a: J.lax.reduce_precision(a, 8, 52) * a), [x]


@case("not", P.not_p)
def _not(data, J):
    x = values(rng_of(data), shape_of(data))
    return (lambda a: lax.select(lax.bitwise_not(lax.gt(a, 0.0)), a, lax.sin(a))), \
        (lambda a: J.lax.select(J.lax.bitwise_not(a > 0), a, J.lax.sin(a))), [x]


@case("select", P.select_p)
def _select(data, J):
    rng, shape = rng_of(data), shape_of(data)
    pred = rng.random(shape) < 0.5
    scalar = data.draw(st.sampled_from([None, 0, 1]))
    x, y = (values(rng, () if i == scalar else shape) for i in range(2))
    return (lambda a, b: P.select_p.bind(pred, a, b)), \
        (lambda a, b: J.lax.select(pred, *J.jnp.broadcast_arrays(a, b))), [x, y]


@case("clamp", P.clamp_p)
def _clamp(data, J):
    rng, shape = rng_of(data), shape_of(data)
    lo_shape = data.draw(st.sampled_from([(), shape]))
    hi_shape = data.draw(st.sampled_from([(), shape]))
    lo, x = values(rng, lo_shape) - 1.0, values(rng, shape) * 2
    hi = np.max(lo) + values(rng, hi_shape, "positive")  # lo < hi, where clamp is defined
    return (lambda a, b, c: P.clamp_p.bind(a, b, c)), \
        (lambda a, b, c: J.lax.clamp(*J.jnp.broadcast_arrays(a, b, c))), [lo, x, hi]


@case("convert_element_type", P.convert_element_type_p, fd_eps=1e-2, fd_rtol=1e-4,
      rtol=1e-6)
def _convert(data, J):
    x = values(rng_of(data), shape_of(data))

    def pto_fn(a):
        low = lax.convert_element_type(a, dtypes.float32)
        return lax.convert_element_type(lax.mul(low, low), dtypes.float64)

    def jax_fn(a):
        low = a.astype(J.jnp.float32)
        return (low * low).astype(J.jnp.float64)
    return pto_fn, jax_fn, [x]


# complex parts: real functions of real inputs through complex intermediates -------------------
@case("complex", P.complex_p, P.imag_p)
def _complex(data, J):
    shape = shape_of(data)
    x, y = values(rng_of(data), shape), values(rng_of(data), shape)

    def pto_fn(a, b):
        z = lax.complex(a, b)
        return lax.imag(lax.mul(z, lax.exp(z)))

    def jax_fn(a, b):
        z = J.lax.complex(a, b)
        return J.lax.imag(z * J.lax.exp(z))
    return pto_fn, jax_fn, [x, y]


@case("real", P.real_p)
def _real(data, J):
    shape = shape_of(data)
    x, y = values(rng_of(data), shape), values(rng_of(data), shape)
    return (lambda a, b: lax.real(lax.sin(lax.complex(a, b)))), \
        (lambda a, b: J.lax.real(J.lax.sin(J.lax.complex(a, b)))), [x, y]


@case("conj", P.conj_p)
def _conj(data, J):
    """conj of a complex value, and of a real one (which makes it complex)."""
    shape = shape_of(data)
    x, y = values(rng_of(data), shape), values(rng_of(data), shape)

    def pto_fn(a, b):
        z = lax.complex(a, b)
        return lax.imag(lax.mul(lax.mul(lax.conj(z), lax.conj(a)), lax.exp(z)))

    def jax_fn(a, b):
        z = J.lax.complex(a, b)
        return J.lax.imag(J.lax.conj(z) * J.lax.conj(a) * J.lax.exp(z))
    return pto_fn, jax_fn, [x, y]


# special functions of two or three operands ---------------------------------------------------
# JAX compiles igamma's while loops for seconds per shape: its gradients are compared once,
# in tests/ops/test_special_functions.py; here finite differences and the adjoint identity
@case("igamma", P.igamma_p, P.igamma_grad_a_p, fd_rtol=1e-5, jax_reference=False)
def _igamma(data, J):
    """Both derivatives of igamma; the one in a is igamma_grad_a (itself not differentiable,
    as in JAX)."""
    rng, shape = rng_of(data), shape_of(data)
    a, x = values(rng, shape, "positive") * 3, values(rng, shape, "positive") * 3
    return (lambda u, v: lax.igamma(u, v)), (lambda u, v: J.lax.igamma(u, v)), [a, x]


@case("igammac", P.igammac_p, fd_rtol=1e-5, jax_reference=False)
def _igammac(data, J):
    rng, shape = rng_of(data), shape_of(data)
    a, x = values(rng, shape, "positive") * 3, values(rng, shape, "positive") * 3
    return (lambda u, v: lax.igammac(u, v)), (lambda u, v: J.lax.igammac(u, v)), [a, x]


@case("betainc", P.betainc_p, jax_reference=False)   # compared with JAX once, as igamma
def _betainc(data, J):
    """Differentiable in x only (as in JAX): a and b are captured."""
    rng, shape = rng_of(data), shape_of(data)
    a, b = values(rng, shape, "positive") * 2, values(rng, shape, "positive") * 2
    x = rng.uniform(0.05, 0.95, shape)
    return (lambda v: lax.betainc(a, b, v)), (lambda v: J.lax.betainc(a, b, v)), [x]


# fft -------------------------------------------------------------------------------------------
@case("fft", P.fft_p)
def _fft(data, J):
    """Each kind between real inputs and a real output (complex in the middle)."""
    kind = data.draw(st.sampled_from(list(FftType)))
    lengths = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=2)))
    lead = tuple(data.draw(st.lists(st.integers(1, 2), max_size=1)))
    rng = rng_of(data)
    jax_kind = J.lax.FftType(int(kind))
    weight = 0.3 + 0.7j
    if kind == FftType.RFFT:
        x = values(rng, lead + lengths)
        return (lambda a: lax.real(lax.mul(lax.fft(a, kind, lengths), weight))), \
            (lambda a: J.lax.real(J.lax.fft(a, jax_kind, lengths) * weight)), [x]
    minor = (*lengths[:-1], lengths[-1] // 2 + 1) if kind == FftType.IRFFT else lengths
    x, y = values(rng, lead + minor), values(rng, lead + minor)
    if kind == FftType.IRFFT:
        return (lambda a, b: lax.fft(lax.complex(a, b), kind, lengths)), \
            (lambda a, b: J.lax.fft(J.lax.complex(a, b), jax_kind, lengths)), [x, y]
    return (lambda a, b: lax.imag(lax.mul(lax.fft(lax.complex(a, b), kind, lengths), weight))), \
        (lambda a, b: J.lax.imag(J.lax.fft(J.lax.complex(a, b), jax_kind, lengths) * weight)), \
        [x, y]


# reductions ----------------------------------------------------------------------------------
def _axes(data, ndim):
    return tuple(sorted(data.draw(st.sets(st.integers(0, ndim - 1), max_size=ndim))
                        if ndim else ()))


REDUCTIONS = {"reduce_sum": "real", "reduce_max": "real", "reduce_min": "real",
              "reduce_prod": "nonzero"}


def _reduction_case(name, domain):
    prim = PRIMITIVES[name]

    @case(name, prim)
    def build(data, J):
        x = values(rng_of(data), shape_of(data), domain)
        axes = _axes(data, x.ndim)
        jax_op = getattr(J.lax, name)
        return (lambda a: prim.bind(a, axes=axes)), (lambda a: jax_op(a, axes)), [x]


for _name, _domain in REDUCTIONS.items():
    _reduction_case(_name, _domain)


def _arg_case(name):
    prim = PRIMITIVES[name]

    @case(name, prim)
    def build(data, J):
        x = values(rng_of(data), shape_of(data, min_rank=1))
        axis = data.draw(st.integers(0, x.ndim - 1))
        jax_op = getattr(J.lax, name)

        def pto_fn(a):
            i = prim.bind(a, axis=axis, index_dtype=dtypes.int32)
            return lax.mul(lax.convert_element_type(i, dtypes.float64),
                           lax.reduce_sum(a, (axis,)))

        def jax_fn(a):
            i = jax_op(a, axis, J.jnp.int32)
            return i.astype(J.jnp.float64) * J.jnp.sum(a, axis)
        return pto_fn, jax_fn, [x]


for _name in ("argmax", "argmin"):
    _arg_case(_name)


def _logic_reduction_case(name, jax_name):
    prim = PRIMITIVES[name]

    @case(name, prim)
    def build(data, J):
        x = values(rng_of(data), shape_of(data, min_rank=1))
        axes = _axes(data, x.ndim)
        jax_reduce = getattr(J.jnp, jax_name, None) or (
            lambda m, axis: getattr(J.lax, jax_name)(m, tuple(axis)))

        def pto_fn(a):
            hit = prim.bind(lax.gt(a, 0.0), axes=axes)
            return lax.select(hit, lax.reduce_sum(a, axes), lax.reduce_max(a, axes))

        def jax_fn(a):
            hit = jax_reduce(a > 0, axis=axes)
            return J.lax.select(hit, J.jnp.sum(a, axes), J.jnp.max(a, axes))
        return pto_fn, jax_fn, [x]


_logic_reduction_case("reduce_and", "all")
_logic_reduction_case("reduce_or", "any")
_logic_reduction_case("reduce_xor", "reduce_xor")


CUMULATIVE = {"cumsum": "real", "cumprod": "nonzero", "cummax": "real", "cummin": "real",
              "cumlogsumexp": "real"}


def _cumulative_case(name, domain):
    prim = PRIMITIVES[name]

    @case(name, prim)
    def build(data, J):
        x = values(rng_of(data), shape_of(data, min_rank=1, max_rank=2) + (
            data.draw(st.integers(1, 9)),), domain)
        axis = data.draw(st.integers(0, x.ndim - 1))
        reverse = data.draw(st.booleans())
        jax_op = getattr(J.lax, name)
        return (lambda a: prim.bind(a, axis=axis, reverse=reverse)), \
            (lambda a: jax_op(a, axis, reverse)), [x]


for _name, _domain in CUMULATIVE.items():
    _cumulative_case(_name, _domain)


# shapes --------------------------------------------------------------------------------------
@case("broadcast_in_dim", P.broadcast_in_dim_p)
def _broadcast_in_dim(data, J):
    x = values(rng_of(data), shape_of(data))
    extra = data.draw(st.lists(st.integers(1, 3), max_size=2))
    out_ndim = x.ndim + len(extra)
    dims = tuple(sorted(data.draw(st.permutations(range(out_ndim)))[:x.ndim]))
    shape, free = [], iter(extra)
    for d in range(out_ndim):
        shape.append(x.shape[dims.index(d)] if d in dims else next(free))
    shape = [data.draw(st.integers(1, 3)) if d in dims and x.shape[dims.index(d)] == 1 else n
             for d, n in enumerate(shape)]
    shape = tuple(shape)
    return (lambda a: P.broadcast_in_dim_p.bind(a, shape=shape, broadcast_dimensions=dims)), \
        (lambda a: J.lax.broadcast_in_dim(a, shape, dims)), [x]


@case("reshape", P.reshape_p)
def _reshape(data, J):
    x = values(rng_of(data), shape_of(data))
    sizes = list(x.shape)
    if sizes and data.draw(st.booleans()):
        k = data.draw(st.integers(0, len(sizes) - 1))
        sizes[k:k + 2] = [math.prod(sizes[k:k + 2])]
    sizes.insert(data.draw(st.integers(0, len(sizes))), 1)
    sizes = tuple(sizes)
    return (lambda a: P.reshape_p.bind(a, new_sizes=sizes)), \
        (lambda a: J.lax.reshape(a, sizes)), [x]


@case("transpose", P.transpose_p)
def _transpose(data, J):
    x = values(rng_of(data), shape_of(data))
    perm = tuple(data.draw(st.permutations(range(x.ndim))))
    return (lambda a: P.transpose_p.bind(a, permutation=perm)), \
        (lambda a: J.lax.transpose(a, perm)), [x]


@case("squeeze", P.squeeze_p)
def _squeeze(data, J):
    rng, shape = rng_of(data), list(shape_of(data))
    shape.insert(data.draw(st.integers(0, len(shape))), 1)
    dims = tuple(d for d, n in enumerate(shape) if n == 1)
    x = values(rng, tuple(shape))
    return (lambda a: P.squeeze_p.bind(a, dimensions=dims)), \
        (lambda a: J.lax.squeeze(a, dims)), [x]


@case("expand_dims", P.expand_dims_p)
def _expand_dims(data, J):
    x = values(rng_of(data), shape_of(data))
    n = data.draw(st.integers(1, 2))
    dims = tuple(sorted(data.draw(st.permutations(range(x.ndim + n)))[:n]))
    return (lambda a: P.expand_dims_p.bind(a, dimensions=dims)), \
        (lambda a: J.lax.expand_dims(a, dims)), [x]


@case("rev", P.rev_p)
def _rev(data, J):
    x = values(rng_of(data), shape_of(data, min_rank=1))
    dims = _axes(data, x.ndim)
    return (lambda a: P.rev_p.bind(a, dimensions=dims)), (lambda a: J.lax.rev(a, dims)), [x]


@case("slice", P.slice_p)
def _slice(data, J):
    x = values(rng_of(data), shape_of(data, min_rank=1, max_rank=3) + (5,))
    starts, limits, strides = [], [], []
    for n in x.shape:
        lo = data.draw(st.integers(0, n - 1))
        starts.append(lo)
        limits.append(data.draw(st.integers(lo + 1, n)))
        strides.append(data.draw(st.integers(1, 3)))
    starts, limits, strides = tuple(starts), tuple(limits), tuple(strides)
    return (lambda a: lax.slice(a, starts, limits, strides)), \
        (lambda a: J.lax.slice(a, starts, limits, strides)), [x]


@case("concatenate", P.concatenate_p)
def _concatenate(data, J):
    rng, shape = rng_of(data), shape_of(data, min_rank=1)
    axis = data.draw(st.integers(0, len(shape) - 1))
    xs = []
    for _ in range(data.draw(st.integers(2, 3))):
        s = list(shape)
        s[axis] = data.draw(st.integers(1, 3))
        xs.append(values(rng, tuple(s)))
    return (lambda *a: P.concatenate_p.bind(*a, dimension=axis)), \
        (lambda *a: J.lax.concatenate(a, axis)), xs


@case("pad", P.pad_p)
def _pad(data, J):
    rng = rng_of(data)
    x = values(rng, shape_of(data, min_rank=1))
    config = []
    for n in x.shape:
        interior = data.draw(st.integers(0, 2))
        full = n + (n - 1) * interior
        lo = data.draw(st.integers(-(full - 1), 2))
        hi = data.draw(st.integers(-(full + lo - 1), 2))
        config.append((lo, hi, interior))
    config = tuple(config)
    value = values(rng, ())
    return (lambda a, v: P.pad_p.bind(a, v, padding_config=config)), \
        (lambda a, v: J.lax.pad(a, v, config)), [x, value]


@case("iota", P.iota_p)
def _iota(data, J):
    x = values(rng_of(data), shape_of(data, min_rank=1))
    dim = data.draw(st.integers(0, x.ndim - 1))

    def pto_fn(a):
        return lax.mul(a, lax.broadcasted_iota(dtypes.float64, a.shape, dim))
    return pto_fn, (lambda a: a * J.lax.broadcasted_iota(J.jnp.float64, a.shape, dim)), [x]


# indexing ------------------------------------------------------------------------------------
def _starts(data, shape, sizes):
    """Start indices, some negative (counted from the end once) or out of range (clamped),
    as both ptojax and JAX treat them."""
    return [np.int32(data.draw(st.integers(-2, n - k + 2))) for n, k in zip(shape, sizes)]


@case("dynamic_slice", P.dynamic_slice_p)
def _dynamic_slice(data, J):
    x = values(rng_of(data), shape_of(data, min_rank=1))
    sizes = tuple(data.draw(st.integers(1, n)) for n in x.shape)
    starts = _starts(data, x.shape, sizes)
    return (lambda a: lax.dynamic_slice(a, starts, sizes)), \
        (lambda a: J.lax.dynamic_slice(a, starts, sizes)), [x]


@case("dynamic_update_slice", P.dynamic_update_slice_p)
def _dynamic_update_slice(data, J):
    rng = rng_of(data)
    x = values(rng, shape_of(data, min_rank=1))
    update = values(rng, tuple(data.draw(st.integers(1, n)) for n in x.shape))
    starts = _starts(data, x.shape, update.shape)
    return (lambda a, u: lax.dynamic_update_slice(a, u, starts)), \
        (lambda a, u: J.lax.dynamic_update_slice(a, u, starts)), [x, update]


def _gather_layout(data, rng, unique=False):
    """(operand, indices, axes, nbatch) with some indices out of bounds (negative or too big);
    ``unique`` draws distinct in-bounds targets."""
    x = values(rng, shape_of(data, min_rank=1))
    nbatch = data.draw(st.integers(0, x.ndim - 1))
    o_shape = x.shape[nbatch:]
    axes = tuple(data.draw(st.permutations(range(len(o_shape))))[
        :data.draw(st.integers(1, len(o_shape)))])
    bounds = [o_shape[a] for a in axes]
    if unique:
        count = data.draw(st.integers(1, math.prod(bounds)))
        flat = rng.permutation(math.prod(bounds))[:count]
        lead = x.shape[:nbatch] + (count,)
        picks = np.broadcast_to(np.stack(np.unravel_index(flat, bounds), -1),
                                lead + (len(axes),))
        return x, np.ascontiguousarray(picks).astype(np.int32), axes, nbatch
    lead = x.shape[:nbatch] + tuple(data.draw(st.lists(st.integers(1, 3), max_size=2)))
    idx = np.stack([rng.integers(-2, b + 2, size=lead) for b in bounds], -1)
    return x, idx.astype(np.int32), axes, nbatch


def _jax_indexed(J, fn, nbatch, axes):
    """``fn(operand with axes moved to the front, index tuple, *rest)`` mapped over the
    leading ``nbatch`` dims of every argument."""
    def one(x, idx, *rest):
        front = J.jnp.moveaxis(x, axes, tuple(range(len(axes))))
        return fn(front, tuple(idx[..., j] for j in range(len(axes))), *rest)
    for _ in range(nbatch):
        one = J.jax.vmap(one)
    return one


def _jax_indices(idx, x_shape, mode):
    """ptojax indices as JAX reads them: a negative index is out of bounds in ptojax (JAX
    would wrap it), so it becomes 0 in clip mode and a too-large index otherwise."""
    if mode == "clip":
        return np.maximum(idx, 0)
    too_big = max(x_shape) + 5
    return np.where(idx < 0, too_big, idx)


@case("gather", P.gather_p)
def _gather(data, J):
    x, idx, axes, nbatch = _gather_layout(data, rng_of(data))
    mode = data.draw(st.sampled_from(["clip", "fill"]))
    jidx = _jax_indices(idx, x.shape, mode)
    get = _jax_indexed(J, lambda f, i: f.at[i].get(mode=mode, fill_value=-7.0), nbatch, axes)
    return (lambda a: point_gather(a, idx, axes, nbatch, mode, fill_value=-7.0)), \
        (lambda a: get(a, jidx)), [x]


SCATTER_JAX = {"add": "add", "set": "set", "mul": "multiply", "min": "min", "max": "max"}


@case("scatter", P.scatter_p)
def _scatter(data, J):
    mode = data.draw(st.sampled_from(sorted(SCATTER_JAX)))
    rng = rng_of(data)
    x, idx, axes, nbatch = _gather_layout(data, rng, unique=mode != "add")
    out_shape = P.gather_p.abstract_eval(_type(x), _type(idx), axes=axes, nbatch=nbatch).shape
    updates = values(rng, out_shape, "nonzero" if mode == "mul" else "real")
    jidx = _jax_indices(idx, x.shape, "drop")

    def put(front, i, u):
        moved = getattr(front.at[i], SCATTER_JAX[mode])(u, mode="drop",
                                                        unique_indices=mode != "add")
        return J.jnp.moveaxis(moved, tuple(range(len(axes))), axes)
    jax_scatter = _jax_indexed(J, put, nbatch, axes)
    return (lambda a, u: point_scatter(a, idx, u, axes, nbatch, mode)), \
        (lambda a, u: jax_scatter(a, jidx, u)), [x, updates]


@case("scatter_duplicate_targets", P.scatter_p, jax_reference=False)
def _scatter_duplicates(data, J):
    """Several updates per target (JAX differentiates scatter-mul only for unique indices and
    leaves the winner of a scatter-set unspecified): the last update wins a set, products
    and extrema combine them all."""
    mode = data.draw(st.sampled_from(sorted(SCATTER_JAX)))
    rng = rng_of(data)
    x = values(rng, shape_of(data, min_rank=1, max_rank=2))
    n = x.shape[0]
    idx = rng.integers(0, n, size=(n + 2, 1)).astype(np.int32)
    updates = values(rng, (n + 2,) + x.shape[1:], "nonzero" if mode == "mul" else "real")
    return (lambda a, u: point_scatter(a, idx, u, (0,), 0, mode)), None, [x, updates]


# linear algebra, sorting ---------------------------------------------------------------------
@case("dot_general", P.dot_general_p)
def _dot_general(data, J):
    rng = rng_of(data)
    nb, nc = data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))
    lf, rf = data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))
    sizes = [data.draw(st.integers(1, 3)) for _ in range(nb + nc)]
    lhs_sizes = sizes + [data.draw(st.integers(1, 3)) for _ in range(lf)]
    rhs_sizes = sizes + [data.draw(st.integers(1, 3)) for _ in range(rf)]
    lhs_perm = data.draw(st.permutations(range(nb + nc + lf)))
    rhs_perm = data.draw(st.permutations(range(nb + nc + rf)))
    where_l = {p: i for i, p in enumerate(lhs_perm)}
    where_r = {p: i for i, p in enumerate(rhs_perm)}
    dn = ((tuple(where_l[nb + k] for k in range(nc)), tuple(where_r[nb + k] for k in range(nc))),
          (tuple(where_l[k] for k in range(nb)), tuple(where_r[k] for k in range(nb))))
    lhs = values(rng, tuple(lhs_sizes[p] for p in lhs_perm))
    rhs = values(rng, tuple(rhs_sizes[p] for p in rhs_perm))
    return (lambda a, b: lax.dot_general(a, b, dn)), \
        (lambda a, b: J.lax.dot_general(a, b, dn)), [lhs, rhs]


@case("sort", P.sort_p)
def _sort(data, J):
    rng, shape = rng_of(data), shape_of(data, min_rank=1)
    n = data.draw(st.integers(1, 3))
    num_keys = data.draw(st.integers(1, n))
    dim = data.draw(st.integers(0, len(shape) - 1))
    xs = [values(rng, shape) for _ in range(n)]
    return (lambda *a: tuple(lax.sort(a, dim, num_keys=num_keys))), \
        (lambda *a: tuple(J.lax.sort(a, dim, num_keys=num_keys))), xs


# decompositions: well-conditioned inputs (separated eigenvalues, singular values and pivots)
# and outputs invariant under the sign conventions of eigen- and singular vectors ---------------
def _stack_of(data, max_rank=1):
    return tuple(data.draw(st.lists(st.integers(1, 2), max_size=max_rank)))


def _linalg_fd(name, *prims, **options):
    return case(name, *prims, fd_rtol=1e-5, rtol=1e-8, **options)


@_linalg_fd("cholesky", P.cholesky_p)
def _cholesky(data, J):
    rng, stack, n = rng_of(data), _stack_of(data), data.draw(st.integers(1, 4))
    return lax.linalg.cholesky, J.lax.linalg.cholesky, [positive_definite(rng, (*stack, n, n))]


@_linalg_fd("triangular_solve", P.triangular_solve_p)
def _triangular_solve(data, J):
    rng, stack, m = rng_of(data), _stack_of(data), data.draw(st.integers(1, 4))
    k = data.draw(st.integers(1, 3))
    params = {f: data.draw(st.booleans())
              for f in ("left_side", "lower", "transpose_a", "unit_diagonal")}
    a = rng.standard_normal((*stack, m, m)) + 3 * np.eye(m)
    b = rng.standard_normal((*stack, *((m, k) if params["left_side"] else (k, m))))
    return (lambda a, b: lax.linalg.triangular_solve(a, b, **params)), \
        (lambda a, b: J.lax.linalg.triangular_solve(a, b, **params)), [a, b]


def _clear_pivots(rng, stack, m, n):
    """A matrix whose partial pivoting is clear-cut: in each of the first min(m, n) columns
    one entry, in a distinct row, is far larger than the others."""
    x = rng.standard_normal((*stack, m, n))
    k = min(m, n)
    rows = np.argsort(rng.random((*stack, m)), axis=-1)[..., :k]
    for index in np.ndindex(*stack):
        x[index][rows[index], np.arange(k)] += 10.0
    return x


@_linalg_fd("lu", P.lu_p)
def _lu(data, J):
    rng, stack = rng_of(data), _stack_of(data)
    m, n = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    x = _clear_pivots(rng, stack, m, n)
    return (lambda a: lax.linalg.lu(a)[0]), (lambda a: J.lax.linalg.lu(a)[0]), [x]


@case("lu_pivots_to_permutation", P.lu_pivots_to_permutation_p)
def _lu_pivots_to_permutation(data, J):
    """Integer-valued: no derivative flows through the permutation."""
    rng, n = rng_of(data), data.draw(st.integers(1, 4))
    pivots = np.array([rng.integers(j, n) for j in range(n)], np.int32)
    x = values(rng, (n,))
    order = np.asarray(lax.linalg.lu_pivots_to_permutation(pivots, n), np.float64)
    return (lambda a: lax.mul(a, lax.convert_element_type(
        lax.linalg.lu_pivots_to_permutation(pivots, n), dtypes.float64))), \
        (lambda a: a * order), [x]


@_linalg_fd("qr", P.qr_p)
def _qr(data, J):
    rng, stack = rng_of(data), _stack_of(data)
    m, n = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    full = data.draw(st.booleans())
    x = rng.standard_normal((*stack, m, n))
    return (lambda a: lax.linalg.qr(a, full_matrices=full)), \
        (lambda a: J.lax.linalg.qr(a, full_matrices=full)), [x]


@_linalg_fd("qr_pivoting", P.qr_p)
def _qr_pivoting(data, J):
    """Unstacked and not wide: JAX's pivoting rule fails on stacks and is wrong for wide
    matrices (tests/ops/test_decompositions.py checks ours against finite differences)."""
    rng, n = rng_of(data), data.draw(st.integers(1, 4))
    m = data.draw(st.integers(n, 5))
    x = rng.standard_normal((m, n)) * np.arange(1, n + 1) * 2.0  # separated column norms
    full = data.draw(st.booleans())
    return (lambda a: lax.linalg.qr(a, full_matrices=full, pivoting=True)[:2]), \
        (lambda a: J.lax.linalg.qr(a, full_matrices=full, pivoting=True)[:2]), [x]


@case("geqrf", P.geqrf_p)
def _geqrf(data, J):
    """geqrf has no derivative (as in JAX): only its use on values not being
    differentiated, which must leave the derivative alone."""
    rng = rng_of(data)
    x, fixed = values(rng, (3, 2)), values(rng, (3, 2))
    factor = np.asarray(geqrf(fixed)[0])
    return (lambda a: lax.mul(a, geqrf(fixed)[0])), (lambda a: a * factor), [x]


@_linalg_fd("eigh", P.eigh_p)
def _eigh(data, J):
    rng, stack, n = rng_of(data), _stack_of(data), data.draw(st.integers(1, 4))
    lower = data.draw(st.booleans())

    def invariant(eigh):
        def fn(a):
            v, w = eigh(a, lower=lower)
            return w, v * v
        return fn
    return invariant(lax.linalg.eigh), invariant(J.lax.linalg.eigh), \
        [separated_spectrum(rng, (*stack, n, n), symmetric=True)]


@_linalg_fd("eig", P.eig_p)
def _eigvals(data, J):
    """The eigenvalues of a general matrix (distinct: a separated spectrum), as real and
    imaginary parts; JAX differentiates eigenvalues only."""
    rng, stack, n = rng_of(data), _stack_of(data), data.draw(st.integers(1, 4))

    def parts(w):
        return lax.real(w), lax.imag(w)
    return (lambda a: parts(_eig(a, compute_eigenvectors=False)[0])), \
        (lambda a: (lambda w: (w.real, w.imag))(
            J.lax.linalg.eig(a, compute_left_eigenvectors=False,
                             compute_right_eigenvectors=False)[0])), \
        [separated_spectrum(rng, (*stack, n, n))]


@_linalg_fd("svd", P.svd_p)
def _svd(data, J):
    rng, stack = rng_of(data), _stack_of(data)
    m, n = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    uv = data.draw(st.booleans())
    full = uv and m == n and data.draw(st.booleans())
    x = separated_spectrum(rng, (*stack, m, n))

    def invariant(svd):
        def fn(a):
            if not uv:
                return svd(a, full_matrices=full, compute_uv=False)
            u, s, vt = svd(a, full_matrices=full)
            return s, u * u, vt * vt
        return fn
    return invariant(lax.linalg.svd), invariant(J.lax.linalg.svd), [x]


@case("threefry2x32", P.threefry2x32_p)
def _threefry(data, J):
    x = values(rng_of(data), shape_of(data))

    def random_factor():
        key = lax.convert_element_type(7, dtypes.uint32)
        bits, _ = P.threefry2x32_p.bind(key, key, key, key)
        return lax.convert_element_type(lax.shift_right_logical(bits, key), dtypes.float64)

    factor = np.asarray(random_factor())  # integer bits: no derivative flows through them
    return (lambda a: lax.mul(a, random_factor())), (lambda a: a * factor), [x]
