"""An axis beyond the rank given to a jax.lax function: JAX's shape rules raise a TypeError
(concatenate, transpose, rev, dot_general), jax.numpy and NumPy a ValueError; ptojax's
AxisError is both, so either ``except`` catches it (it was only a ValueError)."""
import numpy as np
import pytest

import ptojax as pto


AXIS_OUT_OF_RANGE = {
    "concatenate": lambda lax, x: lax.concatenate([x, x], 2),
    "transpose": lambda lax, x: lax.transpose(x, (0, 2)),
    "rev": lambda lax, x: lax.rev(x, (3,)),
    "dot_general": lambda lax, x: lax.dot_general(x, x, (((3,), (0,)), ((), ()))),
}


@pytest.mark.parametrize("name", sorted(AXIS_OUT_OF_RANGE))
def test_lax_axis_out_of_range_is_a_type_error_as_jax(jax, name):
    use = AXIS_OUT_OF_RANGE[name]
    with pytest.raises(TypeError):
        use(jax.lax, jax.numpy.ones((2, 3)))
    with pytest.raises(TypeError, match="out of range"):
        use(pto.lax, np.ones((2, 3), np.float32))
    with pytest.raises(ValueError):
        use(pto.lax, np.ones((2, 3), np.float32))
