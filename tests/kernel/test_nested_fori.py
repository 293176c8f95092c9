"""A pto.kernel.fori inside another's body (a blocked matmul: a loop over column blocks, each
with its own K loop carrying the accumulator): traced, run by the reference semantics, the
tile interpreter and the fused host build, differentiated and batched; the PTO schedule (PTO-AS,
PTO C++, the cost model) nests the loops (tests/kernel/test_nested_loops_pto.py runs the PTO
host build)."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close
from host_cases import executable_of, host_jit

K = pto.kernel
M, N, KK, BM, BN, BK = 32, 64, 64, 16, 32, 16


def blocked_matmul(m=M):
    @K(out_shape=(pto.ShapeDtypeStruct((m, N), np.float32),
                  pto.ShapeDtypeStruct((m, 1), np.float32)), grid=(m // BM,),
       in_specs=[pto.BlockSpec((BM, KK), lambda i: (i, 0)),
                 pto.BlockSpec((KK, N), lambda i: (0, 0))],
       out_specs=[pto.BlockSpec((BM, N), lambda i: (i, 0)),
                  pto.BlockSpec((BM, 1), lambda i: (i, 0))])
    def blocked(a_ref, b_ref, o_ref, t_ref):
        def column_block(j, total):
            def k_step(s, acc):
                return acc + K.dot(a_ref[:, K.ds(s * BK, BK)],
                                   b_ref[K.ds(s * BK, BK), K.ds(j * BN, BN)])
            acc = K.fori(0, KK // BK, k_step, pnp.zeros((BM, BN), np.float32))
            o_ref[:, K.ds(j * BN, BN)] = pnp.tanh(acc)
            return total + acc.sum(axis=-1)
        total = K.fori(0, N // BN, column_block, pnp.zeros((BM,), np.float32))
        t_ref[...] = total[:, None]
    return blocked


def expected(a, b):
    return np.tanh(a @ b), (a @ b).sum(axis=-1, keepdims=True)


@pytest.fixture(scope="module")
def ab():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((M, KK)).astype(np.float32),
            rng.standard_normal((KK, N)).astype(np.float32))


def test_nested_loops_run_in_the_reference_interpreter_and_fused_host_build(ab, jnp):
    fn = blocked_matmul()
    want = expected(*ab)
    jitted = host_jit(fn)
    for got in (fn(*ab), pto.tile(fn)(*ab), jitted(*ab)):
        for g, w in zip(got, want):
            assert_close(g, w, scale=8)
    assert executable_of(jitted, *ab).program.kernels == "fused"


def test_nested_loops_differentiate_and_batch(ab, jax, jnp):
    fn = blocked_matmul()

    def loss(np_, f):
        def scalar(a, b):
            o, t = f(a, b)
            return np_.sum(o ** 2) + np_.sum(t * t)
        return scalar

    def jax_fn(a, b):
        return jnp.tanh(a @ b), (a @ b).sum(axis=-1, keepdims=True)
    grads = pto.grad(loss(pnp, fn), argnums=(0, 1))(*ab)
    want = jax.jit(jax.grad(loss(jnp, jax_fn), argnums=(0, 1)))(*ab)
    for g, w in zip(grads, want):
        assert_close(g, np.asarray(w), scale=16)
    a2 = np.stack([ab[0], -ab[0]])
    batched = pto.vmap(fn, in_axes=(0, None))(a2, ab[1])
    for k in range(2):
        assert_close(batched[k], np.stack([expected(a, ab[1])[k] for a in a2]), scale=8)


def test_the_pto_schedule_nests_the_loops(ab):
    """PTO-AS and PTO C++ hold the K loop inside the column loop (each with its own index and
    buffer slot); the cost model runs the inner loop's steps for each outer step."""
    fn = blocked_matmul()
    lowered = pto.jit(fn).lower(*ab)
    pto_as = str(lowered.as_text("pto"))
    cpp = str(lowered.as_text("pto-cpp"))
    assert "for (int32_t k = 0; k < 2; ++k)" in cpp and "for (int32_t k2 = 1; k2 < 4; ++k2)" in cpp
    assert "const uint32_t kslot2 = static_cast<uint32_t>(k2) % 2u;" in cpp
    inner = pto_as.index("scf.for", pto_as.index("scf.for %k") + 1)
    assert pto_as.count("scf.for %k") >= 2 and inner > 0
    cost = lowered.cost()[0]
    # every (column block, K step) multiplies a BM x BK by a BK x BN block
    assert cost.flops >= 2 * M * KK * N
