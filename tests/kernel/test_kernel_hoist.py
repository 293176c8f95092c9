"""Loop-invariant code motion in pto.kernel bodies (kernel/hoist.py): work in a loop body that
depends on neither the index nor a carry runs once before the loop (out of nested loops as
far as it stays invariant), loads, stores and matmuls stay; the kernels compute the same
values (tile interpreter, and for a single loop the PTO-faithful build, against JAX)."""
import numpy as np

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close
from host_cases import host_jit
from ptojax.kernel.hoist import hoist_invariants
from ptojax.kernel.lower import lower_kernel
from ptojax.kernel.primitives import kernel_fori_p, loop_body
from ptojax.tile import ops as T

K = pto.kernel
R, C, N = 8, 16, 3


@K(out_shape=pto.ShapeDtypeStruct((2 * R, C), np.float32), grid=(2,),
   in_specs=[pto.BlockSpec((R, C), lambda i: (i, 0)),
             pto.BlockSpec((N * R, C), lambda i: (0, 0))],
   out_specs=pto.BlockSpec((R, C), lambda i: (i, 0)))
def scaled_rows(w_ref, x_ref, o_ref):
    w = w_ref[...]

    def outer(a, acc):
        def inner(j, acc):
            scale = pnp.exp(w * 0.5) + 1.0               # invariant in both loops
            xj = x_ref[K.ds(j * R, R), :]                # a load: stays
            shift = (K.iota((R, C), 1) - K.iota((R, C), 0)) * (a + 1)   # varies with a only
            return acc + pnp.tanh(xj * scale) + shift.astype(np.float32) * 0.01
        return K.fori(0, N, inner, acc)
    o_ref[...] = K.fori(0, 2, outer, pnp.zeros((R, C), np.float32))


def _scaled_rows_jax(jnp):
    def f(w, x):
        outs = []
        for i in range(2):
            wi, acc = w[i * R:(i + 1) * R], jnp.zeros((R, C), np.float32)
            grid = (jnp.arange(C)[None, :] - jnp.arange(R)[:, None]).astype(np.float32)
            for a in range(2):
                for j in range(N):
                    acc = acc + jnp.tanh(x[j * R:(j + 1) * R] * (jnp.exp(wi * 0.5) + 1.0)) + \
                        grid * (a + 1) * 0.01
            outs.append(acc)
        return jnp.concatenate(outs)
    return f


@K(out_shape=pto.ShapeDtypeStruct((2 * R, C), np.float32), grid=(2,),
   in_specs=[pto.BlockSpec((R, C), lambda i: (i, 0)),
             pto.BlockSpec((N * R, C), lambda i: (0, 0))],
   out_specs=pto.BlockSpec((R, C), lambda i: (i, 0)))
def masked_steps(w_ref, x_ref, o_ref):
    w = w_ref[...]

    def step(j, acc):
        scale = pnp.exp(w * 0.5) + 1.0
        above = K.iota((R, C), 1) - K.iota((R, C), 0)      # a causal mask's grid
        xj = pnp.where(above <= j * 4, x_ref[K.ds(j * R, R), :], 0.0)
        return acc + pnp.tanh(xj * scale)
    o_ref[...] = K.fori(0, N, step, pnp.zeros((R, C), np.float32))


def _masked_steps_jax(jnp):
    def f(w, x):
        above = jnp.arange(C)[None, :] - jnp.arange(R)[:, None]
        outs = []
        for i in range(2):
            scale, acc = jnp.exp(w[i * R:(i + 1) * R] * 0.5) + 1.0, 0.0
            for j in range(N):
                acc = acc + jnp.tanh(jnp.where(above <= j * 4, x[j * R:(j + 1) * R], 0.0) *
                                     scale)
            outs.append(acc)
        return jnp.concatenate(outs)
    return f


def _loops(ir):
    return [e for e in ir.eqns if e.prim is kernel_fori_p]


def _prims(ir):
    return {e.prim.name for e in ir.eqns}


def test_invariant_work_leaves_the_loops_it_does_not_depend_on():
    w, x = np.ones((2 * R, C), np.float32), np.ones((N * R, C), np.float32)
    (call,) = pto.make_jaxpr(scaled_rows)(w, x).ir.eqns
    body = call.params["bodies"][0].ir
    (outer,) = _loops(body)
    (inner,) = _loops(loop_body(outer.params))
    assert "exp" in _prims(loop_body(inner.params))
    hoisted = hoist_invariants(body)
    (outer,) = _loops(hoisted)
    (inner,) = _loops(loop_body(outer.params))
    assert "exp" in _prims(hoisted) and "iota" in _prims(hoisted)      # before both loops
    assert "exp" not in _prims(loop_body(outer.params))
    # (iota(C) - iota(R)) * (a + 1) moves out of the inner loop only
    assert "mul" in _prims(loop_body(outer.params))
    assert {"iota", "exp"}.isdisjoint(_prims(loop_body(inner.params)))
    assert {"kernel_load", "tanh"} <= _prims(loop_body(inner.params))


def _inputs():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((2 * R, C)).astype(np.float32) * 0.5,
            rng.standard_normal((N * R, C)).astype(np.float32))


def test_kernels_with_hoisted_work_match_jax(jnp):
    w, x = _inputs()
    assert_close(pto.tile(scaled_rows)(w, x), np.asarray(_scaled_rows_jax(jnp)(w, x)), scale=4)
    expected = np.asarray(_masked_steps_jax(jnp)(w, x))
    for got in (pto.tile(masked_steps)(w, x),
                host_jit(masked_steps, check_sync=True, kernels="pto")(w, x)):
        assert_close(got, expected, scale=4)


def test_the_lowered_loop_runs_no_invariant_vector_work():
    """The masked step's loop in the tile IR: its exp and iotas run before it."""
    w, x = _inputs()
    (call,) = pto.make_jaxpr(masked_steps)(w, x).ir.eqns
    body = lower_kernel(call.params, call.inputs, call.outputs).params["bodies"][0]
    (loop,) = [e for e in body.eqns if e.prim is T.tile_loop_p]
    inside = {e.prim.name for e in loop.params["body"].eqns}
    before = {e.prim.name for e in body.eqns}
    assert not any("exp" in p or "iota" in p for p in inside)
    assert any("exp" in p for p in before) and any("iota" in p for p in before)
