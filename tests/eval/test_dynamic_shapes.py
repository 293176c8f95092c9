"""``jit(f, dynamic=...)``: every primitive family on a symbolic dimension gives the static-shape
result at several sizes (1, a tile boundary and either side of it, the maximum) from one trace
and one compiled program; grad, vmap, scan and fori_loop through symbolic sizes; errors."""
import logging

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import lax, nn
from ptojax.errors import (ConcretizationError, DimensionRangeError,
                           InconclusiveDimensionOperation, StaticArgumentError)
from ptojax.tree_util import tree_leaves

N = pto.Dim("n", 1, 64)
SIZES = (1, 8, 9, 64)

FAMILIES = {
    "elementwise": lambda x: pnp.exp(x) * 2 + x / (1 + x ** 2) - pnp.maximum(x, 0.1),
    "broadcast": lambda x: x + x[:, :1] + x[0] + pnp.ones((1, 8)),
    "reductions": lambda x: (x.sum(0), x.mean(), x.max(0), pnp.var(x, axis=0), pnp.std(x),
                             pnp.argmax(x, 0), nn.logsumexp(x, axis=0), x.prod(1),
                             pnp.median(x, axis=0)),
    "dot": lambda x: (x @ x.T, x.T @ x, pnp.einsum("ij,ik->jk", x, x)),
    "reshape": lambda x: (x.reshape(-1), x.reshape(-1, 4), x.reshape(x.shape[0], 2, 4),
                          x[None].reshape(-1, 8)),
    "transpose": lambda x: (x.T, pnp.swapaxes(x[None], 0, 2)),
    "concatenate": lambda x: (pnp.concatenate([x, x * 2], 0), pnp.stack([x, x], 1),
                              pnp.vstack([x, x[:1]])),
    "slicing": lambda x: (x[1:], x[:-1], x[-1], x[::-1], x[:, ::2], x[:, 1:3]),
    "dynamic_slicing": lambda x: (lax.dynamic_slice_in_dim(x, 0, 1, 0), x.at[0].set(5.0),
                                  x.at[-1].add(1.0),
                                  lax.dynamic_update_slice(x, pnp.ones((1, 8)), (0, 0))),
    "gather": lambda x: (pnp.take(x, pnp.array([0, -1]), axis=0), x[pnp.argmax(x[:, 0])],
                         pnp.take_along_axis(x, pnp.argsort(x, 0), 0)),
    "iota": lambda x: (pnp.arange(x.shape[0]) * 1.0, pnp.tril(pnp.ones((x.shape[0],) * 2)),
                       pnp.eye(x.shape[0]) @ x),
    "select": lambda x: (pnp.where(x > 0.5, x, 0.0), pnp.clip(x, 0.2, 0.8)),
    "cumulative": lambda x: (pnp.cumsum(x, 0), pnp.cumprod(x, 1), lax.cummax(x, 0)),
    "sort": lambda x: (pnp.sort(x, 0), pnp.argsort(x[:, 0]), lax.top_k(x.T, 1)[0]),
    "softmax": lambda x: (nn.softmax(x, axis=0), nn.log_softmax(x, axis=-1)),
    "pad": lambda x: pnp.pad(x, ((1, 2), (0, 1))),
    "scan": lambda x: lax.scan(lambda c, r: (c + r, c * r), pnp.zeros(8), x),
    "fori_loop": lambda x: lax.fori_loop(0, x.shape[0], lambda i, c: c + x[i], pnp.zeros(8)),
    "cond": lambda x: lax.cond(x.sum() > 10, lambda y: y * 2, lambda y: y - 1, x),
    "creation": lambda x: (pnp.zeros_like(x) + 1, pnp.ones(x.shape),
                           pnp.full((x.shape[0], 2), 3.0), pnp.zeros((2 * x.shape[0],))),
    "size_as_number": lambda x: x.sum(0) / x.shape[0] + x.shape[0],
}


def _inputs(size):
    return np.random.default_rng(size).random((size, 8)).astype(np.float32)


def _assert_same(got, want):
    got, want = tree_leaves(got), tree_leaves(want)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_family_matches_the_static_shape_result_from_one_program(family):
    f = FAMILIES[family]
    dynamic = pto.jit(f, dynamic={"x": {0: N}})
    for size in SIZES:
        _assert_same(dynamic(_inputs(size)), pto.jit(f)(_inputs(size)))
    assert dynamic.cache_size() == 1


def test_the_ir_is_symbolic_and_prints_its_symbols():
    f = pto.jit(lambda x: pnp.concatenate([x, x])[1:].sum(0) / x.shape[0],
                dynamic={"x": {0: N}})
    text = str(f.lower(_inputs(3)).ir)
    assert "a:f32[n,8]" in text and "f32[2*n,8]" in text and "f32[2*n-1,8]" in text
    assert "dimension_size[size=n" in text


def _loss(w, x):
    h = pnp.tanh(x @ w)
    return pnp.mean(nn.softmax(h, axis=0) * h) + (h[1:] * h[:-1]).sum() / x.shape[0]


@pytest.mark.parametrize("size", SIZES)
def test_grad_through_symbolic_sizes_matches_static(size):
    w = np.random.default_rng(0).random((8, 4)).astype(np.float32)
    grad = pto.jit(pto.grad(_loss, argnums=(0, 1)), dynamic={"x": {0: N}})
    _assert_same(grad(w, _inputs(size)), pto.jit(pto.grad(_loss, argnums=(0, 1)))(
        w, _inputs(size)))


def test_grad_inside_and_value_and_grad_compile_once():
    w = np.ones((8, 4), np.float32) * 0.1
    step = pto.jit(pto.value_and_grad(_loss), dynamic={"x": {0: N}})
    for size in SIZES:
        _assert_same(step(w, _inputs(size)), pto.value_and_grad(_loss)(w, _inputs(size)))
    assert step.cache_size() == 1


@pytest.mark.parametrize("axis", [0, 1])
def test_vmap_over_a_symbolic_program(axis):
    f = pto.vmap(lambda x: (nn.softmax(x, axis=0) * x).sum(0), in_axes=axis)
    dynamic = pto.jit(f, dynamic={"x": {1 - axis: N}})
    for size in SIZES:
        x = np.random.default_rng(size).random((3, size) if axis == 0 else (size, 3))
        x = x.astype(np.float32)
        _assert_same(dynamic(x), pto.jit(f)(x))
    assert dynamic.cache_size() == 1


def test_grad_of_a_scan_over_a_symbolic_length():
    def rnn(w, xs):
        final, hs = lax.scan(lambda h, x: (pnp.tanh(h @ w + x), h), pnp.zeros(8), xs)
        return (final ** 2).sum() + hs.mean()
    w = np.eye(8, dtype=np.float32) * 0.5
    grad = pto.jit(pto.grad(rnn), dynamic={"xs": {0: N}})
    for size in SIZES:
        _assert_same(grad(w, _inputs(size)), pto.jit(pto.grad(rnn))(w, _inputs(size)))
    assert grad.cache_size() == 1


def test_arguments_sharing_a_dimension_and_pytrees():
    f = pto.jit(lambda p, q: {"s": p["a"] @ q.T, "t": p["b"] + q},
                dynamic={"p": {0: N}, "q": {0: N}})
    for size in (2, 7):
        p = {"a": _inputs(size), "b": _inputs(size) * 2}
        _assert_same(f(p, _inputs(size) + 1), {"s": p["a"] @ (_inputs(size) + 1).T,
                                               "t": p["b"] + _inputs(size) + 1})
    assert f.cache_size() == 1


def test_two_dimensions_and_keyword_arguments():
    rows, cols = pto.Dim("rows", 1, 32), pto.Dim("cols", 1, 32)
    f = pto.jit(lambda x, *, y: (x @ y).reshape(-1) * x.shape[1],
                dynamic={"x": {0: rows, 1: cols}, "y": {0: cols}})
    for r, c in ((1, 1), (3, 5), (32, 2)):
        x, y = np.ones((r, c), np.float32), np.ones((c, 4), np.float32)
        _assert_same(f(x, y=y), (x @ y).reshape(-1) * c)
    assert f.cache_size() == 1


def test_compiles_are_logged_and_counted(caplog):
    f = pto.jit(lambda x: x * 2, dynamic={"x": {0: N}})
    with caplog.at_level(logging.INFO, logger="ptojax.jit"):
        for size in (1, 5, 9):
            f(np.ones(size, np.float32))
        f(np.ones((2, 2), np.float32))   # another rank: another program
    compiled = [r.getMessage() for r in caplog.records if "compiled" in r.getMessage()]
    assert len(compiled) == 2 and "f32[n]" in compiled[0], compiled
    assert f.cache_size() == 2


def test_a_size_outside_the_range_names_the_dim_the_value_and_the_range():
    f = pto.jit(lambda x: x + 1, dynamic={"x": {0: pto.Dim("seq", 2, 16)}})
    with pytest.raises(DimensionRangeError, match=r"'x' has size 17 on axis 0, outside the "
                                                  r"range 2\.\.16 .* 'seq'"):
        f(np.ones(17))
    with pytest.raises(DimensionRangeError, match="size 1 on axis 0"):
        f(np.ones(1))


def test_one_dimension_takes_one_size_per_call():
    f = pto.jit(lambda x, y: x + y, dynamic={"x": {0: N}, "y": {0: N}})
    with pytest.raises(DimensionRangeError, match="'n' has size 4 .* but 5"):
        f(np.ones(4), np.ones(5))


def test_an_axis_the_argument_lacks():
    f = pto.jit(lambda x: x, dynamic={"x": {1: N}})
    with pytest.raises(DimensionRangeError, match="no axis 1"):
        f(np.ones(4))


@pytest.mark.parametrize("dynamic, match", [
    ({"z": {0: N}}, "does not take"), ({1: {0: N}}, "takes 1 positional"),
    ({"x": {0: 5}}, "pto.Dim"), ({"x": {0: N + 1}}, "pto.Dim"), ({"x": [0]}, "dict"),
    ([("x", {0: N})], "dict")])
def test_bad_specs_are_refused_where_jit_is_called(dynamic, match):
    with pytest.raises(StaticArgumentError, match=match):
        pto.jit(lambda x: x, dynamic=dynamic)


def test_size_dependent_python_is_refused_with_the_users_line():
    f = pto.jit(lambda x: x[:3] if x.shape[0] > 3 else x, dynamic={"x": {0: N}})
    with pytest.raises(InconclusiveDimensionOperation, match=r"`n > 3`.*n` in 1\.\.64") as e:
        f(np.ones(4))
    assert "test_dynamic_shapes.py" in str(e.value)
    g = pto.jit(lambda x: x.reshape(int(x.shape[0]), 1), dynamic={"x": {0: N}})
    with pytest.raises(ConcretizationError, match="symbolic dimension `n`"):
        g(np.ones(4))


def test_against_jax_at_several_sizes(jnp):
    def f(x):
        s = x @ x.T / 8.0
        mask = pnp.arange(x.shape[0])[:, None] >= pnp.arange(x.shape[0])[None, :]
        return nn.softmax(pnp.where(mask, s, -1e9), axis=-1) @ x

    def f_jax(x):
        s = x @ x.T / 8.0
        mask = jnp.arange(x.shape[0])[:, None] >= jnp.arange(x.shape[0])[None, :]
        import jax
        return jax.nn.softmax(jnp.where(mask, s, -1e9), axis=-1) @ x
    dynamic = pto.jit(f, dynamic={"x": {0: N}})
    for size in SIZES:
        np.testing.assert_allclose(dynamic(_inputs(size)), f_jax(_inputs(size)), rtol=1e-5,
                                   atol=1e-6)


# buckets: the program padded and masked at a static size (lower/bucketing.py) -----------------
def _loss_mix(x):
    h = pnp.tanh(x @ np.linspace(0, 1, 32, dtype=np.float32).reshape(8, 4))
    return (pnp.mean(nn.softmax(h, axis=0) * h) + (h[1:] * h[:-1]).sum() / x.shape[0]
            + pnp.sort(x, 0)[-1].sum() + pnp.cumsum(x[::-1], 0).mean()
            + pnp.concatenate([x, x[:1]])[-2:].sum())


BUCKETED = {**FAMILIES,
            "grad": pto.grad(_loss_mix),
            "grad_of_reverse_scan": pto.grad(lambda x: lax.scan(
                lambda h, r: (pnp.tanh(h * 0.5 + r), h), pnp.zeros(8), x, reverse=True)[1].sum()),
            "vmap_grad": pto.vmap(pto.grad(lambda r: (nn.softmax(r) * r).sum())),
            "while": lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (
                c[0] + 1, c[1] * 0.5 + x.sum(0)), (0, pnp.zeros(8)))[1],
            "take_fill": lambda x: pnp.take(x, pnp.array([0, 3, 70]), axis=0, mode="fill",
                                            fill_value=-1.0),
            "scatter_drop": lambda x: x.at[pnp.array([1, 2, 40])].set(9.0, mode="drop")}


@pytest.mark.parametrize("family", sorted(BUCKETED))
def test_bucketed_program_with_nan_padding_matches_the_static_result(family):
    """The bucketed IR run on inputs padded with NaN: no padding reaches a true element."""
    from ptojax.ir.symbolic import evaluate
    from ptojax.lower.bucketing import bucket_of, bucketed
    f = BUCKETED[family]
    closed = pto.jit(f, dynamic={0: {0: N}}).lower(_inputs(3)).ir
    symbol = closed.ir.invars[0].type.shape[0].symbols["n"]
    for size in (1, 5, 8, 9, 33, 64):
        bucket = {"n": bucket_of(size, symbol)}
        x = _inputs(size)
        padded = np.full((bucket["n"], 8), np.nan, np.float32)
        padded[:size] = x
        outs = bucketed(closed, bucket)(np.int32(size), padded)
        cut = [np.asarray(o)[tuple(slice(0, d) for d in evaluate(v.type.shape, {"n": size}))]
               for o, v in zip(outs, closed.ir.outvars)]
        _assert_same(cut, tree_leaves(pto.jit(f)(x)))


def test_bucket_sizes_follow_the_policy_within_the_range():
    from ptojax.lower.bucketing import bucket_of
    sym = pto.Dim("n", 3, 100).symbols["n"]
    assert [bucket_of(s, sym) for s in (3, 4, 5, 64, 65, 100)] == [4, 4, 8, 64, 100, 100]
    assert bucket_of(17, sym, lambda n: -(-n // 10) * 10) == 20


def test_a_program_without_bucket_rules_runs_as_one_program():
    from ptojax.errors import UnsupportedError
    from ptojax.lower.bucketing import bucketed
    closed = pto.jit(lambda x: lax.pad(x, 0.0, ((0, 0, 1), (0, 0, 0))),
                     dynamic={"x": {0: N}}).lower(_inputs(3)).ir
    with pytest.raises(UnsupportedError, match="interior padding"):
        bucketed(closed, {"n": 4})


def _square(size):
    return np.random.default_rng(size).random((size, size)).astype(np.float32)


def test_compiled_buckets_serve_their_sizes():
    from ptojax.lower.host.backend import CpuBackend, wait_for_compiles

    def f(x):      # [n, n]: a kernel takes one runtime extent, so only buckets tile this
        return nn.softmax(x * 2.0, axis=-1) + 1.0
    backend = CpuBackend(min_elements=0, buckets=lambda n: 32)
    dynamic = pto.jit(f, dynamic={"x": {0: N, 1: N}}, backend=backend)
    for size in (5, 20, 40):
        dynamic(_square(size))
    assert wait_for_compiles(120)
    for _ in range(8):
        for size in (5, 20, 40):
            dynamic(_square(size))
            assert wait_for_compiles(120)
    for size in (5, 20, 40):
        _assert_same(dynamic(_square(size)), pto.jit(f, backend="interpreter")(_square(size)))
    executable = next(iter(dynamic._cache.values())).executable
    assert set(executable.buckets) == {(32,), (40,)}   # the policy, capped at the size
    assert all(b.use in ("bucket", "program") for b in executable.buckets.values())
    assert dynamic.cache_size() == 1


def test_no_buckets_when_the_one_program_has_the_static_kernels():
    from ptojax.lower.host.backend import CpuBackend, wait_for_compiles
    from ptojax.lower.host.symbolic import STATIC_KERNELS
    w = np.random.default_rng(1).random((8, 8)).astype(np.float32)

    def f(x):      # the same kernels at every size: a bucket would only add masks
        return nn.softmax(x @ w, axis=-1) @ w.T
    dynamic = pto.jit(f, dynamic={"x": {0: N}}, backend=CpuBackend(min_elements=0))
    dynamic(_inputs(5))
    assert wait_for_compiles(120)
    for size in (5, 20, 40):
        _assert_same(dynamic(_inputs(size)), pto.jit(f, backend="interpreter")(_inputs(size)))
    executable = next(iter(dynamic._cache.values())).executable
    assert set(executable.buckets.values()) == {STATIC_KERNELS}


@pytest.mark.parametrize("bad", [3, "pow2"])
def test_a_bad_bucket_policy_is_refused(bad):
    from ptojax.errors import ConfigError
    from ptojax.lower.host.backend import CpuBackend
    with pytest.raises(ConfigError, match="buckets"):
        CpuBackend(buckets=bad)
