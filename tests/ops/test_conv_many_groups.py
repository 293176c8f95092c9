"""Convolutions with many small feature groups — per-example filter gradients, vmap over a
conv's weight gradient — multiply several groups per BLAS call (a stacked product) instead of
one small product per group: the same values as each group alone, bit for bit, and as JAX."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.ops import im2col
from ptojax.ops.im2col import conv_matmul


def _per_group(x, spec, rhs, groups, **kw):
    """The convolution (input layout ``spec``, OIHW kernel) one group at a time, each an
    ungrouped convolution of the group's slice of ``x`` in the same layout."""
    c, o = x.shape[spec[1]] // groups, rhs.shape[0] // groups
    parts = []
    for g in range(groups):
        part = [slice(None)] * x.ndim
        part[spec[1]] = slice(g * c, (g + 1) * c)
        parts.append(conv_matmul(x[tuple(part)], rhs[g * o:(g + 1) * o], spec, (0, 1, 2, 3),
                                 groups=1, batch_groups=False, **kw))
    return np.concatenate(parts, axis=1)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("groups, size", [(64, (9, 9)), (16, (6, 5))])
def test_many_small_groups_equal_each_group_alone_bitwise(layout, groups, size, monkeypatch):
    rng = np.random.default_rng(0)
    lhs = rng.standard_normal((2, groups * 2, *size)).astype(np.float32)
    rhs = rng.standard_normal((groups * 3, 2, 3, 3)).astype(np.float32)
    kw = dict(window_strides=(2, 1), padding=((1, 0), (0, 1)), lhs_dilation=(1, 1),
              rhs_dilation=(1, 2))
    if layout == "NHWC":
        x, spec = np.ascontiguousarray(lhs.transpose(0, 2, 3, 1)), (0, 3, 1, 2)
    else:
        x, spec = lhs, (0, 1, 2, 3)
    calls = []
    monkeypatch.setattr(im2col, "matmul", lambda a, b, out=None: calls.append(a.shape) or
                        np.matmul(a, b, out=out))
    got = conv_matmul(x, rhs, spec, (0, 1, 2, 3), groups=groups, batch_groups=False, **kw)
    assert len(calls) == 1 and calls[0][0] == groups      # all groups in one stacked product
    monkeypatch.undo()
    np.testing.assert_array_equal(got, _per_group(x, spec, rhs, groups, **kw))


def test_per_example_conv_weight_gradients_match_jax():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((32, 1, 10, 10, 2)).astype(np.float32)
    w = rng.standard_normal((3, 3, 2, 4)).astype(np.float32)

    def loss(lax, np_):
        def f(w, x):
            y = lax.conv_general_dilated(x, w, (2, 2), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
            return np_.sum(np_.tanh(y) ** 2)
        return f

    got = pto.jit(pto.vmap(pto.grad(loss(pto.lax, pnp)), (None, 0)))(w, xs)
    want = jax.jit(jax.vmap(jax.grad(loss(jax.lax, jnp)), (None, 0)))(w, xs)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-5)
