"""vmap of products (dot, matmul, einsum, tensordot, inner, vdot, lax.dot_general): each case
batches into the same equations as JAX's jaxpr — one dot_general whose batch dimensions are
the operands' mapped axes, with no expand_dims / squeeze / broadcast around it — and gives
JAX's values, dtypes and shapes; gradients through vmapped products match JAX's too."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

_RNG = np.random.default_rng(11)


def _a(*shape, dtype=np.float32):
    return _RNG.standard_normal(shape).astype(dtype)


def _kernel(np_):
    return lambda a, b: np_.exp(-np_.dot(a - b, a - b))


# name: (function of (vmap, numpy module, lax module), arguments)
CASES = {
    "vector.vector, lhs mapped": (lambda V, np_, lax: V(np_.dot, (0, None)), (_a(5, 3), _a(3))),
    "vector.vector, rhs mapped": (lambda V, np_, lax: V(np_.dot, (None, 0)), (_a(3), _a(5, 3))),
    "vector.vector, both mapped": (lambda V, np_, lax: V(np_.dot), (_a(5, 3), _a(5, 3))),
    "pairwise dots (nested vmap)": (lambda V, np_, lax: V(V(np_.dot, (None, 0)), (0, None)),
                                    (_a(5, 3), _a(4, 3))),
    "pairwise dots, inner over lhs": (lambda V, np_, lax: V(V(np_.dot, (0, None)), (None, 0)),
                                      (_a(5, 3), _a(4, 3))),
    "pairwise kernel (kernel_lsq)": (lambda V, np_, lax: V(V(_kernel(np_), (None, 0)), (0, None)),
                                     (_a(5, 3), _a(4, 3))),
    "matrix.vector, lhs mapped": (lambda V, np_, lax: V(np_.dot, (0, None)), (_a(5, 4, 3), _a(3))),
    "matrix.vector, rhs mapped": (lambda V, np_, lax: V(np_.dot, (None, 0)), (_a(4, 3), _a(5, 3))),
    "matrix.vector, both mapped": (lambda V, np_, lax: V(np_.dot), (_a(5, 4, 3), _a(5, 3))),
    "vector.matrix, rhs mapped": (lambda V, np_, lax: V(np_.dot, (None, 0)),
                                  (_a(4), _a(5, 4, 3))),
    "vector.matrix, lhs mapped at 1": (lambda V, np_, lax: V(np_.dot, (1, None)),
                                       (_a(4, 5), _a(4, 3))),
    "matmul, lhs mapped": (lambda V, np_, lax: V(np_.matmul, (0, None)),
                           (_a(5, 2, 4), _a(4, 3))),
    "matmul, rhs mapped": (lambda V, np_, lax: V(np_.matmul, (None, 0)),
                           (_a(2, 4), _a(5, 4, 3))),
    "matmul, in_axes (1, 2)": (lambda V, np_, lax: V(np_.matmul, (1, 2)),
                               (_a(2, 5, 4), _a(4, 3, 5))),
    "matmul, nested": (lambda V, np_, lax: V(V(np_.matmul)), (_a(6, 5, 2, 4), _a(6, 5, 4, 3))),
    "matmul, vector @ vector": (lambda V, np_, lax: V(lambda a, b: a @ b),
                                (_a(5, 3), _a(5, 3))),
    "matmul, stack @ matrix": (lambda V, np_, lax: V(np_.matmul, (0, None)),
                               (_a(5, 7, 2, 4), _a(7, 4, 3))),
    "einsum ij,j->i": (lambda V, np_, lax: V(lambda a, b: np_.einsum("ij,j->i", a, b),
                                             (None, 0)), (_a(4, 3), _a(5, 3))),
    "einsum bij,bjk->bik": (lambda V, np_, lax: V(
        lambda a, b: np_.einsum("bij,bjk->bik", a, b), (0, None)), (_a(5, 2, 3, 4), _a(2, 4, 3))),
    "tensordot": (lambda V, np_, lax: V(lambda a, b: np_.tensordot(a, b, 1)),
                  (_a(5, 2, 3), _a(5, 3, 4))),
    "inner": (lambda V, np_, lax: V(np_.inner, (0, None)), (_a(5, 3), _a(4, 3))),
    "vdot": (lambda V, np_, lax: V(np_.vdot), (_a(5, 3), _a(5, 3))),
    "lax.dot_general, out of place axes": (lambda V, np_, lax: V(
        lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))), (2, 1)),
        (_a(2, 3, 5), _a(3, 5, 4))),
    "int32 matrix.vector": (lambda V, np_, lax: V(np_.dot, (None, 0)),
                            (_a(4, 3).astype(np.int32), _a(5, 3).astype(np.int32))),
}


def _jax_names(fn, args):
    return [e.primitive.name for e in jax.make_jaxpr(fn)(*args).eqns]


def _names(fn, args):
    return [e.prim.name for e in pto.make_ir(fn)(*args).eqns]


def _contractions(eqns, params):
    """Each dot_general's contracting dimensions and its batch dimension pairs (as a set:
    their order follows where earlier equations left each batch)."""
    out = []
    for e in eqns:
        p = params(e)
        if "dimension_numbers" in p and not hasattr(p["dimension_numbers"], "lhs_spec"):
            (lc, rc), (lb, rb) = p["dimension_numbers"]
            out.append(((tuple(lc), tuple(rc)), frozenset(zip(lb, rb))))
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_vmapped_product_has_jax_equations_and_values(case):
    make, args = CASES[case]
    ours, theirs = make(pto.vmap, pnp, pto.lax), make(jax.vmap, jnp, jax.lax)
    assert _names(ours, args) == _jax_names(theirs, args)
    assert _contractions(pto.make_ir(ours)(*args).eqns, lambda e: e.params) == \
        _contractions(jax.make_jaxpr(theirs)(*args).eqns, lambda e: e.params)
    got, want = ours(*args), np.asarray(theirs(*args))
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=2e-6)


def test_pairwise_dots_are_one_dot_general_contracting_the_vectors():
    x, y = _a(5, 3), _a(4, 3)
    closed = pto.make_ir(pto.vmap(pto.vmap(pnp.dot, (None, 0)), (0, None)))(x, y)
    (eqn,) = closed.eqns
    assert eqn.params["dimension_numbers"] == (((1,), (1,)), ((), ()))


def test_both_mapped_vectors_pair_their_batch_dimension():
    x, y = _a(5, 3), _a(3, 5)
    (eqn,) = pto.make_ir(pto.vmap(pnp.dot, (0, 1)))(x, y).eqns
    assert eqn.params["dimension_numbers"] == (((1,), (0,)), ((0,), (1,)))


@pytest.mark.parametrize("lhs, rhs", [
    ((5, 1, 2, 4), (7, 4, 3)), ((1, 2, 4), (5, 4, 3)), ((5, 2, 4), (4,)), ((4,), (5, 4, 3)),
    ((4,), (4,)), ((5, 1, 2, 4), (1, 6, 4, 3)), ((1, 1, 2, 4), (1, 4, 3)),
    ((2, 1, 3, 4), (2, 5, 4, 1)), ((3,), (3, 2))])
def test_matmul_broadcasts_batches_without_copies_as_numpy(lhs, rhs):
    a, b = _a(*lhs), _a(*rhs)
    closed = pto.make_ir(pnp.matmul)(a, b)
    assert "broadcast_in_dim" not in _names(pnp.matmul, (a, b))
    assert sum(e.prim.name == "dot_general" for e in closed.eqns) == 1
    np.testing.assert_allclose(np.asarray(pnp.matmul(a, b)), np.matmul(a, b),
                               rtol=1e-5, atol=1e-5)


def test_matmul_batches_that_do_not_broadcast_are_an_error():
    with pytest.raises(pto.errors.ShapeError, match="cannot be broadcast together"):
        pnp.matmul(np.ones((2, 3, 4)), np.ones((3, 4, 5)))


@pytest.mark.parametrize("fn", ["dot", "inner"])
def test_scalar_products_take_the_preferred_element_type(fn):
    a, b = np.int32(3), np.arange(4, dtype=np.int32)
    got = getattr(pnp, fn)(a, b, preferred_element_type=np.float32)
    want = getattr(jnp, fn)(a, b, preferred_element_type=jnp.float32)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (1, 0)])
def test_gradients_of_vmapped_dots_match_jax(in_axes):
    x = _a(4, 3) if in_axes[0] != 1 else _a(3, 4)
    y = _a(4, 3) if in_axes[1] == 0 else _a(3)
    if in_axes[0] is None:
        x = _a(3)

    def loss(vmap, np_):
        return lambda x, y: np_.sum(np_.tanh(vmap(np_.dot, in_axes)(x, y)) ** 2)

    got = pto.grad(loss(pto.vmap, pnp), argnums=(0, 1))(x, y)
    want = jax.grad(loss(jax.vmap, jnp), argnums=(0, 1))(x, y)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


def test_gradient_of_a_pairwise_kernel_matches_jax():
    x, y = _a(5, 3), _a(4, 3)

    def loss(vmap, np_):
        return lambda x, y: np_.sum(vmap(vmap(_kernel(np_), (None, 0)), (0, None))(x, y))

    got = pto.grad(loss(pto.vmap, pnp), argnums=(0, 1))(x, y)
    want = jax.grad(loss(jax.vmap, jnp), argnums=(0, 1))(x, y)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)
