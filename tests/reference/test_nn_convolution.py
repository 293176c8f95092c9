"""pto.nn.conv / max_pool / avg_pool / sum_pool against the lax calls they stand for in JAX,
and JAX's own ``jax.example_libraries.stax`` layers (Conv, MaxPool, AvgPool, SumPool, Dense)
running on ptojax's lax and numpy: values, jit and gradients equal stax on JAX."""
import importlib.util

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close

F32 = np.float32
HIGHEST = dict(precision="highest")


def _x(shape=(2, 9, 8, 3), seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype(F32)


@pytest.mark.parametrize("kw", [dict(), dict(strides=2, padding="VALID"),
                                dict(padding=((1, 0), 2), kernel_dilation=(2, 1)),
                                dict(feature_group_count=3, input_dilation=2, padding=1)])
def test_conv_matches_lax_in_channels_last_layout(jax, kw):
    x = _x()
    kernel = _x((3, 2, 3 // kw.get("feature_group_count", 1), 6), seed=1)
    bias = np.arange(6, dtype=F32)
    pads = kw.get("padding", "SAME")
    if not isinstance(pads, str):
        pads = [(p, p) if isinstance(p, int) else p for p in
                (pads if isinstance(pads, tuple) else (pads, pads))]
    want = jax.lax.conv_general_dilated(
        x, kernel, (kw.get("strides", 1),) * 2, pads,
        lhs_dilation=(kw.get("input_dilation", 1),) * 2,
        rhs_dilation=kw.get("kernel_dilation", (1, 1)),
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
        feature_group_count=kw.get("feature_group_count", 1), **HIGHEST) + bias
    assert_close(pto.nn.conv(x, kernel, bias=bias, **kw), np.asarray(want), scale=4)
    assert_close(pto.nn.conv(x[0], kernel, bias=bias, **kw), np.asarray(want[0]), scale=4)


def test_pools_match_reduce_window(jax):
    x = _x()
    window = (1, 3, 2, 1)
    for ours, init, op in ((pto.nn.max_pool, -np.inf, jax.lax.max),
                           (pto.nn.sum_pool, 0.0, jax.lax.add)):
        want = jax.lax.reduce_window(x, F32(init), op, window, (1, 2, 1, 1), "SAME")
        assert_close(ours(x, (3, 2), strides=(2, 1), padding="SAME"), np.asarray(want))
    total = jax.lax.reduce_window(x, F32(0), jax.lax.add, window, (1, 1, 1, 1), "SAME")
    counts = jax.lax.reduce_window(np.ones((1, 9, 8, 1), F32), F32(0), jax.lax.add, window,
                                   (1, 1, 1, 1), "SAME")
    assert_close(pto.nn.avg_pool(x, (3, 2), padding="SAME"), np.asarray(total / 6))
    assert_close(pto.nn.avg_pool(x, (3, 2), padding="SAME", count_include_pad=False),
                 np.asarray(total / counts))
    xi = np.arange(24, dtype=np.int32).reshape(2, 3, 4, 1)
    assert_close(pto.nn.max_pool(xi, (2, 2)), xi[:, 1:, 1:])


def _stax_on_ptojax():
    """A fresh copy of JAX's stax module whose ``lax`` and ``jnp`` are ptojax's."""
    spec = importlib.util.find_spec("jax.example_libraries.stax")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.lax, module.jnp = pto.lax, pnp
    # the pooling layers bound JAX's lax.max / lax.add when the module ran: rebuild them
    module.MaxPool = module._pooling_layer(pto.lax.max, -np.inf)
    module.SumPool = module._pooling_layer(pto.lax.add, 0.0)
    module.AvgPool = module._pooling_layer(pto.lax.add, 0.0,
                                           module._normalize_by_window_size)
    return module


def _network(stax, relu):
    return stax.serial(
        stax.Conv(4, (3, 3), padding="SAME"), stax.elementwise(relu),
        stax.MaxPool((2, 2), strides=(2, 2)), stax.Conv(5, (2, 2), strides=(1, 2)),
        stax.AvgPool((2, 1), padding="SAME"), stax.SumPool((1, 2)), stax.Flatten,
        stax.Dense(3))


def _init_shapes(jax, init, input_shape):
    """A stax ``init_fun``'s output shape and its parameters' shapes and dtypes, traced by
    jax.eval_shape (run, JAX compiled each of its random draws: 5-15 s on a busy machine)."""
    out = {}

    def f(key):
        out["shape"], params = init(key, input_shape)
        return params
    structs = jax.eval_shape(f, jax.random.PRNGKey(0))
    return tuple(out["shape"]), structs


def test_jax_stax_layers_run_on_ptojax(jax):
    from jax.example_libraries import stax
    x = _x((2, 12, 10, 3), seed=3)
    init, apply_jax = _network(stax, jax.nn.relu)
    ours_init, apply_ours = _network(_stax_on_ptojax(), pto.nn.relu)
    shape, structs = _init_shapes(jax, init, x.shape)
    assert _init_shapes(jax, ours_init, x.shape) == (shape, structs)
    rng = np.random.default_rng(4)
    params = jax.tree_util.tree_map(lambda s: (rng.normal(size=s.shape) * 0.5).astype(F32),
                                    structs)
    with jax.default_matmul_precision("highest"):
        want, want_grad = jax.jit(lambda p: (apply_jax(p, x), jax.grad(
            lambda p: apply_jax(p, x).sum())(p)))(params)
    want = np.asarray(want)
    assert_close(apply_ours(params, x), want, scale=4)
    assert_close(pto.jit(apply_ours)(params, x), want, scale=4)
    assert_close(pto.grad(lambda p: apply_ours(p, x).sum())(params),
                 jax.tree_util.tree_map(np.asarray, want_grad), scale=8)
