"""The fused host build of pto.kernel programs (lower/host/fused_kernel.py) against the
kernels' reference semantics and the PTO build (the emitted PTO C++ instruction stream): ragged
regions, K loops with the accumulator carried, row reductions, broadcasts, atomic
accumulation across programs (a derivative kernel), causal masks and flash attention."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
import kernels as KS
from helpers import assert_close
from host_cases import executable_of, host_jit

PATH = Path(__file__).resolve().parents[2] / "examples" / "flash_attention.py"
_spec = importlib.util.spec_from_file_location("flash_attention", PATH)
fa = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fa)


def _layer_norm_grads():
    ln = KS.layer_norm(40, 48, 16)
    return pto.grad(lambda x, g, b: pnp.sum(ln(x, g, b) ** 2), argnums=(0, 1, 2))


def _flash_grads():
    att = fa.flash_attention(1, 64, 16, True, 16, 16, forward_blocks=(32, 16))
    return pto.grad(lambda q, k, v: pnp.sum(att(q, k, v) ** 2), argnums=(0, 1, 2))


CASES = {
    "matmul_bias_relu_ragged": (lambda: KS.matmul_bias_relu(40, 48, 32, 16, 32),
                                lambda: (KS.rand(40, 32), KS.rand(32, 48, seed=1),
                                         KS.rand(1, 48, seed=2))),
    "matmul_k_loop": (lambda: KS.matmul_k_loop(32, 32, 64, 16, 16, 16),
                      lambda: (KS.rand(32, 64), KS.rand(64, 32, seed=1))),
    "softmax_ragged": (lambda: KS.softmax_rows(40, 48, 16), lambda: (KS.rand(40, 48),)),
    "layer_norm_grads": (_layer_norm_grads,
                         lambda: (KS.rand(40, 48), KS.rand(1, 48, seed=1),
                                  KS.rand(1, 48, seed=2))),
    "flash_attention_grads": (_flash_grads,
                              lambda: tuple(KS.rand(1, 64, 16, seed=s) * 0.5
                                            for s in range(3))),
}


@pytest.mark.parametrize("name", list(CASES))
def test_fused_build_of_a_kernel_matches_the_pto_build_and_the_reference(name):
    make, make_args = CASES[name]
    fn, args = make(), make_args()
    fused = host_jit(fn, kernels="fused")
    got = pto.tree_util.tree_leaves(fused(*args))
    program = executable_of(fused, *args).program
    assert program.kernels == "fused" and program.fused_error is None
    assert "pto.kernel" in program.source
    expected = pto.tree_util.tree_leaves(fn(*args))          # the reference semantics
    for g, e in zip(got, expected):
        assert_close(g, np.asarray(e), scale=8)


def test_flash_attention_fused_build_matches_the_pto_build():
    fn, args = _flash_grads(), CASES["flash_attention_grads"][1]()
    for g, p in zip(host_jit(fn, kernels="fused")(*args), host_jit(fn, kernels="pto")(*args)):
        assert_close(g, p, scale=8)


def test_a_loaded_window_is_copied_when_the_kernel_stores_over_it_while_it_lives():
    """o is loaded, then o's window is stored, then the loaded value is used again: the
    fused build must not read the window after the store."""
    K = pto.kernel

    @K(out_shape=pto.ShapeDtypeStruct((16, 32), np.float32), grid=(1,),
       in_specs=[pto.BlockSpec((16, 32), lambda i: (0, 0))],
       out_specs=pto.BlockSpec((16, 32), lambda i: (0, 0)))
    def twice(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2.0
        y = o_ref[...]
        o_ref[...] = y + 1.0
        o_ref[...] = y * 3.0 + o_ref[...]
    x = KS.rand(16, 32)
    fused = host_jit(twice, kernels="fused")
    assert_close(fused(x), np.asarray(twice(x)), scale=4)
    assert executable_of(fused, x).program.kernels == "fused"
