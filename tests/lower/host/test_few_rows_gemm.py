"""Float32 products of few rows run by the kernel library's GEMM (lower/host/few_rows_gemm.py,
include/pto_host_gemm.h), ``x @ w`` and ``g @ w.T``: the same values as JAX's within the float
bound of the sum, for every row and column tail; which products qualify; the race against
BLAS."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ptojax as pto
from host_cases import executable_of, host_jit
from ptojax.ir.core import Var
from ptojax.ir.types import TensorType
from ptojax.lower.host.build import translation_unit
from ptojax.lower.host.few_rows_gemm import (EXPORTS, MAX_ROWS, MIN_DEPTH, TRIALS,
                                          runs_few_rows)
from ptojax.ops.linalg import dot_general_p

# 85 columns: a 64-column panel (AVX-512; four 16-column ones with AVX2), one vector, then 5
# single columns; 100 rows of w: a contraction that is no multiple of anything. g @ w.T runs
# as w @ g.T: 100 rows of w (16 blocks of 6, then 4), by 1, 7 or 32 columns (scalar columns;
# two vectors with AVX-512)
DEPTH, COLUMNS = 100, 85
ROWS = (1, 7, 32)       # row tails of 1 and 2 below the 6-row blocks
TRANSPOSED = (((1,), (1,)), ((), ()))
EPS = np.finfo(np.float32).eps


def dense(x, w, b):
    return jnp.maximum(x @ w + b, 0.0) if isinstance(x, jax.Array) else \
        pto.nn.relu(x @ w + b)


def layers(xs, gs, w, b):
    """The dense layer on batches of each of ``ROWS`` rows, and ``g @ w.T`` for ``g`` of
    each: one program, six products."""
    lax = jax.lax if isinstance(w, jax.Array) else pto.lax
    return [dense(x, w, b) for x in xs] + [lax.dot_general(g, w, TRANSPOSED) for g in gs]


def operands(seed=0):
    rng = np.random.default_rng(seed)
    return ([rng.standard_normal((rows, DEPTH), dtype=np.float32) for rows in ROWS],
            [rng.standard_normal((rows, COLUMNS), dtype=np.float32) for rows in ROWS],
            rng.standard_normal((DEPTH, COLUMNS), dtype=np.float32),
            rng.standard_normal(COLUMNS, dtype=np.float32))


def exact_and_bound(lhs, rhs):
    """``lhs @ rhs`` in float64 and the float32 error bound of each element:
    depth * eps * (|lhs| @ |rhs|)."""
    lhs, rhs = lhs.astype(np.float64), rhs.astype(np.float64)
    return lhs @ rhs, lhs.shape[1] * EPS * (np.abs(lhs) @ np.abs(rhs))


def product_runners(fn, *args):
    """{(transposed, rows): the runner of that product} of ``fn``'s program."""
    program = executable_of(fn, *args).program
    return {(e.params["dimension_numbers"] == TRANSPOSED, e.inputs[0].type.shape[0]): r
            for e, r in program.tensor_runners.items() if e.prim is dot_general_p}


@pytest.fixture(scope="module")
def jitted():
    fn = host_jit(layers)
    fn(*operands())
    return fn


@pytest.mark.parametrize("gemm_wins", [True, False])
def test_values_match_jax_within_the_sum_bound(jitted, gemm_wins):
    xs, gs, w, b = operands(seed=int(gemm_wins))
    runners = product_runners(jitted, xs, gs, w, b)
    assert sorted(runners) == sorted((t, rows) for t in (False, True) for rows in ROWS)
    for run in runners.values():
        run.race.choice = {False: gemm_wins, True: gemm_wins}
    got = jitted(xs, gs, w, b)
    want = jax.jit(layers)(*jax.tree_util.tree_map(jnp.asarray, (xs, gs, w, b)))
    cases = [(False, x, w) for x in xs] + [(True, g, w.T) for g in gs]
    for (transposed, lhs, rhs), g, j in zip(cases, got, want):
        g, j = np.asarray(g), np.asarray(j)
        assert g.dtype == j.dtype == np.float32 and g.shape == j.shape
        exact, bound = exact_and_bound(lhs, rhs)
        # relu is 1-Lipschitz; the bias add and JAX's own product round once more each
        assert np.all(np.abs(g - j) <= 2 * bound + 2 * EPS * np.abs(j))
        product = runners[transposed, lhs.shape[0]](lhs, w)
        assert product.flags.c_contiguous or not gemm_wins   # BLAS: maybe a transposed view
        assert np.all(np.abs(product - exact) <= bound)


def test_a_transposed_operand_takes_blas(jitted):
    xs, gs, w, b = operands()
    run = product_runners(jitted, xs, gs, w, b)[False, 32]
    run.race.choice = {False: True, True: True}
    w_view = np.asfortranarray(w)          # not C-contiguous: numpy's impl reads it
    exact, bound = exact_and_bound(xs[2], w)
    assert np.all(np.abs(run(xs[2], w_view) - exact) <= bound)


def test_each_machine_state_races_until_one_way_wins(jitted):
    xs, gs, w, b = operands()
    run = product_runners(jitted, xs, gs, w, b)[False, 32]
    run.race.__init__()                   # a fresh race
    x = xs[2]
    for _ in range(2 * TRIALS + 2):       # a state change mid-race only splits the runs
        run(x, w)
    timed = {busy: [len(run.race.times[busy, own]) for own in (False, True)]
             for busy in (False, True)}
    decided = [busy for busy, choice in run.race.choice.items() if choice is not None]
    assert decided and all(min(timed[busy]) >= TRIALS for busy in decided)


def _product(lhs, rhs, dimension_numbers=(((1,), (0,)), ((), ())), dtype=np.float32):
    inputs = [Var(TensorType(lhs, np.dtype(dtype))), Var(TensorType(rhs, np.dtype(dtype)))]
    (_, (rc,)), _ = dimension_numbers
    out_shape = (lhs[0], rhs[1 - rc])
    eqn = type("Eqn", (), {})()
    eqn.prim, eqn.inputs = dot_general_p, inputs
    eqn.outputs = [Var(TensorType(out_shape, np.dtype(dtype)))]
    eqn.params = {"dimension_numbers": dimension_numbers}
    return eqn


def test_which_products_qualify():
    assert runs_few_rows(_product((32, 784), (784, 512)))
    assert runs_few_rows(_product((MAX_ROWS, MIN_DEPTH), (MIN_DEPTH, 64)))
    assert not runs_few_rows(_product((MAX_ROWS + 1, 784), (784, 512)))    # BLAS packs once
    assert not runs_few_rows(_product((32, MIN_DEPTH - 1), (MIN_DEPTH - 1, 512)))
    assert not runs_few_rows(_product((32, 512), (512, 10)))               # narrow result
    assert not runs_few_rows(_product((32, 784), (784, 512), dtype=np.float64))
    assert runs_few_rows(_product((32, 784), (512, 784), TRANSPOSED))      # g @ w.T
    assert not runs_few_rows(_product((784, 32), (784, 512), (((0,), (0,)), ((), ()))))


def test_only_libraries_asking_for_the_gemm_compile_it():
    """A kernel library includes the header only when its program has such a product."""
    unit = functools.partial(translation_unit, "", [], pto.targets.host_jit)
    assert '#include "pto_host_gemm.h"' not in unit()
    assert unit(exports=EXPORTS).count('#include "pto_host_gemm.h"') == 1


@pytest.mark.parametrize("rows, columns", [(32, 1000), (1000, 32)])
def test_threads_change_no_bits(jitted, rows, columns):
    """Panels of columns (few rows) or chunks of rows (few columns) are shared out over
    threads; each result is computed by the same code whichever thread runs it."""
    library = executable_of(jitted, *operands()).program.library
    rng = np.random.default_rng(5)
    a = rng.standard_normal((rows, 300), dtype=np.float32)
    b = rng.standard_normal((300, columns), dtype=np.float32)
    outs = []
    for parallel in (0, 1):
        out = np.full((rows, columns), np.nan, np.float32)
        library.gemm_few_rows_f32(rows, columns, 300, a.ctypes.data, 300, b.ctypes.data,
                                  columns, 0.0, out.ctypes.data, columns, 0, parallel)
        outs.append(out)
    np.testing.assert_array_equal(outs[0], outs[1])
    exact, bound = exact_and_bound(a, b)
    assert np.all(np.abs(outs[0] - exact) <= bound)


@pytest.mark.parametrize("c_transposed", [0, 1])
def test_beta_adds_the_product_into_c(jitted, c_transposed):
    xs, gs, w, b = operands()
    library = executable_of(jitted, xs, gs, w, b).program.library
    x = xs[1]                                    # 7 rows: a block of 6 and a tail of 1
    c = np.random.default_rng(6).standard_normal((7, COLUMNS), dtype=np.float32)
    out = np.ascontiguousarray(c.T) if c_transposed else c.copy()
    library.gemm_few_rows_f32(7, COLUMNS, DEPTH, x.ctypes.data, DEPTH, w.ctypes.data,
                              COLUMNS, 0.5, out.ctypes.data, 7 if c_transposed else COLUMNS,
                              c_transposed, 0)
    exact, bound = exact_and_bound(x, w)
    want = exact + 0.5 * c.astype(np.float64)
    assert np.all(np.abs((out.T if c_transposed else out) - want)
                  <= bound + 2 * EPS * np.abs(want))
