"""``pto.shard`` partitions through control flow (``control_flow/sharding.py``): a split
dimension stays local inside scan/while bodies and cond branches, collectives are emitted
inside a body only where the body needs them, and values and gradients equal the unsharded
function's (and JAX's where convenient)."""
from collections import Counter

import numpy as np
import pytest

import ptojax as pto
from helpers import assert_close
import ptojax.numpy as pnp
from ptojax.ir.core import as_ir, sub_irs

P = pto.P
B, T, D, H = 8, 5, 3, 6
RNG = np.random.default_rng(0)
WX = (RNG.normal(size=(D, H)) * 0.5).astype(np.float32)
WH = (RNG.normal(size=(H, H)) * 0.3).astype(np.float32)
H0 = RNG.normal(size=(B, H)).astype(np.float32)
XS = RNG.normal(size=(T, B, D)).astype(np.float32)
RNN_ARGS = (WX, WH, H0, XS)
DP_SPECS = (P(), P(), P("data"), P(None, "data"))


# IR walking -------------------------------------------------------------------------------------
def _body(fn, *args):
    """The per-device program of the shard_map ``fn`` emits."""
    closed = pto.make_ir(fn)(*args)
    (eqn,) = [e for e in closed.eqns if e.prim.name == "shard_map"]
    return as_ir(eqn.params["body"])


def _eqns(ir, name, inside=True) -> list:
    """Equations of primitive ``name`` in ``ir`` (and in its sub-IRs if ``inside``)."""
    out = []
    for e in as_ir(ir).eqns:
        if e.prim.name == name:
            out.append(e)
        if inside:
            for sub in sub_irs(e.params):
                out.extend(_eqns(sub, name))
    return out


def _collectives(ir, inside=True) -> Counter:
    counts = Counter()
    for e in as_ir(ir).eqns:
        if getattr(e.prim, "collective", False) and e.prim.name != "axis_index":
            counts[e.prim.name] += 1
        if inside:
            for sub in sub_irs(e.params):
                counts += _collectives(sub)
    return counts


# a data-parallel RNN ----------------------------------------------------------------------------
def rnn(wx, wh, h0, xs):
    def step(h, x):
        h = pnp.tanh(x @ wx + h @ wh)
        return h, h
    return pto.lax.scan(step, h0, xs)


def rnn_loss(wx, wh, h0, xs):
    h, hs = rnn(wx, wh, h0, xs)
    return pnp.sum(h ** 2) + pnp.sum(hs) * 0.1


def _dp_mesh(n):
    return pto.make_mesh((n,), ("data",))


@pytest.mark.parametrize("n", [2, 4])
def test_dp_rnn_runs_a_local_scan(n, jax, jnp):
    fn = pto.shard(rnn, mesh=_dp_mesh(n), in_specs=DP_SPECS,
                   out_specs=(P("data"), P(None, "data")))
    assert_close(fn(*RNN_ARGS), rnn(*RNN_ARGS), rtol=2e-5, atol=2e-5, check_dtype=False)

    def jax_rnn(wx, wh, h0, xs):
        return jax.lax.scan(lambda h, x: (jnp.tanh(x @ wx + h @ wh),) * 2, h0, xs)
    assert_close(fn(*RNN_ARGS), jax_rnn(*RNN_ARGS), rtol=2e-5, atol=2e-5, check_dtype=False)

    body = _body(fn, *RNN_ARGS)
    assert _collectives(body) == {}
    (scan,) = _eqns(body, "scan")
    p = scan.params
    carry = scan.inputs[p["num_consts"]:p["num_consts"] + p["num_carry"]]
    assert [a.type.shape for a in carry] == [(B // n, H)]
    assert [a.type.shape for a in scan.inputs[p["num_consts"] + p["num_carry"]:]] == \
        [(T, B // n, D)]


def test_dp_rnn_with_an_initial_state_built_inside_keeps_the_batch_split():
    """h0 = zeros built in the function: the batch split flows from xs through the body to
    the carry (propagation), so the zeros are built locally, nothing is gathered."""
    def fn(wx, wh, xs):
        return rnn(wx, wh, pnp.zeros((B, H), np.float32), xs)[0]

    sharded = pto.shard(fn, mesh=_dp_mesh(4), in_specs=(P(), P(), P(None, "data")),
                        out_specs=P("data"))
    assert_close([sharded(WX, WH, XS)], [fn(WX, WH, XS)], rtol=2e-5, atol=2e-5, check_dtype=False)
    body = _body(sharded, WX, WH, XS)
    assert _collectives(body) == {}
    (scan,) = _eqns(body, "scan")
    assert scan.outputs[0].type.shape == (B // 4, H)


@pytest.mark.parametrize("n", [2, 4])
def test_dp_rnn_gradients(n):
    grad = pto.grad(rnn_loss, argnums=(0, 1, 2, 3))
    want = grad(*RNN_ARGS)
    mesh = _dp_mesh(n)
    of_grad = pto.shard(grad, mesh=mesh, in_specs=DP_SPECS, out_specs=DP_SPECS)
    assert_close(of_grad(*RNN_ARGS), want, rtol=1e-4, atol=1e-4, check_dtype=False)
    through = pto.grad(pto.shard(rnn_loss, mesh=mesh, in_specs=DP_SPECS, out_specs=P()),
                       argnums=(0, 1, 2, 3))
    assert_close(through(*RNN_ARGS), want, rtol=1e-4, atol=1e-4, check_dtype=False)


@pytest.mark.parametrize("n", [2, 4])
def test_dp_rnn_weight_gradients_are_one_psum_each_after_the_loops(n):
    """Forward and backward scans run on the local batch; each weight gradient is summed over
    'data' once, outside the loops; the batch is never gathered."""
    grad = pto.grad(rnn_loss, argnums=(0, 1, 2, 3))
    fn = pto.shard(grad, mesh=_dp_mesh(n), in_specs=DP_SPECS, out_specs=DP_SPECS)
    body = _body(fn, *RNN_ARGS)
    assert _collectives(body) == {"psum": 2}  # d wx, d wh
    assert _collectives(body, inside=False) == {"psum": 2}
    assert all(e.params["axes"] == ("data",) for e in _eqns(body, "psum"))
    scans = _eqns(body, "scan")
    assert len(scans) == 2  # forward, and the transposed (reverse) loop
    for scan in scans:
        p = scan.params
        carry = scan.inputs[p["num_consts"]:p["num_consts"] + p["num_carry"]]
        assert (B // n, H) in [a.type.shape for a in carry]
        assert all(B not in a.type.shape for a in scan.inputs)  # nothing enters batch-whole


def test_replicated_loop_operand_is_sliced_once_before_the_loop():
    """A replicated const the body uses elementwise with the split carry is sliced to the
    local block before the loop, not at every step inside it."""
    def fn(decay, h0, xs):
        return pto.lax.scan(lambda h, x: (h * decay + x @ WX, None), h0, xs)[0]

    decay = RNG.uniform(size=(B, H)).astype(np.float32)
    sharded = pto.shard(fn, mesh=_dp_mesh(4), in_specs=(P(), P("data"), P(None, "data")),
                        out_specs=P("data"))
    assert_close([sharded(decay, H0, XS)], [fn(decay, H0, XS)], rtol=2e-5, atol=2e-5, check_dtype=False)
    (scan,) = _eqns(_body(sharded, decay, H0, XS), "scan")
    assert all(B not in a.type.shape for a in scan.inputs)
    assert not _eqns(scan.params["body"], "axis_index")


# cond and switch --------------------------------------------------------------------------------
X = RNG.normal(size=(8, 6)).astype(np.float32)
M = RNG.normal(size=(6, 6)).astype(np.float32)


def branchy(p, x):
    return pto.lax.cond(p > 0, lambda x: pnp.sin(x) * 2, lambda x: x @ M, x)


def one_branch_whole(p, x):
    return pto.lax.cond(p > 0, lambda x: pnp.sin(x), lambda x: pnp.ones((8, 6)) * 2.0, x)


@pytest.mark.parametrize("fn", [branchy, one_branch_whole])
def test_cond_with_a_split_operand_stays_split(fn):
    """Both branches run on local blocks. A branch returning a value it computes whole slices
    its block locally, and the branch computing split blocks does not gather them (the output
    keeps the split the splitting branches agree on, not the meet of all branches)."""
    sharded = pto.shard(fn, mesh=pto.make_mesh((4,), ("x",)), in_specs=(P(), P("x")),
                        out_specs=P("x"))
    for p in (1.0, -1.0):
        assert_close([sharded(np.float32(p), X)], [fn(np.float32(p), X)], rtol=2e-5, atol=2e-5, check_dtype=False)
    body = _body(sharded, np.float32(1.0), X)
    assert _collectives(body) == {}
    (cond,) = _eqns(body, "cond")
    assert cond.outputs[0].type.shape == (2, 6)


def test_nested_loops_and_cond_on_a_2d_mesh():
    """A cond inside a fori_loop inside a scan; the carry built inside the function takes the
    split of xs over both mesh axes through all three levels."""
    w = (RNG.normal(size=(6, 6)) * 0.3).astype(np.float32)
    xs = RNG.normal(size=(4, 8, 6)).astype(np.float32)

    def fn(w, xs):
        def outer(c, xt):
            def inner(i, c):
                return pto.lax.cond(i % 2 == 0, lambda c: pnp.tanh(c @ w + xt),
                                    lambda c: c * 0.9, c)
            c = pto.lax.fori_loop(0, 3, inner, c)
            return c, pnp.sum(c, axis=1)
        return pto.lax.scan(outer, pnp.zeros((8, 6), np.float32), xs)

    mesh = pto.make_mesh((2, 2), ("data", "model"))
    specs = (P("model"), P(None, ("data", "model")))
    sharded = pto.shard(fn, mesh=mesh, in_specs=specs, out_specs=(P("data"), P(None, "data")))
    assert_close(sharded(w, xs), fn(w, xs), rtol=2e-5, atol=2e-5, check_dtype=False)
    (outer, inner) = _eqns(_body(sharded, w, xs), "scan")
    assert outer.outputs[0].type.shape == inner.outputs[1].type.shape == (2, 6)
    grad = pto.grad(lambda w, xs: pnp.sum(fn(w, xs)[1] ** 2))
    assert_close([pto.shard(grad, mesh=mesh, in_specs=specs, out_specs=P("model"))(w, xs)], [grad(w, xs)], rtol=1e-4, atol=1e-4, check_dtype=False)


def test_cond_gradients():
    def loss(p, x):
        return pnp.sum(branchy(p, x) ** 2)
    grad = pto.grad(loss, argnums=1)
    for p in (np.float32(1.0), np.float32(-1.0)):
        want = grad(p, X)
        mesh = pto.make_mesh((4,), ("x",))
        assert_close([pto.shard(grad, mesh=mesh, in_specs=(P(), P("x")), out_specs=P("x"))(p, X)], [want], rtol=1e-4, atol=1e-4, check_dtype=False)
        through = pto.grad(pto.shard(loss, mesh=mesh, in_specs=(P(), P("x")), out_specs=P()),
                           argnums=1)
        assert_close([through(p, X)], [want], rtol=1e-4, atol=1e-4, check_dtype=False)


def switchy(i, x):
    return pto.lax.switch(i, [lambda x: x * 2, pnp.cos, lambda x: x @ (x.T @ x) * 0.01], x)


def test_switch_contracting_the_split_dimension_psums_inside_its_branch(jax, jnp):
    fn = pto.shard(switchy, mesh=pto.make_mesh((4,), ("x",)), in_specs=(P(), P("x")),
                   out_specs=P("x"))
    for i in range(-1, 4):
        want = jax.lax.switch(i, [lambda x: x * 2, jnp.cos, lambda x: x @ (x.T @ x) * 0.01], X)
        assert_close([fn(np.int32(i), X)], [want], rtol=2e-5, atol=2e-5, check_dtype=False)
    body = _body(fn, np.int32(0), X)
    (cond,) = _eqns(body, "cond")
    assert [_collectives(b) for b in cond.params["branches"]] == [{}, {}, {"psum": 1}]
    assert _collectives(body, inside=False) == {}


def test_vmap_of_cond_inside_shard():
    def fn(p, x):
        return pto.vmap(lambda row: branchy(p, row[None])[0])(x)
    sharded = pto.shard(fn, mesh=pto.make_mesh((2,), ("x",)), in_specs=(P(), P("x")),
                        out_specs=P("x"))
    for p in (1.0, -1.0):
        assert_close([sharded(np.float32(p), X)], [fn(np.float32(p), X)], rtol=2e-5, atol=2e-5, check_dtype=False)
    assert _eqns(_body(sharded, np.float32(1.0), X), "cond")[0].outputs[0].type.shape == (4, 1, 6)


# while / fori -----------------------------------------------------------------------------------
A = RNG.uniform(1, 4, size=(8, 6)).astype(np.float32)


def newton_sqrt(a):
    def cond(c):
        i, y = c
        return (i < 30) & (pnp.max(pnp.abs(y * y - a)) > 1e-5)
    return pto.lax.while_loop(cond, lambda c: (c[0] + 1, 0.5 * (c[1] + a / c[1])), (0, a))[1]


def test_while_with_a_split_carry():
    fn = pto.shard(newton_sqrt, mesh=pto.make_mesh((4,), ("x",)), in_specs=P("x"),
                   out_specs=P("x"))
    assert_close([fn(A)], [newton_sqrt(A)], rtol=2e-5, atol=2e-5, check_dtype=False)
    assert_close([fn(A)], [np.sqrt(A)], rtol=1e-5, atol=1e-5, check_dtype=False)
    body = _body(fn, A)
    (loop,) = _eqns(body, "while")
    assert loop.outputs[1].type.shape == (2, 6)
    assert _collectives(loop.params["cond"]) == {"pmax": 1}  # the predicate is global
    assert _collectives(body) == {"pmax": 1}


@pytest.mark.parametrize("traced_bounds", [False, True])
def test_fori_loop_with_a_split_carry(traced_bounds):
    def fn(n, a):
        upper = n if traced_bounds else 5
        return pto.lax.fori_loop(0, upper, lambda i, y: 0.5 * (y + a / y), a)
    sharded = pto.shard(fn, mesh=pto.make_mesh((2, 2), ("x", "y")), in_specs=(P(), P("x", "y")),
                        out_specs=P("x", "y"))
    n = np.int32(5)
    assert_close([sharded(n, A)], [fn(n, A)], rtol=2e-5, atol=2e-5, check_dtype=False)
    body = _body(sharded, n, A)
    assert _collectives(body) == {}
    loops = _eqns(body, "while" if traced_bounds else "scan")
    assert loops[0].outputs[-1].type.shape == (4, 3)


# a split the carry cannot keep ------------------------------------------------------------------
W = (RNG.normal(size=(4, 4)) * 0.5).astype(np.float32)
HF = RNG.normal(size=(3, 4)).astype(np.float32)


def contracting(w, h0):
    return pto.lax.fori_loop(0, 3, lambda i, h: pnp.tanh(h @ w), h0)


@pytest.mark.parametrize("w_spec", [P(), P("x")])
def test_carry_whose_split_dimension_is_contracted(w_spec):
    """h's feature dim is split, but h @ w contracts it: the carry runs whole (gathered once
    before the loop), or, with w's rows split, each step sums its partial product."""
    mesh = pto.make_mesh((2,), ("x",))
    specs = (w_spec, P(None, "x"))
    fn = pto.shard(contracting, mesh=mesh, in_specs=specs, out_specs=P(None, "x"))
    assert_close([fn(W, HF)], [contracting(W, HF)], rtol=2e-5, atol=2e-5, check_dtype=False)
    body = _body(fn, W, HF)
    (scan,) = _eqns(body, "scan")
    assert scan.outputs[0].type.shape == (3, 4)
    assert _collectives(scan.params["body"]) == ({"psum": 1} if w_spec == P("x") else {})
    grad = pto.grad(lambda w, h: pnp.sum(contracting(w, h) ** 2), argnums=(0, 1))
    assert_close(pto.shard(grad, mesh=mesh, in_specs=specs, out_specs=specs)(W, HF), grad(W, HF), rtol=1e-4, atol=1e-4, check_dtype=False)


# fallback ---------------------------------------------------------------------------------------
def test_a_body_that_cannot_be_partitioned_runs_replicated():
    kernel = pto.tile(lambda c: pnp.exp(c) * 0.5)

    def fn(x):
        return pto.lax.fori_loop(0, 2, lambda i, c: kernel(c), x)

    x = np.arange(32, dtype=np.float32).reshape(4, 8) / 10
    sharded = pto.shard(fn, mesh=pto.make_mesh((2,), ("x",)), in_specs=P("x"),
                        out_specs=P("x"))
    assert_close([sharded(x)], [fn(x)], rtol=2e-5, atol=2e-5, check_dtype=False)
    body = _body(sharded, x)
    assert _collectives(body, inside=False) == {"all_gather": 1}
    assert _eqns(body, "scan")[0].outputs[0].type.shape == (4, 8)
