"""Block-scaled matmuls (``pto.nn.scaled_matmul``, ``scaled_dot_general``,
``get_scaled_dot_general_config``) against JAX's.

JAX runs the block-scaled product only through cuDNN: on CPU its ``scaled_matmul`` raises
NotImplementedError. So JAX's side here is its own code (shape checks, quantization, the
custom VJP, shape normalization) with that one kernel replaced by the product its docstring
defines: each operand times its repeated block scales, contracted in float32."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.nn.block_scaling import quantize

# (B, M, N, K, K_s, data dtype, scale dtype, preferred_element_type)
MATMUL_CASES = [
    (1, 1, 1, 3, 1, "float32", "float32", "float32"),
    (2, 4, 3, 64, 2, "float8_e4m3fn", "float8_e8m0fnu", "float32"),
    (1, 8, 5, 64, 2, "float8_e5m2", "float8_e8m0fnu", "bfloat16"),
    (2, 3, 4, 32, 2, "float4_e2m1fn", "float8_e4m3fn", "float32"),
    (1, 2, 2, 48, 3, "float4_e2m1fn", "float8_e4m3fn", "float16"),
]

# (lhs shape, rhs shape, dimension_numbers, mode)
DOT_CASES = [
    ((2, 32, 64), (2, 32, 64), (((2,), (2,)), ((0,), (0,))), "mxfp8"),
    ((64, 32), (32, 64), (((0,), (1,)), ((), ())), "mxfp8"),
    ((2, 64, 32), (32, 2, 64), (((1,), (2,)), ((0,), (1,))), "mxfp8"),
    ((2, 16, 32), (2, 16, 32), (((2,), (2,)), ((0,), (0,))), "nvfp4"),
    ((32, 16), (16, 32), (((1,), (0,)), ((), ())), "nvfp4"),
]


def _dequantized_matmul(jnp, jax):
    """The product JAX's scaled_matmul documents, in JAX (its CPU stand-in for cuDNN)."""
    def run(a, b, a_scales, b_scales, preferred_element_type=np.float32):
        def dequantized(x, scales):
            block = x.shape[-1] // scales.shape[-1]
            return x.astype(jnp.float32) * jnp.repeat(scales.astype(jnp.float32), block, -1)
        out = jnp.einsum("bmk,bnk->bmn", dequantized(a, a_scales), dequantized(b, b_scales),
                         precision=jax.lax.Precision.HIGHEST)
        return out.astype(preferred_element_type)
    return run


@pytest.fixture
def jax_kernel(jax, jnp, monkeypatch):
    """JAX's block-scaled functions with the cuDNN kernel replaced by its definition."""
    from jax._src.cudnn import scaled_matmul_stablehlo
    from jax._src.nn import functions
    kernel = _dequantized_matmul(jnp, jax)
    monkeypatch.setattr(functions, "cudnn_scaled_matmul", kernel)
    monkeypatch.setattr(scaled_matmul_stablehlo, "scaled_matmul_wrapper", kernel)
    return scaled_matmul_stablehlo


def _operands(rng, case):
    b, m, n, k, k_s, data, scale, _ = case
    lhs = (rng.normal(size=(b, m, k)) * 2).astype(data)
    rhs = (rng.normal(size=(b, n, k)) * 2).astype(data)
    lhs_scales = np.exp2(rng.integers(-3, 3, size=(b, m, k_s))).astype(scale)
    rhs_scales = np.exp2(rng.integers(-3, 3, size=(b, n, k_s))).astype(scale)
    return lhs, rhs, lhs_scales, rhs_scales


def _close(ours, theirs, rtol=1e-5):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours.astype(np.float32), theirs.astype(np.float32), rtol=rtol,
                               atol=rtol * max(1.0, float(np.abs(theirs.astype(np.float32)).max())))


@pytest.mark.parametrize("case", MATMUL_CASES, ids=str)
def test_scaled_matmul_matches_jax(jax, jnp, jax_kernel, case):
    args = _operands(np.random.default_rng(0), case)
    want = jax.nn.scaled_matmul(*args, preferred_element_type=case[-1])
    rtol = 1e-5 if case[-1] == "float32" else 1e-2
    _close(pto.nn.scaled_matmul(*args, preferred_element_type=case[-1]), want, rtol)
    jitted = pto.jit(pto.nn.scaled_matmul, static_argnames="preferred_element_type")
    _close(jitted(*args, preferred_element_type=case[-1]), want, rtol)


def test_scaled_matmul_vmaps_over_a_leading_axis(jax, jnp, jax_kernel):
    args = _operands(np.random.default_rng(1), MATMUL_CASES[1])
    stacked = [np.stack([a, a]) for a in args]
    ours = pto.vmap(pto.nn.scaled_matmul)(*stacked)
    want = jax.vmap(jax.nn.scaled_matmul)(*stacked)
    _close(ours, want)


@pytest.mark.parametrize("shapes", [
    ((1, 2, 4), (1, 3, 8), (1, 2, 1), (1, 3, 1)),     # K differs
    ((1, 2, 4), (2, 3, 4), (1, 2, 1), (2, 3, 1)),     # B differs
    ((1, 2, 4), (1, 3, 4), (1, 2, 1), (1, 3, 2)),     # scale blocks differ
    ((1, 2, 4), (1, 3, 4), (1, 1, 1), (1, 3, 1)),     # scales' M
    ((2, 4), (3, 4), (2, 1), (3, 1)),                 # not 3-D
], ids=str)
def test_scaled_matmul_shape_errors_match_jax(jax, jnp, shapes):
    args = [np.ones(s, np.float32) for s in shapes]
    with pytest.raises(ValueError) as theirs:
        jax.nn.scaled_matmul(*args)
    with pytest.raises(ValueError) as ours:
        pto.nn.scaled_matmul(*args)
    assert str(ours.value).split(",")[0] == str(theirs.value).split(",")[0]


@pytest.mark.parametrize("mode", ["mxfp8", "nvfp4"])
@pytest.mark.parametrize("in_dtype", ["float32", "bfloat16"])
def test_quantize_matches_jax_exactly(jax, jnp, jax_kernel, mode, in_dtype):
    rng = np.random.default_rng(2)
    x = (rng.normal(size=(2, 3, 64)) * np.exp2(rng.integers(-20, 20, size=(2, 3, 1))))
    x[0, 0, :16] = 0.0          # an all-zero nvfp4 block (mxfp8: below)
    x = x.astype(in_dtype)
    scale = np.asarray([0.25], np.float32)
    config = jax.nn.get_scaled_dot_general_config(
        mode, jnp.asarray(scale) if mode == "nvfp4" else None)
    theirs = jax.jit(lambda v: jax_kernel.quantize(v, config))(jnp.asarray(x))
    ours = quantize(pnp.asarray(x), pto.nn.get_scaled_dot_general_config(
        mode, pnp.asarray(scale) if mode == "nvfp4" else None))
    for o, t in zip(ours, theirs):
        o, t = np.asarray(o), np.asarray(t)
        assert o.dtype == t.dtype and o.shape == t.shape
        # values (the zero block's NaN/0 quotient becomes -0 in XLA's float4, +0 in ours)
        np.testing.assert_array_equal(o.astype(np.float32), t.astype(np.float32))


def test_an_all_zero_mxfp8_block_quantizes_to_zeros():
    """Its scale is the smallest e8m0 value, 2^-127, and 0 / 2^-127 is 0. (JAX divides by
    the same float32 subnormal, which XLA:CPU flushes to zero: its values there are NaN.)"""
    x = np.zeros((1, 2, 32), np.float32)
    x[0, 1] = np.linspace(-1, 1, 32)
    values, scales = quantize(pnp.asarray(x), pto.nn.get_scaled_dot_general_config("mxfp8"))
    assert not np.asarray(values[0, 0]).astype(np.float32).any()
    assert np.asarray(scales).astype(np.float32)[0, 0, 0] == 2.0 ** -127


@pytest.mark.parametrize("mode", ["mxfp8", "nvfp4"])
def test_configs_match_jax(jax, jnp, mode):
    theirs = jax.nn.get_scaled_dot_general_config(mode)
    ours = pto.nn.get_scaled_dot_general_config(mode)
    for field in ("mode", "block_size", "data_type", "scale_type", "infer_only"):
        assert getattr(ours, field) == getattr(theirs, field), field
    if mode == "nvfp4":
        np.testing.assert_array_equal(ours.global_scale, theirs.global_scale)
    else:
        assert ours.global_scale is None
    with pytest.raises(ValueError):
        jax.nn.get_scaled_dot_general_config("int8")
    with pytest.raises(ValueError):
        pto.nn.get_scaled_dot_general_config("int8")


def _dot_operands(rng, case):
    lhs_shape, rhs_shape, _, _ = case
    return (rng.normal(size=lhs_shape).astype(np.float32),
            rng.normal(size=rhs_shape).astype(np.float32))


def _configs(api, jnp_like, mode):
    scale = jnp_like.asarray([0.5], jnp_like.float32) if mode == "nvfp4" else None
    return [api.nn.get_scaled_dot_general_config(mode, scale)] * 3


@pytest.mark.parametrize("case", DOT_CASES, ids=str)
def test_scaled_dot_general_and_its_gradient_match_jax(jax, jnp, jax_kernel, case):
    lhs, rhs = _dot_operands(np.random.default_rng(3), case)
    numbers, mode = case[2], case[3]
    theirs_cfg, ours_cfg = _configs(jax, jnp, mode), _configs(pto, pnp, mode)

    def loss(api, configs):
        def f(x, y):
            out = api.nn.scaled_dot_general(x, y, numbers, configs=configs)
            return (out * np.cos(np.arange(out.size)).reshape(out.shape)).sum()
        return f

    lhs_j, rhs_j = jnp.asarray(lhs), jnp.asarray(rhs)   # JAX's wrapper reads .aval
    want = jax.jit(lambda x, y: jax.nn.scaled_dot_general(x, y, numbers,
                                                          configs=theirs_cfg))(lhs_j, rhs_j)
    _close(pto.nn.scaled_dot_general(lhs, rhs, numbers, configs=ours_cfg), want)
    want_grads = jax.jit(jax.grad(loss(jax, theirs_cfg), argnums=(0, 1)))(lhs_j, rhs_j)
    ours_grads = pto.jit(pto.grad(loss(pto, ours_cfg), argnums=(0, 1)))(lhs, rhs)
    for o, t in zip(ours_grads, want_grads):
        _close(o, t, rtol=1e-4)


def test_scaled_dot_general_without_configs_is_dot_general(jax, jnp):
    lhs, rhs = _dot_operands(np.random.default_rng(4), DOT_CASES[1])
    numbers = DOT_CASES[1][2]
    _close(pto.nn.scaled_dot_general(lhs, rhs, numbers),
           jax.nn.scaled_dot_general(lhs, rhs, numbers))


def test_scaled_dot_general_rejects_other_output_dtypes(jax, jnp, jax_kernel):
    lhs, rhs = _dot_operands(np.random.default_rng(5), DOT_CASES[0])
    numbers = DOT_CASES[0][2]
    with pytest.raises(TypeError):
        jax.nn.scaled_dot_general(lhs, rhs, numbers, preferred_element_type=jnp.int32,
                                  configs=_configs(jax, jnp, "mxfp8"))
    with pytest.raises(TypeError):
        pto.nn.scaled_dot_general(lhs, rhs, numbers, preferred_element_type=pnp.int32,
                                  configs=_configs(pto, pnp, "mxfp8"))


def test_gradient_of_an_unquantizable_cotangent_is_an_error_only_when_taken():
    """JAX's backward pass quantizes the cotangent along the output's other axes: a size that
    is not a multiple of the block fails there, not in the forward pass."""
    rng = np.random.default_rng(6)
    x, y = rng.normal(size=(1, 8, 64)).astype(np.float32), rng.normal(size=(1, 4, 64))
    numbers, configs = (((2,), (2,)), ((0,), (0,))), _configs(pto, pnp, "mxfp8")
    assert pto.nn.scaled_dot_general(x, y.astype(np.float32), numbers,
                                     configs=configs).shape == (1, 8, 4)
    with pytest.raises(ValueError, match="multiple of the block size 32"):
        pto.grad(lambda a: pto.nn.scaled_dot_general(a, y.astype(np.float32), numbers,
                                                     configs=configs).sum())(x)


def test_vmap_of_scaled_dot_general_and_its_gradient_match_jax(jax, jnp, jax_kernel):
    rng = np.random.default_rng(7)
    x, y = (rng.normal(size=(3, 32, 64)).astype(np.float32) for _ in range(2))
    numbers = (((1,), (1,)), ((), ()))
    theirs_cfg, ours_cfg = _configs(jax, jnp, "mxfp8"), _configs(pto, pnp, "mxfp8")

    def fn(api, configs):
        return lambda a, b: api.nn.scaled_dot_general(a, b, numbers, configs=configs)
    xj, yj = jnp.asarray(x), jnp.asarray(y)
    _close(pto.vmap(fn(pto, ours_cfg))(x, y), jax.jit(jax.vmap(fn(jax, theirs_cfg)))(xj, yj))
    grads = pto.vmap(pto.grad(lambda a, b: fn(pto, ours_cfg)(a, b).sum()))(x, y)
    want = jax.jit(jax.vmap(jax.grad(lambda a, b: fn(jax, theirs_cfg)(a, b).sum())))(xj, yj)
    _close(grads, want)
