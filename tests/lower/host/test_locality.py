"""Equations reordered for cache locality (lower/host/locality.py): an equation that is the last
reader of everything it reads runs as soon as it can, unless it would grow the live
intermediates; effects keep their order; compiled programs give the same values."""
import numpy as np

import ptojax as pto
import ptojax.numpy as pnp
from host_cases import executable_of, host_jit, interpret
from ptojax.eval.executable import Executable
from ptojax.lower.host.locality import for_locality


def _prims(closed):
    return [e.prim.name for e in closed.ir.eqns]


def _same_values(closed, moved, *args):
    for a, b in zip(Executable(closed).run(*args), Executable(moved).run(*args)):
        np.testing.assert_array_equal(a, b)


def test_a_last_reader_runs_right_after_its_operand():
    def f(x, y):
        g = x * 2.0
        b = pnp.cos(pnp.sin(y))
        return g + 1.0, b        # the add closes g: it moves up to g
    x, y = np.ones(8, np.float32), np.arange(8, dtype=np.float32)
    closed = pto.make_ir(f)(x, y)
    moved = for_locality(closed)
    assert _prims(closed) == ["mul", "sin", "cos", "add"]
    assert _prims(moved) == ["mul", "add", "sin", "cos"]
    _same_values(closed, moved, x, y)


def test_nothing_moves_past_another_reader_of_its_operands():
    def f(x, y, again):
        g = pnp.sin(x)
        c = pnp.cos(pnp.exp(y))
        t = g + 1.0          # closes g unless g is read again below
        return (t * g if again else t * 2.0), c
    x, y = np.ones(8, np.float32), np.arange(8, dtype=np.float32)
    for again, expected in ((True, ["sin", "exp", "cos", "add", "mul"]),
                            (False, ["sin", "add", "mul", "exp", "cos"])):
        closed = pto.make_ir(f, static_argnums=2)(x, y, again)
        moved = for_locality(closed)
        assert _prims(moved) == expected
        _same_values(closed, moved, x, y)


def test_nothing_moves_that_would_grow_the_live_intermediates():
    def f(p, v, x):
        g = pnp.sin(x)
        k = pnp.exp(pnp.cos(g))
        scaled = 0.9 * v     # reads an input only: moved up it would allocate, freeing nothing
        return p - 0.1 * (scaled + g), k
    args = [np.full(8, k, np.float32) for k in (1.0, 2.0, 3.0)]
    closed = pto.make_ir(f)(*args)
    assert for_locality(closed) is closed


def test_the_last_reader_of_a_result_moves_to_it():
    def f(p1, p2, g1, g2):
        v1, v2 = pnp.sin(g1), pnp.sin(g2)   # results: alive at the end whatever reads them
        return p1 - v1, p2 - v2, v1, v2      # each sub frees nothing and allocates a result
    args = [np.full(8, k, np.float32) for k in (1.0, 2.0, 3.0, 4.0)]
    closed = pto.make_ir(f)(*args)
    moved = for_locality(closed)
    assert _prims(closed) == ["sin", "sin", "sub", "sub"]
    assert _prims(moved) == ["sin", "sub", "sin", "sub"]
    _same_values(closed, moved, *args)


def test_effects_keep_their_order():
    def f(x):
        a = x * 2.0
        pto.debug.print("first {}", x)
        b = a + 1.0
        pto.debug.print("second {}", b)
        return b
    closed = pto.make_ir(f)(np.ones(4, np.float32))
    names = _prims(for_locality(closed))
    effects = [n for n in names if "callback" in n or "print" in n]
    assert len(effects) == 2 and names.index("add") < len(names)
    kept = [e for e in for_locality(closed).ir.eqns if e.prim.effectful]
    assert kept == [e for e in closed.ir.eqns if e.prim.effectful]


def test_a_compiled_momentum_step_runs_each_update_after_its_gradient():
    def step(w1, w2, v1, v2, x):
        def loss(ws):
            return pnp.sum(pnp.tanh(x @ ws[0]) @ ws[1])
        g1, g2 = pto.grad(loss)((w1, w2))
        v1, v2 = 0.9 * v1 + g1, 0.9 * v2 + g2
        return w1 - 0.01 * v1, w2 - 0.01 * v2, v1, v2
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32)
            for s in ((64, 128), (128, 64), (64, 128), (128, 64), (32, 64))]
    fn = host_jit(step)
    for got, want in zip(fn(*args), interpret(step, *args)):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
    program = executable_of(fn, *args).program
    order = program.executable.closed.ir.eqns
    w2_update = next(i for i, e in enumerate(order) if e.prim.name == "tile_kernel"
                     and e.inputs[-1].type.shape == (128, 64) and len(e.outputs) == 2)
    assert any(e.prim.name == "dot_general" for e in order[w2_update + 1:])  # before g1's dot
