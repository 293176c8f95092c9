"""Host execution of tile kernels over a runtime column count (issue 19): one build — of the
PTO instruction stream or of the fused loop nests — serves every row length of
``jit(f, dynamic={"x": {1: pto.Dim(...)}})`` (1, either side of the 8-column alignment and
reduction-lane boundary, the maximum) and matches the static-shape result; grads through it."""
import re

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import nn
from host_cases import assert_matches, executable_of, interpret, kernels_of
from ptojax.lower.host.backend import CpuBackend, HostExecutable

HI = 600
R = 12
SIZES = (1, 7, 8, 9, 64, HI)


def softmax(x):
    return nn.softmax(x / 4.0, axis=-1)


def layer_norm(x):
    d = x - pnp.mean(x, axis=-1, keepdims=True)
    return d / pnp.sqrt(pnp.mean(d * d, axis=-1, keepdims=True) + 1e-5) * 2.0 + 1.0


def chain(x, y):
    return pnp.tanh(x) * y + pnp.exp(-x), pnp.sum(x * y, axis=-1), pnp.sum(x, axis=0)


def _jit(fn, nargs=1, **options):
    """``fn`` on the one program (no buckets: these tests are about its kernels)."""
    backend = CpuBackend(**{"tiered": False, "min_elements": 0, "buckets": False, **options})
    return pto.jit(fn, backend=backend,
                   dynamic={i: {1: pto.Dim("cols", 1, HI)} for i in range(nargs)})


def _args(cols, nargs, seed=0):
    rng = np.random.default_rng(seed + cols)
    return [rng.standard_normal((R, cols)).astype(np.float32) for _ in range(nargs)]


@pytest.mark.parametrize("fn, nargs, kernels", [(softmax, 1, "fused"), (layer_norm, 1, "pto"),
                                                (chain, 2, "fused"), (chain, 2, "pto")])
def test_one_build_serves_every_row_length(fn, nargs, kernels):
    jitted = _jit(fn, nargs, kernels=kernels)
    jitted(*_args(1, nargs))
    executable = executable_of(jitted, *_args(1, nargs))
    assert isinstance(executable, HostExecutable) and executable.status == "compiled"
    program = executable.program
    assert program.kernels == kernels and program.fused_error is None
    found = kernels_of(jitted, *_args(1, nargs))
    assert found and all(e.params["grid"].dynamic_cols for e in found)
    for cols in SIZES:
        args = _args(cols, nargs)
        assert_matches(jitted(*args), interpret(fn, *args))
    assert jitted.cache_size() == 1 and executable_of(jitted, *_args(HI, nargs)).program \
        is program


def test_the_sync_checker_passes_at_every_row_length():
    def fn(x, r):      # a row softmax, scaled by a row vector, and the row maxima
        return softmax(x) * r[:, None] + pnp.max(x, axis=-1, keepdims=True)
    jitted = pto.jit(fn, backend=CpuBackend(tiered=False, min_elements=0, check_sync=True,
                                            buckets=False),
                     dynamic={"x": {1: pto.Dim("cols", 1, HI)}})
    r = np.random.default_rng(3).standard_normal(R).astype(np.float32)
    for cols in (1, 37, HI):
        x, = _args(cols, 1)
        assert_matches(jitted(x, r), interpret(fn, x, r))
    assert jitted.cache_size() == 1


def test_fused_source_takes_the_row_length():
    x, = _args(70, 1)
    text = pto.jit(softmax, dynamic={"x": {1: pto.Dim("cols", 1, HI)}}).lower(
        x, target=pto.targets.host_jit).as_text("fused-cpp")
    assert "const int32_t ncols)" in text and "const int vc = " in text
    assert re.search(r"in0 \+ \(std::ptrdiff_t\(s\d+\) \+ i\) \* ncols \+ ", text)


def attention(q, keys, values):
    """Decoding attention over a cache of any length: scores [heads, 1, length]."""
    scores = (q @ keys.transpose(0, 2, 1)) / 4.0
    return nn.softmax(scores, axis=-1) @ values


def test_attention_softmax_over_the_cache_length_is_one_kernel():
    rng = np.random.default_rng(0)
    q = rng.standard_normal((4, 1, 16)).astype(np.float32)
    length = pto.Dim("length", 1, 512)
    jitted = pto.jit(attention, dynamic={"keys": {1: length}, "values": {1: length}},
                     backend=CpuBackend(tiered=False, min_elements=0, buckets=False))
    for n in (1, 8, 9, 512):
        k, v = (rng.standard_normal((4, n, 16)).astype(np.float32) for _ in range(2))
        assert_matches(jitted(q, k, v), interpret(attention, q, k, v))
    (eqn,) = kernels_of(jitted, q, k, v)
    assert eqn.params["grid"].dynamic_cols and str(eqn.params["grid"].space[1]) == "length"
    assert jitted.cache_size() == 1


def _loss(x, w):
    return pnp.sum(nn.softmax(x * 0.5, axis=-1) * x) + pnp.sum(layer_norm(x) * w[:, None])


@pytest.mark.parametrize("cols", (1, 9, HI))
def test_grad_through_a_runtime_column_count_matches_static(cols):
    w = np.random.default_rng(1).standard_normal(R).astype(np.float32)
    grad = _jit(pto.grad(_loss), 1)
    x, = _args(cols, 1)
    assert_matches(grad(x, w), interpret(pto.grad(_loss), x, w))
    assert any(e.params["grid"].dynamic_cols for e in kernels_of(grad, x, w))


@pytest.mark.parametrize("cols, bucket", [(9, 16), (100, 128)])
def test_grad_through_a_bucket_padded_with_nan_never_leaks(cols, bucket):
    """The grad program rewritten at a bucket of the row length (masked), compiled, run on
    inputs padded with NaN: its true elements are the static-shape grads."""
    from ptojax.lower.bucketing import bucketed
    from ptojax.optimize import optimize
    w = np.random.default_rng(1).standard_normal(R).astype(np.float32)
    x, = _args(cols, 1)
    grad = pto.jit(pto.grad(_loss), dynamic={0: {1: pto.Dim("cols", 1, HI)}})
    static = optimize(bucketed(grad.lower(x, w).ir, {"cols": bucket}))
    executable = HostExecutable(static, CpuBackend(tiered=False, min_elements=0))
    assert executable.status == "compiled"
    padded = np.full((R, bucket), np.nan, np.float32)
    padded[:, :cols] = x
    (out,) = executable.run(np.int32(cols), padded, w)
    assert np.isfinite(out[:, :cols]).all()
    assert_matches(out[:, :cols], interpret(pto.grad(_loss), x, w))


def test_the_bucket_of_a_one_column_row_length_compiles():
    """At a bucket of 1 column a [R,1] value is both a row and a full value: kernels whose
    operands disagree on that are not merged (the fused build of a masked layer norm crashed
    with mismatched tiles)."""
    from ptojax.lower.bucketing import bucketed
    from ptojax.optimize import optimize
    x, = _args(1, 1)
    closed = pto.jit(layer_norm, dynamic={0: {1: pto.Dim("cols", 1, HI)}}).lower(x).ir
    executable = HostExecutable(optimize(bucketed(closed, {"cols": 1})),
                                CpuBackend(tiered=False, min_elements=0))
    assert executable.status == "compiled"
    assert_matches(executable.run(np.int32(1), x)[0], interpret(layer_norm, x))
