"""pto.kernel under transforms: vmap adds a grid axis; grad is automatic (the body's JVP,
transposed with the kernel's blocking; loops with static bounds unrolled, others run
backwards), or goes through pto.custom_vjp with a backward kernel; shard_map runs the kernel
on each shard, pto.shard gathers its operands."""
import numpy as np

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close
from host_cases import host_jit
from kernels import layer_norm, matmul_bias_relu, matmul_k_loop, rand, softmax_rows

K = pto.kernel
S = pto.ShapeDtypeStruct
P = pto.P


def test_vmap_adds_a_grid_axis():
    sm = softmax_rows(64, 48, 32)
    xs = rand(3, 64, 48)
    expected = np.stack([np.asarray(sm(x)) for x in xs])
    for fn in (pto.vmap(sm), pto.jit(pto.vmap(sm)), pto.tile(pto.vmap(sm))):
        assert_close(fn(xs), expected)
    assert_close(pto.vmap(sm, in_axes=1, out_axes=1)(xs.transpose(1, 0, 2)),
                 expected.transpose(1, 0, 2))
    (eqn,) = pto.make_ir(pto.vmap(sm))(xs).ir.eqns
    assert eqn.params["grid"] == (3, 2)


def test_vmap_over_some_operands_runs_on_the_host_build():
    mm = matmul_bias_relu(64, 48, 32, 32, 48)
    a, b, c = rand(2, 64, 32), rand(32, 48, seed=1), rand(1, 48, seed=2)
    expected = np.stack([np.maximum(x @ b + c, 0) for x in a])
    batched = pto.vmap(mm, in_axes=(0, None, None))
    assert_close(batched(a, b, c), expected, scale=4)
    assert_close(host_jit(batched)(a, b, c), expected, scale=8)


def test_nested_vmap_keeps_the_bodys_program_ids():
    n = 32

    @K(out_shape=S((n, 16), np.float32), grid=(2,),
       in_specs=[pto.BlockSpec((16, 16), lambda i: (i, 0))],
       out_specs=pto.BlockSpec((16, 16), lambda i: (i, 0)))
    def add_program_id(x_ref, o_ref):
        o_ref[...] = x_ref[...] + K.program_id(0).astype(np.float32)
    x = rand(2, 3, n, 16)
    expected = x + np.repeat(np.arange(2, dtype=np.float32), 16)[:, None]
    assert_close(pto.vmap(pto.vmap(add_program_id))(x), expected)
    assert_close(pto.tile(pto.vmap(pto.vmap(add_program_id)))(x), expected)


def _softmax_with_backward_kernel(m, n, bm):
    forward = softmax_rows(m, n, bm)

    @K(out_shape=S((m, n), np.float32), grid=(m // bm,),
       in_specs=[pto.BlockSpec((bm, n), lambda i: (i, 0))] * 2,
       out_specs=pto.BlockSpec((bm, n), lambda i: (i, 0)))
    def softmax_backward(y_ref, g_ref, dx_ref):
        y, g = y_ref[...], g_ref[...]
        dx_ref[...] = y * (g - (g * y).sum(axis=-1, keepdims=True))

    @pto.custom_vjp
    def softmax(x):
        return forward(x)

    softmax.defvjp(lambda x: (forward(x), forward(x)),
                   lambda y, g: (softmax_backward(y, g),))
    return softmax, softmax_backward


def test_grad_through_custom_vjp_with_a_backward_kernel(jax, jnp):
    softmax, backward = _softmax_with_backward_kernel(64, 48, 32)
    x, w = rand(64, 48), rand(64, 48, seed=1)

    def loss(x):
        return pnp.sum(softmax(x) * w)
    expected = jax.jit(jax.grad(lambda x: jnp.sum(jax.nn.softmax(x, axis=-1) * w)))(x)
    assert_close(pto.grad(loss)(x), np.asarray(expected, np.float32), scale=4)
    assert_close(pto.jit(pto.grad(loss))(x), np.asarray(expected, np.float32), scale=4)
    assert_close(host_jit(pto.grad(loss))(x), np.asarray(expected, np.float32), scale=8)
    lo = pto.jit(pto.grad(loss)).lower(x)
    names = [e.params["name"] for e in lo.tile_ir.ir.eqns if e.params.get("kind") == "kernel"]
    assert "softmax_backward" in names


def test_automatic_grad_of_softmax_matches_jax_on_every_backend(jax, jnp):
    sm = softmax_rows(64, 48, 32)
    x, w = rand(64, 48), rand(64, 48, seed=1)
    step = pto.grad(lambda x: pnp.sum(sm(x) * w))
    expected = np.asarray(jax.jit(jax.grad(lambda x: jnp.sum(jax.nn.softmax(x, axis=-1) * w)))(x),
                          np.float32)
    assert_close(step(x), expected, scale=4)
    assert_close(pto.tile(step)(x), expected, scale=4)
    assert_close(host_jit(step, check_sync=True)(x), expected, scale=8)
    names = [e.params["name"] for e in pto.make_ir(step)(x).ir.eqns
             if e.prim.name == "kernel_call"]
    assert names == ["softmax_rows", "softmax_rows_vjp"]      # the backward is one kernel


def test_automatic_grad_accumulates_shared_windows_atomically(jax, jnp):
    ln = layer_norm(64, 48, 32)          # gamma and beta: one window read by every program
    x, g, b, w = rand(64, 48), rand(1, 48, seed=1), rand(1, 48, seed=2), rand(64, 48, seed=3)
    step = pto.grad(lambda x, g, b: pnp.sum(ln(x, g, b) * w), argnums=(0, 1, 2))

    def reference(x, g, b):
        mean = jnp.mean(x, -1, keepdims=True)
        d = x - mean
        return jnp.sum((d * jax.lax.rsqrt(jnp.mean(d * d, -1, keepdims=True) + 1e-5) * g + b)
                       * w)
    expected = jax.jit(jax.grad(reference, argnums=(0, 1, 2)))(x, g, b)
    for got in (step(x, g, b), pto.tile(step)(x, g, b)):
        for a, e in zip(got, expected):
            assert_close(a, np.asarray(e, np.float32), scale=8)


def test_automatic_grad_of_a_matmul_with_an_epilogue(jax, jnp):
    mm = matmul_bias_relu(64, 48, 32, 32, 48)
    a, b, c, w = rand(64, 32), rand(32, 48, seed=1), rand(1, 48, seed=2), rand(64, 48, seed=3)
    step = pto.grad(lambda a, b, c: pnp.sum(mm(a, b, c) * w), argnums=(0, 1, 2))
    expected = jax.jit(jax.grad(lambda a, b, c: jnp.sum(jax.nn.relu(a @ b + c) * w),
                        argnums=(0, 1, 2)))(a, b, c)
    for got in (step(a, b, c), pto.tile(step)(a, b, c), host_jit(step)(a, b, c)):
        for g, e in zip(got, expected):
            assert_close(g, np.asarray(e, np.float32), scale=8)


def test_automatic_grad_unrolls_a_static_loop(jax, jnp):
    mm = matmul_k_loop(64, 64, 96, 32, 32, 32)
    a, b, w = rand(64, 96), rand(96, 64, seed=1), rand(64, 64, seed=2)
    step = pto.grad(lambda a, b: pnp.sum(mm(a, b) * w), argnums=(0, 1))
    expected = jax.jit(jax.grad(lambda a, b: jnp.sum((a @ b) * w), argnums=(0, 1)))(a, b)
    for got in (step(a, b), pto.tile(step)(a, b), host_jit(step, check_sync=True)(a, b)):
        for g, e in zip(got, expected):
            assert_close(g, np.asarray(e, np.float32), scale=8)


def test_grad_of_a_loop_with_run_time_bounds_runs_the_loop_backwards(jax, jnp):
    n = 64

    @K(out_shape=S((n, 16), np.float32), grid=(n // 16,),
       in_specs=[pto.BlockSpec((n, 16), lambda i: (0, 0))],
       out_specs=pto.BlockSpec((16, 16), lambda i: (i, 0)))
    def prefix_sums(x_ref, o_ref):
        o_ref[...] = K.fori(0, K.program_id(0) + 1,
                            lambda s, acc: acc + x_ref[K.ds(s * 16, 16), :],
                            np.zeros((16, 16), np.float32))

    def jax_prefix(x):
        blocks = x.reshape(n // 16, 16, 16)
        return jnp.cumsum(blocks, axis=0).reshape(n, 16)
    x = rand(n, 16)
    got = pto.grad(lambda x: pnp.sum(prefix_sums(x) ** 2))(x)
    expected = jax.jit(jax.grad(lambda x: jnp.sum(jax_prefix(x) ** 2)))(x)
    assert_close(got, np.asarray(expected), scale=8)


def test_jvp_of_a_kernel_matches_jax(jax, jnp):
    sm = softmax_rows(64, 48, 32)
    x, t = rand(64, 48), rand(64, 48, seed=1)
    out, tangent = pto.jvp(sm, (x,), (t,))
    _, expected = jax.jvp(lambda x: jax.nn.softmax(x, axis=-1), (x,), (t,))
    assert_close(tangent, np.asarray(expected, np.float32), scale=4)


def test_shard_map_runs_the_kernel_on_each_shard():
    sm = softmax_rows(32, 48, 32)
    mesh = pto.make_mesh((2,), ("x",))
    fn = pto.shard_map(sm, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    x = rand(64, 48)
    assert_close(fn(x), np.concatenate([np.asarray(sm(x[:32])), np.asarray(sm(x[32:]))]))


def test_shard_gathers_the_operands_of_a_kernel():
    sm = softmax_rows(64, 48, 32)
    mesh = pto.make_mesh((2,), ("x",))
    fn = pto.shard(lambda x: sm(x * 2.0), mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    x = rand(64, 48)
    assert_close(fn(x), sm(x * 2.0))


def test_per_example_gradients_batch_the_derivative_kernels(jax, jnp):
    sm = softmax_rows(64, 48, 32)
    xs, w = rand(3, 64, 48), rand(64, 48, seed=1)
    per_example = pto.vmap(pto.grad(lambda x: pnp.sum(sm(x) * w)))
    expected = jax.jit(jax.vmap(jax.grad(lambda x: jnp.sum(jax.nn.softmax(x, axis=-1) * w))))(xs)
    for fn in (per_example, pto.tile(per_example)):
        assert_close(fn(xs), np.asarray(expected, np.float32), scale=4)
    mm = matmul_k_loop(32, 32, 64, 32, 32, 32)                  # a loop in the body too
    a, b = rand(2, 32, 64), rand(64, 32, seed=2)
    grads = pto.vmap(pto.grad(lambda a: pnp.sum(mm(a, b) ** 2)))(a)
    expected = jax.jit(jax.vmap(jax.grad(lambda a: jnp.sum((a @ b) ** 2))))(a)
    assert_close(grads, np.asarray(expected, np.float32), scale=8)


@K(out_shape=S((16, 16), np.float32), grid=(2,),
   in_specs=[pto.BlockSpec((8, 16), lambda i: (i, 0))],
   out_specs=pto.BlockSpec((8, 16), lambda i: (i, 0)))
def twice(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2.0


def test_one_kernel_called_twice_in_a_program_runs_on_both_host_builds():
    """Each call is a kernel of its own name (twice, twice_2): the host builds define kernels
    by name (both rejected the second definition)."""
    x = rand(16, 16)
    fn = pto.jit(lambda x: twice(twice(x) + 1.0))
    assert [r.name for r in fn.lower(x).cost() if r.name.startswith("twice")] == \
        ["twice", "twice_2"]
    for kernels in ("pto", "fused"):
        assert_close(host_jit(lambda x: twice(twice(x) + 1.0), kernels=kernels)(x),
                     4 * x + 2)
