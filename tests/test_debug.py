"""pto.debug.print / pto.debug.callback: run at execution time with that run's values, in
order, eagerly and under jit (numpy executor and compiled host kernels), grad, vmap, scan,
while, cond, checkpoint, custom_jvp, shard and shard_map; never dropped or merged."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.lower.host.backend import CpuBackend
from ptojax.ops.debugging import debug_callback_p
from helpers import assert_close


def lines(capsys):
    return capsys.readouterr().out.splitlines()


def _double_and_print(x):
    pto.debug.print("x={x}", x=x)
    return x * 2


def test_print_eager_jit_and_every_call(capsys):
    x = pnp.arange(3.0)
    _double_and_print(x)
    fn = pto.jit(_double_and_print)
    fn(x)
    fn(x + 1)
    assert lines(capsys) == ["x=[0. 1. 2.]", "x=[0. 1. 2.]", "x=[1. 2. 3.]"]


def test_print_formats_like_str_format(capsys):
    pto.jit(lambda x, y: pto.debug.print("{} and {b:.2f} {c}", x, b=y, c="text"))(
        pnp.arange(2), 1.0 / 3.0)
    pto.debug.print("no placeholders", pnp.ones(2), 3, skip_format_check=True)
    assert lines(capsys) == ["[0 1] and 0.33 text", "no placeholders [1. 1.] 3"]


def test_print_checks_its_arguments():
    with pytest.raises(ValueError, match="unused positional"):
        pto.debug.print("{}", 1, 2)
    with pytest.raises(ValueError, match="f-string"):
        pto.debug.print("x", x=1)
    with pytest.raises(TypeError, match="two-call"):
        pto.debug.print(ordered=True, x=1)
    with pytest.raises(TypeError, match="callable"):
        pto.debug.callback(3, pnp.ones(2))


def test_two_call_forms(capsys):
    seen = []
    pto.jit(lambda x: pto.debug.callback(ordered=True)(seen.append, x))(pnp.ones(1))
    pto.debug.print(ordered=True)("v={v}", v=pnp.zeros(1))
    assert len(seen) == 1 and lines(capsys) == ["v=[0.]"]


def test_callback_receives_arrays_and_static_values():
    seen = []

    def record(a, tree, *, label):
        seen.append((a, tree, label))

    pto.jit(lambda x: pto.debug.callback(record, x, {"n": x.sum(), "k": 2.5}, label="L"))(
        pnp.arange(3.0))
    ((a, tree, label),) = seen
    assert isinstance(a, pto.Array) and label == "L"
    assert_close(a, np.arange(3.0, dtype=np.float32))
    assert_close(tree["n"], np.float32(3.0))
    assert float(tree["k"]) == 2.5


def test_callback_values_are_copies_not_reused_buffers():
    seen = []

    def fn(x):
        y = pnp.exp(x)
        pto.debug.callback(seen.append, y)
        return pnp.sin(y) + 1.0   # elementwise ops may write into y's dead buffer

    pto.jit(fn)(pnp.arange(4.0))
    assert_close(seen[0], np.exp(np.arange(4.0, dtype=np.float32)))


def test_never_dropped_or_merged_by_the_optimizer(capsys):
    def fn(x):
        pto.debug.print("a {}", x.sum())      # its value is used only by the print
        pto.debug.print("a {}", x.sum())      # identical: not merged
        pto.lax.cond(x[0] > 0, lambda: pto.debug.print("in cond"), lambda: None)
        return 1.0                             # the prints' values are never returned

    ir = pto.jit(fn).lower(pnp.ones(2)).optimized_ir
    assert str(ir).count("debug_callback") == 3
    pto.jit(fn)(pnp.ones(2))
    assert lines(capsys) == ["a 2.0", "a 2.0", "in cond"]


def test_grad_prints_primal_values_once(capsys):
    def loss(w):
        h = pnp.tanh(w * 2.0)
        pto.debug.print("h={}", h)
        return pnp.sum(h * h)

    w = pnp.array([0.5, -1.0])
    g = pto.grad(loss)(w)
    gj = pto.jit(pto.grad(loss))(w)
    value, _ = pto.value_and_grad(loss)(w)
    h = np.tanh(np.asarray(w) * 2.0)
    assert_close(g, gj)
    assert_close(g, 4 * h * (1 - h * h))
    assert lines(capsys) == [f"h={h}"] * 3


def test_jvp_and_jacobians_print_primals(capsys):
    fn = lambda x: (pto.debug.print("p {}", x), pnp.sin(x))[1]  # noqa: E731
    pto.jvp(fn, (1.0,), (1.0,))
    pto.jacfwd(fn)(pnp.ones(2))
    pto.jacrev(fn)(pnp.ones(2))
    assert lines(capsys) == ["p 1.0", "p [1. 1.]", "p [1. 1.]"]


def test_vmap_calls_once_per_example_in_order(capsys):
    def fn(x, y):
        pto.debug.print("x={} y={}", x, y)
        return x + y

    pto.vmap(fn, in_axes=(0, None))(pnp.arange(3.0), 10.0)
    pto.jit(pto.vmap(pto.vmap(fn), in_axes=(1, None)))(pnp.arange(4.0).reshape(2, 2),
                                                        pnp.ones(2))
    assert lines(capsys) == ["x=0.0 y=10.0", "x=1.0 y=10.0", "x=2.0 y=10.0",
                             "x=0.0 y=1.0", "x=2.0 y=1.0", "x=1.0 y=1.0", "x=3.0 y=1.0"]


def test_vmap_of_an_unbatched_print_calls_it_once(capsys):
    pto.vmap(lambda x: (pto.debug.print("const"), x * 2)[1])(pnp.arange(3.0))
    assert lines(capsys) == ["const"]


def test_vmap_of_grad_under_jit(capsys):
    fn = lambda x: (pto.debug.print("g {}", x), x * x)[1]  # noqa: E731
    out = pto.vmap(pto.jit(pto.grad(fn)))(pnp.arange(3.0))
    assert_close(out, 2 * np.arange(3.0, dtype=np.float32))
    assert lines(capsys) == ["g 0.0", "g 1.0", "g 2.0"]


def _step(carry, x):
    pto.debug.print("carry {} x {}", carry, x)
    return carry + x, carry * x


def test_scan_prints_every_step(capsys):
    xs = pnp.arange(3.0)
    pto.lax.scan(_step, 0.0, xs)
    pto.jit(lambda xs: pto.lax.scan(_step, 0.0, xs))(xs)
    g = pto.grad(lambda xs: pto.lax.scan(_step, 1.0, xs)[0])(xs)
    assert_close(g, np.ones(3, np.float32))
    steps = ["carry 0.0 x 0.0", "carry 0.0 x 1.0", "carry 1.0 x 2.0"]
    assert lines(capsys) == steps + steps + ["carry 1.0 x 0.0", "carry 1.0 x 1.0",
                                             "carry 2.0 x 2.0"]


def test_loop_invariant_prints_stay_in_the_loop(capsys):
    """A print of a const (loop invariant) and one of xs next to a matmul (carry-free work
    the loop fission moves out) still run once per step, in order, under grad."""
    w = pnp.eye(2)

    def body(h, x):
        pto.debug.print("w {}", w[0, 0])
        z = x @ w
        pto.debug.print("z {}", z[0])
        return pnp.tanh(h @ w + z), h.sum()

    xs = pnp.arange(6.0).reshape(3, 2) / 10
    loss = lambda xs: pto.lax.scan(body, pnp.zeros(2), xs)[0].sum()  # noqa: E731
    pto.jit(pto.grad(loss))(xs)
    # a float32 scalar formats as JAX formats it (its float64 repr)
    assert lines(capsys) == ["w 1.0", "z 0.0", "w 1.0", "z 0.20000000298023224", "w 1.0",
                             "z 0.4000000059604645"]


def test_while_and_fori_loops(capsys):
    def cond(c):
        pto.debug.print("test {}", c)
        return c < 2

    def body(c):
        pto.debug.print("body {}", c)
        return c + 1

    pto.jit(lambda c: pto.lax.while_loop(cond, body, c))(0)
    pto.lax.fori_loop(0, 2, lambda i, c: (pto.debug.print("i {}", i), c + i)[1], 0)
    assert lines(capsys) == ["test 0", "body 0", "test 1", "body 1", "test 2", "i 0", "i 1"]


def test_checkpoint_and_custom_jvp(capsys):
    @pto.custom_jvp
    def f(x):
        pto.debug.print("f {}", x)
        return pnp.sin(x)

    f.defjvps(lambda t, out, x: t * pnp.cos(x))
    pto.grad(f)(0.5)
    pto.grad(pto.checkpoint(lambda x: (pto.debug.print("ck {}", x), pnp.sin(x))[1]))(1.0)
    # as JAX: the checkpointed region (print included) runs again in the backward pass
    assert lines(capsys) == ["f 0.5", "ck 1.0", "ck 1.0"]


def test_compiled_host_kernels_keep_callbacks_in_place():
    seen = []

    def fn(x):
        a = pnp.exp(x) * 2.0
        pto.debug.callback(lambda v: seen.append(("a", v)), a)
        b = pnp.tanh(a + 1.0)
        pto.debug.callback(lambda v: seen.append(("b", v)), b)
        c = b * 3.0 - x
        pto.debug.callback(lambda v: seen.append(("c", v)), c.sum())
        return c

    compiled = pto.jit(fn, backend=CpuBackend(tiered=False, min_elements=0))
    x = np.linspace(-1, 1, 64 * 32, dtype=np.float32).reshape(64, 32)
    out = compiled(x)
    (entry,) = {id(e): e for e in compiled._cache.values()}.values()
    assert entry.executable.status == "compiled"
    assert [k for k, _ in seen] == ["a", "b", "c"]
    a = np.exp(x) * 2
    assert_close(seen[0][1], a, rtol=1e-6, atol=1e-6)
    assert_close(seen[1][1], np.tanh(a + 1), rtol=1e-6, atol=1e-6)
    assert_close(seen[2][1], np.asarray(out).sum(), rtol=1e-5)


def test_tiled_programs_keep_callbacks_in_program_order():
    seen = []

    def fn(x):
        y = pnp.exp(x)
        pto.debug.callback(lambda: seen.append(1))
        z = pnp.sin(y)
        pto.debug.callback(lambda v: seen.append(2), z)
        pto.debug.callback(lambda v: seen.append(3), y)
        return z

    pto.tile(fn)(np.ones((16, 32), np.float32))
    assert seen == [1, 2, 3]


def test_shard_prints_whole_values_once_or_blocks_per_device(capsys):
    mesh = pto.make_mesh((4,), ("d",))

    def fn(x):
        pto.debug.print("whole {}", x * 2)
        pto.debug.print("block {}", x, partitioned=True)
        return x.sum()

    sharded = pto.shard(fn, mesh=mesh, in_specs=(pto.P("d"),), out_specs=pto.P())
    assert float(sharded(np.arange(8.0))) == 28.0
    out = lines(capsys)
    assert sorted(out) == ["block [0. 1.]", "block [2. 3.]", "block [4. 5.]",
                           "block [6. 7.]", "whole [ 0.  2.  4.  6.  8. 10. 12. 14.]"]
    pto.jit(sharded)(np.arange(8.0))   # devices run in threads: any order
    assert sorted(lines(capsys)) == sorted(out)


def test_shard_map_prints_on_every_device(capsys):
    mesh = pto.make_mesh((2,), ("d",))
    fn = pto.shard_map(lambda x: (pto.debug.print("dev {}", x), x + 1)[1], mesh=mesh,
                       in_specs=(pto.P("d"),), out_specs=pto.P("d"))
    fn(np.arange(4.0))
    assert sorted(lines(capsys)) == ["dev [0. 1.]", "dev [2. 3.]"]


def test_ir_shows_the_callback():
    ir = pto.make_ir(_double_and_print)(pnp.ones(2))
    assert "debug_callback[callback=print('x={x}')" in str(ir)
    assert ir.ir.eqns[0].prim is debug_callback_p and not ir.ir.eqns[0].outputs
