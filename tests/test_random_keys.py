"""Typed PRNG keys (``random.key``, dtype ``key<fry>``) against JAX's: their type, printing,
structure, every sampler, transforms (jit, vmap, scan, fori_loop, cond, grad, vjp) and the
errors JAX raises for misuse."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import random as pr


def words(x, jax=None):
    """uint32 words of typed keys, of either framework."""
    if jax is not None and type(x).__module__.startswith("jax"):
        return np.asarray(jax.random.key_data(x))
    return np.asarray(pr.key_data(x))


def test_type_and_subdtype(jax):
    k, jk = pr.key(42), jax.random.key(42)
    assert (k.shape, k.ndim, k.size, str(k.dtype)) == (jk.shape, jk.ndim, jk.size, str(jk.dtype))
    for parent in (pto.dtypes.prng_key, pto.dtypes.extended):
        assert pnp.issubdtype(k.dtype, parent)
    assert not pnp.issubdtype(k.dtype, pnp.integer)
    assert not pnp.issubdtype(pr.PRNGKey(0).dtype, pto.dtypes.prng_key)
    assert pnp.issubdtype(pnp.int32, pnp.integer)
    assert k.dtype == pr.key(1).dtype and k.dtype != pnp.uint32
    assert pr.key_impl(k) == jax.random.key_impl(jk) == pr.key_impl(pr.PRNGKey(0))


def test_printing_as_jax(jax):
    for ours, theirs in ((pr.key(42), jax.random.key(42)),
                         (pr.split(pr.key(0), 3), jax.random.split(jax.random.key(0), 3))):
        assert repr(ours) == repr(theirs) and str(ours) == str(theirs)


def test_split_fold_in_data_and_shapes_match_jax(jax):
    jr = jax.random
    k, jk = pr.key(7), jr.key(7)
    for num in (2, 5, (2, 3)):
        ours, theirs = pr.split(k, num), jr.split(jk, num)
        assert ours.shape == theirs.shape and ours.dtype == k.dtype
        np.testing.assert_array_equal(words(ours), words(theirs, jax))
    np.testing.assert_array_equal(words(pr.fold_in(k, 9)), words(jr.fold_in(jk, 9), jax))
    wrapped = pr.wrap_key_data(pr.key_data(pr.split(k, 4)))
    assert wrapped.shape == (4,) and pr.clone(wrapped) is wrapped
    raw = pr.split(pr.PRNGKey(7))
    assert raw.dtype == pnp.uint32 and raw.shape == (2, 2)   # raw keys stay raw


F32, U32, I32 = np.float32, np.uint32, np.int32


@pytest.mark.parametrize("draw", [   # explicit dtypes: the JAX fixture runs in x64 mode
    lambda r, k: r.bits(k, (3,), U32), lambda r, k: r.uniform(k, (3,), F32),
    lambda r, k: r.normal(k, (2,), F32), lambda r, k: r.randint(k, (4,), 0, 10, I32),
    lambda r, k: r.permutation(k, np.arange(5, dtype=I32)),
    lambda r, k: r.choice(k, np.arange(5, dtype=I32), (3,), replace=False),
    lambda r, k: r.bernoulli(k, F32(0.3), (4,)), lambda r, k: r.gumbel(k, (2,), F32),
    lambda r, k: r.categorical(k, np.log(np.array([0.2, 0.3, 0.5], F32)), shape=(4,)) * 1,
    lambda r, k: r.exponential(k, (2,), F32), lambda r, k: r.laplace(k, (2,), F32),
    lambda r, k: r.truncated_normal(k, F32(-1), F32(1), (3,), F32),
])
def test_samplers_take_typed_keys_as_jax(jax, draw):
    ours, theirs = draw(pr, pr.key(3)), draw(jax.random, jax.random.key(3))
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=2e-6, atol=2e-6)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(draw(pr, pr.PRNGKey(3))))


def test_keys_index_iterate_reshape_compare(jax):
    ks, jks = pr.split(pr.key(0), (2, 3)), jax.random.split(jax.random.key(0), (2, 3))
    for f in (lambda a: a[0], lambda a: a[1, 2], lambda a: a[..., 1], lambda a: a[:, 1:],
              lambda a: a.T, lambda a: a.reshape(6), lambda a: a.ravel(), lambda a: a[None],
              lambda a: a.swapaxes(0, 1), lambda a: a.reshape(3, -1)):
        ours, theirs = f(ks), f(jks)
        assert ours.shape == theirs.shape
        np.testing.assert_array_equal(words(ours), words(theirs, jax))
    assert len(ks) == 2 and [k.shape for k in ks] == [(3,), (3,)]
    first, second = pr.split(pr.key(1))
    assert first.shape == () and bool(first == first) and bool(first != second)
    np.testing.assert_array_equal(ks == ks, np.ones((2, 3), bool))
    stacked, joined = pnp.stack(list(ks[0])), pnp.concatenate([ks[0], ks[1]])
    assert stacked.shape == (3,) and joined.shape == (6,)
    np.testing.assert_array_equal(words(joined), words(ks.reshape(6)))
    picked = pnp.where(np.array([True, False]), pr.split(pr.key(0)), pr.split(pr.key(1)))
    np.testing.assert_array_equal(words(picked[1]), words(pr.split(pr.key(1))[1]))
    assert pnp.asarray(first) is first
    listed = pnp.array([first, second])
    assert listed.shape == (2,) and listed.dtype == first.dtype
    np.testing.assert_array_equal(words(listed), words(pr.split(pr.key(1))))
    assert str(pto.typeof(ks)) == "key<fry>[2,3]"


def test_keys_through_transforms_match_jax(jax):
    jr, jl = jax.random, jax.lax

    def programs(random, jit, vmap, lax):
        k = random.key(5)
        out = {"jit": jit(lambda k: random.normal(random.split(k)[1], (2,), F32))(k),
               "jit_key": random.key_data(jit(lambda k: random.fold_in(k, 3))(k)),
               "vmap": vmap(lambda k: random.uniform(k, (2,), F32))(random.split(k, 3)),
               "vmap_make": random.key_data(vmap(random.key)(np.arange(3, dtype=np.int32)))}
        carry, ys = lax.scan(lambda c, x: (random.fold_in(c, 1), random.normal(x, (), F32)),
                             k, random.split(k, 4))
        out["scan"], out["scan_key"] = ys, random.key_data(carry)
        out["fori"] = random.key_data(lax.fori_loop(0, 3, lambda i, c: random.split(c)[0], k))
        out["cond"] = random.key_data(lax.cond(True, lambda c: random.split(c)[1],
                                               lambda c: c, k))
        return out

    ours = programs(pr, pto.jit, pto.vmap, pto.lax)
    # JAX's values as one program (eagerly, JAX compiled each of its ~15 operations)
    theirs = jax.jit(lambda: programs(jr, jax.jit, jax.vmap, jl))()
    for name in ours:
        np.testing.assert_allclose(np.asarray(ours[name]), np.asarray(theirs[name]),
                                   rtol=2e-6, err_msg=name)


def test_grad_and_vjp_with_keys_as_jax(jax):
    def loss(random):
        return lambda x, k: (x * random.normal(k, (3,), F32)).sum()

    x = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_allclose(pto.grad(loss(pr))(x, pr.key(2)),
                               jax.grad(loss(jax.random))(x, jax.random.key(2)), rtol=2e-6)
    def noise(random, vmap):
        return lambda k, x: vmap(lambda one: random.normal(one, (), F32))(k) * x

    _, pullback = pto.vjp(noise(pr, pto.vmap), pr.split(pr.key(0), 4), F32(2))
    _, jpullback = jax.vjp(noise(jax.random, jax.vmap), jax.random.split(jax.random.key(0), 4),
                           F32(2))
    (key_ct, x_ct), (jkey_ct, jx_ct) = pullback(np.ones(4, np.float32)), jpullback(
        np.ones(4, np.float32))
    assert key_ct.dtype == jkey_ct.dtype == pto.dtypes.float0 and key_ct.shape == jkey_ct.shape
    np.testing.assert_allclose(x_ct, jx_ct, rtol=2e-6)


def test_misuse_raises_as_jax(jax):
    """Each misuse raises the exception class JAX raises."""
    def cases(random, jnp):
        k = random.key(0)
        return [lambda: k + 1, lambda: jnp.add(k, k), lambda: k < k, lambda: k == 1,
                lambda: jnp.sum(k), lambda: np.asarray(k), lambda: float(k), lambda: bool(k),
                lambda: hash(k), lambda: len(k), lambda: random.key(1.5),
                lambda: random.key(k), lambda: random.key(np.zeros(2, np.int32)),
                lambda: random.split(random.split(k)), lambda: random.normal(random.split(k)),
                lambda: random.fold_in(random.split(k), 1),
                lambda: random.split(np.zeros((2, 2), np.uint32)),
                lambda: random.normal(np.zeros(3, np.uint32)),
                lambda: random.normal(np.zeros(2, np.float32)),
                lambda: random.key_data(np.zeros(2, np.float32)),
                lambda: random.wrap_key_data(np.zeros(3, np.uint32)),
                lambda: random.wrap_key_data(np.zeros(2, np.int32)),
                lambda: random.wrap_key_data(k),
                lambda: random.key(0, impl="no-such-prng")]

    for i, (ours, theirs) in enumerate(zip(cases(pr, pnp), cases(jax.random, jax.numpy))):
        with pytest.raises(Exception) as expected:
            theirs()
        with pytest.raises(expected.type, match="") as got:
            ours()
        assert isinstance(got.value, expected.type), (i, got.value, expected.value)


def test_keys_are_leaves_in_users_view_as_jax(jax):
    """tree_util/tree see a key as a leaf (as JAX); transforms still carry it."""
    for lib, random, jnp in ((pto, pr, pnp), (jax, jax.random, jax.numpy)):
        state = {"key": random.key(1), "w": jnp.ones(2)}
        leaves, tree = lib.tree_util.tree_flatten(state)
        assert len(leaves) == 2 and leaves[0].dtype == state["key"].dtype
        assert lib.tree.map(lambda x: x.shape, state) == {"key": (), "w": (2,)}
        assert str(tree) == "PyTreeDef({'key': *, 'w': *})"
        rebuilt = lib.tree_util.tree_unflatten(tree, leaves)
        np.testing.assert_array_equal(words(rebuilt["key"], jax), words(state["key"], jax))
        paths = [lib.tree_util.keystr(p) for p, _ in
                 lib.tree_util.tree_flatten_with_path(state)[0]]
        assert paths == ["['key']", "['w']"]


def test_grad_refuses_keys_unless_allow_int_and_eval_shape_of_keys(jax):
    with pytest.raises(TypeError, match="key<fry>"):
        pto.grad(lambda k: 1.0)(pr.key(0))
    _, key_grad = pto.grad(lambda x, k: x, argnums=(0, 1), allow_int=True)(1.0, pr.key(0))
    _, jkey_grad = jax.grad(lambda x, k: x, argnums=(0, 1), allow_int=True)(
        1.0, jax.random.key(0))
    assert key_grad.dtype == jkey_grad.dtype and key_grad.shape == jkey_grad.shape
    assert repr(pto.eval_shape(pr.split, pr.key(0))) == repr(
        jax.eval_shape(jax.random.split, jax.random.key(0)))


def test_a_python_bool_seed_is_an_int_as_in_jax(jax):
    """JAX takes True/False as the ints 1/0 (a Python bool is an int)."""
    for seed in (True, False):
        np.testing.assert_array_equal(pr.PRNGKey(seed), jax.random.PRNGKey(seed))
        np.testing.assert_array_equal(words(pr.key(seed)), words(jax.random.key(seed), jax))
