"""The default (x64 off) dtype behaviour against JAX with x64 off: 64-bit numpy inputs become
32-bit silently, 64-bit ``dtype=`` arguments are narrowed with JAX's warning, a Python int
outside the int32 range is JAX's OverflowError; with x64 on nothing is narrowed."""
import warnings

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp

WIDE_INPUTS = [np.linspace(-1, 1, 6), np.arange(6, dtype=np.int64),
               np.arange(6, dtype=np.uint64), np.linspace(0, 1, 6) * (1 + 2j)]


def _run(f):
    """``(result, warning texts)`` of ``f()``, every warning recorded."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = f()
    return out, [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


def _same(out, ref):
    """ptojax's result has JAX's dtype, weak type and values (float32 tolerance)."""
    assert out.dtype == ref.dtype, (out.dtype, ref.dtype)
    assert out.weak_type == ref.weak_type
    np.testing.assert_allclose(np.asarray(out), np.asarray(ref), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("x", WIDE_INPUTS, ids=lambda x: x.dtype.name)
def test_numpy_inputs_are_32_bit_silently_as_jax(jax, jnp, x):
    cases = {
        "asarray": (pnp.asarray, jnp.asarray),
        "array": (pnp.array, jnp.array),
        "eager op": (lambda v: pnp.multiply(v, 2), lambda v: jnp.multiply(v, 2)),
        "jit": (pto.jit(lambda v: v * 2), jax.jit(lambda v: v * 2)),
        "vmap": (pto.vmap(lambda v: v * 2), jax.vmap(lambda v: v * 2)),
        "device_put": (pto.device_put, jax.device_put),
        "numpy scalar": (lambda v: pnp.asarray(v[1]) + 1, lambda v: jnp.asarray(v[1]) + 1),
        "scalar next to an array": (lambda v: v[1] + pnp.ones(2, pnp.int8),
                                    lambda v: v[1] + jnp.ones(2, jnp.int8)),
        # a constant the traced function closes over: its value is 32-bit too, so a convert
        # to the (canonical) dtype it already has, dropped as a no-op, leaves nothing 64-bit
        "captured constant": (
            lambda v: pto.jit(lambda u: pto.lax.convert_element_type(v, u.dtype) + u)(
                pnp.ones(6, pnp.asarray(v).dtype)),
            lambda v: jax.jit(lambda u: jax.lax.convert_element_type(v, u.dtype) + u)(
                jnp.ones(6, jnp.asarray(v).dtype))),
    }
    with jax.enable_x64(False):
        for name, (ours, theirs) in cases.items():
            out, warned = _run(lambda: ours(x))
            assert not warned, name
            _same(out, theirs(x))


def test_transformations_and_loops_keep_32_bit_carries(jax, jnp):
    x = np.linspace(0.5, 2.0, 4)
    with jax.enable_x64(False):
        _same(pto.grad(lambda v: pnp.sin(v).sum())(x), jax.grad(lambda v: jnp.sin(v).sum())(x))
        _same(pto.lax.fori_loop(0, 3, lambda i, c: c * 1.5 + i, x),
              jax.lax.fori_loop(0, 3, lambda i, c: c * 1.5 + i, x))
        step = pto.jit(lambda w, v: w - 0.1 * pto.grad(lambda w: ((w * v) ** 2).sum())(w))
        w = pnp.ones(4)
        for _ in range(2):   # the second call takes the cached fast path
            w = step(w, x)
        assert w.dtype == np.float32


def test_jit_cache_keys_on_the_mode(jax):
    f = pto.jit(lambda v: v + 1)
    x = np.ones(3)
    assert f(x).dtype == np.float32
    with pto.enable_x64(True):
        assert f(x).dtype == np.float64
    assert f(x).dtype == np.float32


CREATION = {
    "zeros": lambda m, d: m.zeros(3, d),
    "ones": lambda m, d: m.ones(3, d),
    "empty": lambda m, d: m.empty(3, d).shape and m.zeros(3, d),
    "full": lambda m, d: m.full(3, 2, d),
    "zeros_like": lambda m, d: m.zeros_like(m.ones(2, m.int8), d),
    "full_like": lambda m, d: m.full_like(m.ones(2, m.int8), 1, d),
    "arange": lambda m, d: m.arange(5, dtype=d),
    "linspace": lambda m, d: m.linspace(0, 4, 5, dtype=d),
    "eye": lambda m, d: m.eye(3, dtype=d),
    "identity": lambda m, d: m.identity(3, dtype=d),
    "asarray": lambda m, d: m.asarray([1, 2], dtype=d),
    "array": lambda m, d: m.array(np.ones(2), dtype=d),
    "astype": lambda m, d: m.ones(2, m.int8).astype(d),
    "scalar type": lambda m, d: getattr(m, np.dtype(d).name)(3),
    "sum": lambda m, d: m.sum(m.ones(2, m.int8), dtype=d),
    "mean": lambda m, d: m.mean(m.ones(2, m.int8), dtype=d),
    "cumsum": lambda m, d: m.cumsum(m.ones(2, m.int8), dtype=d),
}


@pytest.mark.parametrize("name, dtype", [          # (an integer mean/linspace is not the point)
    (name, dtype) for name in sorted(CREATION) for dtype in (np.float64, np.int64, np.complex128)
    if not (name in ("linspace", "mean") and dtype is np.int64)], ids=str)
def test_64_bit_dtype_arguments_warn_and_narrow_as_jax(jax, jnp, name, dtype):
    make = CREATION[name]
    with jax.enable_x64(False):
        ref, ref_warned = _run(lambda: make(jnp, dtype))
        out, warned = _run(lambda: make(pnp, dtype))
    assert out.dtype == ref.dtype
    np.testing.assert_allclose(np.asarray(out), np.asarray(ref))
    assert warned[:1] == ref_warned[:1]   # JAX's text, naming the same function


def test_lax_and_random_dtype_arguments_warn_as_jax(jax, jnp):
    cases = [
        (lambda l: l.convert_element_type(np.ones(2, np.float32), np.float64)),
        (lambda l: l.full((2,), 1.0, np.float64)),
        (lambda l: l.iota(np.int64, 3)),
        (lambda l: l.broadcasted_iota(np.int64, (2, 3), 1)),
    ]
    with jax.enable_x64(False):
        for case in cases:
            ref, ref_warned = _run(lambda: case(jax.lax))
            out, warned = _run(lambda: case(pto.lax))
            assert out.dtype == ref.dtype and warned == ref_warned
        for name, dtype in [("uniform", np.float64), ("normal", np.float64),
                            ("bits", np.uint64)]:
            ref, ref_warned = _run(lambda: getattr(jax.random, name)(
                jax.random.key(0), (2,), dtype=dtype))
            out, warned = _run(lambda: getattr(pto.random, name)(
                pto.random.key(0), (2,), dtype=dtype))
            assert out.dtype == ref.dtype and warned == ref_warned, name


def test_default_dtypes_are_silent(jax, jnp):
    with jax.enable_x64(False):
        for make in (lambda m: m.zeros(2, float), lambda m: m.arange(4),
                     lambda m: m.ones(2, int).astype(float), lambda m: m.arange(np.int64(4))):
            ref, ref_warned = _run(lambda: make(jnp))
            out, warned = _run(lambda: make(pnp))
            assert out.dtype == ref.dtype and not warned and not ref_warned


@pytest.mark.parametrize("case", [
    lambda m, jit: m.asarray(2**31),
    lambda m, jit: m.ones(2, m.int32) + 2**31,
    lambda m, jit: m.zeros(3) + 2**40,
    lambda m, jit: jit(lambda a: a)(2**31),
], ids=["asarray", "binary op", "float array", "jit argument"])
def test_python_int_outside_int32_is_jax_overflow_error(jax, jnp, case):
    with jax.enable_x64(False):
        with pytest.raises(OverflowError):
            case(jnp, jax.jit)
        with pytest.raises(OverflowError, match="Python int .* too large to convert to int32"):
            case(pnp, pto.jit)


def test_x64_mode_keeps_64_bit(jax, jnp):
    x = np.linspace(0, 1, 4)
    with pto.enable_x64(True):
        out, warned = _run(lambda: (pnp.asarray(x), pnp.zeros(2, np.float64),
                                    pto.jit(lambda v: v * 2)(x), pnp.asarray(2**40)))
    assert [o.dtype for o in out] == [np.float64, np.float64, np.float64, np.int64]
    assert not warned
