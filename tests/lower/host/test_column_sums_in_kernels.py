"""A column sum read inside a kernel (softmax over axis 0, a masked column mean) is the sum of
every row: the kernel holds all rows in one tile, or stays unfused when they do not fit. (It
used to add the partial sum of each row tile: wrong from 40 rows on the host target, once a
uint8 mask widened the tile; found by the bucketing tests.)"""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.lower.host.backend import CpuBackend

FUNCTIONS = {
    "masked_softmax_axis0": lambda e: pnp.exp(e) / pnp.where(e > 0.3, pnp.exp(e), 0.0).sum(
        0, keepdims=True),
    "column_centered": lambda e: e - e.mean(0, keepdims=True),
}


def _every_function(*xs):
    """Every function of FUNCTIONS on an input of its own, as one program."""
    return {name: FUNCTIONS[name](x) for name, x in zip(sorted(FUNCTIONS), xs)}


COMPILED = {}


def _compiled(kernels, x):
    """{name: output} of every function on ``x``, built as one program (one library per build
    and shape, not one per function; each function is kernels of its own, on its own input)."""
    if (kernels, x.shape) not in COMPILED:
        f = pto.jit(_every_function,
                    backend=CpuBackend(tiered=False, min_elements=0, kernels=kernels))
        COMPILED[kernels, x.shape] = f(*[x.copy() for _ in FUNCTIONS])
    return COMPILED[kernels, x.shape]


@pytest.mark.parametrize("kernels", ["fused", "pto"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_column_sums_inside_kernels_sum_every_row(name, kernels):
    reference = pto.jit(FUNCTIONS[name], backend="interpreter")
    for rows in (40, 5000):   # more rows than one host tile; more than fit UB
        x = np.random.default_rng(rows).random((rows, 8)).astype(np.float32)
        np.testing.assert_allclose(_compiled(kernels, x)[name], reference(x),
                                   rtol=1e-5, atol=2e-5)  # f32 sums


@pytest.mark.parametrize("busy", [False, True], ids=["threads", "calling_thread"])
def test_pto_column_sums_added_atomically_only_across_threads(busy, monkeypatch):
    """The PTO build's atomic TSTORE of column sums: atomic when the blocks run on the OpenMP
    threads, plain when they run one after another; the same sums either way, to rounding."""
    from ptojax.lower.host import program
    monkeypatch.setattr(program, "threads_free", lambda: not busy)
    f = pto.jit(lambda g, x: (pnp.where(x > 0, g, 0.0), pnp.sum(g * 2.0, axis=0)),
                backend=CpuBackend(tiered=False, min_elements=0, kernels="pto"))
    rng = np.random.default_rng(7)
    g, x = (rng.standard_normal((512, 128)).astype(np.float32) for _ in range(2))  # parallel
    masked, sums = f(g, x)
    np.testing.assert_array_equal(masked, np.where(x > 0, g, 0.0))
    np.testing.assert_allclose(sums, (g * 2.0).astype(np.float64).sum(0), rtol=1e-5, atol=1e-4)


FUSED_SUMS = {   # column sums of a bias gradient, a layer norm's gamma and beta, a masked mean
    "bias": (lambda g, x: (pnp.where(x > 0, g, 0.0), pnp.sum(g * 2.0, axis=0)), (4096, 128),
             np.float32),
    "gamma_beta": (lambda g, x: (pnp.sum(g * x, axis=0), pnp.sum(g, axis=0)), (3000, 96),
                   np.float32),
    "wide": (lambda g, x: pnp.sum(g * x, axis=0), (64, 2000), np.float32),
}


@pytest.mark.parametrize("case", sorted(FUSED_SUMS))
def test_fused_column_sums_are_the_same_bits_on_any_number_of_threads(case, monkeypatch):
    """Column sums in the fused build: each block adds its tiles' sums up in its own buffer
    and adds that into the output when it ends, in block order, with blocks running at once
    on the OpenMP threads as with blocks run one after another on the calling thread (a busy
    machine, small kernels): every run gives the same bits (``take_add_turn`` in
    pto_host_memory.h; atomic additions in the threads' order differed in the last bits)."""
    from ptojax.lower.host import program
    fn, shape, dtype = FUSED_SUMS[case]
    f = pto.jit(fn, backend=CpuBackend(tiered=False, min_elements=0, kernels="fused"))
    rng = np.random.default_rng(7)
    g, x = (rng.standard_normal(shape).astype(dtype) for _ in range(2))
    runs = []
    for busy in (False, True, False):
        monkeypatch.setattr(program, "threads_free", lambda: not busy)
        runs += [pto.tree_util.tree_leaves(f(g, x)) for _ in range(4)]
    for run in runs:
        for got, first in zip(run, runs[0]):
            np.testing.assert_array_equal(np.asarray(got), np.asarray(first))
    reference = pto.jit(fn, backend="interpreter")(g, x)
    for got, want in zip(runs[0], pto.tree_util.tree_leaves(reference)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-4, atol=2e-4)
    assert "take_add_turn();" in f.lower(g, x).as_text("fused-cpp")
