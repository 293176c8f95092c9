"""Host execution of tile kernels over a runtime row count (issue 19): one build — of the PTO
instruction stream or of the fused loop nests — serves every row count of
``jit(f, dynamic=...)`` (1, a tile boundary and its neighbours, the maximum) and matches the
numpy executor."""
import warnings

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from host_cases import assert_matches, executable_of, interpret, kernels_of
from ptojax.lower.host.backend import CpuBackend, HostExecutable
from ptojax.tile.planner import TileConfig

HI = 600
C = 128
W = np.random.default_rng(1).standard_normal(C).astype(np.float32)


def softmax(x):
    e = pnp.exp(x - pnp.max(x, axis=-1, keepdims=True))
    return e / pnp.sum(e, axis=-1, keepdims=True)


def layer_norm(x):
    d = x - pnp.mean(x, axis=-1, keepdims=True)
    return d / pnp.sqrt(pnp.mean(d * d, axis=-1, keepdims=True) + 1e-5) * W + 1.0


def chain(x, y):
    return pnp.tanh(x) * y + pnp.exp(-x), pnp.sum(x * y, axis=-1), pnp.sum(x, axis=0)


def _jit(fn, nargs=1, **options):
    backend = CpuBackend(**{"tiered": False, "min_elements": 0, **options})
    return pto.jit(fn, backend=backend,
                   dynamic={i: {0: pto.Dim("rows", 1, HI)} for i in range(nargs)})


def _args(rows, nargs, seed=0):
    rng = np.random.default_rng(seed + rows)
    return [rng.standard_normal((rows, C)).astype(np.float32) for _ in range(nargs)]


def _sizes(jitted, nargs):
    """1, the tile boundary and its neighbours, two tiles and one, the maximum."""
    r = kernels_of(jitted, *_args(1, nargs))[0].params["grid"].tile[0]
    return sorted({1, r - 1, r, r + 1, 2 * r + 1, HI} - {0})


# a softmax on the PTO build: the sync-checker test below; on the fused build: the tiered one
@pytest.mark.parametrize("fn, nargs, kernels", [(layer_norm, 1, "fused"), (chain, 2, "pto")])
def test_one_build_serves_every_row_count(fn, nargs, kernels):
    jitted = _jit(fn, nargs, kernels=kernels)
    jitted(*_args(1, nargs))
    executable = executable_of(jitted, *_args(1, nargs))
    assert isinstance(executable, HostExecutable) and executable.status == "compiled"
    program = executable.program
    assert program.kernels == kernels and program.fused_error is None
    assert all(e.params["grid"].dynamic_rows for e in kernels_of(jitted, *_args(1, nargs)))
    for rows in _sizes(jitted, nargs):
        args = _args(rows, nargs)
        assert_matches(jitted(*args), interpret(fn, *args))
    assert jitted.cache_size() == 1 and executable_of(jitted, *_args(HI, nargs)).program \
        is program


def test_the_sync_checker_passes_at_every_row_count():
    def fn(x, r):      # a row softmax, and a row vector input with the runtime row count
        return softmax(x) * r[:, None] + pnp.max(x, axis=-1, keepdims=True)
    jitted = _jit(fn, 2, check_sync=True)
    for rows in (1, 37, HI):      # 1 row: most blocks have no tile
        x, r = _args(rows, 2)
        assert_matches(jitted(x, r[:, 0]), interpret(fn, x, r[:, 0]))
    assert jitted.cache_size() == 1


def test_column_edges_with_a_runtime_row_count():
    fn = lambda x, y: chain(x, y)[0]   # noqa: E731
    jitted = _jit(fn, 2, kernels="pto", tile_config=TileConfig(vec=(16, 48)))
    for rows in (1, 15, 16, 17, 250):
        args = _args(rows, 2)
        assert_matches(jitted(*args), interpret(fn, *args))
    (eqn,) = kernels_of(jitted, *_args(1, 2))
    assert len(eqn.params["regions"]) == 4


def test_fused_source_takes_the_rows():
    x, = _args(70, 1)
    text = pto.jit(softmax, dynamic={"x": {0: pto.Dim("rows", 1, HI)}}).lower(
        x, target=pto.targets.host_jit).as_text("fused-cpp")
    assert "const int32_t rows)" in text and "const int32_t num_tiles = (rows + " in text
    assert "rows - ti * " in text


def test_tiered_jit_switches_to_compiled_kernels():
    jitted = pto.jit(softmax, dynamic={"x": {0: pto.Dim("rows", 1, HI)}},
                     backend=CpuBackend(min_elements=0))
    x, = _args(5, 1)
    first = jitted(x)
    executable = executable_of(jitted, x)
    assert executable.wait(600) and executable.status == "compiled"
    for rows in (5, 300, 1, HI, 64, 7, 2):     # through the trial of both tiers
        x, = _args(rows, 1)
        assert_matches(jitted(x), interpret(softmax, x))
    assert_matches(first, interpret(softmax, _args(5, 1)[0]))
    assert jitted.cache_size() == 1


def test_kernels_that_need_static_sizes_keep_running_on_numpy():
    w = np.ones((C, 32), np.float32)
    fn = lambda x: pnp.tanh(x @ w)     # noqa: E731  (a matmul over the symbolic rows)
    jitted = _jit(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for rows in (3, 40):
            x, = _args(rows, 1)
            assert_matches(jitted(x), interpret(fn, x))
    executable = executable_of(jitted, x)
    assert executable.status == "compiled"
    assert all(e.params["kind"] == "vector" for e in kernels_of(jitted, x))
