"""IEEE special cases return inf/nan without numpy's RuntimeWarnings, as in JAX — and only
inside ptojax: the user's own numpy keeps warning, and no warning filter is installed (it
hid ptojax's own warnings too)."""
import warnings

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp

ZEROS = pnp.zeros((4, 8), np.float32)


def special(x):
    return pnp.log(x) + 1 / x + pnp.sqrt(x - 1) + pnp.exp(x + 1e4)


PATHS = {
    "eager": special,
    "jit (interpreter)": pto.jit(special, backend="interpreter"),
    "jit (cpu)": pto.jit(special),
    "grad": pto.grad(lambda x: pnp.sum(special(x))),
    "vmap": pto.vmap(special),
    "tile interpreter": pto.tile(special),
    "constant folding": pto.jit(lambda x: x + pnp.log(0.0) + 1 / pnp.asarray(0.0),
                                backend="interpreter"),
}


@pytest.mark.parametrize("path", sorted(PATHS))
def test_special_values_raise_no_numpy_warnings(path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = np.asarray(PATHS[path](ZEROS))
    assert not np.isfinite(out).all()


def test_no_warning_filter_is_installed_and_user_numpy_still_warns():
    special(ZEROS)
    assert not [f for f in warnings.filters if f[0] == "ignore" and f[3] is not None
                and f[3].match("ptojax")]
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        np.log(np.zeros(1))
