"""The gradient IR is efficient: for an MLP and an attention loss it costs at most ~3x the
forward pass in flops (counted by ptojax.tools.flops on the optimized IR), recomputes no
forward work, builds no dense Jacobian and carries none of the waste transforms tend to leave
(multiplications by broadcast ones, ``integer_pow y=1``, transposes after matmuls, zeros)."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import nn
from ptojax.ir.core import Literal
from ptojax.tools.flops import count_flops

F32 = np.float32


def _spec(*shape, dtype=F32):
    return pto.ShapeDtypeStruct(shape, dtype)


def mlp_loss(params, x, labels):
    h = x
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = pnp.tanh(h)
    logp = nn.log_softmax(h)
    return -pnp.mean(pnp.take_along_axis(logp, labels[:, None], axis=1))


def mlp_mse(params, x, y):
    h = x
    for w, b in params:
        h = pnp.tanh(h @ w + b)
    return pnp.mean((h - y) ** 2)


def attention_loss(wq, wk, wv, x):
    q, k, v = x @ wq, x @ wk, x @ wv
    seq = x.shape[1]
    scores = pnp.einsum("bqd,bkd->bqk", q, k) / np.sqrt(q.shape[-1])
    scores = pnp.where(pnp.tril(pnp.ones((seq, seq), dtype=bool)), scores, -1e9)
    out = pnp.einsum("bqk,bkd->bqd", nn.softmax(scores, axis=-1), v)
    return pnp.mean(out ** 2)


MLP_ARGS = ([(_spec(784, 512), _spec(512)), (_spec(512, 512), _spec(512)),
             (_spec(512, 10), _spec(10))], _spec(128, 784), _spec(128, dtype=np.int32))
MSE_ARGS = ([(_spec(64, 32), _spec(32)), (_spec(32, 8), _spec(8))], _spec(16, 64),
            _spec(16, 8))
ATTENTION_ARGS = (_spec(64, 32), _spec(64, 32), _spec(64, 32), _spec(4, 128, 64))
ALL_PARAMS = {"mlp": (mlp_loss, MLP_ARGS, 0), "attention": (attention_loss, ATTENTION_ARGS,
                                                            (0, 1, 2, 3))}


def _optimized(fn, args):
    return pto.jit(fn).lower(*args).optimized_ir.ir


def _names(ir):
    return [e.prim.name for e in ir.eqns]


@pytest.mark.parametrize("name", sorted(ALL_PARAMS))
def test_gradient_costs_at_most_three_forward_passes(name):
    fn, args, argnums = ALL_PARAMS[name]
    forward = count_flops(_optimized(fn, args))
    backward = count_flops(_optimized(pto.grad(fn, argnums=argnums), args))
    assert backward <= 3.0 * forward, (backward, forward, backward / forward)


@pytest.mark.parametrize("name", sorted(ALL_PARAMS))
def test_no_forward_work_is_duplicated_and_no_dense_jacobian_is_built(name):
    fn, args, argnums = ALL_PARAMS[name]
    forward, grad = _optimized(fn, args), _optimized(pto.grad(fn, argnums=argnums), args)
    for transcendental in ("tanh", "exp", "log"):
        assert _names(grad).count(transcendental) <= _names(forward).count(transcendental)
    largest_forward = max(v.type.size for v in (*forward.invars, *forward.constvars,
                                                *[o for e in forward.eqns for o in e.outputs]))
    assert max(o.type.size for e in grad.eqns for o in e.outputs) <= largest_forward


def _broadcast_literals(ir):
    return {e.outputs[0]: e.inputs[0] for e in ir.eqns
            if e.prim.name == "broadcast_in_dim" and type(e.inputs[0]) is Literal}


def test_mlp_gradient_ir_has_no_obvious_waste():
    ir = _optimized(pto.grad(mlp_mse), MSE_ARGS)
    broadcasts = _broadcast_literals(ir)
    assert not broadcasts, "the MSE gradient needs no materialized constants (zeros/ones)"
    producers = {o: e for e in ir.eqns for o in e.outputs}
    for eqn in ir.eqns:
        if eqn.prim.name == "mul":
            assert not any(type(a) is Literal and a.value == 1 for a in eqn.inputs)
        if eqn.prim.name == "integer_pow":
            assert eqn.params["y"] != 1
        if eqn.prim.name == "transpose":
            assert producers[eqn.inputs[0]].prim.name != "dot_general"
    # forward h1, h2; backward dW2, dh1, dW1 (no dx: x is not differentiated)
    assert _names(ir).count("dot_general") == 2 + 3
