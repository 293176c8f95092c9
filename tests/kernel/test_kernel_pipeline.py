"""pto.kernel end to end: the reference semantics (eager), jit, the numpy tile interpreter
(pto.tile), the host build, PTO-AS / PTO C++ text (structurally checked: no Ascend hardware
here), the cost model and check_numerics — on matmul with a fused epilogue, a K loop, row
softmax and layer norm."""
import numpy as np
import pytest

import ptojax as pto
from helpers import assert_close
from host_cases import host_jit
from kernels import layer_norm, matmul_bias_relu, matmul_k_loop, rand, softmax_rows
from pto_checks import all_checks
from ptojax.tile.kernel import tile_kernel_p

TARGET = pto.targets.ascend910b


def _numpy_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _numpy_layer_norm(x, g, b, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * g + b


# name: (kernel, args, numpy reference)
CASES = {
    "matmul_bias_relu": (matmul_bias_relu(96, 80, 64, 32, 48),     # ragged last column block
                         [rand(96, 64), rand(64, 80, seed=1), rand(1, 80, seed=2)],
                         lambda a, b, c: np.maximum(a @ b + c, 0)),
    "matmul_k_loop": (matmul_k_loop(64, 64, 96, 32, 32, 32), [rand(64, 96), rand(96, 64, seed=1)],
                      lambda a, b: a @ b),
    "softmax_rows": (softmax_rows(100, 72, 32), [rand(100, 72)], _numpy_softmax),
    "layer_norm": (layer_norm(100, 72, 32), [rand(100, 72), rand(1, 72, seed=1),
                                             rand(1, 72, seed=2)], _numpy_layer_norm),
}


def _every_kernel(*args):
    """Every case's kernel, side by side in one program (``args``: the cases' in turn)."""
    outs, i = {}, 0
    for name in sorted(CASES):
        kernel, case_args, _ = CASES[name]
        outs[name] = kernel(*args[i:i + len(case_args)])
        i += len(case_args)
    return outs


@pytest.fixture(scope="module")
def host_build():
    """(jitted, outputs by case) of the cases' kernels as one program on the host build: one
    library, not one per case (each g++ run parses the host headers again)."""
    jitted = host_jit(_every_kernel)
    return jitted, jitted(*[a for name in sorted(CASES) for a in CASES[name][1]])


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_backend_computes_the_kernel(name, host_build):
    kernel, args, ref = CASES[name]
    expected = ref(*args)
    assert_close(kernel(*args), expected, scale=4)
    assert_close(pto.jit(kernel)(*args), expected, scale=4)
    tiled = pto.tile(kernel)
    assert_close(tiled(*args), expected, scale=4)                  # the tile interpreter
    assert_close(host_build[1][name], expected, scale=8)           # the host build


def test_kernels_agree_with_jax(jnp, jax):
    kernel, args, _ = CASES["layer_norm"]
    x, g, b = args
    mean = jnp.mean(x, -1, keepdims=True)
    expected = (x - mean) * jax.lax.rsqrt(jnp.var(x, -1, keepdims=True) + 1e-5) * g + b
    assert_close(kernel(*args), np.asarray(expected, np.float32), scale=4)
    kernel, args, _ = CASES["softmax_rows"]
    assert_close(kernel(*args), np.asarray(jax.nn.softmax(args[0], axis=-1)), scale=4)


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_lowers_to_one_tile_kernel_with_checked_text(name):
    kernel, args, _ = CASES[name]
    lo = pto.jit(kernel).lower(*args)
    (eqn,) = lo.tile_ir.ir.eqns
    assert eqn.prim is tile_kernel_p and eqn.params["kind"] == "kernel"
    cpp, pto_as = str(lo.as_text("pto-cpp")), str(lo.as_text("pto"))
    all_checks(cpp, "cpp", TARGET)
    all_checks(pto_as, "pto", TARGET)
    assert f"func.func @{name}" in pto_as and "__global__ AICORE void" in cpp


def test_cube_and_vector_code_is_guarded_per_core():
    kernel, args, _ = CASES["matmul_bias_relu"]
    lo = pto.jit(kernel).lower(*args)
    cpp, pto_as = str(lo.as_text("pto-cpp")), str(lo.as_text("pto"))
    assert "#if defined(__DAV_CUBE__)" in cpp and "#if defined(__DAV_VEC__)" in cpp
    assert "TMATMUL(" in cpp and "ffts_cross_core_sync" in cpp and "wait_flag_dev" in cpp
    assert "pto.section.cube" in pto_as and "pto.section.vector" in pto_as
    assert "pto.tmatmul" in pto_as



def _guarded(text, guard, vector_section):
    """(line, inside a sub-block-0 guard) of each line; ``vector_section(line, in_vector)``
    says whether the vector core's code goes on after ``line``."""
    out, vec, guard_depth, depth = [], False, None, 0
    for line in text.splitlines():
        vec = vector_section(line, vec)
        if guard in line:
            guard_depth = depth
        depth += line.count("{") - line.count("}")
        if guard_depth is not None and depth <= guard_depth:
            guard_depth = None
        out.append((line.strip(), vec, guard_depth is not None))
    return out


def _cpp_vector(line, vec):
    if line.startswith("#if defined("):
        return "__DAV_VEC__" in line
    return False if line.startswith("#endif") else vec


def _pto_vector(line, vec):
    if "pto.section." in line:
        return "pto.section.vector" in line
    return vec


def test_both_vector_sub_blocks_run_the_cross_core_flags():
    """An A2 mixed kernel starts both AIVs of each AIC, and the cube's counter of a mode-2
    flag rises only once both have set it (CANN CrossCoreSetFlag): the vector side computes
    on sub-block 0, but every cross-core set and wait is outside its guard."""
    kernel, args, _ = CASES["matmul_bias_relu"]
    lo = pto.jit(kernel).lower(*args)
    for text, guard, vector, syncs, work in (
            (lo.as_text("pto-cpp"), "if (get_subblockid() == 0)", _cpp_vector,
             ("ffts_cross_core_sync", "wait_flag_dev"), ("TLOAD(", "TSTORE(")),
            (lo.as_text("pto"), "scf.if %sb0", _pto_vector, ("pto.sync.",),
             ("pto.tload", "pto.tstore"))):
        lines = [(t, g) for t, vec, g in _guarded(str(text), guard, vector) if vec]
        sync_guarded = [g for t, g in lines if t.startswith(syncs)]
        work_guarded = [g for t, g in lines if t.startswith(work)]
        assert sync_guarded and not any(sync_guarded)
        assert work_guarded and all(work_guarded)

def test_k_loop_accumulates_in_l0c():
    """acc + K.dot(...) from zeros: the first step before the loop (TMATMUL), the others
    accumulate into the carried L0C tile (TMATMUL_ACC) — no vector add, no workspace."""
    kernel, args, _ = CASES["matmul_k_loop"]
    lo = pto.jit(kernel).lower(*args)
    cpp = str(lo.as_text("pto-cpp"))
    loop = cpp[cpp.index("for (int32_t k = 1; k < 3; ++k)"):]
    assert "TMATMUL_ACC(" in loop and "TADD(" not in cpp and "ffts_cross_core_sync" not in cpp
    assert "scf.for %k" in str(lo.as_text("pto"))
    (row,) = lo.cost()
    a, b = args
    assert row.bytes == a.nbytes * 2 + b.nbytes * 2 + 64 * 64 * 4     # each block read once


def test_cost_counts_the_kernel_traffic_and_flops():
    kernel, args, _ = CASES["matmul_bias_relu"]
    (row,) = pto.jit(kernel).lower(*args).cost()
    assert row.kind == "kernel" and row.tiles == 6
    assert row.flops >= 2 * 96 * 80 * 64           # the matmul, plus the epilogue
    a, b, bias = args
    assert row.bytes >= a.nbytes + b.nbytes + 96 * 80 * 4
    assert row.seconds > 0


def test_cost_of_a_loop_with_run_time_bounds_counts_each_programs_trips():
    n, bk = 64, 16
    K = pto.kernel

    @K(out_shape=pto.ShapeDtypeStruct((n, 16), np.float32), grid=(n // 16,),
       in_specs=[pto.BlockSpec((n, 16), lambda i: (0, 0))],
       out_specs=pto.BlockSpec((16, 16), lambda i: (i, 0)))
    def prefix_sums(x_ref, o_ref):
        i = K.program_id(0)
        total = K.fori(0, i + 1, lambda s, acc: acc + x_ref[K.ds(s * bk, bk), :],
                       np.zeros((16, 16), np.float32))
        o_ref[...] = total
    x = rand(n, 16)
    expected = np.cumsum(x.reshape(4, 16, 16), axis=0).reshape(n, 16)
    assert_close(prefix_sums(x), expected, scale=4)
    assert_close(pto.tile(prefix_sums)(x), expected, scale=4)
    (row,) = pto.jit(prefix_sums).lower(x).cost()
    loads = (1 + 2 + 3 + 4) * 16 * 16 * 4               # program i loads i + 1 blocks
    assert row.bytes == loads + n * 16 * 4


def test_check_numerics_runs_the_kernels_through_the_pipeline(host_build):
    """(every case's kernel in one program: its host kernels stage is the library that
    ``host_build`` built)"""
    report = pto.tools.check_numerics(_every_kernel,
                                      *[a for name in sorted(CASES) for a in CASES[name][1]])
    assert report.ok, str(report)


def test_casts_and_a_half_precision_matmul_with_a_gelu_epilogue():
    K = pto.kernel

    @K(out_shape=pto.ShapeDtypeStruct((64, 64), np.float16), grid=(2, 2),
       in_specs=[pto.BlockSpec((32, 64), lambda i, j: (i, 0)),
                 pto.BlockSpec((64, 32), lambda i, j: (0, j))],
       out_specs=pto.BlockSpec((32, 32), lambda i, j: (i, j)))
    def matmul_gelu_f16(a_ref, b_ref, o_ref):
        acc = K.dot(a_ref[...].astype(np.float16), b_ref[...].astype(np.float16))
        o_ref[...] = pto.nn.gelu(acc).astype(np.float16)
    a, b = rand(64, 64), rand(64, 64, seed=1)
    a16, b16 = a.astype(np.float16).astype(np.float32), b.astype(np.float16).astype(np.float32)
    expected = np.asarray(pto.nn.gelu(a16 @ b16)).astype(np.float16)
    assert_close(matmul_gelu_f16(a, b), expected, scale=4)
    assert_close(pto.tile(matmul_gelu_f16)(a, b), expected, scale=4)
    assert_close(host_jit(matmul_gelu_f16)(a, b), expected, scale=8)
    assert "half" in str(pto.jit(matmul_gelu_f16).lower(a, b).as_text("pto-cpp"))


def test_profile_records_the_kernels_with_their_cost_estimates(host_build):
    jitted, _ = host_build
    args = [a for name in sorted(CASES) for a in CASES[name][1]]
    with pto.profile() as p:
        jitted(*args)
    rows = [r for r in p.report().rows if r["kind"] == "kernel"]
    assert sorted(r["name"] for r in rows) == sorted(CASES)
    assert all(r["calls"] == 1 and r["estimate_us"] > 0 for r in rows)


def _two_carries(n=64, b=16, d=32):
    """A static-bound loop whose ``y`` stays in L0C (its first step runs before the loop)
    while ``x`` is a UB carry fed by a cube -> vector workspace."""
    K = pto.kernel
    whole, block = pto.BlockSpec((n, d), lambda i: (0, 0)), pto.BlockSpec((b, d), lambda i: (i, 0))
    out = pto.ShapeDtypeStruct((n, d), np.float32)

    @K(out_shape=(out, out), grid=(n // b,), in_specs=[whole, whole], out_specs=[block, block])
    def two_carries(a_ref, c_ref, x_ref, y_ref):
        kb = c_ref[K.ds(K.program_id(0) * b, b), :]

        def body(i, carry):
            x, y = carry
            ai = a_ref[K.ds(i * b, b), :]
            p = pto.numpy.exp(K.dot(ai, kb, trans_b=True) * 0.01)
            return x + K.dot(p * 2.0, ai, trans_a=True) * 0.5, y + K.dot(p, ai, trans_a=True)
        zeros = pto.numpy.zeros((b, d), np.float32)
        x_ref[...], y_ref[...] = K.fori(0, n // b, body, (zeros, zeros))
    return two_carries


def test_a_carry_entering_a_loop_keeps_its_own_buffer_in_the_pto_build():
    """The first step's ``x`` came from a double-buffered workspace load and was updated in
    place; as a carry it needs a single-copy buffer, or the loop body (copies picked by the
    step) and the code before it (by the program) update different copies."""
    kernel = _two_carries()
    a, c = rand(64, 32), rand(64, 32, seed=1)
    expected = kernel(a, c)
    got = host_jit(kernel, check_sync=True, kernels="pto")(a, c)
    for g, e in zip(got, expected):
        assert_close(g, e)


def test_a_k_split_operand_is_not_reused_from_its_overwritten_l0_buffer():
    """[64, 128] @ [128, 64] float32 splits along K (the 910B's L0 holds double-buffered
    [64, 64] halves); the K steps of one matmul share an L0 buffer, so the second matmul of
    ``b`` loads its halves again instead of reusing the first's (the second half had
    overwritten the first)."""
    K = pto.kernel
    whole = [pto.BlockSpec(s, lambda i: (0, 0)) for s in ((64, 128), (128, 64), (64, 128))]

    @K(out_shape=pto.ShapeDtypeStruct((64, 64), np.float32), grid=(1,), in_specs=whole,
       out_specs=pto.BlockSpec((64, 64), lambda i: (0, 0)))
    def two_products(a_ref, b_ref, c_ref, o_ref):
        o_ref[...] = K.dot(c_ref[...], b_ref[...]) + K.dot(pto.numpy.exp(a_ref[...] * 0.1),
                                                           b_ref[...])
    a, b, c = rand(64, 128), rand(128, 64, seed=1), rand(64, 128, seed=2)
    expected = c @ b + np.exp(a * np.float32(0.1)) @ b
    for backend in (pto.tile(two_products), host_jit(two_products, check_sync=True,
                                                     kernels="pto")):
        assert_close(backend(a, b, c), expected, scale=4)
