"""pto.nn.dot_product_attention against jax.nn.dot_product_attention: heads (MHA, GQA, MQA),
bias, masks, causal/local windows, sequence lengths, residuals, gradients, jit and vmap."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import nn
from ptojax.errors import DtypeError, ShapeError
from helpers import assert_close
from jax_golden import expected

B, T, S, H = 2, 5, 6, 8


def _qkv(n, k, dtype=np.float32, seed=0, batch=True):
    rng = np.random.default_rng(seed)
    lead = (B,) if batch else ()
    q = rng.normal(size=(*lead, T, n, H)).astype(dtype)
    kk = rng.normal(size=(*lead, S, k, H)).astype(dtype)
    v = rng.normal(size=(*lead, S, k, H)).astype(dtype)
    return q, kk, v


CASES = {
    "mha": dict(n=4, k=4),
    "gqa": dict(n=4, k=2),
    "mqa": dict(n=4, k=1),
    "bias": dict(n=2, k=2, bias=(1, 2, T, S)),
    "bias_broadcast_heads": dict(n=4, k=2, bias=(B, 1, T, S)),
    "mask": dict(n=4, k=2, mask=(B, 4, T, S)),
    "causal": dict(n=2, k=2, is_causal=True),
    "window": dict(n=2, k=1, local_window_size=(2, 1)),
    "window_int": dict(n=2, k=2, local_window_size=1, is_causal=True),
    "lengths": dict(n=2, k=2, lengths=True),
    "scale": dict(n=2, k=2, scale=0.3),
}


def _arguments(case, seed=0):
    q, k, v = _qkv(case["n"], case["k"], seed=seed)
    rng = np.random.default_rng(seed + 1)
    kwargs = {key: case[key] for key in ("is_causal", "local_window_size", "scale")
              if key in case}
    if "bias" in case:
        kwargs["bias"] = rng.normal(size=case["bias"]).astype(np.float32)
    if "mask" in case:
        mask = rng.random(case["mask"]) > 0.3
        mask[..., 0] = True
        kwargs["mask"] = mask
    if case.get("lengths"):
        kwargs["query_seq_lengths"] = np.array([3, 5], np.int32)
        kwargs["key_value_seq_lengths"] = np.array([4, 6], np.int32)
    return (q, k, v), kwargs


def _attention(lib, args, kwargs, **more):
    return lib.nn.dot_product_attention(*args, **kwargs, **more)


def _case_inputs(name, seed=0):
    """(arguments, keyword arguments, every array among them for the stored values' key)."""
    args, kwargs = _arguments(CASES[name], seed)
    arrays = [*args, *(v for v in kwargs.values() if isinstance(v, np.ndarray))]
    return args, kwargs, arrays


@pytest.mark.parametrize("name", list(CASES))
def test_attention_matches_jax(name):
    args, kwargs, arrays = _case_inputs(name)
    ours = _attention(pto, args, kwargs, return_residual=True)
    assert_close(ours, tuple(expected(f"attention/{name}", arrays)), rtol=2e-5, atol=2e-6)


GRADIENT_CASES = ["gqa", "bias", "causal", "lengths"]


def _weights(q):
    return np.random.default_rng(4).normal(size=q.shape).astype(np.float32)


def _loss(lib, kwargs, w):
    return lambda q, k, v: (_attention(lib, (q, k, v), kwargs) * w).sum()


@pytest.mark.parametrize("name", GRADIENT_CASES)
def test_attention_gradient_matches_jax(name):
    args, kwargs, arrays = _case_inputs(name, seed=3)
    ours = pto.jit(pto.grad(_loss(pto, kwargs, _weights(args[0])), argnums=(0, 1, 2)))(*args)
    assert_close(ours, tuple(expected(f"attention-grad/{name}", arrays)), rtol=1e-4,
                 atol=1e-5)


def _unbatched():
    return _qkv(2, 1, batch=False)


def test_attention_without_batch_dimension_and_in_low_precision():
    q, k, v = _unbatched()
    plain, causal = expected("attention/unbatched", (q, k, v))
    assert_close(nn.dot_product_attention(q, k, v), plain, rtol=2e-5, atol=2e-6)
    # JAX's float16 path asks for a dot precision its CPU jit rejects: compare with float32
    q16, k16, v16 = (x.astype(np.float16) for x in (q, k, v))
    out = nn.dot_product_attention(q16, k16, v16, is_causal=True)
    assert out.dtype == np.float16
    assert_close(out, causal.astype(np.float16), rtol=1e-2, atol=1e-2)


def test_attention_under_vmap_and_jit():
    args, _, arrays = _case_inputs("gqa")
    fn = lambda q, k, v: nn.dot_product_attention(q, k, v, is_causal=True)  # noqa: E731
    (theirs,) = expected("attention/vmap", arrays)
    assert_close(pto.jit(pto.vmap(fn))(*args), theirs, rtol=2e-5, atol=2e-6)


def test_attention_rejects_bad_arguments():
    q, k, v = _qkv(3, 2)
    with pytest.raises(ShapeError, match="multiple"):
        nn.dot_product_attention(q, k, v)
    q, k, v = _qkv(2, 2)
    with pytest.raises(DtypeError, match="value"):
        nn.dot_product_attention(q, k, v.astype(np.float16))
    with pytest.raises(ShapeError, match="query"):
        nn.dot_product_attention(q[..., :4], k, v)
    with pytest.raises(DtypeError, match="mask"):
        nn.dot_product_attention(q, k, v, mask=np.ones((1, 1, T, S), np.int32))
    with pytest.raises(ValueError, match="implementation"):
        nn.dot_product_attention(q, k, v, implementation="flash")
    assert pnp.asarray(nn.dot_product_attention(q, k, v, implementation="xla")).shape == q.shape


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py."""
    for name in CASES:
        args, kwargs, arrays = _case_inputs(name)
        yield (f"attention/{name}", arrays, jax.jit(
            lambda *_, args=args, kwargs=kwargs: list(_attention(jax, args, kwargs,
                                                                 return_residual=True))))
    for name in GRADIENT_CASES:
        args, kwargs, arrays = _case_inputs(name, seed=3)
        grad = jax.jit(jax.grad(_loss(jax, kwargs, _weights(args[0])), argnums=(0, 1, 2)))
        yield f"attention-grad/{name}", arrays, lambda *_, grad=grad, args=args: list(
            grad(*args))
    q, k, v = _unbatched()
    yield "attention/unbatched", (q, k, v), jax.jit(lambda q, k, v: [
        jax.nn.dot_product_attention(q, k, v),
        jax.nn.dot_product_attention(q, k, v, is_causal=True)])
    args, _, arrays = _case_inputs("gqa")
    yield "attention/vmap", arrays, lambda *_, args=args: [jax.jit(jax.vmap(
        lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=True)))(*args)]
