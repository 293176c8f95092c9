"""jax.lax's shape functions take a Python scalar operand as a weakly typed 0-d array (they
crashed reading its ``.shape``): broadcast, broadcast_in_dim, reshape, expand_dims, transpose,
pad, rev of a scalar, dot_general of scalars (weak, as two weak operands give); compared live with
JAX (dtype, weak type, shape, values), eagerly and under jit."""
import numpy as np
import pytest

import ptojax as pto

CASES = {
    "broadcast": lambda lax: lax.broadcast(1.5, (3,)),
    "broadcast int": lambda lax: lax.broadcast(2, (2, 1)),
    "broadcast_in_dim": lambda lax: lax.broadcast_in_dim(1.5, (2, 3), ()),
    "reshape": lambda lax: lax.reshape(2.5, (1, 1)),
    "expand_dims": lambda lax: lax.expand_dims(True, (0,)),
    "transpose": lambda lax: lax.transpose(1.5, ()),
    "pad": lambda lax: lax.pad(1.5, 0.0, []),
    "rev": lambda lax: lax.rev(3, ()),
    "dot_general": lambda lax: lax.dot_general(2.0, 3.0, (((), ()), ((), ()))),
    "complex broadcast": lambda lax: lax.broadcast(1 + 2j, (2,)),
    # two weak operands give a weak product (ptojax converted both, dropping it)
    "dot of weak vectors": lambda lax: lax.dot(lax.broadcast(2.0, (3,)),
                                               lax.broadcast(1.5, (3,))),
}


def _described(x):
    return str(x.dtype), bool(x.weak_type), tuple(x.shape), np.asarray(x).tolist()


@pytest.mark.parametrize("name", sorted(CASES))
def test_python_scalar_operand_matches_jax(jax, name):
    make = CASES[name]
    with jax.enable_x64(False):
        want = _described(make(jax.lax))
        want_jit = _described(jax.jit(lambda: make(jax.lax))())
    assert _described(make(pto.lax)) == want
    assert _described(pto.jit(lambda: make(pto.lax))()) == want_jit


def test_lists_are_still_refused():
    with pytest.raises(TypeError, match="broadcast"):
        pto.lax.broadcast([1.0, 2.0], (3,))

