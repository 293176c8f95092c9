"""Nested pto.kernel.fori loops and loops with run-time trip counts on the PTO schedule: the
emitted PTO C++ runs through the host PTO-faithful build with check_sync (every pipe and
cross-core ordering it relies on checked) and matches JAX, for a matmul whose K loop is nested
in a loop over column blocks, a two-level reduction, a flash-style online-softmax loop nested
in a loop over query sub-blocks, a loop whose trip count is a scalar operand, and the
derivative kernels of these (the backward of a loop with run-time bounds runs the tangent loop
backwards with an inner loop recomputing the primal carries: a nested loop with an inner bound
that is the outer index). The PTO-AS text and the 910B cost model handle the same schedules;
the cost model sums the inner loops' trip counts."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close
from host_cases import executable_of, host_jit
from ptojax.errors import TileError
# prefix_running: a non-linear carry over a per-program number of blocks (program_id + 1)
from test_kernel_loop_grad import N as P, jax_running as prefix_running_jax, \
    running as prefix_running
from test_nested_fori import blocked_matmul, expected as blocked_expected

K = pto.kernel
S = pto.ShapeDtypeStruct
F32 = np.float32


def pto_build(fn):
    """``fn`` on the PTO-faithful host build, every ordering checked."""
    return host_jit(fn, check_sync=True, kernels="pto")


def run_pto(fn, *args):
    jitted = pto_build(fn)
    out = jitted(*args)
    assert executable_of(jitted, *args).program.check_sync
    return out


def rand(*shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(F32)


# --- kernels ----------------------------------------------------------------------------------
G, NR, BR, NC, BC = 2, 2, 8, 3, 16


@K(out_shape=S((G * BR, 1), F32), grid=(G,),
   in_specs=[pto.BlockSpec((NR * BR, NC * BC), lambda i: (i, 0))],
   out_specs=pto.BlockSpec((BR, 1), lambda i: (i, 0)))
def two_level_sum(x_ref, o_ref):
    """Per row of a row sub-block: the sum over column blocks (inner loop), squared, summed
    over the row sub-blocks (outer loop)."""
    def row_block(r, total):
        def column_block(c, s):
            return s + x_ref[K.ds(r * BR, BR), K.ds(c * BC, BC)].sum(axis=-1, keepdims=True)
        s = K.fori(0, NC, column_block, pnp.zeros((BR, 1), F32))
        return total + s * s
    o_ref[...] = K.fori(0, NR, row_block, pnp.zeros((BR, 1), F32))


def two_level_sum_jax(jnp):
    def f(x):
        s = x.reshape(G, NR, BR, NC * BC).sum(-1)
        return (s * s).sum(1).reshape(G * BR, 1)
    return f


SQ, SK, D, QB, KB = 16, 32, 16, 8, 16     # per program: SQ // QB query sub-blocks


@K(out_shape=S((2 * SQ, D), F32), grid=(2,),
   in_specs=[pto.BlockSpec((SQ, D), lambda i: (i, 0)),
             pto.BlockSpec((SK, D), lambda i: (0, 0)),
             pto.BlockSpec((SK, D), lambda i: (0, 0))],
   out_specs=pto.BlockSpec((SQ, D), lambda i: (i, 0)))
def flash_in_a_loop(q_ref, k_ref, v_ref, o_ref):
    """Attention with online softmax over key blocks (inner loop) for each query sub-block of
    the program (outer loop), which stores its rows."""
    def query_block(b, carry):
        q = q_ref[K.ds(b * QB, QB), :]

        def key_block(j, c):
            m, l, acc = c
            s = K.dot(q, k_ref[K.ds(j * KB, KB), :], trans_b=True) * (1.0 / D ** 0.5)
            m_new = pnp.maximum(m, s.max(axis=-1))
            p = pnp.exp(s - m_new[:, None])
            alpha = pnp.exp(m - m_new)
            return (m_new, l * alpha + p.sum(axis=-1),
                    acc * alpha[:, None] + K.dot(p, v_ref[K.ds(j * KB, KB), :]))
        init = (pnp.full((QB,), -1e30, F32), pnp.zeros((QB,), F32), pnp.zeros((QB, D), F32))
        m, l, acc = K.fori(0, SK // KB, key_block, init)
        o_ref[K.ds(b * QB, QB), :] = acc / l[:, None]
        return carry
    K.fori(0, SQ // QB, query_block, pnp.zeros((1,), F32))


@K(out_shape=S((2 * SQ, D), F32), grid=(2,),
   in_specs=[pto.BlockSpec((SQ, D), lambda i: (i, 0)),
             pto.BlockSpec((SK, D), lambda i: (0, 0)),
             pto.BlockSpec((SK, D), lambda i: (0, 0)),
             pto.BlockSpec((1,), lambda i: (0,))],
   out_specs=pto.BlockSpec((SQ, D), lambda i: (i, 0)))
def flash_first_n_keys(q_ref, k_ref, v_ref, n_ref, o_ref):
    """``flash_in_a_loop`` over the first ``n`` key blocks, ``n`` a run-time scalar (keys of
    a variable length): its derivative keeps the key loop rolled."""
    n = n_ref[0]

    def query_block(b, carry):
        q = q_ref[K.ds(b * QB, QB), :]

        def key_block(j, c):
            m, l, acc = c
            s = K.dot(q, k_ref[K.ds(j * KB, KB), :], trans_b=True) * (1.0 / D ** 0.5)
            m_new = pnp.maximum(m, s.max(axis=-1, keepdims=True))
            p = pnp.exp(s - m_new)
            alpha = pnp.exp(m - m_new)
            return (m_new, l * alpha + p.sum(axis=-1, keepdims=True),
                    acc * alpha + K.dot(p, v_ref[K.ds(j * KB, KB), :]))
        init = (pnp.full((QB, 1), -1e30, F32), pnp.zeros((QB, 1), F32),
                pnp.zeros((QB, D), F32))
        m, l, acc = K.fori(0, n, key_block, init)
        o_ref[K.ds(b * QB, QB), :] = acc / l
        return carry
    K.fori(0, SQ // QB, query_block, pnp.zeros((1,), F32))


def attention_jax(jax, jnp):
    def f(q, k, v):
        return jax.nn.softmax(q @ k.T / D ** 0.5, axis=-1) @ v
    return f


NB, B, C = 6, 8, 16


@K(out_shape=S((B, C), F32), grid=(1,),
   in_specs=[pto.BlockSpec((NB * B, C), lambda i: (0, 0)),
             pto.BlockSpec((1,), lambda i: (0,))],
   out_specs=pto.BlockSpec((B, C), lambda i: (0, 0)))
def first_n_blocks(x_ref, n_ref, o_ref):
    """A non-linear running value over the first ``n`` row blocks, ``n`` a run-time scalar."""
    w = x_ref[K.ds(0, B), :]

    def step(j, acc):
        xj = x_ref[K.ds(j * B, B), :]
        return acc * 0.5 + pnp.tanh(xj) * w + xj
    o_ref[...] = K.fori(0, n_ref[0], step, pnp.zeros((B, C), F32))


def first_n_blocks_jax(jnp, n):
    def f(x):
        w = x[:B]
        acc = jnp.zeros((B, C), F32)
        for j in range(n):
            xj = x[j * B:(j + 1) * B]
            acc = acc * 0.5 + jnp.tanh(xj) * w + xj
        return acc
    return f


def sum_sq(np_, f):
    return lambda *args: np_.sum(f(*args) ** 2)


# --- the PTO host build: one program for the forward kernels, one for the derivatives (a build
# compiles each program once) -------------------------------------------------------------------
BLOCKED = blocked_matmul()
AB = rand(32, 64, seed=7), rand(64, 64, seed=8)
X2 = rand(G * NR * BR, NC * BC)
QKV = rand(2 * SQ, D, seed=1), rand(SK, D, seed=2), rand(SK, D, seed=3)
X = rand(NB * B, C, scale=0.5)
XW = rand(P * B, C, seed=4, scale=0.5), rand(P * B, C, seed=5, scale=0.5)


def forward_kernels(a, b, x2, q, k, v, x, n_blocks, n_keys):
    return (BLOCKED(a, b), two_level_sum(x2), flash_in_a_loop(q, k, v),
            first_n_blocks(x, n_blocks), flash_first_n_keys(q, k, v, n_keys))


def derivative_kernels(x2, q, k, v, xr, wr, x, n_keys, n_blocks):
    return (pto.grad(sum_sq(pnp, two_level_sum))(x2),
            pto.grad(lambda q, k, v: pnp.sum(flash_first_n_keys(q, k, v, n_keys) ** 2),
                     argnums=(0, 1, 2))(q, k, v),
            pto.grad(sum_sq(pnp, prefix_running), argnums=(0, 1))(xr, wr),
            pto.grad(lambda x: pnp.sum(first_n_blocks(x, n_blocks) ** 2))(x))


@pytest.fixture(scope="module")
def forward():
    jitted = pto_build(forward_kernels)
    return lambda n_blocks, n_keys: run_pto_jitted(
        jitted, *AB, X2, *QKV, X, np.array([n_blocks], np.int32), np.array([n_keys], np.int32))


@pytest.fixture(scope="module")
def derivatives():
    n_keys, n_blocks = 2, 4
    out = run_pto(derivative_kernels, X2, *QKV, *XW, X, np.array([n_keys], np.int32),
                  np.array([n_blocks], np.int32))
    return dict(zip(("two_level", "flash", "prefix", "first_n"), out), n_keys=n_keys,
                n_blocks=n_blocks)


def run_pto_jitted(jitted, *args):
    out = jitted(*args)
    assert executable_of(jitted, *args).program.check_sync
    return out


def test_a_k_loop_nested_in_a_column_loop_runs_on_the_pto_build(forward):
    for g, w in zip(forward(1, 1)[0], blocked_expected(*AB)):
        assert_close(g, w, scale=8)


def test_a_two_level_reduction_runs_on_the_pto_build(forward, jnp):
    assert_close(forward(1, 1)[1], np.asarray(two_level_sum_jax(jnp)(X2)), scale=8)


def test_a_flash_loop_nested_in_a_query_loop_runs_on_the_pto_build(forward, jax, jnp):
    q, k, v = QKV
    attention = jax.jit(attention_jax(jax, jnp))
    want = np.concatenate([np.asarray(attention(q[i * SQ:(i + 1) * SQ], k, v))
                           for i in range(2)])
    assert_close(forward(1, 1)[2], want, scale=8)


@pytest.mark.parametrize("n", [0, 1, 5])
def test_a_loop_over_a_scalar_operand_runs_on_the_pto_build(forward, jnp, n):
    assert_close(forward(n, 1)[3], np.asarray(first_n_blocks_jax(jnp, n)(X)), scale=8)


@pytest.mark.parametrize("n", [1, 2])
def test_a_flash_loop_over_a_scalar_number_of_key_blocks_runs_on_the_pto_build(forward, jax,
                                                                                jnp, n):
    q, k, v = QKV
    want = jax.jit(attention_jax(jax, jnp))(q, k[:n * KB], v[:n * KB])
    assert_close(forward(1, n)[4], np.asarray(want), scale=8)


def test_grad_of_nested_static_loops_runs_on_the_pto_build(derivatives, jax, jnp):
    want = jax.jit(jax.grad(sum_sq(jnp, two_level_sum_jax(jnp))))(X2)
    assert_close(derivatives["two_level"], np.asarray(want), scale=8)


def test_grad_of_the_nested_flash_loop_runs_on_the_pto_build(derivatives, jax, jnp):
    """The key loop has a run-time trip count, so its derivative stays rolled (the forward
    recomputed by an inner loop) inside the query loop."""
    n = derivatives["n_keys"]
    want = jax.jit(jax.grad(sum_sq(jnp, lambda q, k, v: attention_jax(jax, jnp)(
        q, k[:n * KB], v[:n * KB])), argnums=(0, 1, 2)))(*QKV)
    for g, w in zip(derivatives["flash"], want):
        assert_close(g, np.asarray(w), scale=8)


def test_grad_of_a_run_time_bounded_loop_runs_its_nested_backward_on_the_pto_build(
        derivatives, jax, jnp):
    want = jax.jit(jax.grad(sum_sq(jnp, prefix_running_jax(jnp)), argnums=(0, 1)))(*XW)
    for g, e in zip(derivatives["prefix"], want):
        assert_close(g, np.asarray(e), scale=8)


def test_grad_of_a_loop_over_a_scalar_operand_runs_on_the_pto_build(derivatives, jax, jnp):
    want = jax.jit(jax.grad(sum_sq(jnp, first_n_blocks_jax(jnp, derivatives["n_blocks"]))))(X)
    assert_close(derivatives["first_n"], np.asarray(want), scale=8)


# --- the cost model -----------------------------------------------------------------------------
def test_the_cost_model_takes_a_scalar_trip_count_from_the_call_or_a_hint():
    x = rand(NB * B, C)
    f = pto.jit(first_n_blocks)
    costs = {n: f.lower(x, np.array([n], np.int32)).cost()[0] for n in (1, 5)}
    # each step loads one B x C block and runs the same vector work
    assert costs[5].bytes - costs[1].bytes == 4 * B * C * 4
    assert costs[5].flops > costs[1].flops
    abstract = f.lower(x, S((1,), np.int32))
    with pytest.raises(TileError, match="trip_count") as info:
        abstract.cost()
    assert "test_nested_loops_pto.py" in str(info.value)
    hinted = abstract.cost(trip_count=5)[0]
    assert (hinted.bytes, hinted.flops) == (costs[5].bytes, costs[5].flops)


def test_the_cost_model_sums_the_inner_trip_counts_of_the_nested_backward():
    """The backward of a loop over ``program_id + 1`` blocks runs step ``j = i, ..., 0`` of
    program ``i`` after recomputing its carries with an inner loop over ``[0, j)``: program
    ``i`` moves ``i (i + 1) / 2`` x blocks in the inner loops, an x block and a dx block a
    step, and w, the output cotangent and dw once."""
    x, w = rand(P * B, C, seed=4), rand(P * B, C, seed=5)
    grad = pto.grad(sum_sq(pnp, prefix_running), argnums=(0, 1))
    (vjp,) = [r for r in pto.jit(grad).lower(x, w).cost() if r.name.endswith("_vjp")]
    blocks = sum(i * (i + 1) // 2 + 2 * (i + 1) + 3 for i in range(P))
    assert vjp.bytes == blocks * B * C * 4


def test_the_unrolled_static_flash_backward_shares_cross_core_flags_on_the_pto_build(jax, jnp):
    """A static loop's derivative is straight-line code: the nested flash loop's backward
    moves more values between the cube and the vector unit than there are flag pairs, so
    workspaces whose lifetimes do not overlap share flag ids (lower/cross_core.py); the
    PTO-faithful build checks every ordering."""
    q, k, v = rand(2 * SQ, D, seed=1), rand(SK, D, seed=2), rand(SK, D, seed=3)
    grad = pto.grad(sum_sq(pnp, flash_in_a_loop), argnums=(0, 1, 2))
    want = jax.jit(jax.grad(sum_sq(jnp, lambda q, k, v: jnp.concatenate(
        [attention_jax(jax, jnp)(q[i * SQ:(i + 1) * SQ], k, v) for i in range(2)])),
        argnums=(0, 1, 2)))(q, k, v)
    for g, w in zip(run_pto(grad, q, k, v), want):
        assert_close(g, np.asarray(w), scale=8)


@K(out_shape=S((16, 16), F32), grid=(1,),
   in_specs=[pto.BlockSpec((16, 16), lambda i: (0, 0))] * 2,
   out_specs=pto.BlockSpec((16, 16), lambda i: (0, 0)))
def many_products(a_ref, b_ref, o_ref):
    """Sixteen matmul results the vector unit reads only after the last: sixteen transfers in
    flight, each needing a flag id of its own."""
    a, b = a_ref[...], b_ref[...]
    prods = [K.dot(a * float(n + 1), b) for n in range(16)]
    total = prods[0]
    for p in prods[1:]:
        total = total + p
    o_ref[...] = total


def test_more_transfers_in_flight_than_flags_names_the_call():
    a = rand(16, 16, seed=6)
    with pytest.raises(TileError, match="cube <-> vector transfers in flight") as info:
        pto.jit(many_products).lower(a, a).as_text("pto-cpp")
    assert "test_nested_loops_pto.py" in str(info.value)
