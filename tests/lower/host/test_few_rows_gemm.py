"""Float32 products of few rows run by the kernel library's GEMM (lower/host/few_rows_gemm.py,
include/pto_host_gemm.h): the same values as JAX's within the float bound of the sum, for
every row and column tail; which products qualify; the race against BLAS."""
import functools
from unittest import mock

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ptojax as pto
from host_cases import executable_of, host_jit
from ptojax.ir.core import Var
from ptojax.ir.types import TensorType
from ptojax.lower.host import few_rows_gemm
from ptojax.lower.host.build import translation_unit
from ptojax.lower.host.few_rows_gemm import (EXPORTS, MAX_ROWS, MIN_DEPTH, TRIALS,
                                          runs_few_rows)
from ptojax.ops.linalg import dot_general_p

# 85 columns: a 64-column panel (AVX-512; four 16-column ones with AVX2), one vector, then 5
# single columns; 100 rows of w: a contraction that is no multiple of anything
DEPTH, COLUMNS = 100, 85


ROWS = (1, 7, 32)       # row tails of 1 and 2 below the 6-row blocks


def dense(x, w, b):
    return jnp.maximum(x @ w + b, 0.0) if isinstance(x, jax.Array) else \
        pto.nn.relu(x @ w + b)


def layers(xs, w, b):
    """The dense layer on batches of each of ``ROWS`` rows: one program, three products."""
    return [dense(x, w, b) for x in xs]


def operands(seed=0):
    rng = np.random.default_rng(seed)
    return ([rng.standard_normal((rows, DEPTH), dtype=np.float32) for rows in ROWS],
            rng.standard_normal((DEPTH, COLUMNS), dtype=np.float32),
            rng.standard_normal(COLUMNS, dtype=np.float32))


def sum_bound(x, w):
    """The float32 error bound of each ``(x @ w)`` element: depth * eps * (|x| @ |w|)."""
    return DEPTH * np.finfo(np.float32).eps * (np.abs(x).astype(np.float64) @ np.abs(w))


def product_runners(fn, *args):
    """{rows: the runner of the product of that many rows} of ``fn``'s program."""
    program = executable_of(fn, *args).program
    return {e.inputs[0].type.shape[0]: r for e, r in program.tensor_runners.items()
            if e.prim is dot_general_p}


@pytest.fixture(scope="module")
def jitted():
    """The layers compiled with every size of product qualifying (``MIN_WORK`` lowered while
    the program is built): small shapes cover every tail."""
    fn = host_jit(layers)
    with mock.patch.object(few_rows_gemm, "MIN_WORK", 1):
        fn(*operands())
    return fn


@pytest.mark.parametrize("gemm_wins", [True, False])
def test_values_match_jax_within_the_sum_bound(jitted, gemm_wins):
    xs, w, b = operands(seed=int(gemm_wins))
    runners = product_runners(jitted, xs, w, b)
    assert sorted(runners) == sorted(ROWS)
    for run in runners.values():
        run.race.choice = {False: gemm_wins, True: gemm_wins}
    got = jitted(xs, w, b)
    want = jax.jit(layers)([jnp.asarray(x) for x in xs], jnp.asarray(w), jnp.asarray(b))
    for x, g, j in zip(xs, got, want):
        g, j = np.asarray(g), np.asarray(j)
        assert g.dtype == j.dtype == np.float32 and g.shape == j.shape
        # relu is 1-Lipschitz; the bias add and JAX's own product round once more each
        bound = 2 * sum_bound(x, w) + 2 * np.finfo(np.float32).eps * np.abs(j)
        assert np.all(np.abs(g.astype(np.float64) - j) <= bound)
        exact = x.astype(np.float64) @ w
        assert np.all(np.abs(runners[x.shape[0]](x, w) - exact) <= sum_bound(x, w))


def test_a_transposed_operand_takes_blas(jitted):
    xs, w, b = operands()
    run = product_runners(jitted, xs, w, b)[32]
    run.race.choice = {False: True, True: True}
    w_view = np.asfortranarray(w)          # not C-contiguous: numpy's impl reads it
    assert np.all(np.abs(run(xs[2], w_view) - xs[2].astype(np.float64) @ w)
                  <= sum_bound(xs[2], w))


def test_each_machine_state_races_until_one_way_wins(jitted):
    xs, w, b = operands()
    run = product_runners(jitted, xs, w, b)[32]
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
    out_shape = (lhs[0], rhs[1]) if len(lhs) == len(rhs) == 2 else (1,)
    eqn = type("Eqn", (), {})()
    eqn.prim, eqn.inputs = dot_general_p, inputs
    eqn.outputs = [Var(TensorType(out_shape, np.dtype(dtype)))]
    eqn.params = {"dimension_numbers": dimension_numbers}
    return eqn


def test_which_products_qualify():
    assert runs_few_rows(_product((32, 784), (784, 512)))
    assert runs_few_rows(_product((MAX_ROWS, MIN_DEPTH), (MIN_DEPTH, 1024)))
    assert not runs_few_rows(_product((32, 64), (64, 128)))     # < MIN_WORK: BLAS's bits
    assert not runs_few_rows(_product((MAX_ROWS + 1, 784), (784, 512)))    # BLAS packs once
    assert not runs_few_rows(_product((32, MIN_DEPTH - 1), (MIN_DEPTH - 1, 512)))
    assert not runs_few_rows(_product((32, 512), (512, 10)))               # narrow result
    assert not runs_few_rows(_product((32, 784), (784, 512), dtype=np.float64))
    assert not runs_few_rows(_product((784, 32), (784, 512), (((0,), (0,)), ((), ()))))


def test_only_libraries_asking_for_the_gemm_compile_it():
    """A kernel library includes the header only when its program has such a product."""
    unit = functools.partial(translation_unit, "", [], pto.targets.host_jit)
    assert '#include "pto_host_gemm.h"' not in unit()
    assert unit(exports=EXPORTS).count('#include "pto_host_gemm.h"') == 1


def test_threads_change_no_bits(jitted):
    """Column panels are shared out over threads; each result is computed by the same code
    whichever thread runs it."""
    xs, w, b = operands()
    library = executable_of(jitted, xs, w, b).program.library
    rng = np.random.default_rng(5)
    x = rng.standard_normal((32, 300), dtype=np.float32)
    wide = rng.standard_normal((300, 1000), dtype=np.float32)    # many panels, then tails
    outs = []
    for parallel in (0, 1):
        out = np.full((32, 1000), np.nan, np.float32)
        library.gemm_few_rows_f32(32, 1000, 300, x.ctypes.data, 300, wide.ctypes.data, 1000,
                                  0.0, out.ctypes.data, 1000, parallel)
        outs.append(out)
    np.testing.assert_array_equal(outs[0], outs[1])
    bound = 300 * np.finfo(np.float32).eps * (np.abs(x).astype(np.float64) @ np.abs(wide))
    assert np.all(np.abs(outs[0] - x.astype(np.float64) @ wide) <= bound)


def test_beta_adds_the_product_into_c(jitted):
    xs, w, b = operands()
    library = executable_of(jitted, xs, w, b).program.library
    x = xs[1]                                    # 7 rows: a block of 6 and a tail of 1
    c = np.random.default_rng(6).standard_normal((7, COLUMNS), dtype=np.float32)
    out = c.copy()
    library.gemm_few_rows_f32(7, COLUMNS, DEPTH, x.ctypes.data, DEPTH, w.ctypes.data,
                              COLUMNS, 0.5, out.ctypes.data, COLUMNS, 0)
    want = x.astype(np.float64) @ w + 0.5 * c.astype(np.float64)
    bound = sum_bound(x, w) + 2 * np.finfo(np.float32).eps * np.abs(want)
    assert np.all(np.abs(out - want) <= bound)
