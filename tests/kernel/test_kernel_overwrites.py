"""Automatic reverse mode of a kernel that overwrites output elements within one program
would give the overwritten value the output's cotangent too: it raises instead
(kernel/overwrites.py); stores into disjoint windows still differentiate (vs JAX)."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close
from ptojax.errors import UnsupportedError

K = pto.kernel


def kernel(second_cols):
    @K(out_shape=pto.ShapeDtypeStruct((16, 32), np.float32), grid=(2,),
       in_specs=[pto.BlockSpec((8, 32), lambda i: (i, 0))],
       out_specs=pto.BlockSpec((8, 32), lambda i: (i, 0)))
    def f(x_ref, o_ref):
        x = x_ref[...]
        o_ref[:, K.ds(0, 16)] = pnp.tanh(x[:, :16])
        o_ref[:, K.ds(second_cols, 16)] = x[:, 16:] * 3.0
    return f


def test_an_overwrite_is_refused_at_its_line():
    x = np.random.default_rng(0).standard_normal((16, 32)).astype(np.float32)
    f = kernel(8)
    with pytest.raises(UnsupportedError, match="stores into elements") as info:
        pto.grad(lambda x: pnp.sum(f(x) ** 2))(x)
    assert "test_kernel_overwrites.py" in str(info.value)


def test_disjoint_stores_differentiate(jax, jnp):
    x = np.random.default_rng(0).standard_normal((16, 32)).astype(np.float32)
    f = kernel(16)
    got = pto.grad(lambda x: pnp.sum(f(x) ** 2))(x)

    def jf(x):
        return jnp.concatenate([jnp.tanh(x[:, :16]), x[:, 16:] * 3.0], axis=1)
    want = jax.jit(jax.grad(lambda x: jnp.sum(jf(x) ** 2)))(x)
    assert_close(got, np.asarray(want), scale=8)
