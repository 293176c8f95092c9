"""Compiled host programs (``pto.jit``'s cpu backend, ``targets.host_jit``) run float
convolutions — forward and both gradients, bfloat16 ones accumulating in float32 — as
tensor-level equations through the numpy executor's im2col + BLAS (``ops/im2col.py``), between
their fused kernels, as they run float32 matmuls: against JAX and the numpy executor."""
import ml_dtypes
import numpy as np

import ptojax as pto
from ptojax import lax
from ptojax.ops import im2col
from host_cases import executable_of, host_jit, kernels_of

BF16 = np.dtype(ml_dtypes.bfloat16)
NHWC = ("NHWC", "HWIO", "NHWC")


def _loss(x, w, g, lax_, relu):
    y = lax_.conv_general_dilated(x, w, (2, 1), "SAME", dimension_numbers=NHWC,
                                  preferred_element_type=np.float32)
    return (relu(y) * g).sum()


def _operands():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 9, 8, 3)).astype(BF16)
    w = rng.normal(size=(3, 3, 3, 8)).astype(BF16)
    g = rng.normal(size=(4, 5, 8, 8)).astype(np.float32)
    return x, w, g


def test_compiled_program_runs_bf16_conv_and_its_gradients_in_blas(jax, monkeypatch):
    x, w, g = _operands()
    step = host_jit(pto.grad(lambda a, b, c: _loss(a, b, c, lax, pto.nn.relu), argnums=(0, 1)))
    step(x, w, g)
    program = executable_of(step, x, w, g)
    assert program.status == "compiled"
    assert not any("conv" in k.params["name"] for k in kernels_of(step, x, w, g))
    convs = [e for e in program.program.executable.closed.ir.eqns
             if e.prim.name == "conv_general_dilated"]
    assert len(convs) == 3                      # forward, input and filter gradients

    products = []

    def counted(a, b, *rest, **kw):
        products.append((a.dtype, b.dtype))
        return matmul(a, b, *rest, **kw)
    matmul = im2col.matmul
    monkeypatch.setattr(im2col, "matmul", counted)
    dx, dw = program.program.run(x, w, g)
    assert len(products) >= 3 and all(d == (np.float32, np.float32) for d in products)

    numpy_dx, numpy_dw = program.numpy.run(x, w, g)
    np.testing.assert_array_equal(np.asarray(dx), np.asarray(numpy_dx))
    np.testing.assert_array_equal(np.asarray(dw), np.asarray(numpy_dw))

    jax_dx, jax_dw = jax.jit(jax.grad(lambda a, b: _loss(a, b, g, jax.lax, jax.nn.relu),
                              argnums=(0, 1)))(x, w)
    for got, want in ((dx, jax_dx), (dw, jax_dw)):
        got, want = np.asarray(got), np.asarray(want)
        assert got.dtype == want.dtype == BF16
        want = want.astype(np.float32)
        np.testing.assert_allclose(got.astype(np.float32), want, rtol=2e-2,
                                   atol=2e-2 * np.abs(want).max())
