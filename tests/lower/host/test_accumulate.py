"""Products added into an accumulator (lower/host/accumulate.py, ops/dot_accumulate.py):
``beta * v + x.T @ g`` and ``acc + x @ w`` become one GEMM into the accumulator when the
executor may write it (a donated input, a fresh intermediate that dies there) and it is
large; a bias broadcast, a product read twice, a batched product, a small or a caller's
accumulator are left alone; values match JAX up to float rounding."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ptojax as pto
from host_cases import executable_of, host_jit
from ptojax.errors import DtypeError, ShapeError
from ptojax.ir.types import TensorType
from ptojax.lower.host.accumulate import MIN_ELEMENTS, accumulating_products
from ptojax.lower.host.backend import CpuBackend
from ptojax.ops.dot_accumulate import dot_accumulate_p
from ptojax.optimize import optimize

RNG = np.random.default_rng(0)
M, N, K = 256, 128, 16          # M * N = MIN_ELEMENTS


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _prims(fn, *args, donated=frozenset({0})):
    closed = optimize(pto.make_ir(fn)(*args))     # as jit hands it to the cpu backend
    return [e.prim.name for e in accumulating_products(closed, donated).ir.eqns]


def _gemm_in_place(program) -> bool:
    """Whether ``program``'s dot_accumulate writes its accumulator's buffer: the primitive's
    in-place impl, or a runner writing over its operand (``lower/host/team_gemm.py``)."""
    executable = program.executable
    [i] = [k for k, e in enumerate(executable.closed.ir.eqns) if e.prim is dot_accumulate_p]
    line = executable.source.splitlines()[1 + i]
    return "_in_place(" in line or "# in place:" in line


def momentum(v, x, g):
    return 0.9 * v + x.T @ g


def accumulate(acc, x, w):
    return x @ w + acc


def test_a_scaled_sum_and_a_plain_sum_into_a_donated_input_become_one_product():
    assert M * N == MIN_ELEMENTS
    assert _prims(momentum, _f32(M, N), _f32(K, M), _f32(K, N)) == ["dot_accumulate"]
    assert _prims(accumulate, _f32(M, N), _f32(M, K), _f32(K, N)) == ["dot_accumulate"]


def test_a_fresh_intermediate_is_an_accumulator_too():
    def fn(v, x, g):
        return 0.9 * (v + 1.0) + x.T @ g
    assert _prims(fn, _f32(M, N), _f32(K, M), _f32(K, N), donated=()) == \
        ["add", "dot_accumulate"]


@pytest.mark.parametrize("case", ["bias", "product read twice", "batched", "int", "small",
                                  "the caller's", "read again"])
def test_what_is_left_alone(case):
    x, w, v = _f32(M, K), _f32(K, N), _f32(M, N)
    fn, args, donated = (lambda v, x, w: 0.9 * v + x @ w), (v, x, w), {0}
    if case == "bias":
        fn, args = (lambda b, x, w: x @ w + b), (_f32(N), x, w)
    elif case == "product read twice":
        fn = lambda v, x, w: (0.9 * v + x @ w, x @ w)   # noqa: E731
    elif case == "batched":
        args = (_f32(2, M, N), _f32(2, M, K), _f32(2, K, N))
        fn = lambda v, x, w: 0.9 * v + x @ w   # noqa: E731
    elif case == "int":
        fn = lambda v, x, w: 2 * v + x @ w   # noqa: E731
        args = tuple(a.astype(np.int32) for a in args)
    elif case == "small":
        args = (_f32(M // 2, N), _f32(M // 2, K), w)
    elif case == "the caller's":
        donated = ()
    else:
        fn = lambda v, x, w: (0.9 * v + x @ w, v)   # noqa: E731
    assert "dot_accumulate" not in _prims(fn, *args, donated=donated)


@pytest.mark.parametrize("scaled", [True, False])
def test_both_tiers_match_jax_and_leave_the_arguments_alone(scaled):
    def fn(v, x, g):
        fresh = v + 1.0
        return (0.9 * fresh if scaled else fresh) + x.T @ g
    args = (_f32(M, N), _f32(K, M), _f32(K, N))
    kept = [a.copy() for a in args]
    expected = jax.jit(fn)(*map(jnp.asarray, args))
    numpy_tier = pto.jit(fn)            # tiered: its first call runs the numpy executor
    compiled = host_jit(fn)
    for got in (numpy_tier(*args), compiled(*args)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-5, atol=1e-5)
    for a, b in zip(args, kept):
        np.testing.assert_array_equal(a, b)
    assert _gemm_in_place(executable_of(compiled, *args).program)   # into the fresh intermediate


def momentum_epoch(p, v, xs, gs):
    def body(i, state):
        p, v = state
        v = 0.9 * v + xs[i].T @ gs[i]
        return p - 1e-2 * v, v
    return pto.lax.fori_loop(0, 3, body, (p, v))


def test_a_loop_accumulates_into_its_velocity_carry_in_place():
    p, v, xs, gs = _f32(M, N), _f32(M, N), _f32(3, K, M), _f32(3, K, N)
    kept = v.copy()
    fn = host_jit(momentum_epoch)
    got = fn(p, v, xs, gs)

    def jax_epoch(p, v, xs, gs):
        def body(i, s):
            v = 0.9 * s[1] + xs[i].T @ gs[i]
            return s[0] - 1e-2 * v, v
        return jax.lax.fori_loop(0, 3, body, (p, v))
    expected = jax.jit(jax_epoch)(p, v, xs, gs)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(v, kept)
    body = executable_of(fn, p, v, xs, gs).loop_bodies[0]
    assert "dot_accumulate" in str(body.closed)
    assert _gemm_in_place(body.program)   # the GEMM writes the carry
    order = body.program.executable.closed.ir.eqns     # lower/host/locality.py: the update
    i = next(i for i, e in enumerate(order) if e.prim is dot_accumulate_p)   # right after
    assert order[i].outputs[0] in order[i + 1].inputs


def test_the_primitive_checks_its_operands():
    acc, x, g = (TensorType(s, np.dtype(np.float32)) for s in ((16, 8), (4, 16), (4, 8)))
    dn = (((0,), (0,)), ((), ()))
    assert dot_accumulate_p.abstract_eval(acc, x, g, dimension_numbers=dn, beta=0.5) == acc
    with pytest.raises(ShapeError, match="accumulator"):
        dot_accumulate_p.abstract_eval(TensorType((8, 16), np.dtype(np.float32)), x, g,
                                       dimension_numbers=dn, beta=0.5)
    with pytest.raises(ShapeError, match="contract one axis"):
        dot_accumulate_p.abstract_eval(acc, x, g, dimension_numbers=(((0,), (0,)), ((0,), (0,))),
                                       beta=0.5)
    with pytest.raises(DtypeError):
        dot_accumulate_p.abstract_eval(acc, x, TensorType((4, 8), np.dtype(np.int32)),
                                       dimension_numbers=dn, beta=0.5)



@pytest.mark.parametrize("where", ["contracted", "result rows"])
def test_products_over_a_runtime_size_are_left_alone_and_right(where):
    rows = pto.Dim("rows", 1, 300)
    if where == "contracted":      # x.T @ g over the runtime rows: a static 256x128 result
        def fn(v, x, g):
            return 0.9 * (v + 1.0) + x.T @ g
        args, dynamic = (_f32(M, N), _f32(40, M), _f32(40, N)), {1: {0: rows}, 2: {0: rows}}
    else:                          # the result has the runtime rows
        def fn(v, x, w):
            return 0.9 * (v + 1.0) + x @ w
        args, dynamic = (_f32(260, N), _f32(260, K), _f32(K, N)), {0: {0: rows}, 1: {0: rows}}
    jitted = pto.jit(fn, backend=CpuBackend(tiered=False, min_elements=0), dynamic=dynamic)
    expected = jax.jit(fn)(*map(jnp.asarray, args))
    np.testing.assert_allclose(np.asarray(jitted(*args)), np.asarray(expected), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("layout", ["read-only", "fortran"])
def test_the_in_place_impl_takes_a_fresh_buffer_when_it_cannot_write(layout):
    acc, x, g = _f32(M, N), _f32(K, M), _f32(K, N)
    expected = np.float32(0.5) * acc + x.T @ g
    if layout == "read-only":
        acc.flags.writeable = False
    else:
        acc = np.asfortranarray(acc)
    kept = acc.copy()
    got = dot_accumulate_p.in_place(acc, x, g, dimension_numbers=(((0,), (0,)), ((), ())),
                                    beta=0.5)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(acc, kept)
    assert got.flags.c_contiguous
