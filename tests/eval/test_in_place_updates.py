"""The numpy executor updates a buffer in place (``Primitive.in_place``: dynamic_update_slice)
only when the buffer is its own and nothing reads it afterwards — never an argument, a value
read later, an output, or a buffer a view still shows."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import lax
from ptojax.eval.executable import Executable

X, Y = np.arange(6.0), np.full(2, -1.0)


def _updates_in_place(fn, *args) -> int:
    closed = pto.make_ir(fn)(*args)
    executable = Executable(closed)
    np.testing.assert_array_equal(np.concatenate([np.ravel(o) for o in executable(*args)]),
                                  np.concatenate([np.ravel(o) for o in _eager(fn, *args)]))
    return executable.source.count("_in_place(")


def _eager(fn, *args):
    out = fn(*args)
    return out if isinstance(out, tuple) else (out,)


CASES = {
    # a fresh concatenation, dead after: both updates in place
    "chain": (lambda x, y: lax.dynamic_update_slice(
        lax.dynamic_update_slice(pnp.concatenate([x, y]), 2 * y, (1,)), y, (0,)), 2),
    # the concatenation is an output too: copied
    "output": (lambda x, y: (lax.dynamic_update_slice(c := pnp.concatenate([x, y]), y, (1,)),
                             c), 0),
    # read after the update: copied
    "read_later": (lambda x, y: lax.dynamic_update_slice(c := pnp.concatenate([x, y]), y, (1,))
                   + c.sum(), 0),
    # an argument is never overwritten
    "argument": (lambda x, y: lax.dynamic_update_slice(x, y, (1,)), 0),
    # a view of the buffer is read later: copied
    "view": (lambda x, y: (lax.dynamic_update_slice(c := pnp.concatenate([x, y]), y, (1,)),
                           c.reshape(2, 4)[0]), 0),
}


@pytest.mark.parametrize("name", list(CASES))
def test_updates_in_place_only_buffers_nothing_else_reads(name):
    fn, expected = CASES[name]
    x, y = X.copy(), Y.copy()
    assert _updates_in_place(fn, x, y) == expected
    np.testing.assert_array_equal(x, X)    # the caller's arrays are untouched
    np.testing.assert_array_equal(y, Y)
