"""pto_host_vmath.h: each branch-free float32 function against a float64 reference over the
whole float range (every binade of both signs, subnormals, specials), its IEEE special
values, symmetry and monotonicity, and that GCC vectorizes loops over the functions.

The library is built once per session with the project's compiler and flags (host_compiler),
so the functions are tested as tile kernels compile them (-O2 -march=native, FMA where the
CPU has it). Errors are in units of the float32 ulp of the exact (float64) result."""
import ctypes
import math
import subprocess

import numpy as np
import pytest

from host_cases import vectorized_lines
from ptojax.lower.host.compiler import INCLUDE_DIR, compiler_or_none

FUNCTIONS = ("exp", "log", "log1p", "expm1", "tanh", "logistic", "erf", "erfc", "sin", "cos",
             "lgamma")

# Max ulp error per function, (with FMA, without FMA): the header's measured maxima rounded up.
BOUNDS = {"exp": (1.0, 1.25), "log": (1.0, 1.0), "log1p": (1.0, 1.0), "expm1": (1.5, 1.5),
          "tanh": (1.5, 1.5), "logistic": (1.25, 1.5), "erf": (1.5, 2.0), "erfc": (3.0, 4.0),
          "sin": (3.0, 3.5), "cos": (3.0, 3.5), "lgamma": (2.5, 2.5)}
# sin/cos: the documented range of the bound (|x| < 2^24 pi/2 with FMA, 1e5 without).
TRIG_RANGE = {True: 2.0 ** 24 * math.pi / 2, False: 1.0e5}
# lgamma for x <= -0.5 (reflection): within an ulp bound or an absolute error (lgamma has zeros
# beside every pole -2, -3, ...); below -10 no float is near a zero and the bound is relative.
# {has FMA: (ulp, absolute, ulp below -10)}
LGAMMA_NEG = {True: (4.0, 2.0 ** -22, 1.5), False: (8.0, 2.0 ** -20, 2.0)}

# (the kernel flags include -fvisibility=hidden)
SOURCE = ('#include "pto_host_vmath.h"\n'
          '#define EXPORT extern "C" __attribute__((visibility("default")))\n') + "".join(
    f'EXPORT void apply_{f}(const float* x, float* y, long n) '
    f'{{ for (long i = 0; i < n; ++i) y[i] = pto::host::{f}_f32(x[i]); }}\n'
    for f in FUNCTIONS) + """
EXPORT int has_fma() {
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
  return 1;
#else
  return 0;
#endif
}
"""


class VMath:
    def __init__(self, path):
        self.lib = ctypes.CDLL(str(path))
        self.fma = bool(self.lib.has_fma())

    def __call__(self, name, x):
        x = np.ascontiguousarray(x, dtype=np.float32)
        y = np.empty_like(x)
        getattr(self.lib, f"apply_{name}")(ctypes.c_void_p(x.ctypes.data),
                                          ctypes.c_void_p(y.ctypes.data), ctypes.c_long(x.size))
        return y


@pytest.fixture(scope="session")
def vmath(tmp_path_factory):
    compiler, why = compiler_or_none()
    if compiler is None:
        pytest.skip(f"no C++ compiler: {why}")
    out = tmp_path_factory.mktemp("vmath")
    src, lib = out / "vmath.cpp", out / "libvmath.so"
    src.write_text(SOURCE)
    result = subprocess.run([*compiler.command, *compiler.flags, f"-I{INCLUDE_DIR}", str(src),
                             "-o", str(lib)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return VMath(lib)


def _math64(fn):
    def safe(v):
        try:
            return fn(v)
        except ValueError:     # math.lgamma at a pole
            return math.inf
        except OverflowError:
            return math.inf
    vec = np.frompyfunc(safe, 1, 1)
    return lambda x: vec(x).astype(np.float64)


def _logistic64(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


# float64 references (math.lgamma's relative error near its zeros at 1 and 2 is below
# 2^-26, i.e. under a quarter of a float32 ulp).
REFERENCES = {"exp": np.exp, "log": np.log, "log1p": np.log1p, "expm1": np.expm1,
              "tanh": np.tanh, "logistic": _logistic64, "erf": _math64(math.erf),
              "erfc": _math64(math.erfc), "sin": np.sin, "cos": np.cos,
              "lgamma": _math64(math.lgamma)}


THRESHOLDS = (1.0, 2.0, 88.72284, -87.3365, -103.972, -80.0, -17.33, 0.5, 0.625, 3.9192,
              9.0109, 9.194, 10.0542, 1.25, 1.75, 6.5, -7.000323, 4.085e36)


def _around(c, steps):
    """The floats within `steps` of c, as float32 (walking the ordered bit patterns)."""
    ordered = np.int64(np.float32(c).view(np.int32))
    ordered = ordered if ordered >= 0 else -(ordered & 0x7fffffff)
    k = ordered + steps
    bits = np.where(k >= 0, k, (-k) | 0x80000000).astype(np.uint32)
    return bits.view(np.float32)


def _whole_range(per_binade=8192, seed=0):
    """Random mantissas in every binade (normal and subnormal) of both signs, plus edges."""
    rng = np.random.default_rng(seed)
    exponents = np.arange(1, 255, dtype=np.uint32)[:, None] << 23
    normal = (exponents | rng.integers(0, 1 << 23, (254, per_binade), dtype=np.uint32))
    subnormal = rng.integers(1, 1 << 23, per_binade, dtype=np.uint32)
    edges = np.array([0, 1, 0x007fffff, 0x00800000, 0x3f800000, 0x7f7fffff], np.uint32)
    x = np.concatenate([normal.ravel(), subnormal, edges]).view(np.float32)
    ints = np.arange(-60, 61, dtype=np.float32)
    extra = np.concatenate([ints, ints + 0.5, [2.0 ** 23, 2.0 ** 24 + 2, 1e10]]).astype(np.float32)
    # consecutive floats around the zeros of lgamma at 1 and 2, overflow / underflow /
    # saturation thresholds, formula switches; and near multiples of pi/2 for sin/cos
    steps = np.arange(-2000, 2000, dtype=np.int64)
    near = np.concatenate([_around(c, steps) for c in THRESHOLDS])
    k = np.arange(1, 20000, 7, dtype=np.float64)
    quarter = (k * np.pi / 2).astype(np.float32)
    x = np.concatenate([x, -x, extra, near, quarter, -quarter])
    return np.unique(x)


SAMPLE = _whole_range()


def ulp_error(y, ref):
    """|y - ref| in float32 ulps of ref (2^-149 in the subnormal range, 2^104 beyond the
    largest float); 0 where both overflow (ref rounds to inf and y is inf), inf where y is
    inf but ref does not round to it."""
    with np.errstate(invalid="ignore", over="ignore"):
        ref32 = ref.astype(np.float32)
        _, e = np.frexp(np.abs(ref))
        ulp = np.ldexp(1.0, np.clip(e - 1, -126, 127) - 23)
        err = np.abs(y.astype(np.float64) - ref) / ulp
    both_inf = np.isinf(y) & np.isinf(ref32) & (np.sign(y) == np.sign(ref32))
    err = np.where(both_inf, 0.0, err)
    err = np.where(np.isinf(y) & ~both_inf, np.inf, err)
    return err


def _worst(err, x, y, ref):
    i = int(np.argmax(err))
    return f"max {err[i]:.3f} ulp at x={x[i]!r}: got {y[i]!r}, float64 reference {ref[i]!r}"


@pytest.mark.parametrize("name", FUNCTIONS)
def test_max_ulp_error_over_the_whole_float_range(vmath, name):
    x = SAMPLE[~np.isnan(SAMPLE)]
    if name in ("sin", "cos"):
        x = x[np.abs(x) < TRIG_RANGE[vmath.fma]]
    if name == "lgamma":
        x = x[x > -0.5]            # the reflection branch has its own criterion below
    y = vmath(name, x)
    with np.errstate(all="ignore"):
        ref = REFERENCES[name](x.astype(np.float64))
    nan_ref = np.isnan(ref)
    assert np.array_equal(np.isnan(y), nan_ref), \
        f"{name}: NaN where the reference is not (or not where it is) at x=" \
        f"{x[np.isnan(y) != nan_ref][:5]}"
    err = ulp_error(y[~nan_ref], ref[~nan_ref])
    bound = BOUNDS[name][0 if vmath.fma else 1]
    assert err.max() <= bound, f"{name}: " + _worst(err, x[~nan_ref], y[~nan_ref], ref[~nan_ref])


def test_lgamma_reflection_for_negative_x(vmath):
    x = SAMPLE[(SAMPLE <= -0.5) & np.isfinite(SAMPLE) & (SAMPLE != np.round(SAMPLE))]
    y = vmath("lgamma", x)
    ref = REFERENCES["lgamma"](x.astype(np.float64))
    err = ulp_error(y, ref)
    abs_err = np.abs(y.astype(np.float64) - ref)
    max_ulp, max_abs, max_ulp_below_10 = LGAMMA_NEG[vmath.fma]
    bad = (err > max_ulp) & (abs_err > max_abs)
    assert not bad.any(), _worst(np.where(bad, err, 0.0), x, y, ref)
    far = x < -10
    assert err[far].max() <= max_ulp_below_10, _worst(err[far], x[far], y[far], ref[far])


def test_sin_cos_stay_in_range_beyond_the_accurate_range(vmath):
    x = SAMPLE[np.isfinite(SAMPLE) & (np.abs(SAMPLE) >= TRIG_RANGE[vmath.fma])]
    for name in ("sin", "cos"):
        y = vmath(name, x)
        assert not np.isnan(y).any() and np.abs(y).max() <= 1.0, name


NAN, INF = float("nan"), float("inf")
SPECIALS = {
    "exp": [(NAN, NAN), (INF, INF), (-INF, 0.0), (0.0, 1.0), (-0.0, 1.0), (88.8, INF),
            (-104.0, 0.0), (-103.28, 2.0 ** -149)],
    "log": [(NAN, NAN), (INF, INF), (-INF, NAN), (0.0, -INF), (-0.0, -INF), (-1.0, NAN),
            (1.0, 0.0), (2.0 ** -149, -103.27893)],
    "log1p": [(NAN, NAN), (INF, INF), (-INF, NAN), (-1.0, -INF), (-2.0, NAN), (0.0, 0.0),
              (-0.0, -0.0), (2.0 ** -149, 2.0 ** -149), (-(2.0 ** -149), -(2.0 ** -149))],
    "expm1": [(NAN, NAN), (INF, INF), (-INF, -1.0), (0.0, 0.0), (-0.0, -0.0), (88.8, INF),
              (-30.0, -1.0), (2.0 ** -149, 2.0 ** -149)],
    "tanh": [(NAN, NAN), (INF, 1.0), (-INF, -1.0), (0.0, 0.0), (-0.0, -0.0), (20.0, 1.0),
             (-20.0, -1.0), (2.0 ** -149, 2.0 ** -149)],
    "logistic": [(NAN, NAN), (INF, 1.0), (-INF, 0.0), (0.0, 0.5), (-0.0, 0.5), (100.0, 1.0),
                 (-104.0, 0.0), (-103.28, 2.0 ** -149)],
    "erf": [(NAN, NAN), (INF, 1.0), (-INF, -1.0), (0.0, 0.0), (-0.0, -0.0), (10.0, 1.0),
            (-10.0, -1.0), (2.0 ** -149, 2.0 ** -149)],
    "erfc": [(NAN, NAN), (INF, 0.0), (-INF, 2.0), (0.0, 1.0), (-0.0, 1.0), (-10.0, 2.0),
             (11.0, 0.0)],
    "sin": [(NAN, NAN), (INF, NAN), (-INF, NAN), (0.0, 0.0), (-0.0, -0.0),
            (2.0 ** -149, 2.0 ** -149)],
    "cos": [(NAN, NAN), (INF, NAN), (-INF, NAN), (0.0, 1.0), (-0.0, 1.0)],
    "lgamma": [(NAN, NAN), (INF, INF), (-INF, INF), (1.0, 0.0), (2.0, 0.0), (0.0, INF),
               (-0.0, INF), (-1.0, INF), (-2.0, INF), (-37.0, INF), (-(2.0 ** 23), INF),
               (-1e30, INF), (1e37, INF), (2.0 ** -149, 103.27893), (0.5, 0.5723649)],
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_special_values(vmath, name):
    x, want = (np.array(v, np.float32) for v in zip(*SPECIALS[name]))
    got = vmath(name, x)
    for xi, g, w in zip(x, got, want):
        if np.isnan(w):
            assert np.isnan(g), f"{name}({xi!r}) = {g!r}, expected NaN"
        elif abs(w) in (0.0, 0.5, 1.0, 2.0, np.inf, 2.0 ** -149):    # exactly, with its sign
            assert g == w and np.signbit(g) == np.signbit(w), \
                f"{name}({xi!r}) = {g!r}, expected {w!r}"
        else:                  # a rounded value: within one ulp
            assert abs(float(g) - float(w)) <= abs(float(np.spacing(w))), \
                f"{name}({xi!r}) = {g!r}, expected {w!r}"


@pytest.mark.parametrize("name,parity", [("tanh", -1), ("erf", -1), ("sin", -1), ("cos", 1)])
def test_symmetry_is_exact(vmath, name, parity):
    x = SAMPLE[np.isfinite(SAMPLE) & (SAMPLE > 0)]
    assert np.array_equal(vmath(name, -x), parity * vmath(name, x))


# Windows of consecutive floats around points where a function switches between formulas.
MONOTONIC = {"exp": (1, [-103.0, -87.0, -1e-3, 0.34, 88.0]),
             "log": (1, [1e-40, 0.7071, 1.0, 1.4142, 1e30]),
             "log1p": (1, [-0.99, -1e-3, 1e-3, 1.0, 1e8]),
             "expm1": (1, [-17.0, -0.34, 0.34, 17.0]),
             "tanh": (1, [-0.625, 0.625, 3.0, 8.9]),
             "logistic": (1, [-80.0, -3.0, 0.0, 3.0]),
             "erf": (1, [-0.5, 0.5, 2.0, 3.9]),
             "erfc": (-1, [-0.5, 0.5, 2.0, 9.0])}


@pytest.mark.parametrize("name", list(MONOTONIC))
def test_monotonic_across_consecutive_floats(vmath, name):
    if not vmath.fma and name in ("logistic", "erf", "erfc"):
        pytest.skip("without FMA the exact residuals these rely on are inexact, and "
                    f"{name} is not monotonic everywhere (the header says where)")
    direction, centers = MONOTONIC[name]
    steps = np.arange(-20000, 20000, dtype=np.int64)
    x = np.concatenate([_around(c, steps) for c in centers])
    x = np.unique(x[np.isfinite(x)])
    d = direction * np.diff(vmath(name, x).astype(np.float64))
    assert (d >= 0).all(), f"{name} decreases at x={x[:-1][d < 0][:5]}"


def test_loops_over_exp_tanh_erf_vectorize(tmp_path):
    compiler, why = compiler_or_none()
    if compiler is None:
        pytest.skip(f"no C++ compiler: {why}")
    src = tmp_path / "vec.cpp"
    src.write_text('#include "pto_host_vmath.h"\n'
                   "void f_exp(const float* x, float* y, long n) {\n"
                   "  for (long i = 0; i < n; ++i) y[i] = pto::host::exp_f32(x[i]); }\n"
                   "void f_tanh(const float* x, float* y, long n) {\n"
                   "  for (long i = 0; i < n; ++i) y[i] = pto::host::tanh_f32(x[i]); }\n"
                   "void f_erf(const float* x, float* y, long n) {\n"
                   "  for (long i = 0; i < n; ++i) y[i] = pto::host::erf_f32(x[i]); }\n")
    lines = vectorized_lines(compiler, src, without=("-fopenmp",))
    if not {"-march=native", "-fvect-cost-model=cheap"} <= set(compiler.flags):
        pytest.skip("the kernel flags lack -march=native (vector rint/fma) or "
                    "-fvect-cost-model=cheap (loops with a remainder)")
    assert {3, 5, 7} <= lines, f"vectorized loops at lines {sorted(lines)}"
