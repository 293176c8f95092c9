"""mgrid/ogrid/r_/c_/s_/index_exp, the printing functions and .npy/.npz files against
jax.numpy (eagerly and, for the grids, inside jit, where they are constants)."""
import io

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from pnp_reference import check


def _grid_calls(m, a):
    return [m.mgrid[0:3, 0:2], m.mgrid[0:1:4j, 0:3], m.mgrid[-1:2], *m.ogrid[0:3, 0:2:0.5],
            m.ogrid[1:4], m.mgrid[()], m.r_[-1:5:1, 0, 0, a[0]], m.r_[-1:1:6j, 0, a[0]],
            m.r_["0,2", [1, 2, 3], [4, 5, 6]], m.r_["0,2,0", [1, 2, 3], [4, 5, 6]],
            m.r_["0,2,-2", [1, 2, 3], [4, 5, 6]], m.r_["r", [1, 2, 3], [4, 5, 6]],
            m.r_["c", [1, 2, 3], [4, 5, 6]], m.r_["1", a, a], m.r_[a, a * 2],
            m.c_[a, a], m.c_["0,2", [1, 2, 3], [4, 5, 6]], m.c_["0,2,-1", [1, 2, 3], [4, 5, 6]],
            m.c_["r", [1, 2, 3], [4, 5, 6]], m.c_[a[0], a[1], m.multiply(a[0], 1.5)]]


def test_index_grids_match_jax(jax, jnp):
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    eager, jitted = _grid_calls(pnp, a), pto.jit(lambda x: _grid_calls(pnp, x))(a)
    # JAX's grids as one jitted program (eagerly, JAX compiled each of the ~20 calls apart)
    wants = jax.jit(lambda x: _grid_calls(jnp, x))(a)
    for k, (got, again, want) in enumerate(zip(eager, jitted, wants, strict=True)):
        check(got, want, (a,), what=f"grid {k}")
        check(again, want, (a,), what=f"jit grid {k}")
    assert pnp.s_[1:3, ::2] == jnp.s_[1:3, ::2] and pnp.index_exp[2] == jnp.index_exp[2]
    for m in (pnp, jnp):
        with pytest.raises(ValueError):
            m.r_["x,y", [1, 2]]
        with pytest.raises(ValueError):
            m.r_[[1, 2], "0"]


def test_printing_matches_numpy_options(jnp):
    x = np.array([1.123456, -2.0, 1e-9], np.float32)
    assert pnp.array_str(x, precision=3) == jnp.array_str(jnp.asarray(x), precision=3)
    assert pnp.array_repr(pnp.asarray(x)).startswith("Array([")
    assert pnp.get_printoptions() == jnp.get_printoptions()
    with pnp.printoptions(precision=2, suppress=True):
        assert str(pnp.asarray(x)) == "[ 1.12 -2.    0.  ]"
        assert pnp.get_printoptions()["precision"] == 2
    old = pnp.get_printoptions()
    try:
        pnp.set_printoptions(precision=1)
        assert str(pnp.asarray(x[:2])) == "[ 1.1 -2. ]"
    finally:
        pnp.set_printoptions(**old)


def test_files_round_trip_like_jax(jnp):
    values = {"a": np.arange(4, dtype=np.int16), "b": np.ones(3, dtype=pnp.bfloat16)}
    for name, v in values.items():
        ours, theirs = io.BytesIO(), io.BytesIO()
        pnp.save(ours, pnp.asarray(v))
        jnp.save(theirs, jnp.asarray(v))
        assert ours.getvalue() == theirs.getvalue(), name
        ours.seek(0)
        loaded = pnp.load(ours)
        assert isinstance(loaded, pnp.ndarray) and loaded.dtype == v.dtype
        np.testing.assert_array_equal(loaded, v)
    archive = io.BytesIO()
    pnp.savez(archive, pnp.arange(2), y=pnp.ones(2))
    archive.seek(0)
    got = pnp.load(archive)
    np.testing.assert_array_equal(got["arr_0"], np.arange(2))
    np.testing.assert_array_equal(got["y"], np.ones(2, np.float32))
    text = io.BytesIO()
    np.save(text, np.array(["x", "y"]))
    text.seek(0)
    assert isinstance(pnp.load(text), np.ndarray)  # a dtype ptojax lacks stays numpy's
