"""``pto.ad_checkpoint`` as JAX's ``jax.ad_checkpoint``: ``checkpoint_name`` and the
name-based ``checkpoint_policies`` (gradients equal to JAX's; the named values are what the
forward pass saves), and ``saved_residuals``/``print_saved_residuals``."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.ad_checkpoint import checkpoint_name, print_saved_residuals, saved_residuals
from helpers import assert_close

W = [np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4) * s for s in (0.5, 0.8, 1.1)]
X = np.linspace(0.1, 0.9, 4, dtype=np.float32)


def _loss(np_, name):
    def predict(params, x):
        *ws, last = params
        for i, w in enumerate(ws):
            x = name(np_.sin(np_.dot(w, x)), f"layer{i}")
        return np_.dot(last, x)

    return lambda params, x: np_.sum(predict(params, x) ** 2)


POLICIES = [("save_only_these_names", ("layer0",)), ("save_any_names_but_these", ("layer1",)),
            ("save_anything_except_these_names", ("layer0",)), ("nothing_saveable", ())]


@pytest.mark.parametrize("policy,names", POLICIES)
def test_named_policies_give_jax_gradients(jax, policy, names):
    import jax.ad_checkpoint as jac
    make = lambda ns: getattr(ns, policy)(*names) if names else getattr(ns, policy)
    got = pto.jit(pto.grad(pto.checkpoint(_loss(pnp, checkpoint_name),
                                          policy=make(pto.checkpoint_policies))))(W, X)
    with jax.enable_x64(False):
        want = jax.grad(jax.checkpoint(_loss(jax.numpy, jac.checkpoint_name),
                                       policy=make(jax.checkpoint_policies)))(W, X)
    assert_close(got, [np.asarray(w) for w in want], rtol=1e-5, atol=1e-6)


def test_saved_values_follow_the_names():
    loss = _loss(pnp, checkpoint_name)
    only_0 = pto.checkpoint(loss, policy=pto.checkpoint_policies.save_only_these_names("layer0"))
    where = [w for _, w in saved_residuals(only_0, W, X)]
    assert any(w.startswith("named 'layer0'") for w in where)
    assert not any("layer1" in w for w in where)
    nothing = pto.checkpoint(loss)
    where = [w for _, w in saved_residuals(nothing, W, X)]
    assert all(w.startswith("from the argument") for w in where), where
    assert "from the argument params[0]" in where and "from the argument x" in where


def test_print_saved_residuals_format(capsys):
    print_saved_residuals(lambda x, y: pnp.sin(x) * y, np.ones(3, np.float32), 2.0)
    lines = capsys.readouterr().out.splitlines()
    assert "f32[3] output of cos from " in "\n".join(lines)
    assert all(line.split(" ", 1)[0].startswith("f32[") for line in lines)


def test_name_is_the_identity_and_disappears():
    f = pto.jit(lambda x: checkpoint_name(x * 2, "twice") + 1)
    assert_close(f(np.ones(2, np.float32)), np.full(2, 3.0, np.float32))
    assert "name" not in [e.prim.name for e in pto.jit(f).lower(np.ones(2, np.float32))
                          .compile().ir.eqns]
    assert_close(pto.vmap(lambda x: checkpoint_name(x, "v") * x)(np.arange(3.0, dtype="f4")),
                 np.arange(3.0, dtype="f4") ** 2)
    with pytest.raises(TypeError, match="must be a str"):
        checkpoint_name(1.0, 3)
