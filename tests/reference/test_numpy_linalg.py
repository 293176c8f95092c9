"""Products of ptojax.numpy against jax.numpy: matmul/@ with vectors and broadcast batches,
dot, vdot, inner, outer, tensordot and einsum with explicit, implicit, batched, traced,
ellipsis and many-operand specs — eagerly, under jit and through make_ir's IR."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import ptojax.numpy as pnp
from ptojax import dtypes
from pnp_reference import check_modes, random_array

PRODUCT_DTYPES = [dtypes.float32, dtypes.float16, dtypes.bfloat16, dtypes.float64,
                  dtypes.int8, dtypes.int32, dtypes.bool_]


def _scale(dtype):
    """Sums of products round differently in narrow floats (ptojax accumulates in f32)."""
    return 4.0 if dtype in (dtypes.float16, dtypes.bfloat16) else 1.0


@given(shapes=mutually_broadcastable_shapes(signature="(m?,n),(n,p?)->(m?,p?)", max_dims=4,
                                            max_side=3),
       dtype=st.sampled_from(PRODUCT_DTYPES), seed=st.integers(0, 2**16))
def test_matmul_matches_jax_for_vectors_matrices_and_broadcast_batches(jnp, shapes, dtype,
                                                                       seed):
    rng = np.random.default_rng(seed)
    a, b = (random_array(rng, s, dtype) for s in shapes.input_shapes)
    check_modes(lambda x, y: [pnp.matmul(x, y), pnp.asarray(x) @ y],
                lambda x, y: [jnp.matmul(x, y), jnp.asarray(x) @ y], a, b,
                scale=_scale(dtype))


SPECS = ["ij,jk->ik", "ij,jk", "bhqd,bhkd->bhqk", "bqhd,bkhd->bhqk", "ii->i", "ii", "ij->",
         "ij->ji", "i,i->", "i,j->ij", "ij,ij->ij", "ij,kj->ik", "ijk->kji", "iij->j",
         "ab,bc,cd->ad", "ij,j->i", "bij,jk->bik", "...d,...d->...", "b...i,b...i->b",
         "ij,jk,kl", "i,i,i->i", "abc,cb->a", "ab,ab,ab->"]


def _operand_shapes(spec, sizes):
    inputs = spec.split("->")[0].split(",")
    ellipsis = (2, 1)
    return [tuple(ellipsis if c == "." else sizes[c] for c in s.replace("...", ".")
                  ) for s in inputs]


def _flatten_ellipsis(shape):
    out = []
    for d in shape:
        out.extend(d if isinstance(d, tuple) else (d,))
    return tuple(out)


@given(spec=st.sampled_from(SPECS), sizes=st.fixed_dictionaries(
    {c: st.integers(1, 3) for c in "abcdhijklpq"}), seed=st.integers(0, 2**16),
       dtype=st.sampled_from([dtypes.float32, dtypes.int32]))
def test_einsum_matches_jax_for_any_spec_and_sizes(jnp, spec, sizes, seed, dtype):
    rng = np.random.default_rng(seed)
    operands = [random_array(rng, _flatten_ellipsis(s), dtype)
                for s in _operand_shapes(spec, sizes)]
    check_modes(lambda *xs: pnp.einsum(spec, *xs), lambda *xs: jnp.einsum(spec, *xs),
                *operands)


def test_all_einsum_specs_match_jax_together(jnp):
    rng = np.random.default_rng(3)
    sizes = {c: n for c, n in zip("abcdhijklpq", (2, 3, 2, 4, 3, 2, 3, 4, 2, 3, 2))}
    groups = [[random_array(rng, _flatten_ellipsis(s), dtypes.float32)
               for s in _operand_shapes(spec, sizes)] for spec in SPECS]
    flat = [x for g in groups for x in g]

    def run(einsum):
        def fn(*xs):
            out, k = [], 0
            for spec, g in zip(SPECS, groups):
                out.append(einsum(spec, *xs[k:k + len(g)]))
                k += len(g)
            return out
        return fn
    check_modes(run(pnp.einsum), run(jnp.einsum), *flat, labels=SPECS)


def _products(m, a, b, v, w, t):
    """a: (2, 3), b: (3, 4), v: (3,), w: (4,), t: (2, 3, 4)."""
    return [m.dot(a, b), m.dot(a, v), m.dot(v, v), m.dot(t, w), m.dot(a, t), m.dot(a, 2.0),
            m.vdot(a, a), m.inner(v, v), m.inner(a, a), m.inner(t, w), m.outer(v, w),
            m.outer(a, v), m.tensordot(a, b, 1), m.tensordot(t, t, 3),
            m.tensordot(t, b, ([1, 2], [0, 1])), m.tensordot(a, t, axes=([0, 1], [0, 1])),
            m.matmul(v, b), m.matmul(t, w), m.matmul(a, b, preferred_element_type=None)]


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.int8, dtypes.float16], ids=str)
def test_dot_vdot_inner_outer_tensordot_match_jax(jnp, dtype):
    rng = np.random.default_rng(4)
    args = [random_array(rng, s, dtype) for s in [(2, 3), (3, 4), (3,), (4,), (2, 3, 4)]]
    check_modes(lambda *xs: _products(pnp, *xs), lambda *xs: _products(jnp, *xs), *args,
                scale=_scale(dtype))


def test_preferred_element_type_widens_the_result_like_jax(jnp):
    rng = np.random.default_rng(5)
    a, b = random_array(rng, (2, 3), dtypes.int8), random_array(rng, (3, 4), dtypes.int8)
    h, k = a.astype(np.float16), b.astype(np.float16)

    def calls(m, a, b, h, k):
        return [m.matmul(a, b, preferred_element_type=np.int32),
                m.dot(h, k, preferred_element_type=np.float32),
                m.einsum("ij,jk->ik", a, b, preferred_element_type=np.int32)]
    check_modes(lambda *xs: calls(pnp, *xs), lambda *xs: calls(jnp, *xs), a, b, h, k)


def test_mixed_dtype_products_promote_like_jax(jnp):
    rng = np.random.default_rng(6)
    a, b = random_array(rng, (2, 3), dtypes.int8), random_array(rng, (3, 2), dtypes.float16)
    check_modes(lambda x, y: [pnp.matmul(x, y), pnp.einsum("ij,jk", x, y), pnp.outer(x, y)],
                lambda x, y: [jnp.matmul(x, y), jnp.einsum("ij,jk", x, y), jnp.outer(x, y)],
                a, b)


MISMATCHED_PRODUCTS = {
    "dot": lambda np_, lax_, a, b: np_.dot(a, b),
    "matmul": lambda np_, lax_, a, b: np_.matmul(a, b),
    "@": lambda np_, lax_, a, b: np_.asarray(a) @ b,
    "dot_general": lambda np_, lax_, a, b: lax_.dot_general(a, b, (((1,), (0,)), ((), ()))),
}


@pytest.mark.parametrize("name", sorted(MISMATCHED_PRODUCTS))
def test_product_shape_mismatches_are_type_errors_as_in_jax(jax, jnp, name):
    """As JAX, a contraction of unequal sizes raises a TypeError (ptojax's ShapeError is both
    a ValueError and a TypeError)."""
    from ptojax import lax
    from ptojax.errors import ShapeError
    a, b = np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)
    fn = MISMATCHED_PRODUCTS[name]
    with pytest.raises(TypeError):
        fn(jnp, jax.lax, a, b)
    with pytest.raises(TypeError) as info:
        fn(pnp, lax, a, b)
    assert isinstance(info.value, ShapeError) and "test_numpy_linalg.py" in str(info.value)
