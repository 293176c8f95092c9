"""The automatic planner: every buffer of every plan fits its space (double buffering and
temporaries included), tiles respect the 32-byte row rule and the cube fractal, and the
work spreads over the cores."""
from hypothesis import given, strategies as st

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.tile.ops import tile_loop_p
from ptojax.tile.interpreter import cached_plan
from ptojax.tile.api import tile_ir
from tile_cases import BF16, CASES, F16, F32

TARGETS = [pto.targets.ascend910b, pto.targets.host_cpu]


def _all_tiles(ir):
    for eqn in ir.eqns:
        for v in eqn.outputs:
            if hasattr(v.type, "space") and v.type.space != "GM":
                yield v.type
        if eqn.prim is tile_loop_p:
            yield from _all_tiles(eqn.params["body"])


def _check_kernel(k, target):
    grid = k.params["grid"]
    for body in k.params["bodies"]:
        plan = cached_plan(body, k.params["buffers"], target)
        for space, peak in plan.peak.items():
            assert peak <= target.capacity(space), (k.params["name"], space, peak)
        # live buffers never overlap
        slots = plan.ordered
        for i, a in enumerate(slots):
            for b in slots[i + 1:]:
                if a.space == b.space and a.start <= b.end and b.start <= a.end:
                    assert a.extent <= b.offset or b.extent <= a.offset, (a, b)
        for t in _all_tiles(body):
            item = t.dtype.itemsize
            if t.space == "UB" and t.shape[1] == 1 and t.shape[0] > 1:
                assert t.shape[0] * item % target.row_alignment == 0, t
            elif t.space == "UB":
                assert t.shape[1] * item % target.row_alignment == 0, t
            else:
                f = target.cube_fractal[0]
                assert t.shape[0] % f == 0 and t.shape[1] % f == 0, t
    assert 1 <= grid.blocks <= grid.num_tiles


@given(case=st.sampled_from(sorted(CASES)), m=st.integers(1, 3000), n=st.integers(1, 5000),
       dtype=st.sampled_from([F32, F16, BF16]), target=st.sampled_from(TARGETS))
def test_planner_never_exceeds_capacity(case, m, n, dtype, target):
    fn, shapes, _ = CASES[case]
    args = [pto.ShapeDtypeStruct(s, dtype) for s in shapes(m, n)]
    result = tile_ir(pto.make_ir(fn)(*args), None, target)
    for k in result.kernels:
        _check_kernel(k, target)
    for u in result.unfused:    # only rows longer than a buffer (and their broadcasts) stay out
        assert "does not fit" in u.reason or "broadcast/reshape" in u.reason, u


@given(batch=st.sampled_from([(2,), (3, 2), (16,)]), m=st.integers(1, 1100),
       k=st.integers(1, 1100), n=st.integers(1, 1100), lt=st.booleans(), rt=st.booleans(),
       dtype=st.sampled_from([F32, F16, BF16]), target=st.sampled_from(TARGETS))
def test_batched_matmul_plans_never_exceed_capacity(batch, m, k, n, lt, rt, dtype, target):
    t = lambda x, yes: pnp.swapaxes(x, -1, -2) if yes else x
    args = [pto.ShapeDtypeStruct((*batch, *((k, m) if lt else (m, k))), dtype),
            pto.ShapeDtypeStruct((*batch, *((n, k) if rt else (k, n))), dtype)]
    fn = lambda a, b: pnp.matmul(t(a, lt), t(b, rt)) + 1.0
    result = tile_ir(pto.make_ir(fn)(*args), None, target)
    assert not result.unfused, result.unfused
    (kern,) = result.kernels
    _check_kernel(kern, target)
    rows = kern.params["grid"].tile[0]
    assert m % rows == 0 and rows <= kern.params["cube"][0]     # never straddles elements
    assert kern.params["cube"][0] - rows < 16                  # no whole fractal wasted


@given(m=st.integers(16, 4096), k=st.integers(16, 4096), n=st.integers(16, 4096),
       dtype=st.sampled_from([F32, F16]))
def test_cube_plans_fit_l0_and_l1(m, k, n, dtype):
    args = [pto.ShapeDtypeStruct((m, k), dtype), pto.ShapeDtypeStruct((k, n), dtype)]
    result = tile_ir(pto.make_ir(lambda a, b: pnp.matmul(a, b) * 2)(*args))
    (kern,) = result.kernels
    tm, tk, tn = kern.params["cube"]
    assert tm * tk * dtype.itemsize * 2 <= 64 * 1024 and tk * tn * dtype.itemsize * 2 <= 64 * 1024
    assert tm * tn * 4 <= 128 * 1024
    _check_kernel(kern, pto.targets.ascend910b)


def test_large_inputs_keep_every_core_busy():
    x = pto.ShapeDtypeStruct((4096, 1024), F32)
    (k,) = tile_ir(pto.make_ir(pto.nn.softmax)(x)).kernels
    assert k.params["grid"].blocks == pto.targets.ascend910b.vector_cores
    w = pto.ShapeDtypeStruct((1024, 1024), F16)
    (k,) = tile_ir(pto.make_ir(lambda a, b: a @ b)(pto.ShapeDtypeStruct((2048, 1024), F16),
                                                   w)).kernels
    assert k.params["grid"].blocks == pto.targets.ascend910b.cube_cores


def test_host_cpu_target_plans_with_cache_sizes():
    x = pto.ShapeDtypeStruct((4096, 4096), F32)
    on_npu = tile_ir(pto.make_ir(pto.nn.softmax)(x)).kernels[0]
    on_cpu = tile_ir(pto.make_ir(pto.nn.softmax)(x), None, pto.targets.host_cpu).kernels[0]
    assert on_cpu.params["target"] == "host_cpu"
    assert on_cpu.params["grid"].blocks <= pto.targets.host_cpu.vector_cores
    assert on_npu.params["grid"].tile != on_cpu.params["grid"].tile or \
        on_npu.params["grid"].blocks != on_cpu.params["grid"].blocks
