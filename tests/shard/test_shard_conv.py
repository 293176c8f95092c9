"""Convolution and pooling under pto.shard: batch-parallel, output-channel-parallel (kernel
split on O) and input-channel-parallel (a pending sum) give the single-device values and
weight gradients; a strided slice keeps its limits when another dimension is split."""
import numpy as np
import pytest

import ptojax as pto
from helpers import assert_close

P = pto.P


def _model(a, b):
    y = pto.nn.max_pool(pto.nn.relu(pto.nn.conv(a, b)), (2, 2), strides=(2, 2))
    return y.sum(axis=(1, 2))


@pytest.mark.parametrize("specs", [(P("x"), P()), (P(), P(None, None, None, "x")),
                                   (P(None, None, None, "x"), P(None, None, "x"))],
                         ids=["batch", "out-channels", "in-channels"])
def test_sharded_conv_and_pooling_match_one_device(specs):
    mesh = pto.make_mesh((4,), ("x",))
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 9, 8, 8)).astype(np.float32)
    w = rng.normal(size=(3, 3, 8, 8)).astype(np.float32)
    sharded = pto.shard(_model, mesh=mesh, in_specs=specs, out_specs=P())
    assert_close(sharded(x, w), _model(x, w), scale=4)
    grad = pto.grad(lambda a, b: _model(a, b).sum(), argnums=1)
    assert_close(pto.shard(grad, mesh=mesh, in_specs=specs, out_specs=P())(x, w), grad(x, w),
                 scale=4)


def test_strided_slice_with_a_split_batch():
    mesh = pto.make_mesh((4,), ("x",))
    x = np.arange(8 * 9 * 2, dtype=np.float32).reshape(8, 9, 2)

    def f(a):
        return pto.lax.slice(a, (0, 1, 0), (8, 9, 2), (1, 3, 1))

    assert_close(pto.shard(f, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(x), x[:, 1::3])
