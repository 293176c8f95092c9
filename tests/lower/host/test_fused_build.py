"""The fused host build (each tile kernel one loop nest, lower/host/fused.py) against the
PTO-faithful build (the emitted PTO C++ instruction stream) and the numpy tile interpreter, on
the same programs: chains over every tiled elementwise primitive in every dtype the host
tiles, row reductions (softmax, layer norm, ...), column sums, matmuls with epilogues, on
ragged shapes. The two builds compute the same values — the same per-operation rounding, exp
and log, summation order and GEMM worker — except tanh, logistic and log1p (vmath functions vs
the PTO instruction sequences) and 16-bit float integer powers (rounded once vs per instruction),
which are compared within tolerance."""
import re

import ml_dtypes
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from host_cases import (BF16, F16, F32, I32, assert_matches, executable_of,
                        has_ragged_regions, host_jit, interpret, kernels_of, vectorized_lines)
from ptojax.errors import ConfigError
from ptojax.lower.host import fused
from ptojax.lower.host.backend import CpuBackend
from ptojax.lower.host.build import translation_unit
from ptojax.lower.host.compiler import compiler_or_none
from ptojax.lower.host.fused_plan import FusedUnsupported
from ptojax.lower.host.program import kernel_eqns
from ptojax.tile.ops import ELEMENTWISE_TILE_PRIMS

I16, I8, U8, BOOL = (np.dtype(t) for t in (np.int16, np.int8, np.uint8, np.bool_))
SMALL_TILES = pto.TileConfig(vec=(8, 32))
SMALL_CUBE = pto.TileConfig(cube=(32, 32, 32))


# --- the programs ---------------------------------------------------------------------------
def float_chains(x, y):
    """Every float elementwise primitive with a tile form. The first two outputs use tanh
    and logistic, the next five are integer powers (which 16-bit floats round differently in
    the two builds), the last log1p (a vmath function vs a PTO instruction sequence)."""
    a = pnp.abs(y) + 0.5
    return (pnp.tanh(2 * x + 1) * pnp.exp(-x * x) + x,
            pto.nn.sigmoid(x - y) * 3.0,
            x ** 2, x ** 3 + 1.0, x ** 4 * 0.25, x ** -1, x ** -2,
            pnp.log(a) / pnp.sqrt(a) - pto.lax.rsqrt(a),
            pnp.maximum(x, y) - pnp.minimum(x, 0.5) + pto.lax.stop_gradient(x) * 3.0,
            pnp.where((x > y) & ~(x == y) | (x <= -1.0) | (x >= 2.0), x, -y),
            pnp.where((x != y) & (x < y) & pnp.isfinite(x / y), x / y, 2.0 - x),
            (x * 8).astype(pnp.int32), (x * 0.25).astype(pnp.bool_),
            x.astype(pnp.float16 if x.dtype == pnp.float32 else pnp.float32),
            pnp.log1p(x * 0.5) - x)


FLOAT_OUTPUTS = 15


def floats(x32, y32, x16, y16, xb, yb):
    return float_chains(x32, y32) + float_chains(x16, y16) + float_chains(xb, yb)


def int_chains(i, j):
    d = pnp.maximum(pnp.abs(j), 1)
    return ((i + j) * 3 - pto.lax.div(i, d), pnp.minimum(i, j) - pnp.maximum(-i, j),
            i ** 2 + i ** 3, (i & j) | ~i, pnp.where((i > j) | (i == 0), i, j),
            (i < j).astype(i.dtype) + (i >= j), i.astype(pnp.float32) * 0.5)


def ints(i32, j32, i16, j16):
    return int_chains(i32, j32) + int_chains(i16, j16)


def masks(m, n, b, c):
    """bool masks and bytes: logic, select and conversions (no byte arithmetic on the host)."""
    return (pnp.where(m & ~n | (n & m), b, c), ~m | n, b.astype(pnp.bool_) & m,
            m.astype(pnp.uint8), pnp.where(n, c.astype(pnp.int8), b.astype(pnp.int8)),
            (m | n).astype(pnp.float32) * 2.0)


def row_ops(x, g, b):
    return (pto.nn.softmax(x), pto.nn.log_softmax(x), pto.nn.layer_norm(x, g, b),
            pto.nn.rms_norm(x, g), pnp.sum(x, -1), pnp.max(x, -1), pnp.min(x, -1),
            pnp.mean(x * x, -1) * 2.0, x * pnp.max(x, -1, keepdims=True) + g,
            x.reshape(-1, x.shape[-1]).sum(0))


def rows(x32, g32, b32, x16, g16, b16, xb, gb, bb):
    return row_ops(x32, g32, b32) + row_ops(x16, g16, b16) + row_ops(xb, gb, bb)


def cube_ops(x, w, b, q, k):
    return (pnp.maximum(x @ w + b, 0.0), x @ w, q @ pnp.swapaxes(k, -1, -2))


def cubes(x16, w16, b16, q16, k16, xb, wb, bb, qb, kb):
    return cube_ops(x16, w16, b16, q16, k16) + cube_ops(xb, wb, bb, qb, kb)


def _floats(rng, shape, dtype, specials=True):
    x = rng.standard_normal(shape).astype(np.float32) * 2
    if specials:
        x.flat[:7] = [np.inf, -np.inf, np.nan, -0.0, 0.0, 1e-40, 0.5]
    return x.astype(dtype)


def _args(name):
    rng = np.random.default_rng(11)
    if name == "floats":
        # f32 ragged in both dims (8x32 tiles: four tile shapes), f16 in its rows, bf16 in its
        # columns: the PTO build writes a kernel's instructions out once per tile shape, and
        # this program is the largest unit of the suite (every float chain in three dtypes)
        return [_floats(rng, shape, dt) for shape, dt in
                [((37, 70), F32)] * 2 + [((37, 64), F16)] * 2 + [((32, 70), BF16)] * 2]
    if name == "ints":     # (as floats: i32 ragged in both dims, i16 in its rows only)
        return [rng.integers(-30000, 30000, shape).astype(dt) for shape, dt in
                [((3, 5, 40), I32)] * 2 + [((3, 5, 32), I16)] * 2]
    if name == "masks":
        return [rng.random((37, 70)) < 0.5, rng.random((37, 70)) < 0.3,
                rng.integers(0, 256, (37, 70)).astype(U8),
                rng.integers(0, 256, (37, 70)).astype(U8)]
    if name == "rows":
        return [_floats(rng, s, dt, specials=False) for dt in (F32, F16, BF16)
                for s in ((7, 40, 33), (33,), (33,))]
    # f16's dense layer ragged in M and N (four tile shapes), bf16's in N (its M = 96)
    return [_floats(rng, s, dt, specials=False) for dt, m in ((F16, 100), (BF16, 96))
            for s in ((m, 70), (70, 50), (50,), (2, 64, 16), (2, 64, 16))]


# name -> (function, tile config, target, outputs that may differ between the two builds)
PROGRAMS = {
    "floats": (floats, SMALL_TILES, pto.targets.host_jit,
               {FLOAT_OUTPUTS * k + i for k in range(3) for i in (0, 1, FLOAT_OUTPUTS - 1)} |
               {FLOAT_OUTPUTS * k + i for k in (1, 2) for i in range(7)}),
    "ints": (ints, SMALL_TILES, pto.targets.host_jit, set()),
    "masks": (masks, SMALL_TILES, pto.targets.host_jit, set()),
    "rows": (rows, None, pto.targets.host_jit, set()),
    "cubes": (cubes, SMALL_CUBE, pto.targets.host_cpu, set()),
}
BUILT = {}


def _run(name, kernels):
    """(jitted, outputs) of program ``name`` on the ``kernels`` build (built once)."""
    if (name, kernels) not in BUILT:
        fn, config, target, _ = PROGRAMS[name]
        jitted = host_jit(fn, tile_config=config, target=target, kernels=kernels)
        with np.errstate(all="ignore"):
            BUILT[name, kernels] = jitted, [np.asarray(o) for o in jitted(*_args(name))]
    return BUILT[name, kernels]


def _same(a, b):
    if a.dtype.kind in "fc" or a.dtype == ml_dtypes.bfloat16:
        return np.array_equal(a.astype(np.float64), b.astype(np.float64), equal_nan=True)
    return np.array_equal(a, b)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_fused_build_matches_the_interpreter(name):
    jitted, outs = _run(name, "fused")
    fn, _, _, _ = PROGRAMS[name]
    with np.errstate(all="ignore"):
        expected = interpret(fn, *_args(name))
    assert_matches(outs, [np.asarray(e) for e in expected], rtol_scale=4)
    program = executable_of(jitted, *_args(name)).program
    assert program.kernels == "fused" and program.fused_error is None
    assert has_ragged_regions(jitted, *_args(name))


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_fused_build_computes_what_the_pto_build_computes(name):
    (_, fused_outs), (pto_jitted, pto_outs) = _run(name, "fused"), _run(name, "pto")
    assert executable_of(pto_jitted, *_args(name)).program.kernels == "pto"
    approximate = PROGRAMS[name][3]
    for i, (a, b) in enumerate(zip(fused_outs, pto_outs)):
        if i in approximate:
            with np.errstate(all="ignore"):
                assert_matches(a, b, rtol_scale=4)
        else:
            assert _same(a, b), f"output {i} of {name} differs between the builds"


def test_the_programs_cover_every_tiled_elementwise_primitive():
    seen = set()
    for name in PROGRAMS:
        jitted, _ = _run(name, "fused")
        for k in kernels_of(jitted, *_args(name)):
            seen |= {e.prim for body in k.params["bodies"] for e in body.eqns}
    wanted = {tp for p, tp in ELEMENTWISE_TILE_PRIMS.items() if not p.fact("tile").identity}
    missing = sorted(p.name for p in wanted - seen)
    assert not missing, f"no fused-build case runs {missing}"


def test_every_op_runs_in_a_kernel():
    for name in ("floats", "ints", "masks"):
        jitted, _ = _run(name, "fused")
        ir = executable_of(jitted, *_args(name)).program.executable.closed.ir
        assert {e.prim.name for e in ir.eqns} == {"tile_kernel"}, name


def test_zero_size_arrays_run_without_kernels():
    x = np.zeros((0, 70), np.float32)
    for kernels in ("fused", "pto"):
        fn = host_jit(lambda v: (pnp.exp(v) * 2 + v, pto.nn.softmax(v)), kernels=kernels)
        out = fn(x)
        assert [o.shape for o in out] == [(0, 70), (0, 70)]
        assert executable_of(fn, x).status == "numpy"


# --- the generated code ---------------------------------------------------------------------
def softmax(x):
    e = pnp.exp(x - pnp.max(x, axis=-1, keepdims=True))
    return e / pnp.sum(e, axis=-1, keepdims=True)


def layer_norm(x, g, b):
    mean = pnp.mean(x, axis=-1, keepdims=True)
    var = pnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) / pnp.sqrt(var + 1e-5) * g + b


def sigmoid_by_softplus(x):
    """exp -> log1p -> exp: a chain of three dependent vector-math calls (the gradient of a
    Bernoulli log-likelihood), strip-mined into one loop per call."""
    return pnp.exp(x - (pnp.maximum(x, 0.0) + pnp.log1p(pnp.exp(-pnp.abs(x)))))


# name -> (function, input shapes, passes, element loops)
CODE_CASES = {
    "chain": (lambda x: pnp.tanh(2 * x + 1) * pnp.exp(-x * x) + x, [(1 << 16,)], 1, 1),
    "softmax": (softmax, [(512, 1024)], 3, 3),
    "layer_norm": (layer_norm, [(512, 1024), (1024,), (1024,)], 3, 3),
    "sigmoid_by_softplus": (sigmoid_by_softplus, [(64, 784)], 1, 3),
    "softplus_row_sums": (lambda x: pnp.sum(pnp.log1p(pnp.exp(-pnp.abs(x))), axis=-1),
                          [(512, 1000)], 1, 2),
}


def _fused_text(name):
    fn, shapes, _, _ = CODE_CASES[name]
    args = [np.zeros(s, np.float32) for s in shapes]
    return pto.jit(fn).lower(*args, target=pto.targets.host_jit).as_text("fused-cpp")


@pytest.mark.parametrize("name", list(CODE_CASES))
def test_a_kernel_is_one_loop_nest_with_a_pass_per_row_reduction(name):
    text = _fused_text(name)
    assert text.count("static void k") == 1
    passes = len(re.findall(r"for \(int j = 0; j < cols|for \(int [js]0 = 0;", text))
    assert passes == CODE_CASES[name][2], text
    assert "TLOAD" not in text and "TEXP" not in text


def _all_code_cases(*args):
    """The CODE_CASES side by side in one program (separate inputs: one kernel each)."""
    outs, i = [], 0
    for fn, shapes, _, _ in CODE_CASES.values():
        outs.append(fn(*args[i:i + len(shapes)]))
        i += len(shapes)
    return tuple(outs)


def test_pass_loops_vectorize(tmp_path):
    """Every element loop of the CODE_CASES kernels is vectorized by GCC with the kernel flags (-O2 -march=native -fvect-cost-model=cheap). The three kernels are compiled
    as one program (one g++ run, not three: each run parses the host headers again)."""
    compiler, why = compiler_or_none()
    if compiler is None:
        pytest.skip(f"no C++ compiler: {why}")
    if not {"-march=native", "-fvect-cost-model=cheap"} <= set(compiler.flags):
        pytest.skip("the kernel flags lack -march=native or -fvect-cost-model=cheap")
    args = [np.zeros(s, np.float32) for _, shapes, _, _ in CODE_CASES.values() for s in shapes]
    tiled = pto.jit(_all_code_cases).lower(*args, target=pto.targets.host_jit).tile_ir
    kernels = kernel_eqns(tiled)
    assert len(kernels) == len(CODE_CASES)          # one kernel per case, none merged
    unit = translation_unit(fused.program_source(kernels), fused.entries(kernels),
                            pto.targets.host_jit, bodies_at_o1=False)
    src = tmp_path / "cases.cpp"
    src.write_text(unit)
    vectorized = vectorized_lines(compiler, src, in_file="kernels.cpp")
    kernel = unit.split('#line 1 "kernels.cpp"\n', 1)[1].splitlines()
    loops = {n + 1 for n, line in enumerate(kernel, 1)       # each element loop
             if line.strip() == "PTO_HOST_IVDEP"}
    assert len(loops) == sum(case[3] for case in CODE_CASES.values())
    assert loops <= vectorized, (f"pass loops at lines {sorted(loops)}, vectorized "
                                 f"{sorted(vectorized)}:\n" + "\n".join(kernel))


def strip_chains(x, h):
    """Chains of dependent vector-math calls that carry floats, a mask and a 16-bit float
    across the strips' segments, also into row reductions (whose partial results must add in
    the order of one loop); ``x`` float32 and ``h`` float16, 37x700 (in the host's 3x704
    tiles, each run as one row of 2100 elements: eight whole strips and a partial one; the
    last tile one row of 700)."""
    mask = x > 0.25
    soft = pnp.logaddexp(0.0, x)
    inner = pnp.where(mask, pnp.exp(-pnp.abs(x)), 1.5)
    return (pnp.exp(x - soft), pnp.where(mask, pnp.tanh(pnp.log1p(inner)), x * 3.0),
            pnp.exp(-pto.nn.softplus(h)) + h,
            pnp.sum(pnp.log1p(pnp.exp(-pnp.abs(x))), axis=-1),        # row reductions
            pnp.max(pnp.exp(pnp.tanh(h) - x), axis=-1) + pnp.sum(x * h, axis=-1))


def test_strip_mined_passes_compute_the_bits_of_one_loop(tmp_path, monkeypatch):
    rng = np.random.default_rng(5)
    args = (_floats(rng, (37, 700), F32), _floats(rng, (37, 700), F16))
    stripped = host_jit(strip_chains, kernels="fused")
    with np.errstate(all="ignore"):
        want = [np.asarray(o) for o in stripped(*args)]
    source = executable_of(stripped, *args).program.source
    assert "kStripColumns" in source and "strip_" in source
    monkeypatch.setattr(fused, "segments", lambda body: None)
    monkeypatch.setenv("PTOJAX_CACHE_DIR", str(tmp_path))      # (not the stripped library)
    one_loop = host_jit(lambda x, h: strip_chains(x, h),   # (jit's cache is per function)
                        kernels="fused")
    with np.errstate(all="ignore"):
        got = [np.asarray(o) for o in one_loop(*args)]
    assert "kStripColumns" not in executable_of(one_loop, *args).program.source
    for i, (a, b) in enumerate(zip(want, got)):
        assert _same(a, b), f"output {i} differs when strip-mined"
    with np.errstate(all="ignore"):
        expected = interpret(strip_chains, *args)
    assert_matches(want, [np.asarray(e) for e in expected], rtol_scale=4)


# --- choosing the build ---------------------------------------------------------------------
def test_the_build_is_an_option_and_an_environment_variable(monkeypatch):
    monkeypatch.delenv("PTOJAX_HOST_KERNELS", raising=False)
    assert CpuBackend().kernel_build() == "fused"
    assert CpuBackend(kernels="pto").kernel_build() == "pto"
    assert CpuBackend(check_sync=True).kernel_build() == "pto"
    monkeypatch.setenv("PTOJAX_HOST_KERNELS", "pto")
    assert CpuBackend().kernel_build() == "pto"
    assert CpuBackend(kernels="fused").kernel_build() == "fused"


def test_a_bad_build_choice_is_an_error(monkeypatch):
    with pytest.raises(ConfigError, match="CpuBackend.kernels must be one of 'fused', 'pto'"):
        CpuBackend(kernels="fast")
    with pytest.raises(ConfigError, match="check_sync.*kernels='pto'"):
        CpuBackend(kernels="fused", check_sync=True)
    monkeypatch.setenv("PTOJAX_HOST_KERNELS", "Fused")
    fn = pto.jit(lambda v: v * 2)
    with pytest.raises(ValueError, match=r"\$PTOJAX_HOST_KERNELS must be one of .*'Fused'"):
        fn(np.ones((300, 200), np.float32))


def test_a_kernel_without_a_fused_form_runs_the_pto_build(monkeypatch):
    def unsupported(kernels):
        raise FusedUnsupported("no fused form for the tile op `tile_frobnicate`")
    monkeypatch.setattr(fused, "program_source", unsupported)
    # a program no other test builds: a recorded one would be loaded as emitted then
    # (lower/host/program_record.py), fused
    fn = host_jit(lambda v: pnp.exp(v) * 2.0 - 0.625)
    x = np.linspace(-3, 3, 4096, dtype=np.float32).reshape(64, 64)
    assert_matches(fn(x), interpret(fn._fn, x))
    program = executable_of(fn, x).program
    assert program.kernels == "pto" and "tile_frobnicate" in program.fused_error
