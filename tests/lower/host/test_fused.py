"""Fused patterns end to end on the default (automatic) planner for the host target: built
as PTO C++ with the set/wait flag checker (PTO_HOST_CHECK_SYNC), every kernel the emitter
produces for them must be correctly synchronized and match the numpy interpreter; built as
fused loop nests (the default build), they must match both. The patterns are built side by
side as one program per build (one library each; each pattern still planned as alone)."""
from collections import Counter

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from host_cases import (F16, F32, assert_matches, executable_of, host_jit, interpret,
                        kernels_of)
from ptojax.lower.host.program import kernel_eqns


def mlp_loss(params, x, y):
    (w1, b1), (w2, b2) = params
    h = pto.nn.relu(x @ w1 + b1)
    logits = h @ w2 + b2
    return -pnp.mean(pnp.sum(pto.nn.log_softmax(logits) * y, axis=-1))


def mlp_step(params, x, y):
    loss, grads = pto.value_and_grad(mlp_loss)(params, x, y)
    return loss, [(w - 0.1 * gw, b - 0.1 * gb) for (w, b), (gw, gb) in zip(params, grads)]


def attention(q, k, v):
    s = q @ pnp.swapaxes(k, -1, -2) * (1.0 / q.shape[-1] ** 0.5)
    n = q.shape[-2]
    s = pnp.where(pnp.tril(pnp.ones((n, n), bool)), s, -1e9)
    return pto.nn.softmax(s) @ v


def attention_loss(q, k, v):
    return pnp.sum(attention(q, k, v) ** 2)


def _rng():
    return np.random.default_rng(7)


def _normal(shape, dtype=F32, scale=1.0):
    return (_rng().standard_normal(shape) * scale).astype(dtype)


CASES = {
    "chain": (lambda x: pnp.tanh(2 * x + 1) * pnp.exp(-x * x) + x, lambda: [_normal((1000, 77))]),
    "softmax": (pto.nn.softmax, lambda: [_normal((333, 190))]),
    "log_softmax_f16": (pto.nn.log_softmax, lambda: [_normal((333, 190), F16)]),
    "layer_norm": (lambda x, g, b: pto.nn.layer_norm(x, g, b),
                   lambda: [_normal((333, 190)), _normal((190,)), _normal((190,))]),
    "rms_norm": (lambda x, g: pto.nn.rms_norm(x, g), lambda: [_normal((333, 190)), _normal((190,))]),
    "gelu": (lambda x: pto.nn.gelu(x, approximate=True), lambda: [_normal((1000, 77))]),
    "relu_grad": (pto.grad(lambda x: pnp.sum(pto.nn.relu(x) ** 2)), lambda: [_normal((500, 96))]),
    "masks_to_floats": (lambda x: (x > 0).astype(F32) / ((x == 0).astype(F32) + 1),
                        lambda: [_normal((500, 96))]),
    "mlp_step": (mlp_step, lambda: [
        [(_normal((64, 48), scale=0.1), _normal((48,), scale=0.1)),
         (_normal((48, 10), scale=0.1), _normal((10,), scale=0.1))],
        _normal((40, 64)), np.eye(10, dtype=F32)[_rng().integers(0, 10, 40)]]),
    "attention_grad": (pto.grad(attention_loss, argnums=(0, 1, 2)),
                       lambda: [_normal((2, 3, 40, 16), scale=0.5) for _ in range(3)]),
}


FUSED_CASES = ["log_softmax_f16", "gelu", "relu_grad", "masks_to_floats", "mlp_step",
               "attention_grad"]   # (chains, softmax and the norms: test_fused_build.py's)


def _side_by_side(names):
    """(function, arguments) of the patterns ``names`` side by side in one program, each on
    inputs of its own (so each is planned as alone: the checked-sync test checks)."""
    sizes = [len(CASES[n][1]()) for n in names]

    def patterns(*args):
        outs, i = {}, 0
        for n, size in zip(names, sizes):
            outs[n] = CASES[n][0](*args[i:i + size])
            i += size
        return outs
    return patterns, [a for n in names for a in CASES[n][1]()]


def _stems(kernels):
    """The kernels' names without their index, with their output shapes."""
    return [(k.params["name"].split("_", 1)[1], tuple(v.type.shape for v in k.outputs))
            for k in kernels]


def _build(names, **options):
    """(jitted, args, outputs by pattern): the patterns as one program on the host build —
    one library, not one per pattern (each g++ run parses the host headers again)."""
    fn, args = _side_by_side(names)
    jitted = host_jit(fn, **options)
    with np.errstate(all="ignore"):
        return jitted, args, jitted(*args)


@pytest.fixture(scope="module")
def checked():
    return _build(list(CASES), check_sync=True)


@pytest.fixture(scope="module")
def fused():
    return _build(FUSED_CASES, kernels="fused")


@pytest.mark.parametrize("name", list(CASES))
def test_fused_pattern_matches_interpreter_with_checked_sync(name, checked):
    fn, make_args = CASES[name]
    args = make_args()
    host, all_args, outs = checked
    with np.errstate(all="ignore"):
        assert_matches(pto.tree_util.tree_leaves(outs[name]),
                       pto.tree_util.tree_leaves(interpret(fn, *args)), rtol_scale=8)
    executable = executable_of(host, *all_args)
    assert executable.status == "compiled"
    assert executable.program.check_sync
    # the pattern is planned as alone: its kernels, lowered alone, are among the program's
    alone = Counter(_stems(kernel_eqns(pto.jit(fn).lower(*args, target=pto.targets.host_jit)
                                       .tile_ir)))
    assert not alone - Counter(_stems(kernels_of(host, *all_args))), name


@pytest.mark.parametrize("name", FUSED_CASES)
def test_fused_build_of_the_pattern_matches_the_pto_build_and_the_interpreter(
        name, fused, checked):
    fn, make_args = CASES[name]
    args = make_args()
    jitted, all_args, outs = fused
    out = pto.tree_util.tree_leaves(outs[name])
    with np.errstate(all="ignore"):
        assert_matches(out, pto.tree_util.tree_leaves(interpret(fn, *args)), rtol_scale=8)
        assert_matches(out, pto.tree_util.tree_leaves(checked[2][name]), rtol_scale=8)
    program = executable_of(jitted, *all_args).program
    assert program.kernels == "fused" and program.fused_error is None
