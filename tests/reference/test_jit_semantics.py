"""jit against JAX: static argument checks, Python scalar arguments (a float next to float64
keeps its full value; an int outside int32 needs a 64-bit partner), creation functions that
leave no full-size constant in the IR, and errors at run time that name the user's line."""
import types

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.errors import IntegerOverflowError, PtoError, StaticArgumentError
from pnp_reference import expected_dtype, explicit_dtypes


def _positional_only(x, /, y):
    return x


JIT_DEFINITIONS = [  # (function, jit keyword arguments, whether JAX accepts them)
    (lambda x: x, dict(static_argnums=5), False),
    (lambda x: x, dict(static_argnums=-2), False),
    (lambda x: x, dict(static_argnums=-1), True),
    (lambda x: x, dict(static_argnames="zz"), False),
    (lambda x, **kw: x, dict(static_argnames="zz"), True),
    (lambda *xs: xs[0], dict(static_argnums=7), True),
    (_positional_only, dict(static_argnames="x"), False),
    (lambda x: x, dict(static_argnums="a"), False),
    (lambda x: x, dict(donate_argnums=3), False),
]


@pytest.mark.parametrize("fn, kwargs, valid", JIT_DEFINITIONS)
def test_static_and_donated_argument_specs_are_checked_as_jax_does(jax, fn, kwargs, valid):
    if valid:
        jax.jit(fn, **kwargs)
        pto.jit(fn, **kwargs)
        return
    with pytest.raises((ValueError, TypeError)):
        jax.jit(fn, **kwargs)
    with pytest.raises(StaticArgumentError) as info:
        pto.jit(fn, **kwargs)
    assert isinstance(info.value, ValueError) and "test_jit_semantics.py" in str(info.value)


def test_unhashable_static_arguments_raise_value_errors_as_in_jax(jax):
    with pytest.raises(ValueError, match="Non-hashable"):
        jax.jit(lambda x, s: x, static_argnums=1)(1.0, [1])
    with pytest.raises(ValueError, match="hashable"):
        pto.jit(lambda x, s: x, static_argnums=1)(1.0, [1])


PRECISE = 1.5152366018756531
SCALAR_CASES = [  # (function, Python scalar, array)
    (lambda s, a: s + a, PRECISE, np.array([4.009684531276969])),
    (lambda s, a: (a - s) / s, PRECISE, np.array([1.25, -3.0], np.float32)),
    (lambda s, a: s * 2 + a, PRECISE, np.array([1.0])),
    (lambda s, a: (s < PRECISE) + a, PRECISE, np.array([1.0])),
    (lambda s, a: a / s, PRECISE, np.array([2.0], np.float16)),
    (lambda s, a: -s / 3 + a, PRECISE, np.array([1.0])),
    (lambda s, a: pnp.maximum(a, s), -0.1, np.array([0.3, -0.2])),
    (lambda s, a: a + s, 2**40, np.arange(3, dtype=np.int64)),
    (lambda s, a: a - s, -2**63, np.array([5], np.int64)),
    (lambda s, a: a * s, 2**40, np.arange(3.0)),
    (lambda s, a: a + s, 300, np.arange(3, dtype=np.int8)),
    (lambda s, a: a * s, True, np.arange(3, dtype=np.uint8)),
    (lambda s, a: a + s, 3, np.arange(3, dtype=np.float16)),
]


def _with(np_, fn):
    """``fn`` with ``pnp`` standing for ``np_`` (the same body run by JAX's numpy)."""
    return types.FunctionType(fn.__code__, {**fn.__globals__, "pnp": np_})


@pytest.mark.parametrize("fn, scalar, array", SCALAR_CASES)
def test_python_scalar_arguments_give_the_eager_result_under_jit(jax, jnp, fn, scalar,
                                                                  array):
    """A Python scalar passed to jit keeps its full value until promotion, as eagerly: next to
    float64 a float is exact, an int outside int32 meets int64 exactly (JAX with x64 for
    64-bit inputs, without otherwise)."""
    x64 = any(d.itemsize == 8 for d in explicit_dtypes(array))
    with jax.enable_x64(x64), pto.enable_x64(x64):   # 64-bit arrays: both in x64 mode
        want = np.asarray(jax.jit(_with(jnp, fn))(scalar, jnp.asarray(array)))
        eager = fn(scalar, pnp.asarray(array))
        jitted = pto.jit(fn)(scalar, array)
        for got in (eager, jitted):
            assert got.dtype == expected_dtype(want.dtype, explicit_dtypes(array))
            np.testing.assert_array_equal(np.asarray(got), want.astype(got.dtype))


def test_a_python_float_a_weak_float32_and_a_weak_float64_are_three_signatures():
    weak32 = pnp.asarray(PRECISE)                  # rounded to float32 when made (x64 off)
    assert pto.jit(lambda s: s)(PRECISE).dtype == np.float32  # as JAX without x64
    with pto.enable_x64(True):                     # a weak float64 exists in x64 mode
        jf = pto.jit(lambda s, a: s + a)
        a = np.array([4.009684531276969])
        weak64 = pnp.asarray(np.int64(1)) * PRECISE    # a weak float64 (from an int64)
        assert weak32.weak_type and weak64.weak_type and weak64.dtype == np.float64
        assert float(jf(PRECISE, a)[0]) == PRECISE + a[0]
        assert float(jf(weak32, a)[0]) == float(np.float32(PRECISE)) + a[0]
        assert float(jf(weak64, a)[0]) == PRECISE + a[0]
        assert jf.cache_size() == 3


@pytest.mark.parametrize("scalar, array", [(2**40, np.ones(2, np.int32)),
                                           (2**40, np.ones(2, np.float32)),
                                           (2**31, np.ones(2, np.uint32))])
def test_python_ints_outside_int32_next_to_32_bit_arrays_overflow_as_in_jax(jax, scalar,
                                                                             array):
    with jax.enable_x64(False), pytest.raises(OverflowError):
        jax.jit(lambda s, a: a + s)(scalar, array)
    for run in (lambda: pnp.asarray(array) + scalar,
                lambda: pto.jit(lambda s, a: a + s)(scalar, array)):
        with pytest.raises(IntegerOverflowError) as info:
            run()
        assert isinstance(info.value, OverflowError)
        assert "test_jit_semantics.py" in str(info.value)


BIG = (10**6, 10**6)
CREATION = {
    "zeros": lambda: pnp.zeros(BIG),
    "ones": lambda: pnp.ones(BIG, pnp.int8),
    "full": lambda: pnp.full(BIG, 2.5),
    "empty": lambda: pnp.empty(BIG),
    "zeros_like": lambda: pnp.zeros_like(pnp.zeros(BIG)),
    "full_like": lambda: pnp.full_like(pnp.ones(BIG), 7, dtype=pnp.int32),
    "arange": lambda: pnp.arange(3, 2 * 10**9, 3),
    "arange float": lambda: pnp.arange(0.0, 2e9, 2.0),
    "eye": lambda: pnp.eye(*BIG),
    "tri": lambda: pnp.tri(10**6),
    "linspace": lambda: pnp.linspace(0.0, 1.0, 10**9),
}


@pytest.mark.parametrize("name", sorted(CREATION))
def test_creation_functions_leave_no_large_constant_in_the_ir(name):
    closed = pto.make_ir(lambda: CREATION[name]() + 1)()
    assert all(np.size(c) <= 16 for c in closed.consts), name
    assert all(v.type.size <= 16 for v in closed.ir.constvars)


SMALL_CREATION = [
    lambda x: pnp.zeros((2, 3)) + x, lambda x: pnp.full((2, 3), 2**31 + 5, pnp.int8) + x,
    lambda x: pnp.ones_like(x, pnp.int32) * 2, lambda x: pnp.full_like(x, 1.5) - x,
    lambda x: pnp.arange(-7, 5, 3, dtype=pnp.float32) + x[0, 0],
    lambda x: pnp.arange(1.0, 4.0) * x[0, 0], lambda x: pnp.eye(3, 4, k=1) + x[0, 0],
]


@pytest.mark.parametrize("fn", SMALL_CREATION)
def test_creation_functions_give_the_same_values_eagerly_and_under_jit(jax, jnp, fn):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    eager, jitted = fn(pnp.asarray(x)), pto.jit(fn)(x)
    with jax.enable_x64(False):
        want = np.asarray(_with(jnp, fn)(jnp.asarray(x)))
    for got in (eager, jitted):
        assert got.dtype == want.dtype and got.weak_type == eager.weak_type
        np.testing.assert_array_equal(np.asarray(got), want)
    assert not any(np.size(c) > 1 for c in pto.jit(fn).lower(x).ir.consts)


def test_a_failure_at_run_time_names_the_operation_and_its_line():
    def f(x):
        big = pnp.broadcast_to(x, (10**7, 10**7))
        return big * 2  # the line that cannot allocate

    with pytest.raises(MemoryError) as info:
        pto.jit(f)(np.ones(1, np.float32))
    err = info.value
    assert isinstance(err, PtoError) and err.source.line == f.__code__.co_firstlineno + 2
    assert "running `f` (jit)" in str(err)
