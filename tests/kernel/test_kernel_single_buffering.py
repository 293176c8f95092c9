"""A pto.kernel whose double-buffered staging tiles overflow a buffer keeps one copy of the
largest ones instead of failing (its pipe flags come from the planned bytes, so a load then
waits for the previous step's last read); pto.tile's kernels keep two copies."""
import numpy as np
import pytest

import ptojax as pto
from helpers import assert_close
from host_cases import host_jit
from ptojax.errors import TileError
from ptojax.kernel import flash as kf
from ptojax.tile.memory import _plan_memory, plan_memory

T910 = pto.targets.ascend910b


def test_overflowing_staging_is_single_buffered_and_the_host_build_agrees():
    # the causal dQ kernel at D=64 in 64x64 blocks: two copies of its staging overflow
    kernel = kf.dq_kernel(kf.FlashShape(1, 128, 128, 64, 1 / 8, True, 64, 64), T910)
    rng = np.random.default_rng(0)
    q, k, v, o, do = (rng.standard_normal((1, 128, 64)).astype(np.float32) for _ in range(5))
    lse = rng.standard_normal((1, 128)).astype(np.float32) + 4
    args = (q, k, v, o, do, lse)
    (eqn,) = [e for e in pto.jit(kernel).lower(*args).tile_ir.ir.eqns
              if e.params.get("kind") == "kernel"]
    body = eqn.params["bodies"][0]
    assert plan_memory(body, 2, T910).overflow(T910) is not None
    single = plan_memory(body, 2, T910, single_fallback=True)
    assert single.overflow(T910) is None
    assert any(s.staging and s.copies == 1 for s in single.ordered)
    expected = kernel(*args)                           # the reference semantics
    for backend in (pto.tile(kernel), host_jit(kernel, check_sync=True, kernels="pto")):
        assert_close(backend(*args), expected, scale=8)


def test_a_kernel_that_overflows_single_buffered_still_names_the_buffer():
    # 256x128 blocks: even with each vector sub-block holding half the rows (the 128x128
    # blocks that overflowed one UB now fit that way), the scores overflow the L0C
    f = kf.FlashShape(1, 256, 256, 64, 1 / 8, False, 256, 128)
    x = pto.ShapeDtypeStruct((1, 256, 64), np.float32)
    with pytest.raises(TileError, match="buffer L0C needs 196,608 bytes but .* even with "
                       "every staging tile single-buffered"):
        pto.jit(kf.forward_kernel(f, T910)).lower(x, x, x).cost()


@pto.kernel(out_shape=pto.ShapeDtypeStruct((64, 64), np.float32), grid=(2,),
            in_specs=[pto.BlockSpec((5, 64, 64), lambda i: (0, 0, 0))] * 2,
            out_specs=pto.BlockSpec((64, 64), lambda i: (0, 0)))
def five_products(a_ref, b_ref, o_ref):
    """Straight-line code: five products of distinct 64x64 operands, one after another."""
    total = pto.kernel.dot(a_ref[0, :, :], b_ref[0, :, :])
    for n in range(1, 5):
        total = total + pto.kernel.dot(a_ref[n, :, :], b_ref[n, :, :])
    o_ref[...] = total


def test_straight_line_operands_live_from_their_load_to_their_last_use():
    """Kept for the whole kernel, five 16 KiB operands overflow the 64 KiB L0A even single-
    buffered; live only from their load to their matmul they fit (the pipe flags, derived
    from the planned bytes, order the reuse: the PTO build checks every ordering)."""
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((5, 64, 64)).astype(np.float32) for _ in range(2))
    (eqn,) = [e for e in pto.jit(five_products).lower(a, b).tile_ir.ir.eqns
              if e.params.get("kind") == "kernel"]
    plan = plan_memory(eqn.params["bodies"][0], 2, T910, single_fallback=True)
    assert plan.overflow(T910) is None
    l0a = [s for s in plan.ordered if s.space == "L0A"]
    assert len(l0a) >= 5 and max(s.extent for s in l0a) <= 3 * 16384
    expected = np.einsum("nij,njk->ik", a, b)
    for backend in (pto.tile(five_products), host_jit(five_products, check_sync=True,
                                                      kernels="pto")):
        assert_close(backend(a, b), expected, scale=16)


@pto.kernel(out_shape=pto.ShapeDtypeStruct((128, 16), np.float32), grid=(2,),
            in_specs=[pto.BlockSpec((5, 64, 64), lambda i: (0, i, 0)),
                      pto.BlockSpec((5, 2 * 64, 16), lambda i: (0, 0, 0))],
            out_specs=pto.BlockSpec((64, 16), lambda i: (i, 0)))
def five_products_a_step(a_ref, b_ref, o_ref):
    """A loop whose step multiplies five distinct 64x64 operands."""
    def step(j, acc):
        for n in range(5):
            acc = acc + pto.kernel.dot(a_ref[n, :, :], b_ref[n, pto.kernel.ds(j * 64, 64), :])
        return acc * 0.5
    o_ref[...] = pto.kernel.fori(0, 2, step, np.zeros((64, 16), np.float32))


def test_a_loop_steps_operands_live_from_their_load_to_their_last_use():
    """Reserved for the whole loop, five 16 KiB operands overflow L0A even single-buffered;
    live within the step from their load to their matmul they fit, the pipe flags ordering
    the reuse across steps and programs (the PTO build checks every ordering)."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((5, 128, 64)).astype(np.float32)
    b = rng.standard_normal((5, 128, 16)).astype(np.float32)
    (eqn,) = [e for e in pto.jit(five_products_a_step).lower(a, b).tile_ir.ir.eqns
              if e.params.get("kind") == "kernel"]
    body = eqn.params["bodies"][0]
    assert _plan_memory(body, 2, T910, True, 0, "top").overflow(T910) is not None
    assert plan_memory(body, 2, T910, single_fallback=True).overflow(T910) is None
    expected = np.zeros((128, 16), np.float32)
    for i in range(2):
        acc = np.zeros((64, 16), np.float32)
        for j in range(2):
            acc = (acc + sum(a[n, 64 * i:64 * i + 64] @ b[n, 64 * j:64 * j + 64]
                             for n in range(5))) * 0.5
        expected[64 * i:64 * i + 64] = acc
    for backend in (pto.tile(five_products_a_step),
                    host_jit(five_products_a_step, check_sync=True, kernels="pto")):
        assert_close(backend(a, b), expected, scale=16)
