"""Valid (operands, params) for every primitive of ptojax/ops/{elementwise, reductions, shape,
indexing, linalg, decompositions, sorting, random_bits}, drawn with hypothesis. Used to check that each numpy
impl returns exactly the shapes and dtypes its abstract eval promises (the jit executor trusts
them)."""
import math

import numpy as np
from hypothesis import strategies as st

from ptojax import dtypes
from ptojax.errors import PtoError
from ptojax.ir.types import TensorType
from helpers import P
from ptojax.ops.convolution import ConvDimensionNumbers
from ptojax.ops.fft import FftType
from ptojax.ops.gather_scatter import SCATTER_MODES
from ptojax.trace import PRIMITIVES

CUMULATIVE = ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp")

# not int4 & co: ml_dtypes' loops answer in int8, which eager evaluation and the jit executor
# convert back; nor float8_e8m0fnu (a scale type: no zero, no sign, so random values are
# mostly NaN). tests/ops/test_narrow_dtypes.py compares them with JAX.
ALL_DTYPES = sorted(dtypes.SUPPORTED - dtypes.NARROW_INTS - {dtypes.float8_e8m0fnu}, key=str)
INT_DTYPES = sorted(dtypes.INTEGERS - dtypes.NARROW_INTS, key=str)
NUMERIC_DTYPES = [d for d in ALL_DTYPES if d != dtypes.bool_]
REAL_DTYPES = [d for d in ALL_DTYPES if not dtypes.is_complex(d)]

UNARY = ["neg", "abs", "sign", "floor", "ceil", "is_finite", "exp", "exp2", "log", "log1p",
         "expm1", "sqrt", "rsqrt", "cbrt", "tanh", "logistic", "sin", "cos", "tan", "asin",
         "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erf_inv", "erfc",
         "lgamma", "digamma", "not", "real", "imag", "conj", "bessel_i0e", "bessel_i1e",
         "population_count", "clz",
         "stop_gradient", "copy"]
BINARY = ["add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "nextafter", "eq",
          "ne", "lt", "le", "gt", "ge", "and", "or", "xor", "shift_left",
          "shift_right_logical", "complex", "igamma", "igammac", "igamma_grad_a", "mulhi",
          "shift_right_arithmetic"]


def random_values(rng, shape, dtype) -> np.ndarray:
    """Small, read-only values of ``dtype`` (nonzero for integers, so divisions are defined)."""
    if dtype == dtypes.bool_:
        out = rng.random(shape) < 0.5
    elif dtypes.is_integer(dtype):
        lo = 1 if dtypes.is_unsigned(dtype) else -9
        out = rng.integers(lo, 10, size=shape)
        out = np.where(out == 0, 1, out).astype(dtype)
    elif dtypes.is_complex(dtype):
        out = (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dtype)
    else:
        out = (rng.normal(size=shape) * 2).astype(dtype)
    out = np.asarray(out, dtype)
    out.flags.writeable = False
    return out


def accepted_dtypes(prim, nargs: int, **params) -> list:
    """The dtypes ``prim``'s abstract eval accepts for ``nargs`` rank-0 operands of one dtype."""
    ok = []
    for d in ALL_DTYPES:
        try:
            prim.abstract_eval(*[TensorType((), d)] * nargs, **params)
            ok.append(d)
        except PtoError:
            pass
    return ok


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)
nonempty_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)


class Case:
    """Draws operands and params for one primitive: ``draw(data, rng) -> (args, params)``."""

    def __init__(self, prim, draw):
        self.prim = prim
        self.draw = draw


def _scalar_or_full(data, rng, shape, dtype):
    """An operand of ``shape`` or, at random, a rank-0 one (ndarray or numpy scalar, as a
    Literal's value is)."""
    kind = data.draw(st.sampled_from(["full", "array0d", "scalar"]))
    if kind == "full":
        return random_values(rng, shape, dtype)
    value = random_values(rng, (), dtype)
    return value if kind == "array0d" else value[()]


def _elementwise(prim, nargs, **fixed):
    dts = accepted_dtypes(prim, nargs, **fixed)

    def draw(data, rng):
        dtype = data.draw(st.sampled_from(dts))
        shape = data.draw(shapes)
        return [_scalar_or_full(data, rng, shape, dtype) for _ in range(nargs)], dict(fixed)
    return draw


def _integer_pow(data, rng):
    dtype = data.draw(st.sampled_from(NUMERIC_DTYPES))
    low = -3 if dtypes.is_inexact(dtype) else 0
    y = data.draw(st.integers(low, 3))
    return [random_values(rng, data.draw(shapes), dtype)], {"y": y}


def _round(data, rng):
    dtype = data.draw(st.sampled_from([d for d in ALL_DTYPES if dtypes.is_float(d)]))
    method = data.draw(st.sampled_from(["half_even", "half_away"]))
    return [random_values(rng, data.draw(shapes), dtype)], {"method": method}


def _convert(data, rng):
    src, dst = data.draw(st.sampled_from(ALL_DTYPES)), data.draw(st.sampled_from(ALL_DTYPES))
    x = _scalar_or_full(data, rng, data.draw(shapes), src)
    return [x], {"new_dtype": dst, "weak_type": data.draw(st.booleans())}


def _betainc(data, rng):
    dtype = data.draw(st.sampled_from([dtypes.float16, dtypes.bfloat16, dtypes.float32,
                                       dtypes.float64]))
    shape = data.draw(shapes)
    return [_scalar_or_full(data, rng, shape, dtype) for _ in range(3)], {}


def _bitcast(data, rng):
    # (values narrower than a byte have no bitcast in ptojax: tests/ops/test_narrow_dtypes.py)
    plain = [d for d in NUMERIC_DTYPES if not dtypes.is_complex(d) and d not in dtypes.SUB_BYTE]
    src, dst = data.draw(st.sampled_from(plain)), data.draw(st.sampled_from(plain))
    shape = list(data.draw(shapes))
    if dst.itemsize > src.itemsize:   # the last dimension is consumed
        shape.append(dst.itemsize // src.itemsize)
    return [random_values(rng, tuple(shape), src)], {"new_dtype": dst}


def _reduce_precision(data, rng):
    dtype = data.draw(st.sampled_from([dtypes.float16, dtypes.bfloat16, dtypes.float32,
                                       dtypes.float64]))
    return [random_values(rng, data.draw(shapes), dtype)], {
        "exponent_bits": data.draw(st.integers(1, 11)),
        "mantissa_bits": data.draw(st.integers(0, 52))}


def _fft(data, rng):
    kind = data.draw(st.sampled_from(list(FftType)))
    lengths = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=2)))
    lead = data.draw(st.lists(st.integers(0, 3), max_size=2))
    real = kind == FftType.RFFT
    dtype = data.draw(st.sampled_from([dtypes.float32, dtypes.float64] if real else
                                      [dtypes.complex64, dtypes.complex128]))
    minor = (*lengths[:-1], lengths[-1] // 2 + 1) if kind == FftType.IRFFT else lengths
    return [random_values(rng, (*lead, *minor), dtype)], {"fft_type": kind,
                                                           "fft_lengths": lengths}


def _select(data, rng):
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    shape = data.draw(shapes)
    pred = _scalar_or_full(data, rng, shape, dtypes.bool_)
    return [pred] + [_scalar_or_full(data, rng, shape, dtype) for _ in range(2)], {}


def _clamp(data, rng):
    dtype = data.draw(st.sampled_from(NUMERIC_DTYPES))
    shape = data.draw(shapes)
    x = random_values(rng, shape, dtype)
    return [_scalar_or_full(data, rng, shape, dtype), x,
            _scalar_or_full(data, rng, shape, dtype)], {}


# reductions ----------------------------------------------------------------------------------
def _axes_subset(data, ndim):
    return tuple(sorted(data.draw(st.sets(st.integers(0, max(ndim - 1, 0)), max_size=ndim))
                        if ndim else ()))


def _reduction(kind_dtypes):
    def draw(data, rng):
        dtype = data.draw(st.sampled_from(kind_dtypes))
        shape = data.draw(shapes)
        return [random_values(rng, shape, dtype)], {"axes": _axes_subset(data, len(shape))}
    return draw


def _argminmax(data, rng):
    dtype = data.draw(st.sampled_from(REAL_DTYPES))
    shape = data.draw(nonempty_shapes)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    index_dtype = data.draw(st.sampled_from([dtypes.int32, dtypes.int64, dtypes.uint8]))
    return [random_values(rng, shape, dtype)], {"axis": axis, "index_dtype": index_dtype}


def _cumulative(prim):
    choices = [d for d in ALL_DTYPES if _accepts(prim, TensorType((1,), d), axis=0)]

    def draw(data, rng):
        dtype = data.draw(st.sampled_from(choices))
        shape = data.draw(st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple))
        axis = data.draw(st.integers(-len(shape), len(shape) - 1))
        return [random_values(rng, shape, dtype)], {"axis": axis,
                                                    "reverse": data.draw(st.booleans())}
    return draw


def _accepts(prim, *types, **params) -> bool:
    try:
        prim.abstract_eval(*types, **params)
        return True
    except PtoError:
        return False


# shapes --------------------------------------------------------------------------------------
def _any_operand(data, rng, shape_strategy=shapes):
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    return random_values(rng, data.draw(shape_strategy), dtype)


def _broadcast_in_dim(data, rng):
    x = _any_operand(data, rng)
    extra = data.draw(st.lists(st.integers(0, 3), max_size=2))
    out_ndim = x.ndim + len(extra)
    dims = tuple(sorted(data.draw(st.permutations(range(out_ndim)))[:x.ndim]))
    shape = [0] * out_ndim
    for i, d in enumerate(dims):
        size = x.shape[i]
        shape[d] = data.draw(st.integers(0, 3)) if size == 1 else size
    free = iter(extra)
    shape = tuple(s if d in dims else next(free) for d, s in enumerate(shape))
    return [x], {"shape": shape, "broadcast_dimensions": dims}


def _reshape(data, rng):
    x = _any_operand(data, rng)
    sizes = list(x.shape)
    if sizes and data.draw(st.booleans()):  # merge two neighbours, or split one into (1, n)
        k = data.draw(st.integers(0, len(sizes) - 1))
        sizes[k:k + 2] = [math.prod(sizes[k:k + 2])]
    sizes.insert(data.draw(st.integers(0, len(sizes))), 1)
    return [x], {"new_sizes": tuple(sizes)}


def _transpose(data, rng):
    x = _any_operand(data, rng)
    return [x], {"permutation": tuple(data.draw(st.permutations(range(x.ndim))))}


def _squeeze(data, rng):
    x = _any_operand(data, rng)
    ones = [d for d, n in enumerate(x.shape) if n == 1]
    return [x], {"dimensions": tuple(data.draw(st.sets(st.sampled_from(ones)))
                                     if ones else ())}


def _expand_dims(data, rng):
    x = _any_operand(data, rng)
    n = data.draw(st.integers(0, 2))
    return [x], {"dimensions": tuple(sorted(data.draw(st.permutations(
        range(x.ndim + n)))[:n]))}


def _rev(data, rng):
    x = _any_operand(data, rng)
    return [x], {"dimensions": _axes_subset(data, x.ndim)}


def _slice(data, rng):
    x = _any_operand(data, rng)
    starts, limits, strides = [], [], []
    for n in x.shape:
        lo = data.draw(st.integers(0, n))
        starts.append(lo)
        limits.append(data.draw(st.integers(lo, n)))
        strides.append(data.draw(st.integers(1, 3)))
    strides = tuple(strides) if data.draw(st.booleans()) else None
    return [x], {"start_indices": tuple(starts), "limit_indices": tuple(limits),
                 "strides": strides}


def _concatenate(data, rng):
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    shape = data.draw(nonempty_shapes)
    axis = data.draw(st.integers(0, len(shape) - 1))
    xs = []
    for _ in range(data.draw(st.integers(1, 3))):
        s = list(shape)
        s[axis] = data.draw(st.integers(0, 3))
        xs.append(random_values(rng, tuple(s), dtype))
    return xs, {"dimension": axis}


def _pad(data, rng):
    x = _any_operand(data, rng)
    config = []
    for n in x.shape:
        interior = data.draw(st.integers(0, 2))
        full = n + max(n - 1, 0) * interior
        lo = data.draw(st.integers(-full, 2))
        hi = data.draw(st.integers(-(full + lo) if full + lo > 0 else 0, 2))
        config.append((lo, hi, interior))
    value = random_values(rng, (), x.dtype)
    return [x, value], {"padding_config": tuple(config)}


def _iota(data, rng):
    shape = data.draw(nonempty_shapes)
    return [], {"dtype": data.draw(st.sampled_from(NUMERIC_DTYPES)), "shape": shape,
                "dimension": data.draw(st.integers(0, len(shape) - 1))}


# indexing ------------------------------------------------------------------------------------
def _start_indices(data, rng, shape):
    dtype = data.draw(st.sampled_from(INT_DTYPES))
    info = np.iinfo(dtype)
    return [np.asarray(data.draw(st.integers(max(info.min, -5), min(info.max, n + 5))),
                       dtype) for n in shape]


def _dynamic_slice(data, rng):
    x = _any_operand(data, rng)
    sizes = tuple(data.draw(st.integers(0, n)) for n in x.shape)
    return [x, *_start_indices(data, rng, x.shape)], {"slice_sizes": sizes}


def _dynamic_update_slice(data, rng):
    x = _any_operand(data, rng)
    update = random_values(rng, tuple(data.draw(st.integers(0, n)) for n in x.shape), x.dtype)
    return [x, update, *_start_indices(data, rng, x.shape)], {}


def _gather_layout(data, rng):
    """(operand, indices, axes, nbatch): indices ``B + I + (len(axes),)``, some out of bounds."""
    x = _any_operand(data, rng, nonempty_shapes)
    nbatch = data.draw(st.integers(0, x.ndim - 1))
    o_ndim = x.ndim - nbatch
    axes = tuple(data.draw(st.permutations(range(o_ndim)))[:data.draw(st.integers(1, o_ndim))])
    lead = x.shape[:nbatch] + tuple(data.draw(st.lists(st.integers(0, 3), max_size=2)))
    bounds = [x.shape[nbatch + a] for a in axes]
    dtype = data.draw(st.sampled_from([dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.int8]))
    low = 0 if dtypes.is_unsigned(dtype) else -2
    idx = np.stack([rng.integers(low, b + 2, size=lead) for b in bounds], -1).astype(dtype)
    return x, idx, axes, nbatch


def _gather(data, rng):
    x, idx, axes, nbatch = _gather_layout(data, rng)
    mode = data.draw(st.sampled_from(["clip", "fill"]))
    return [x, idx], {"axes": axes, "nbatch": nbatch, "mode": mode, "fill_value": None}


def _scatter(data, rng):
    x, idx, axes, nbatch = _gather_layout(data, rng)
    out = P.gather_p.abstract_eval(TensorType(x.shape, x.dtype),
                                    TensorType(idx.shape, idx.dtype), axes=axes, nbatch=nbatch)
    updates = random_values(rng, out.shape, x.dtype)
    mode = data.draw(st.sampled_from(SCATTER_MODES))
    return [x, idx, updates], {"axes": axes, "nbatch": nbatch, "mode": mode}


# linalg and sorting --------------------------------------------------------------------------
def _dot_general(data, rng):
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    nb, nc = data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))
    lf, rf = data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))
    batch = [data.draw(st.integers(0, 3)) for _ in range(nb)]
    contract = [data.draw(st.integers(0, 3)) for _ in range(nc)]
    lhs_perm = data.draw(st.permutations(range(nb + nc + lf)))
    rhs_perm = data.draw(st.permutations(range(nb + nc + rf)))
    lhs_sizes = batch + contract + [data.draw(st.integers(0, 3)) for _ in range(lf)]
    rhs_sizes = batch + contract + [data.draw(st.integers(0, 3)) for _ in range(rf)]
    lhs_shape = tuple(lhs_sizes[p] for p in lhs_perm)
    rhs_shape = tuple(rhs_sizes[p] for p in rhs_perm)
    where_l = {p: i for i, p in enumerate(lhs_perm)}
    where_r = {p: i for i, p in enumerate(rhs_perm)}
    dn = ((tuple(where_l[nb + k] for k in range(nc)), tuple(where_r[nb + k] for k in range(nc))),
          (tuple(where_l[k] for k in range(nb)), tuple(where_r[k] for k in range(nb))))
    wide_int = not dtypes.is_float(dtype) and dtype.itemsize > 4   # int32 would narrow it
    pet = data.draw(st.sampled_from([None, dtypes.float32, dtype]
                                    + ([] if wide_int else [dtypes.int32])))
    return [random_values(rng, lhs_shape, dtype), random_values(rng, rhs_shape, dtype)], \
        {"dimension_numbers": dn, "preferred_element_type": pet}


def _sort(data, rng):
    shape = data.draw(nonempty_shapes)
    n = data.draw(st.integers(1, 3))
    xs = [random_values(rng, shape, data.draw(st.sampled_from(ALL_DTYPES))) for _ in range(n)]
    return xs, {"dimension": data.draw(st.integers(-len(shape), len(shape) - 1)),
                "num_keys": data.draw(st.integers(1, n))}


def _conv(data, rng):
    """A small convolution in random layouts with groups, padding, strides and dilations."""
    k = data.draw(st.integers(1, 2))
    fgc, bgc = data.draw(st.sampled_from([(1, 1), (2, 1), (1, 2)]))
    n, c = bgc * data.draw(st.integers(0, 2)), fgc * data.draw(st.integers(1, 2))
    o = max(fgc, bgc) * data.draw(st.integers(1, 2))
    lhs = [n, c] + [data.draw(st.integers(0, 5)) for _ in range(k)]
    rhs = [o, c // fgc] + [data.draw(st.integers(1, 3)) for _ in range(k)]
    specs = [tuple(data.draw(st.permutations(range(k + 2)))) for _ in range(3)]
    dtype = data.draw(st.sampled_from(NUMERIC_DTYPES))
    pet = data.draw(st.sampled_from([None, dtypes.float32 if dtypes.is_float(dtype)
                                     else dtypes.int32]))

    def ints(lo, hi):
        return tuple(data.draw(st.integers(lo, hi)) for _ in range(k))

    params = {"window_strides": ints(1, 2), "lhs_dilation": ints(1, 2),
              "rhs_dilation": ints(1, 2), "padding": tuple(zip(ints(0, 2), ints(0, 2))),
              "dimension_numbers": ConvDimensionNumbers(*specs), "feature_group_count": fgc,
              "batch_group_count": bgc, "preferred_element_type": pet}

    def laid_out(shape, spec):
        out = [0] * len(shape)
        for canonical, d in zip(shape, spec):
            out[d] = canonical
        return tuple(out)

    return [random_values(rng, laid_out(lhs, specs[0]), dtype),
            random_values(rng, laid_out(rhs, specs[1]), dtype)], params


# decompositions ------------------------------------------------------------------------------
LINALG_DTYPES = [dtypes.float32, dtypes.float64]


def _matrices(data, rng, square=False, rows=None):
    """A stack of (square) matrices of a LAPACK dtype, sides 0..4."""
    stack = tuple(data.draw(st.lists(st.integers(0, 3), max_size=2)))
    m = data.draw(st.integers(0, 4)) if rows is None else rows
    n = m if square else data.draw(st.integers(0, 4))
    return random_values(rng, (*stack, m, n), data.draw(st.sampled_from(LINALG_DTYPES)))


def _triangular_solve(data, rng):
    a = _matrices(data, rng, square=True)
    left = data.draw(st.booleans())
    k = data.draw(st.integers(0, 3))
    m = a.shape[-1]
    b = random_values(rng, (*a.shape[:-2], *((m, k) if left else (k, m))), a.dtype)
    flags = {f: data.draw(st.booleans())
             for f in ("lower", "transpose_a", "conjugate_a", "unit_diagonal")}
    return [a, b], {"left_side": left, **flags}


def _lu_pivots(data, rng):
    stack = tuple(data.draw(st.lists(st.integers(0, 3), max_size=2)))
    size = data.draw(st.integers(0, 4))
    k = data.draw(st.integers(0, size))
    pivots = np.stack([rng.integers(j, size, size=stack) for j in range(k)], -1) if k else \
        np.zeros((*stack, 0))
    return [pivots.astype(np.int32)], {"permutation_size": size}


def _subset(data, k):
    if not data.draw(st.booleans()):
        return None
    lo = data.draw(st.integers(0, k))
    return lo, data.draw(st.integers(lo, k))


def _eigh(data, rng):
    x = _matrices(data, rng, square=True)
    return [x], {"lower": data.draw(st.booleans()), "sort_eigenvalues": True,
                 "subset_by_index": _subset(data, x.shape[-1])}


def _svd(data, rng):
    x = _matrices(data, rng)
    full, uv = data.draw(st.booleans()), data.draw(st.booleans())
    subset = None if full and uv else _subset(data, min(x.shape[-2:]))
    return [x], {"full_matrices": full, "compute_uv": uv, "subset_by_index": subset}


def _qr(data, rng):
    return [_matrices(data, rng)], {"pivoting": data.draw(st.booleans()),
                                    "full_matrices": data.draw(st.booleans())}


def _threefry(data, rng):
    shape = data.draw(shapes)
    return [_scalar_or_full(data, rng, shape, dtypes.uint32) for _ in range(4)], {}


def all_cases() -> dict:
    """Primitive name → case drawer."""
    cases = {}
    for name in UNARY:
        cases[name] = Case(PRIMITIVES[name], _elementwise(PRIMITIVES[name], 1))
    for name in BINARY:
        cases[name] = Case(PRIMITIVES[name], _elementwise(PRIMITIVES[name], 2))
    special = {
        P.integer_pow_p: _integer_pow, P.round_p: _round,
        P.convert_element_type_p: _convert, P.select_p: _select, P.clamp_p: _clamp,
        P.argmax_p: _argminmax, P.argmin_p: _argminmax,
        P.broadcast_in_dim_p: _broadcast_in_dim, P.reshape_p: _reshape,
        P.transpose_p: _transpose, P.squeeze_p: _squeeze, P.expand_dims_p: _expand_dims,
        P.rev_p: _rev, P.slice_p: _slice, P.concatenate_p: _concatenate, P.pad_p: _pad,
        P.iota_p: _iota, P.dynamic_slice_p: _dynamic_slice,
        P.dynamic_update_slice_p: _dynamic_update_slice, P.gather_p: _gather,
        P.scatter_p: _scatter, P.dot_general_p: _dot_general, P.sort_p: _sort,
        P.threefry2x32_p: _threefry, P.betainc_p: _betainc,
        P.bitcast_convert_type_p: _bitcast, P.reduce_precision_p: _reduce_precision,
        P.fft_p: _fft, P.conv_general_dilated_p: _conv,
        P.cholesky_p: lambda data, rng: ([_matrices(data, rng, square=True)], {}),
        P.triangular_solve_p: _triangular_solve,
        P.lu_p: lambda data, rng: ([_matrices(data, rng)], {}),
        P.lu_pivots_to_permutation_p: _lu_pivots, P.qr_p: _qr,
        P.geqrf_p: lambda data, rng: ([_matrices(data, rng)], {}),
        P.eigh_p: _eigh, P.svd_p: _svd,
        P.eig_p: lambda data, rng: ([_matrices(data, rng, square=True)],
                                    {"vectors": data.draw(st.booleans())}),
    }
    cases["name"] = Case(P.name_p, _elementwise(P.name_p, 1, name="n"))
    for prim, draw in special.items():
        cases[prim.name] = Case(prim, draw)
    for name in ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min"):
        cases[name] = Case(PRIMITIVES[name], _reduction(ALL_DTYPES))
    for name in ("reduce_and", "reduce_or", "reduce_xor"):
        cases[name] = Case(PRIMITIVES[name], _reduction([dtypes.bool_] + INT_DTYPES))
    for name, prim in ((n, PRIMITIVES[n]) for n in CUMULATIVE):
        cases[name] = Case(prim, _cumulative(prim))
    return cases
