"""Tracing: concretization and leaked-tracer errors with the user's line, closures over outer
tracers, non-array values."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.errors import ConcretizationError, LeakedTracerError, NonArrayLeafError

F32 = np.float32


def test_traced_value_as_bool_names_line_and_suggests_cond():
    def f(x):
        if x.sum() > 0:  # not allowed: data-dependent Python control flow
            return x
        return -x

    with pytest.raises(ConcretizationError) as info:
        pto.jit(f)(np.ones(3, F32))
    message = str(info.value)
    assert f"test_trace.py:{f.__code__.co_firstlineno + 1}" in message
    assert "pto.lax.cond" in message and "static_argnums" in message


@pytest.mark.parametrize("use", [int, float, lambda t: [0, 1, 2][t], np.asarray])
def test_traced_value_as_python_value(use):
    with pytest.raises(ConcretizationError, match="test_trace.py"):
        pto.make_ir(lambda x: use(x))(np.int32(1))


def test_static_python_control_flow_works():
    def f(x, n):
        for _ in range(n):
            x = x * 2.0
        return x if n > 1 else -x

    assert float(pto.jit(f, static_argnums=1)(np.float32(1.0), 3)) == 8.0


def test_leaked_tracer_is_reported():
    leaked = []

    def f(x):
        leaked.append(x)
        return x

    pto.jit(f)(np.ones(2, F32))
    with pytest.raises(LeakedTracerError, match="after that trace ended") as info:
        pnp.sin(leaked[0])
    assert "test_trace.py" in str(info.value)
    with pytest.raises(LeakedTracerError):
        pto.jit(lambda y: y + leaked[0])(np.ones(2, F32))


def test_inner_trace_captures_outer_tracer():
    def outer(x):
        def inner(y):
            return x * y
        return pto.grad(lambda y: inner(y).sum())(x)

    ir = pto.make_ir(outer)(np.ones(3, F32))
    assert [v.type.shape for v in ir.invars] == [(3,)]
    np.testing.assert_allclose(pto.jit(outer)(np.arange(3, dtype=F32)), np.arange(3))


def test_non_array_argument_is_rejected_with_advice():
    with pytest.raises(NonArrayLeafError, match="static_argnums"):
        pto.jit(lambda x, s: x)(np.ones(2, F32), "text")


def test_non_array_output_is_rejected():
    with pytest.raises(NonArrayLeafError, match="str"):
        pto.jit(lambda x: (x, "label"))(np.ones(2, F32))


def test_jit_inside_trace_inlines():
    inner = pto.jit(lambda x: pnp.exp(x))
    ir = pto.make_ir(lambda x: inner(x) + 1.0)(np.ones(2, F32))
    assert [e.prim.name for e in ir.eqns] == ["exp", "add"]
