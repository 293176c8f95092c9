"""Independent heavy equations run at once (lower/host/pairing.py, eval/concurrent.py): a dense
layer's weight and input gradients pair; light, dependent or kernel-kernel equations do not;
a pair's second equation never writes over what the first reads; values, errors and their
source lines are those of the program run one equation after another."""
import threading

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.eval import concurrent
from ptojax.eval.executable import Executable, failed_equation_source
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
    assert len(starts) == 1
    i = eqns.index(next(iter(starts)))
    assert eqns[i].prim.name == eqns[i + 1].prim.name == "dot_general"
    assert set(eqns[i].outputs).isdisjoint(eqns[i + 1].inputs)
    together = Executable(ordered, pairs=starts)
    assert "pair_" in together.source
    for got, want in zip(together.run(*args), Executable(closed).run(*args)):
        # BLAS runs on one thread each while paired and on its own threads alone, so a
        # product's sums may be split differently: equal up to float32 rounding of sums whose
        # terms reach the output's scale (a wrong pairing is off by the output's scale).
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_light_products_do_not_pair():
    closed, _ = _mlp_grad_ir(batch=4, width=32)
    assert paired(closed) == (closed, frozenset())


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

    result, outcome = concurrent.run_pair(f, (1,), g, (3,))
    assert (result, outcome()) == (2, 6)
    assert dict(threads)["f"] == threading.get_ident() != dict(threads)["g"]
    result, outcome = concurrent.run_pair(f, (1,), g, (None,))
    assert result == 2
    with pytest.raises(ValueError, match="g failed"):
        outcome()
    with pytest.raises(TypeError):          # the first's error; the helper is free again
        concurrent.run_pair(f, (None,), g, (3,))
    assert concurrent.run_pair(f, (1,), g, (3,))[1]() == 6


def test_a_busy_machine_runs_a_pair_one_after_the_other(monkeypatch):
    monkeypatch.setattr(concurrent, "machine_busy", lambda: True)
    ran = []
    result, outcome = concurrent.run_pair(lambda: ran.append("f") or 1, (),
                                          lambda: ran.append("g") or 2, ())
    assert ran == ["f"] and (result, outcome()) == (1, 2) and ran == ["f", "g"]


def test_a_pair_keeps_what_measured_faster(monkeypatch):
    monkeypatch.setattr(concurrent, "enabled", True)
    monkeypatch.setattr(concurrent.Pair, "FIRST_CHOICE", None)
    monkeypatch.setattr(concurrent, "machine_busy", lambda: False)
    pair = concurrent.Pair()
    for _ in range(2 * pair.TRIALS):
        assert pair.choice is None
        result, outcome = pair(abs, (-1,), abs, (-2,))
        assert (result, outcome()) == (1, 2)
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
