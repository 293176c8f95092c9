"""The dtype and weak type of every result of the calls in ``weak_type_records`` (public
``numpy``/``lax``/``nn`` functions on Python scalars, weak 0-d arrays, weak arrays and mixes with
strong float16/int8/uint8 arrays) against JAX's: eagerly, under jit (also with the weak 0-d
inputs passed as Python scalars) and under vmap (each input given a leading batch axis).
JAX's side is ``jax.eval_shape`` (no compilation); a call JAX cannot trace (a data-dependent
shape) is compared eagerly only."""
import types

import pytest

import ptojax as pto
from weak_type_records import INPUTS, JAX_EAGER_DIFFERS, JAX_VMAP_DIFFERS, RECORDS


# the weak 0-d inputs given instead as Python scalars to jit
PYTHON_SCALARS = {"w0": 0.5, "wi0": 2}


def _namespace(lib):
    if lib == "jax":
        import jax
        return types.SimpleNamespace(np=jax.numpy, lax=jax.lax, nn=jax.nn, tree=jax.tree_util)
    return types.SimpleNamespace(np=pto.numpy, lax=pto.lax, nn=pto.nn, tree=pto.tree_util)


def _types(m, out):
    return [(str(x.dtype), bool(x.weak_type)) for x in m.tree.tree_leaves(out)]


def _jax_types(jax, J, fn, args):
    """JAX's result types traced (as under jit), else from an eager call (None if JAX
    refuses the call)."""
    with jax.enable_x64(False):
        try:
            return _types(J, jax.eval_shape(lambda *a: fn(J, *a), *args)), True
        except Exception:   # a data-dependent shape: JAX takes it eagerly only
            pass
        try:
            return _types(J, fn(J, *args)), False
        except Exception:
            return None, False


def _jax_vmap_types(jax, J, fn, batched):
    with jax.enable_x64(False):
        try:
            return _types(J, jax.eval_shape(jax.vmap(lambda *a: fn(J, *a)), *batched))
        except Exception:
            return None


@pytest.mark.parametrize("label, names, fn", RECORDS, ids=[r[0] for r in RECORDS])
def test_result_types_match_jax(jax, label, names, fn):
    J, P = _namespace("jax"), _namespace("pto")
    with jax.enable_x64(False):
        jargs = [INPUTS[n](J) for n in names]
    pargs = [INPUTS[n](P) for n in names]
    want, traceable = _jax_types(jax, J, fn, jargs)
    if want is None:
        pytest.skip("JAX refuses this call")
    want_eager = want
    if label in JAX_EAGER_DIFFERS:
        with jax.enable_x64(False):
            want_eager = _types(J, fn(J, *jargs))
    assert _types(P, fn(P, *pargs)) == want_eager, "eager"
    if traceable:
        assert _types(P, pto.jit(lambda *a: fn(P, *a))(*pargs)) == want, "jit"
        if any(n in PYTHON_SCALARS for n in names):   # Python scalars as jit arguments
            args = [PYTHON_SCALARS.get(n, a) for n, a in zip(names, jargs)]
            with jax.enable_x64(False):
                want_py = _types(J, jax.eval_shape(lambda *a: fn(J, *a), *args))
            args = [PYTHON_SCALARS.get(n, a) for n, a in zip(names, pargs)]
            assert _types(P, pto.jit(lambda *a: fn(P, *a))(*args)) == want_py, "jit(scalars)"
    if names:
        with jax.enable_x64(False):
            want_vmap = _jax_vmap_types(jax, J, fn, [J.np.stack([a, a]) for a in jargs])
        if label in JAX_VMAP_DIFFERS:
            want_vmap = want
        if want_vmap is not None:
            got = pto.vmap(lambda *a: fn(P, *a))(*[P.np.stack([a, a]) for a in pargs])
            assert _types(P, got) == want_vmap, "vmap"
