"""Zero-size arrays through every path: eager, pto.tile (the tile interpreter), PTO-AS and PTO
C++ emission, host kernels and the default (tiered) jit. A group of ops over a tensor with no
elements is not tiled — numpy computes it — instead of dividing by zero in the planner."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close
from host_cases import executable_of, host_jit

SHAPES = [(0,), (0, 4), (4, 0), (2, 0, 3)]

# each op written once for both namespaces (m: ptojax.numpy or jax.numpy)
OPS = {
    "exp_add": lambda m, x: m.exp(x) * 2 + 1,
    "sum_last": lambda m, x: m.sum(x, axis=-1),
    "max_first": lambda m, x: m.max(x, axis=0, initial=-1.0),
    "mean_all": lambda m, x: m.mean(x),
    "softmax": lambda m, x: m.exp(x - m.max(x, axis=-1, keepdims=True, initial=0.0)),
    "where": lambda m, x: m.where(x > 0, x, -x).astype(m.float16),
    "matmul": lambda m, x: x @ m.ones((x.shape[-1], 3), m.float32),
    "transpose": lambda m, x: m.swapaxes(x, 0, -1) + 1,
}


def _x(shape):
    return np.zeros(shape, np.float32)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("op", sorted(OPS))
def test_zero_size_arrays_run_everywhere(op, shape, jnp):
    fn = lambda x: OPS[op](pnp, x)  # noqa: E731
    x = _x(shape)
    expected = OPS[op](jnp, jnp.asarray(x))
    for path in (fn, pto.tile(fn), pto.jit(fn), host_jit(fn),
                 pto.jit(pto.tile(fn, target=pto.targets.host_jit))):
        assert_close(path(x), expected)
    lowered = pto.jit(fn).lower(x)
    for dialect in ("pto", "pto-cpp"):
        assert lowered.as_text(dialect)


def test_a_zero_size_tensor_next_to_kernels_under_the_tiered_jit():
    def fn(big, empty):
        return pnp.tanh(big) * 2, pnp.sum(pnp.exp(empty), axis=-1) + big[:4, 0]

    big, empty = np.linspace(-2, 2, 256 * 160, dtype=np.float32).reshape(256, 160), _x((4, 0))
    jitted = pto.jit(fn)
    first = jitted(big, empty)
    executable = executable_of(jitted, big, empty)
    assert executable.wait(600) and executable.status == "compiled"
    assert_close(jitted(big, empty), first, scale=2)
    assert_close(first[1], big[:4, 0] + 0)
