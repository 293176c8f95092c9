"""Collectives over a named vmap axis (``pto.vmap(f, axis_name="i")``) against
``jax.vmap(f, axis_name="i")``: the members of the axis are the batch elements."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import P
from ptojax.errors import CollectiveError, UnsupportedError
from ptojax.ir import verify
from helpers import assert_close

PERM = ((0, 1), (1, 2), (2, 3), (3, 0))

# name -> f(lax, x) for one member's x of shape (4, 4, 4); the axis has 4 members
COLLECTIVES = {
    "psum": lambda L, x: L.psum(x, "i"),
    "pmean": lambda L, x: x - L.pmean(x, "i"),
    "pmax": lambda L, x: L.pmax(x, "i") * x,
    "pmin": lambda L, x: L.pmin(x, "i"),
    "axis_index": lambda L, x: x * L.axis_index("i"),
    "psum of an unmapped value": lambda L, x: x + L.psum(np.float32(2.0), "i"),
    "all_gather": lambda L, x: L.all_gather(x, "i", axis=1),
    "all_gather at the end": lambda L, x: L.all_gather(x, "i", axis=-1),
    "all_gather tiled": lambda L, x: L.all_gather(x, "i", axis=2, tiled=True),
    "psum_scatter": lambda L, x: L.psum_scatter(x, "i", scatter_dimension=1),
    "psum_scatter tiled": lambda L, x: L.psum_scatter(x, "i", scatter_dimension=2, tiled=True),
    "all_to_all": lambda L, x: L.all_to_all(x, "i", 0, 2),
    "all_to_all same dim": lambda L, x: L.all_to_all(x, "i", 1, 1),
    "all_to_all tiled": lambda L, x: L.all_to_all(x, "i", 2, 0, tiled=True),
    "ppermute": lambda L, x: L.ppermute(x, "i", PERM),
}


@pytest.fixture(scope="module")
def xs():
    return np.random.default_rng(0).standard_normal((4, 4, 4, 4)).astype(np.float32)


@pytest.mark.parametrize("name", sorted(COLLECTIVES))
@pytest.mark.parametrize("in_axis", [0, 2])
def test_collective_matches_jax(jax, xs, name, in_axis):
    f = COLLECTIVES[name]
    x = np.moveaxis(xs, 0, in_axis)
    got = pto.vmap(lambda a: f(pto.lax, a), in_axes=in_axis, axis_name="i")(x)
    want = jax.jit(jax.vmap(lambda a: f(jax.lax, a), in_axes=in_axis, axis_name="i"))(x)
    assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["psum", "pmin", "all_gather", "all_gather tiled"])
def test_a_reduced_output_can_be_unmapped(jax, xs, name):
    f = COLLECTIVES[name]
    got = pto.vmap(lambda a: f(pto.lax, a), axis_name="i", out_axes=None)(xs)
    want = jax.vmap(lambda a: f(jax.lax, a), axis_name="i", out_axes=None)(xs)
    assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_the_batched_ir_has_no_collective_left(xs):
    closed = pto.make_ir(pto.vmap(lambda a: a - pto.lax.pmean(a, "i"), axis_name="i"))(xs)
    verify(closed)
    names = [e.prim.name for e in closed.eqns]
    assert "psum" not in names and "reduce_sum" in names


def test_a_partial_ppermute_sends_zeros_to_members_that_receive_nothing(xs):
    got = pto.vmap(lambda a: pto.lax.ppermute(a, "i", ((0, 2), (3, 1))), axis_name="i")(xs)
    want = np.zeros_like(xs)
    want[2], want[1] = xs[0], xs[3]
    assert_close(got, want)


@pytest.mark.parametrize("axes", [("i", "j"), ("j", "i")])
@pytest.mark.parametrize("name", ["psum", "pmax", "axis_index"])
def test_collectives_over_two_nested_axes_match_jax(jax, axes, name):
    fns = {"psum": lambda L, a: L.psum(a, axes), "pmax": lambda L, a: L.pmax(a, axes),
           "axis_index": lambda L, a: a * L.axis_index(axes)}
    f = fns[name]
    z = np.random.default_rng(1).standard_normal((2, 3, 5)).astype(np.float32)
    got = pto.vmap(pto.vmap(lambda a: f(pto.lax, a), axis_name="j"), axis_name="i")(z)
    want = jax.vmap(jax.vmap(lambda a: f(jax.lax, a), axis_name="j"), axis_name="i")(z)
    assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("tiled", [False, True])
@pytest.mark.parametrize("axes", [("i", "j"), ("j", "i")])
def test_all_gather_over_two_nested_axes_numbers_members_first_axis_major(axes, tiled):
    z = np.random.default_rng(1).standard_normal((2, 3, 5)).astype(np.float32)
    inner = pto.vmap(lambda a: pto.lax.all_gather(a, axes, tiled=tiled), axis_name="j")
    got = pto.vmap(inner, axis_name="i")(z)
    members = (z if axes == ("i", "j") else z.transpose(1, 0, 2)).reshape(6, 5)
    gathered = members.reshape(30) if tiled else members
    assert_close(got, np.broadcast_to(gathered, (2, 3, *gathered.shape)))


def test_an_inner_vmap_passes_collectives_over_the_outer_name_through(jax):
    z = np.random.default_rng(2).standard_normal((2, 3, 4)).astype(np.float32)

    def f(L):
        return lambda a: L.psum(a, "i") + L.all_gather(a, "i").sum(0) * L.axis_index("i")

    got = pto.vmap(pto.vmap(f(pto.lax), axis_name="j"), axis_name="i", in_axes=1)(z)
    want = jax.vmap(jax.vmap(f(jax.lax), axis_name="j"), axis_name="i", in_axes=1)(z)
    assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_gradients_through_pmean_match_jax(jax, jnp):
    rng = np.random.default_rng(3)
    w = (0.3 * rng.standard_normal((3, 2))).astype(np.float32)
    xs = rng.standard_normal((5, 3)).astype(np.float32)

    def loss(np_, L):
        return lambda w, x: L.pmean(np_.sum(np_.tanh(x @ w) ** 2), "batch")

    def averaged_grad(np_, L, grad):
        return lambda w, x: L.pmean(grad(lambda w: np_.sum(np_.tanh(x @ w) ** 2))(w), "batch")

    for kind in ("per-example", "averaged"):
        fns = {"per-example": lambda np_, L, grad: grad(loss(np_, L)),
               "averaged": averaged_grad}[kind]
        out_axes = 0 if kind == "per-example" else None
        ours = pto.jit(pto.vmap(fns(pnp, pto.lax, pto.grad), (None, 0), out_axes, "batch"))
        theirs = jax.vmap(fns(jnp, jax.lax, jax.grad), (None, 0), out_axes, "batch")
        assert_close(ours(w, xs), theirs(w, xs), rtol=1e-5, atol=1e-6)
    total = pto.grad(lambda w: pto.vmap(loss(pnp, pto.lax), (None, 0), None, "batch")(w, xs))
    want = jax.grad(lambda w: jax.vmap(loss(jnp, jax.lax), (None, 0), None, "batch")(w, xs))
    assert_close(total(w), want(w), rtol=1e-5, atol=1e-6)


def test_vmap_inside_shard_map_reduces_its_own_axis_and_passes_the_mesh_axis_on():
    mesh = pto.make_mesh((2,), ("x",))
    x = np.arange(24, dtype=np.float32).reshape(4, 3, 2)

    def per_device(block):
        return pto.vmap(lambda r: pto.lax.psum(r, "x") * pto.lax.axis_index("x")
                        + pto.lax.psum(r, "b"), axis_name="b")(block)

    got = pto.shard_map(per_device, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(x)
    blocks = x.reshape(2, 2, 3, 2)
    want = np.concatenate([blocks.sum(0) * d + blocks[d].sum(0) for d in range(2)])
    assert_close(got, want)


def test_a_collective_over_an_unbound_name_is_an_error(xs):
    with pytest.raises(CollectiveError, match="unbound axis name 'j'"):
        pto.vmap(lambda a: pto.lax.psum(a, "j"), axis_name="i")(xs)


def test_psum_scatter_over_our_axis_and_another_is_unsupported():
    z = np.ones((2, 2, 4), np.float32)
    inner = pto.vmap(lambda a: pto.lax.psum_scatter(a, ("i", "j")), axis_name="j")
    with pytest.raises(UnsupportedError, match="one axis at a time"):
        pto.vmap(inner, axis_name="i")(z)
