"""Independent equations on two threads (lower/host/pairing.py, eval/concurrent.py): a list
schedule runs the critical path on the calling thread and, beside each heavy equation, a group
of ready equations that fit its time on the helper thread; dependencies and effects keep their
order; light groups do not run; nothing in a group writes over what its main equation reads;
values, errors and their source lines are those of the program run one equation after another;
two kernels launched at once keep their own errors."""
import threading

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.eval import concurrent
from ptojax.eval.executable import Executable, failed_equation_source
from ptojax.ir.core import Var
from ptojax.lower.host.pairing import paired


def _mlp_grad_ir(batch=32, width=256):
    def loss(ws, x):
        return pnp.sum(pnp.tanh(pnp.tanh(x @ ws[0]) @ ws[1]))
    rng = np.random.default_rng(0)
    ws = [rng.standard_normal((width, width)).astype(np.float32) * 0.05 for _ in range(2)]
    x = rng.standard_normal((batch, width)).astype(np.float32)
    return pto.make_ir(pto.grad(loss))(ws, x), (*ws, x)


@pytest.fixture
def at_once(monkeypatch):
    """Pairs run at once whatever the machine's load, from their first run."""
    monkeypatch.setattr(concurrent, "enabled", True)
    monkeypatch.setattr(concurrent, "machine_busy", lambda: False)
    monkeypatch.setattr(concurrent.Pair, "FIRST_CHOICE", True)


def test_a_dense_layers_weight_and_input_gradients_pair(at_once):
    closed, args = _mlp_grad_ir()
    ordered, starts = paired(closed)
    eqns = ordered.ir.eqns
    assert list(starts.values()) == [(0, 1)]
    i = eqns.index(next(iter(starts)))
    assert eqns[i].prim.name == eqns[i + 1].prim.name == "dot_general"
    assert set(eqns[i].outputs).isdisjoint(eqns[i + 1].inputs)
    together = Executable(ordered, pairs=starts)
    assert "pair_" in together.source
    for got, want in zip(together.run(*args), Executable(closed).run(*args)):
        np.testing.assert_array_equal(got, want)


def test_light_products_do_not_pair():
    closed, _ = _mlp_grad_ir(batch=4, width=32)
    assert paired(closed) == (closed, {})


def test_the_second_runs_on_the_helper_thread_and_its_error_is_its_own(at_once):
    threads = []

    def f(x):
        threads.append(("f", threading.get_ident()))
        return x + 1

    def g(x):
        threads.append(("g", threading.get_ident()))
        if x is None:
            raise ValueError("g failed")
        return x * 2

    result, group = concurrent.run_beside(f, (1,), ((g, (3,)), (g, (4,))))
    assert (result, group.outcome(0), group.outcome(1)) == (2, 6, 8)
    assert dict(threads)["f"] == threading.get_ident() != dict(threads)["g"]
    result, group = concurrent.run_beside(f, (1,), ((g, (None,)), (g, (5,))))
    assert result == 2 and group.outcome(1) == 10    # a failed task does not stop the next
    with pytest.raises(ValueError, match="g failed"):
        group.outcome(0)
    with pytest.raises(TypeError):          # the first's error; the helper is free again
        concurrent.run_beside(f, (None,), ((g, (3,)),))
    assert concurrent.run_beside(f, (1,), ((g, (3,)),))[1].outcome(0) == 6


def test_the_caller_runs_on_until_it_asks_and_an_error_meanwhile_joins(at_once):
    release = threading.Event()

    def slow(x):
        release.wait(5)
        return x + 1
    result, group = concurrent.run_beside(abs, (-1,), ((slow, (1,)),))
    assert result == 1 and concurrent._started() == [group]   # still running beside us
    release.set()
    assert group.outcome(0) == 2 and concurrent._started() == []
    concurrent.run_beside(abs, (-1,), ((abs, (-2,)),))       # never asked for: an error...
    concurrent.join_started()                                # ...makes the executor join it
    assert concurrent._started() == [] and concurrent._helper().taken.acquire(blocking=False)
    concurrent._helper().taken.release()


def test_a_busy_machine_runs_a_group_one_after_the_other(monkeypatch):
    monkeypatch.setattr(concurrent, "machine_busy", lambda: True)
    ran = []
    result, group = concurrent.run_beside(lambda: ran.append("f") or 1, (),
                                          ((lambda: ran.append("g") or 2, ()),
                                           (lambda: ran.append("h") or 3, ())))
    assert ran == ["f"] and result == 1
    assert (group.outcome(0), group.outcome(1)) == (2, 3) and ran == ["f", "g", "h"]


def test_a_pair_keeps_what_measured_faster(monkeypatch):
    monkeypatch.setattr(concurrent, "enabled", True)
    monkeypatch.setattr(concurrent.Pair, "FIRST_CHOICE", None)
    monkeypatch.setattr(concurrent, "machine_busy", lambda: False)
    pair = concurrent.Pair()
    for _ in range(2 * pair.TRIALS):
        assert pair.choice is None
        result, group = pair(abs, (-1,), ((abs, (-2,)),))
        assert (result, group.outcome(0)) == (1, 2)
    assert len(pair.times[0]) == len(pair.times[1]) == pair.TRIALS
    assert pair.choice in (True, False)


class _Writer:
    """A host-kernel-like override that may write its output over its operand."""

    def __init__(self, fn, into=None):
        self.fn, self.into = fn, into
        self.alias_pairs = () if into else ((0, 0),)

    def __call__(self, x):
        return self.fn(x, out=x if self.into else None)

    def writing_into(self, chosen):
        return _Writer(self.fn, chosen)


def test_the_second_never_writes_over_what_the_first_reads(at_once):
    def f(x):
        a = x * 2.0
        return pnp.sin(a), pnp.cos(a)      # cos is a's last reader
    x = np.linspace(0, 1, 64, dtype=np.float32)
    closed = pto.make_ir(f)(x)
    sin_eqn, cos_eqn = closed.ir.eqns[1:]
    impls = {sin_eqn: _Writer(np.sin), cos_eqn: _Writer(np.cos)}
    alone = Executable(closed, impls)
    assert "in place" in alone.source       # one after the other, cos may write over a
    together = Executable(closed, impls, pairs=frozenset({sin_eqn}))
    assert "pair_" in together.source and "in place" not in together.source
    for _ in range(3):
        got = together.run(x)
        np.testing.assert_array_equal(got[0], np.sin(x * 2))
        np.testing.assert_array_equal(got[1], np.cos(x * 2))


def test_an_error_in_a_pair_names_its_own_equation(at_once):
    def f(x):
        return pnp.sin(x), pnp.cos(x)
    x = np.ones(4, np.float32)
    closed = pto.make_ir(f)(x)
    sin_eqn, cos_eqn = closed.ir.eqns

    def fails(_):
        raise FloatingPointError("cos failed")
    impls = {sin_eqn: _Writer(np.sin), cos_eqn: fails}
    fails.alias_pairs = ()
    together = Executable(closed, impls, pairs=frozenset({sin_eqn}))
    with pytest.raises(FloatingPointError) as caught:
        together.run(x)
    assert failed_equation_source(caught.value.__traceback__) == cos_eqn.source


def test_only_calls_returning_fresh_buffers_pair():
    closed = pto.make_ir(lambda x: (x + 1.0, x * 2.0))(np.ones(4, np.float32))
    with pytest.raises(ValueError, match="cannot run in a pair"):
        Executable(closed, pairs=frozenset({closed.ir.eqns[0]}))


def _layers(effect=None):
    """``x @ w`` (read again by ``@ w``: the critical path) and two lighter independent
    products ``u @ v``, ``u @ v2``; ``effect`` (a debug callback on ``u``) between them."""
    def fn(x, w, u, v, v2):
        y = x @ w
        if effect is not None:
            pto.debug.callback(effect, u)
        return (y @ w, u @ v, u @ v2)
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s).astype(np.float32)
            for s in ((64, 512), (512, 512), (64, 256), (256, 256), (256, 256))]
    return pto.make_ir(fn)(*args), args


def test_the_critical_path_runs_with_a_group_of_lighter_equations_beside_it(at_once):
    closed, args = _layers()
    ordered, starts = paired(closed)
    eqns = ordered.ir.eqns
    assert list(starts.values()) == [(0, 2)]
    main = next(iter(starts))
    assert eqns.index(main) == 0 and main.inputs[0] is closed.ir.invars[0]   # x @ w first
    beside = eqns[1:3]
    assert {e.inputs[0] for e in beside} == {closed.ir.invars[2]}           # u @ v, u @ v2
    assert eqns[3].inputs[0] is main.outputs[0]                             # then y @ w
    _assert_operands_made_before(ordered, starts)
    together = Executable(ordered, pairs=starts)
    assert together.source.count("pair") == 4      # the group's line, then one per task
    for _ in range(3):
        for got, want in zip(together.run(*args), Executable(closed).run(*args)):
            np.testing.assert_array_equal(got, want)


def _assert_operands_made_before(ordered, starts):
    """Every operand is made by an earlier equation; a group's operands before its main one."""
    eqns, made = ordered.ir.eqns, {}
    for i, e in enumerate(eqns):
        for o in e.outputs:
            made[o] = i
    for i, e in enumerate(eqns):
        assert all(made.get(a, -1) < i for a in e.inputs if type(a) is Var)
    for main, (m, k) in starts.items():
        i = eqns.index(main)
        for e in eqns[i + m + 1:i + m + 1 + k]:
            assert all(made.get(a, -1) < i for a in e.inputs if type(a) is Var)
        for e in eqns[i + 1:i + m + 1]:         # the main thread meanwhile needs none of them
            assert not set(e.inputs) & {o for t in eqns[i + m + 1:i + m + 1 + k]
                                        for o in t.outputs}


def test_nothing_moves_across_an_effect(at_once):
    closed, args = _layers(effect=lambda u: None)
    ordered, starts = paired(closed)
    effect = next(e for e in closed.ir.eqns if e.prim.effectful)
    before = closed.ir.eqns[:closed.ir.eqns.index(effect)]
    assert set(ordered.ir.eqns[:ordered.ir.eqns.index(effect)]) == set(before)
    assert all(e not in starts for e in before)    # x @ w has nothing to run beside before it
    _assert_operands_made_before(ordered, starts)


def test_an_error_in_a_group_names_its_own_equation(at_once):
    def f(x):
        return pnp.sin(x), pnp.cos(x), pnp.tan(x)
    x = np.ones(4, np.float32)
    closed = pto.make_ir(f)(x)
    sin_eqn, cos_eqn, tan_eqn = closed.ir.eqns

    def fails(_):
        raise FloatingPointError("tan failed")
    fails.alias_pairs = ()
    impls = {sin_eqn: _Writer(np.sin), cos_eqn: _Writer(np.cos), tan_eqn: fails}
    together = Executable(closed, impls, pairs={sin_eqn: 2})
    with pytest.raises(FloatingPointError) as caught:
        together.run(x)
    assert failed_equation_source(caught.value.__traceback__) == tan_eqn.source
    with pytest.raises(ValueError, match="followed by its group"):
        Executable(closed, impls, pairs={sin_eqn: 3})


def test_a_momentum_step_on_host_kernels_matches_jax_and_its_busy_run(at_once, monkeypatch):
    """A compiled train step: momentum-update kernels run beside products and beside each
    other; the values are those of the same program run one equation after another (a busy
    machine) and JAX's."""
    import jax
    import jax.numpy as jnp
    from host_cases import executable_of, host_jit

    def step(api, params, velocity, x):
        def loss(p):
            return api.sum(api.tanh(api.tanh(x @ p[0]) @ p[1]) ** 2)
        grads = (pto.grad(loss) if api is pnp else jax.grad(loss))(params)
        velocity = [0.9 * v + g for v, g in zip(velocity, grads)]
        return [p - 1e-3 * v for p, v in zip(params, velocity)], velocity
    rng = np.random.default_rng(2)
    params = [rng.standard_normal((256, 256)).astype(np.float32) * 0.05 for _ in range(2)]
    velocity = [rng.standard_normal((256, 256)).astype(np.float32) for _ in range(2)]
    x = rng.standard_normal((32, 256)).astype(np.float32)
    jitted = host_jit(lambda p, v, x: step(pnp, p, v, x))
    together = jitted(params, velocity, x)
    source = executable_of(jitted, params, velocity, x).program.executable.source
    assert "pair_" in source
    monkeypatch.setattr(concurrent, "machine_busy", lambda: True)
    alone = jitted(params, velocity, x)
    want = jax.jit(lambda p, v, x: step(jnp, p, v, x))(params, velocity, x)
    for got, same, expected in zip(jax.tree_util.tree_leaves(together),
                                   jax.tree_util.tree_leaves(alone),
                                   jax.tree_util.tree_leaves(want)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(same))
        np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-4, atol=1e-5)


def test_the_main_thread_runs_on_while_a_longer_group_runs(at_once):
    def fn(x, w, u, v, v2):
        y = x @ w
        return pnp.sin(y) @ w, u @ v, u @ v2     # two products beside x @ w and sin(y) @ w
    rng = np.random.default_rng(3)
    args = [rng.standard_normal(s).astype(np.float32) * 0.1
            for s in ((64, 512), (512, 512), (64, 512), (512, 512), (512, 512))]
    closed = pto.make_ir(fn)(*args)
    ordered, starts = paired(closed)
    assert list(starts.values()) == [(2, 2)]
    eqns = ordered.ir.eqns
    assert [e.prim.name for e in eqns] == ["dot_general", "sin", "dot_general",
                                           "dot_general", "dot_general"]
    _assert_operands_made_before(ordered, starts)
    together = Executable(ordered, pairs=starts)
    lines = together.source.splitlines()[1:]
    assert "pair_0(" in lines[0] and "outcome(0)" in lines[3] and "outcome(1)" in lines[4]
    want = Executable(closed).run(*args)
    for _ in range(3):
        for got, expected in zip(together.run(*args), want):
            np.testing.assert_array_equal(got, expected)


def test_an_error_while_a_group_runs_names_its_line_and_frees_the_helper(at_once):
    def f(x):
        return pnp.sin(x), pnp.cos(x), pnp.tan(x)
    x = np.ones(4, np.float32)
    closed = pto.make_ir(f)(x)
    sin_eqn, cos_eqn, tan_eqn = closed.ir.eqns

    def fails(_):
        raise FloatingPointError("cos failed")
    fails.alias_pairs = ()
    impls = {sin_eqn: _Writer(np.sin), cos_eqn: fails, tan_eqn: _Writer(np.tan)}
    together = Executable(closed, impls, pairs={sin_eqn: (1, 1)})   # cos runs meanwhile
    with pytest.raises(FloatingPointError) as caught:
        together.run(x)
    assert failed_equation_source(caught.value.__traceback__) == cos_eqn.source
    assert concurrent._started() == []
    assert concurrent._helper().taken.acquire(blocking=False)
    concurrent._helper().taken.release()


def test_a_task_never_writes_over_what_the_main_thread_reads_meanwhile(at_once):
    def f(x):
        a = x * 2.0
        return pnp.sin(x), pnp.cos(a), pnp.tan(a)   # tan, run beside, is a's last reader
    x = np.linspace(0, 1, 64, dtype=np.float32)
    closed = pto.make_ir(f)(x)
    _, sin_eqn, cos_eqn, tan_eqn = closed.ir.eqns
    impls = {e: _Writer(fn) for e, fn in ((sin_eqn, np.sin), (cos_eqn, np.cos),
                                          (tan_eqn, np.tan))}
    assert "in place: " in Executable(closed, impls).source
    together = Executable(closed, impls, pairs={sin_eqn: (1, 1)})
    assert "over" not in together.source.splitlines()[-2]     # tan's line: a fresh buffer
    for got, want in zip(together.run(x), (np.sin(x), np.cos(x * 2), np.tan(x * 2))):
        np.testing.assert_array_equal(got, want)
