"""Shared test helpers: the one closeness check, with the per-dtype tolerances of
``ptojax.tools.numerics`` (the table ``check_numerics`` uses too)."""
import builtins
import importlib
import types

import numpy as np

import ptojax  # noqa: F401  (defines every primitive)
from ptojax.tools.numerics import tolerance
from ptojax.trace import PRIMITIVES
from ptojax.tree_util import tree_leaves

# every primitive as ``P.<name>_p``
# XLA's cheapest compile: most of a JAX reference's time is XLA compiling it, and its
# unoptimized code is good enough for a reference (the same operations).
CHEAP_XLA = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}


def jax_cheaply(jax, fn, *args):
    """``jax.jit(fn)(*args)``, compiled with ``CHEAP_XLA``."""
    return jax.jit(fn).lower(*args).compile(CHEAP_XLA)(*args)


P = types.SimpleNamespace(**{f"{name}_p": prim for name, prim in PRIMITIVES.items()})


def tol(dtype, scale=1.0):
    """The relative tolerance for ``dtype`` (0 for exact dtypes), times ``scale``."""
    return tolerance(dtype) * scale


def assert_close(actual, expected, rtol=None, atol=None, check_dtype=True, scale=1.0):
    """``actual`` equals ``expected`` (arrays or pytrees of them, leaf by leaf) within the
    dtype's tolerance times ``scale`` (or ``rtol``/``atol``); integers and bools exactly."""
    actual_leaves, expected_leaves = tree_leaves(actual), tree_leaves(expected)
    assert len(actual_leaves) == len(expected_leaves), \
        f"{len(actual_leaves)} leaves != expected {len(expected_leaves)}"
    for got, want in zip(actual_leaves, expected_leaves):
        _assert_leaf_close(np.asarray(got), np.asarray(want), rtol, atol, check_dtype, scale)


def _assert_leaf_close(a, e, rtol, atol, check_dtype, scale):
    if check_dtype:
        assert a.dtype == e.dtype, f"dtype {a.dtype} != expected {e.dtype}"
    assert a.shape == e.shape, f"shape {a.shape} != expected {e.shape}"
    if a.dtype.kind in "biu" or a.dtype == np.bool_:
        np.testing.assert_array_equal(a, e)
        return
    r = tol(a.dtype, scale) if rtol is None else rtol
    at = r if atol is None else atol
    wide = np.complex128 if e.dtype.kind == "c" else np.float64
    np.testing.assert_allclose(a.astype(wide), e.astype(wide), rtol=r, atol=at)


# well-conditioned matrices for the linear algebra tests ------------------------------------------
def well_conditioned(rng, shape, dtype=np.float64):
    """Stacks of random square matrices plus ``n`` times the identity."""
    n = shape[-1]
    return (rng.standard_normal(shape) + n * np.eye(n)).astype(dtype)


def positive_definite(rng, shape, dtype=np.float64):
    """Stacks of symmetric positive-definite matrices ``a a^T + n I``."""
    a = rng.standard_normal(shape)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def separated_spectrum(rng, shape, dtype=np.float64, symmetric=False):
    """Stacks of matrices whose singular values are 1, 2, ... plus noise (symmetric ones with
    those eigenvalues, random signs): eigen- and singular vectors defined up to sign."""
    *stack, m, n = shape
    k = min(m, n)
    spectrum = np.arange(1, k + 1) + 0.3 * rng.random((*stack, k))
    u = np.linalg.qr(rng.standard_normal((*stack, m, k)))[0]
    if symmetric:
        v, spectrum = u, spectrum * np.where(rng.random(spectrum.shape) < 0.5, -1, 1)
    else:
        v = np.linalg.qr(rng.standard_normal((*stack, n, k)))[0]
    return ((u * spectrum[..., None, :]) @ np.swapaxes(v, -1, -2)).astype(dtype)


# JAX source run on ptojax through a name-only mapping ---------------------------------------------
def _safe_map(f, *args):
    assert len({len(a) for a in map(list, args)}) == 1, "length mismatch"
    return list(map(f, *args))


def _safe_zip(*args):
    assert len({len(a) for a in map(list, args)}) == 1, "length mismatch"
    return list(zip(*args))


def _unzip2(pairs):
    pairs = list(pairs)
    return tuple(a for a, _ in pairs), tuple(b for _, b in pairs)


# the private JAX helpers example_libraries/optimizers.py imports (plain Python, no arrays)
_PRIVATE_UTIL = types.SimpleNamespace(safe_map=_safe_map, safe_zip=_safe_zip, unzip2=_unzip2)


def _mapped_import(name, globals=None, locals=None, fromlist=(), level=0):
    """``__import__`` with the name-only mapping jax[.x] -> ptojax[.x]."""
    if name == "jax._src.util":
        return _PRIVATE_UTIL
    if name == "jax" or name.startswith("jax."):
        module = importlib.import_module("ptojax" + name[len("jax"):])
        return module if fromlist else importlib.import_module("ptojax")
    return builtins.__import__(name, globals, locals, fromlist, level)


def load_source(path, name, mapped):
    """The Python file ``path`` executed as a fresh module ``name``: against JAX itself, or
    (``mapped``) against ptojax, every ``import jax...`` resolved to ``ptojax...`` by name."""
    module = types.ModuleType(name)
    if mapped:
        module.__dict__["__builtins__"] = dict(vars(builtins), __import__=_mapped_import)
    with open(path) as f:
        exec(compile(f.read(), path, "exec"), module.__dict__)
    return module


def conv_operands(x_shape, w_shape, dtype, seed=0):
    """(image, filter) for convolution tests: small integers for int8 (exact int32 sums),
    else normal values with the filter scaled by 1/8."""
    rng = np.random.default_rng(seed)
    if dtype == np.int8:
        return (rng.integers(-8, 8, x_shape).astype(np.int8),
                rng.integers(-8, 8, w_shape).astype(np.int8))
    return (rng.standard_normal(x_shape).astype(dtype),
            (rng.standard_normal(w_shape) / 8).astype(dtype))
