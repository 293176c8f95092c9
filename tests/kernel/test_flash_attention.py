"""examples/flash_attention.py: the pto.kernel flash attention (online softmax, causal mask,
backward kernels through custom_vjp) against unfused attention and JAX, on the reference
semantics, the tile interpreter and the host build, at a small size."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close
from host_cases import host_jit

PATH = Path(__file__).resolve().parents[2] / "examples" / "flash_attention.py"
_spec = importlib.util.spec_from_file_location("flash_attention", PATH)
fa = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fa)

H, S, D, BLOCK = 2, 128, 32, 32


@pytest.fixture(scope="module")
def qkvw():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((H, S, D)).astype(np.float32) for _ in range(4)]


def _jax_attention(jax, jnp, causal):
    def attention(q, k, v):
        s = jnp.einsum("hqd,hkd->hqk", q, k) / np.sqrt(D)
        if causal:
            s = jnp.where(jnp.tril(jnp.ones((S, S), bool)), s, -jnp.inf)
        return jnp.einsum("hqk,hkd->hqd", jax.nn.softmax(s, axis=-1), v)
    return attention


@pytest.mark.parametrize("causal", [True, False])
def test_forward_matches_unfused_attention_and_jax(qkvw, jax, jnp, causal):
    q, k, v, _ = qkvw
    out, lse = fa.forward_kernel(H, S, D, causal, BLOCK, BLOCK)(q, k, v)
    expected = np.asarray(jax.jit(_jax_attention(jax, jnp, causal))(q, k, v), np.float32)
    assert_close(out, expected, scale=8)
    assert_close(out, fa.unfused_attention(q, k, v, causal), scale=8)
    assert np.isfinite(np.asarray(lse)).all()


def test_gradients_match_jax(qkvw, jax, jnp):
    q, k, v, w = qkvw
    attention = fa.flash_attention(H, S, D, True, BLOCK, BLOCK, forward_blocks=(2 * BLOCK, BLOCK))
    grads = pto.grad(lambda q, k, v: pnp.sum(attention(q, k, v) * w), argnums=(0, 1, 2))(q, k, v)
    ref = jax.jit(jax.grad(lambda q, k, v: jnp.sum(_jax_attention(jax, jnp, True)(q, k, v) * w),
                           argnums=(0, 1, 2)))(q, k, v)
    for g, r in zip(grads, ref):
        assert_close(g, np.asarray(r, np.float32), scale=16)


def test_tile_interpreter_and_host_build_run_forward_and_backward(qkvw):
    q, k, v, w = qkvw
    attention = fa.flash_attention(H, S, D, True, BLOCK, BLOCK)
    step = pto.grad(lambda q, k, v: pnp.sum(attention(q, k, v) * w), argnums=(0, 1, 2))
    expected = step(q, k, v)
    for backend in (pto.tile(step), host_jit(step, check_sync=True)):
        for g, r in zip(backend(q, k, v), expected):
            assert_close(g, r, scale=8)


def test_scores_stay_in_the_kernels(qkvw):
    q, k, v, w = qkvw
    attention = fa.flash_attention(H, S, D, True, BLOCK, BLOCK)
    lowered = pto.jit(pto.grad(lambda q, k, v: pnp.sum(attention(q, k, v) * w),
                               argnums=(0, 1, 2))).lower(q, k, v)
    kernels = [e for e in lowered.tile_ir.ir.eqns if e.params.get("kind") == "kernel"]
    assert {e.params["name"] for e in kernels} == {
        "flash_attention_forward", "flash_attention_dkdv", "flash_attention_dq"}
    for e in lowered.tile_ir.ir.eqns:           # no S x S array between kernels
        assert all(S * S > np.prod(v.type.shape) for v in e.outputs)
    cost = lowered.cost()
    assert all(r.bytes > 0 and r.flops > 0 for r in cost if r.kind == "kernel")
    assert "pto.tmatmul" in str(lowered.as_text("pto"))


def test_example_script_runs():
    fa.main(["--heads", "1", "--seq", "64", "--dim", "16", "--block", "32"])


def test_vmap_over_a_batch_adds_a_third_grid_axis(qkvw):
    q, k, v, _ = qkvw
    forward = fa.forward_kernel(H, S, D, True, BLOCK, BLOCK)
    batched = pto.vmap(lambda q, k, v: forward(q, k, v)[0])
    qs, ks, vs = (np.stack([x, x[::-1]]) for x in (q, k, v))
    expected = np.stack([np.asarray(fa.unfused_attention(a, b, c))
                         for a, b, c in zip(qs, ks, vs)])
    assert pto.make_ir(batched)(qs, ks, vs).ir.eqns[0].params["grid"] == (2, H, S // BLOCK)
    for fn in (batched, pto.tile(batched), host_jit(batched)):
        assert_close(fn(qs, ks, vs), expected, scale=8)


def test_causal_programs_are_balanced_and_the_masked_loop_shares_workspaces(qkvw):
    """zigzag pairs short and long query blocks; only the blocks on the diagonal run the mask,
    in a second loop that reuses the first loop's cube <-> vector workspaces (S, P, P @ V)."""
    for n in range(1, 10):
        order = [fa.zigzag(i, n) for i in range(n)]
        assert sorted(order) == list(range(n)) and order[:2] == [0, n - 1][:n]
    q, k, v, _ = qkvw
    forward = fa.forward_kernel(H, S, D, True, 2 * BLOCK, BLOCK)   # two masked steps per block
    out, _ = pto.tile(forward)(q, k, v)
    assert_close(out, fa.unfused_attention(q, k, v), scale=8)
    lowered = pto.jit(forward).lower(q, k, v)
    (kernel,) = [e for e in lowered.tile_ir.ir.eqns if e.params.get("kind") == "kernel"]
    body = kernel.params["bodies"][0]
    gm = [v for v in getattr(body, "ir", body).invars[2:] if v.type.shape not in ((H, S, D), (H, S))]
    assert len(gm) == 3


def _two_key_block_forwards(q, k, v):
    """The outputs of the forward kernel with query blocks of two key blocks, causal and not."""
    return tuple(fa.forward_kernel(H, S, D, causal, 2 * BLOCK, BLOCK)(q, k, v)[0]
                 for causal in (True, False))


@pytest.fixture(scope="module")
def two_key_block_outputs(qkvw):
    """{build: {causal: output}}: on the 910B plan, the PTO build with check_sync and the
    fused build, each of both kernels as one program (one library per build, not two)."""
    q, k, v, _ = qkvw
    return {kernels: dict(zip((True, False), host_jit(
        _two_key_block_forwards, check_sync=kernels == "pto", kernels=kernels,
        target=pto.targets.ascend910b)(q, k, v))) for kernels in ("pto", "fused")}


@pytest.mark.parametrize("causal", [True, False])
def test_two_key_blocks_per_query_block_match_jax_on_both_host_builds(
        qkvw, jax, jnp, causal, two_key_block_outputs):
    """Query blocks of two key blocks (as the 910B estimate's 128x64): the scores and P @ V
    in two-copy c2v workspaces, on the 910B plan; the PTO build with check_sync and the fused
    build against JAX."""
    q, k, v, _ = qkvw
    forward = fa.forward_kernel(H, S, D, causal, 2 * BLOCK, BLOCK)
    (kernel,) = [e for e in pto.jit(forward).lower(q, k, v).tile_ir.ir.eqns
                 if e.params.get("kind") == "kernel"]
    assert kernel.params["workspace_depths"][:2] == (2, 2)       # the scores, P @ V
    expected = np.asarray(jax.jit(_jax_attention(jax, jnp, causal))(q, k, v), np.float32)
    for kernels in ("pto", "fused"):
        assert_close(two_key_block_outputs[kernels][causal], expected, scale=8)
