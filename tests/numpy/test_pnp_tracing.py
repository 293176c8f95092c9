"""ptojax.numpy under tracing: the IR it emits (explicit broadcasting and promotion, weak
literals, verified types), Array and Tracer sharing one set of methods, numpy ufuncs on traced
values, and jit caching of pnp code."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.ir.verify import verify


def _prims(closed):
    return [e.prim.name for e in closed.eqns]


def test_broadcasting_and_promotion_are_explicit_equations():
    closed = pto.make_ir(lambda x, y: x + y)(np.ones((3, 1), np.int8), np.ones(4, np.float16))
    verify(closed)
    assert _prims(closed).count("convert_element_type") == 1
    assert _prims(closed).count("broadcast_in_dim") == 2
    assert _prims(closed)[-1] == "add"
    (out,) = closed.out_types
    assert (out.shape, out.dtype) == ((3, 4), pnp.float16)


def test_a_weak_python_scalar_becomes_a_literal_of_the_array_dtype():
    closed = pto.make_ir(lambda x: x * 2.0 + 1)(np.ones(3, np.float16))
    verify(closed)
    assert _prims(closed) == ["mul", "add"]
    literals = [a for e in closed.eqns for a in e.inputs if not hasattr(a, "ir_var")
                and type(a).__name__ == "Literal"]
    assert [lit.type.dtype for lit in literals] == [pnp.float16, pnp.float16]
    assert not closed.out_types[0].weak_type


def test_python_scalar_arguments_are_traced_weak():
    closed = pto.make_ir(lambda x, s: x * s)(np.ones(2, np.float16), 3.0)
    assert closed.in_types[1].weak_type
    assert closed.out_types[0].dtype == pnp.float16
    out = pto.jit(lambda s: s * 2)(3.0)
    assert out.dtype == pnp.float32 and out.weak_type


PROGRAMS = [
    lambda x: pnp.sum(pnp.exp(x) * 2, axis=1, keepdims=True) / x.shape[1],
    lambda x: pnp.einsum("ij,kj->ik", x, x) @ x,
    lambda x: x.at[:, 1:].add(pnp.arange(2, dtype=pnp.float32))[::-1, None],
    lambda x: pnp.where(x > 0, pnp.sort(x, axis=0), pnp.argmax(x, axis=1)[:, None]),
    lambda x: pnp.concatenate([pnp.tril(x[:, :2]), pnp.take(x, np.array([2, 0]), axis=1)], axis=1),
    lambda x: pnp.var(x.astype(pnp.float16), axis=0) + pnp.cumsum(x, 1)[0],
]


@pytest.mark.parametrize("program", PROGRAMS, ids=range(len(PROGRAMS)))
def test_traced_programs_verify_and_run_like_the_eager_program(program):
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    closed = pto.make_ir(program)(x)
    verify(closed)
    eager = program(pnp.asarray(x))
    for out in (closed(x)[0], pto.jit(program)(x)):
        assert (out.shape, out.dtype) == (eager.shape, eager.dtype)
        np.testing.assert_allclose(np.asarray(out, np.float64), np.asarray(eager, np.float64),
                                   rtol=1e-3)


NUMPY_ATTRIBUTES = [
    "sum", "mean", "var", "std", "prod", "max", "min", "argmax", "argmin", "any", "all",
    "cumsum", "cumprod", "ptp", "reshape", "transpose", "astype", "squeeze", "ravel",
    "flatten", "swapaxes", "repeat", "clip", "round", "dot", "sort", "argsort", "take",
    "diagonal", "trace", "copy", "conj", "T", "mT", "at", "real", "imag", "shape", "dtype",
    "ndim", "size", "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__truediv__",
    "__floordiv__", "__mod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__and__",
    "__or__", "__xor__", "__lshift__", "__rshift__", "__neg__", "__pos__", "__abs__",
    "__invert__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__getitem__",
    "__iter__", "__len__", "__round__", "__divmod__"]


def test_arrays_and_traced_values_have_the_numpy_methods_and_operators():
    assert [n for n in NUMPY_ATTRIBUTES if not hasattr(pnp.ones((2, 2)), n)] == []
    missing = []
    pto.jit(lambda x: missing.extend(n for n in NUMPY_ATTRIBUTES if not hasattr(x, n)) or x)(
        np.ones((2, 2)))
    assert missing == []


def test_numpy_ufuncs_on_traced_values_dispatch_to_ptojax():
    closed = pto.make_ir(lambda x: np.exp(x) + np.maximum(x, 0.0) + np.matmul(x, x))(
        np.ones((2, 2), np.float32))
    verify(closed)
    assert {"exp", "max", "dot_general"} <= set(_prims(closed))


def test_iterating_a_traced_array_yields_its_rows():
    closed = pto.make_ir(lambda x: [row * i for i, row in enumerate(x)])(np.ones((3, 2)))
    assert [t.shape for t in closed.out_types] == [(2,)] * 3


def test_jit_traces_pnp_code_once_per_signature():
    calls = []

    def f(x, y):
        calls.append(1)
        return pnp.maximum(x, y).sum(axis=0)
    jitted = pto.jit(f)
    a, b = pnp.ones((2, 3)), pnp.zeros(3)
    for _ in range(3):
        jitted(a, b)
    jitted(a, pnp.zeros(3, pnp.float16))
    assert (len(calls), jitted.cache_size()) == (2, 2)


def test_concrete_arrays_closed_over_are_captured_as_constants():
    table = pnp.arange(12, dtype=pnp.float32).reshape(3, 4)
    closed = pto.make_ir(lambda i: table[i] * 2)(np.int32(1))
    verify(closed)
    assert len(closed.ir.constvars) >= 1
    np.testing.assert_array_equal(closed(np.int32(1))[0], np.arange(4, 8) * 2)
