"""``pto.example_libraries.optimizers`` against the installed ``jax.example_libraries``:
trajectories of every optimizer over several steps (eagerly and as one jitted step), the
schedules at Python-int and traced steps, the ``OptimizerState`` pytree, pack/unpack, the
gradient utilities and the errors."""
import numpy as np
import pytest

import ptojax as pto
from ptojax.example_libraries import optimizers as popt
from helpers import assert_close

RNG = np.random.RandomState(0)
X = RNG.randn(6, 5).astype(np.float32)
Y = RNG.randn(6, 3).astype(np.float32)
PARAMS = {"w": (RNG.randn(5, 3) * 0.3).astype(np.float32), "b": np.zeros(3, np.float32),
          "extra": [np.float32(0.5)]}   # a scalar leaf: sm3 keeps it 1-D in its state


@pytest.fixture(scope="module")
def jopt(jax):
    from jax.example_libraries import optimizers
    return optimizers


def _loss(np_, params):
    w, b, (s,) = params["w"], params["b"], params["extra"]
    return ((X @ w + b - Y) ** 2).mean() + s * s * (w ** 2).sum() * 0.01


OPTIMIZERS = {
    "sgd": lambda o: o.sgd(0.1),
    "sgd_exponential_decay": lambda o: o.sgd(o.exponential_decay(0.1, 2, 0.5)),
    "momentum": lambda o: o.momentum(0.1, mass=0.9),
    "nesterov": lambda o: o.nesterov(o.polynomial_decay(0.1, 3, 0.01, power=2.0), 0.8),
    "adagrad": lambda o: o.adagrad(0.1),
    "adagrad_no_momentum": lambda o: o.adagrad(0.2, momentum=0.0),
    "rmsprop": lambda o: o.rmsprop(o.inverse_time_decay(0.05, 2, 0.5)),
    "rmsprop_staircase": lambda o: o.rmsprop(o.inverse_time_decay(0.05, 2, 0.5, staircase=True),
                                             gamma=0.8, eps=1e-6),
    "rmsprop_momentum": lambda o: o.rmsprop_momentum(0.05, momentum=0.5),
    "adam": lambda o: o.adam(o.piecewise_constant([2], [0.1, 0.01])),
    "adam_betas": lambda o: o.adam(0.05, b1=0.5, b2=0.9, eps=1e-6),
    "adamax": lambda o: o.adamax(0.1),
    "sm3": lambda o: o.sm3(0.1),
}
STEPS = 4


def _trajectory(opt, np_, grad, jit_step):
    """The params after each of STEPS updates; the update jitted (step index traced) or
    eager (Python-int step index)."""
    opt_init, opt_update, get_params = opt
    gradient = grad(lambda p: _loss(np_, p))
    step = (lambda i, s: opt_update(i, gradient(get_params(s)), s))
    step = jit_step(step) if jit_step else step
    state, out = opt_init(PARAMS), []
    for i in range(STEPS):
        state = step(i, state)
        out.append(get_params(state))
    return out


@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_trajectory_like_jax(jax, jopt, name, jitted):
    if jitted and name == "sm3":
        pytest.skip("sm3 keeps the parameter's shape as state leaves: eager only, as in JAX")
    got = _trajectory(OPTIMIZERS[name](popt), pto.numpy, pto.grad, jitted and pto.jit)
    assert_close(got, _jax_trajectory(jax, jopt, name), rtol=2e-5, atol=2e-6)


_JAX_TRAJECTORIES = {}


def _jax_trajectory(jax, jopt, name):
    """JAX's trajectory, shared by the eager and the jit test of an optimizer: computed with the
    update jitted (eager JAX compiled every operation of it), except sm3's, eager as in JAX."""
    if name not in _JAX_TRAJECTORIES:
        with jax.enable_x64(False):
            _JAX_TRAJECTORIES[name] = jax.tree.map(np.asarray, _trajectory(
                OPTIMIZERS[name](jopt), jax.numpy, jax.grad, name != "sm3" and jax.jit))
    return _JAX_TRAJECTORIES[name]


SCHEDULES = {
    "constant": lambda o: o.constant(0.3),
    "exponential_decay": lambda o: o.exponential_decay(0.1, 3, 0.5),
    "inverse_time_decay": lambda o: o.inverse_time_decay(0.2, 2, 0.7),
    "inverse_time_decay_staircase": lambda o: o.inverse_time_decay(0.2, 2, 0.7, True),
    "polynomial_decay": lambda o: o.polynomial_decay(1.0, 5, 0.1),
    # 4, not 5: XLA's jit divides by 5 as a multiplication by 0.2, 1 - 5/5 < 0 and 0 ** 0.5
    # becomes nan (ptojax gives 0.1 there)
    "polynomial_decay_power": lambda o: o.polynomial_decay(1.0, 4, 0.1, power=0.5),
    "piecewise_constant": lambda o: o.piecewise_constant([1, 4], [1.0, 0.5, 0.25]),
    "make_schedule_scalar": lambda o: o.make_schedule(0.25),
}


@pytest.mark.parametrize("name", SCHEDULES)
def test_schedule_like_jax(jax, jopt, name):
    """Values at Python-int steps (their types too: a float stays a float where JAX's does)
    and at traced int32 steps under jit."""
    steps = range(7)
    mine = SCHEDULES[name](popt)
    got = [mine(i) for i in steps]
    traced = pto.jit(lambda i: mine(i))
    with jax.enable_x64(False):
        theirs = SCHEDULES[name](jopt)
        want = [theirs(i) for i in steps]
        want_traced = [np.asarray(jax.jit(lambda i: theirs(i))(np.int32(i))) for i in steps]
        assert [isinstance(v, float) for v in got] == [isinstance(v, float) for v in want]
        want = [np.asarray(v) for v in want]
    assert_close([np.asarray(v) for v in got], want, rtol=1e-6)
    assert_close([traced(np.int32(i)) for i in steps], want_traced, rtol=1e-6)


def test_optimizer_state_is_a_pytree_like_jax(jax, jopt):
    """Only the packed per-parameter states are children; treedefs are static, so the state
    passes through jit and tree_map and keeps its structure."""
    state = popt.adam(0.1)[0](PARAMS)
    with jax.enable_x64(False):
        want = jopt.adam(0.1)[0](PARAMS)
    assert isinstance(state, popt.OptimizerState) and state._fields == want._fields
    assert len(pto.tree.leaves(state)) == len(jax.tree.leaves(want)) == 9
    # the same containers as JAX's: a tuple of one list per parameter, tuples of treedefs
    assert [type(state.packed_state), type(state.subtree_defs)] == \
        [type(want.packed_state), type(want.subtree_defs)] == [tuple, tuple]
    assert {type(s) for s in state.packed_state} == {type(s) for s in want.packed_state} == {list}
    assert str(state.tree_def) == str(want.tree_def)
    doubled = pto.jit(lambda s: pto.tree.map(lambda a: a * 2, s))(state)
    assert type(doubled) is popt.OptimizerState and doubled.tree_def == state.tree_def
    assert_close(popt.adam(0.1)[2](doubled), jax.tree.map(lambda a: np.asarray(a) * 2, PARAMS))


def test_pack_unpack_round_trip_like_jax(jax, jopt):
    opt_init, opt_update, get_params = popt.momentum(0.1, 0.9)
    state = opt_update(0, PARAMS, opt_init(PARAMS))
    marked = popt.unpack_optimizer_state(state)
    with jax.enable_x64(False):
        j_init, j_update, _ = jopt.momentum(0.1, 0.9)
        want = jopt.unpack_optimizer_state(j_update(0, PARAMS, j_init(PARAMS)))
    assert sorted(marked) == sorted(want) and isinstance(marked["b"], popt.JoinPoint)
    assert_close([m.subtree for m in pto.tree.leaves(marked)],
                 [np.asarray(v) for m in jax.tree.leaves(want) for v in m.subtree])
    packed = popt.pack_optimizer_state(marked)
    assert packed.tree_def == state.tree_def and packed.subtree_defs == state.subtree_defs
    assert_close(get_params(packed), get_params(state))
    # it is a plain pytree: states survive a leaf-wise copy
    copied = pto.tree.map(lambda m: popt.JoinPoint(pto.tree.map(np.array, m.subtree)), marked)
    assert_close(get_params(popt.pack_optimizer_state(copied)), get_params(state))


def test_gradient_utilities_like_jax(jax, jopt):
    tree = {"a": np.arange(3.0, dtype=np.float32), "b": [np.ones((2, 2), np.float32) * 4]}
    got = [popt.l2_norm(tree), popt.clip_grads(tree, 2.0), popt.clip_grads(tree, 100.0)]
    with jax.enable_x64(False):
        want = [jopt.l2_norm(tree), jopt.clip_grads(tree, 2.0), jopt.clip_grads(tree, 100.0)]
    assert_close(got, jax.tree.map(np.asarray, want), rtol=1e-6)
    assert_close(pto.jit(pto.grad(popt.l2_norm))(tree),
                 jax.tree.map(np.asarray, jax.grad(jopt.l2_norm)(tree)), rtol=1e-6)


def test_custom_optimizer_with_the_decorator():
    @popt.optimizer
    def halving():
        return (lambda x: (x, 0.5)), (lambda i, g, s: (s[0] - s[1] * g, s[1] / 2)), \
            (lambda s: s[0])

    opt_init, opt_update, get_params = halving()
    state = opt_update(1, {"x": np.float32(2.0)}, opt_init({"x": np.float32(1.0)}))
    assert float(get_params(state)["x"]) == 0.0
    assert halving.__name__ == "halving"


def test_errors():
    opt_init, opt_update, _ = popt.sgd(0.1)
    state = opt_init(PARAMS)
    with pytest.raises(TypeError, match="gradient tree does not match"):
        opt_update(0, {"w": PARAMS["w"]}, state)
    with pytest.raises(TypeError, match="scalar or a schedule"):
        popt.sgd(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="one more entry"):
        popt.piecewise_constant([1, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match="1-D"):
        popt.piecewise_constant(1, [0.1, 0.2])
    with pytest.raises(TypeError, match="JoinPoint"):
        popt.pack_optimizer_state({"a": np.zeros(2)})
    bad = popt.optimizer(lambda: ((lambda x: (x, x)), (lambda i, g, s: (s[0],)),
                                  (lambda s: s[0])))()
    with pytest.raises(TypeError, match="per-parameter state update returned"):
        bad[1](0, PARAMS, bad[0](PARAMS))


def test_public_names_match_jax(jopt):
    """JAX's names are listed, except its typing aliases, which are reachable by name."""
    theirs = {n for n in dir(jopt) if not n.startswith("_")}
    theirs -= {"annotations", "functools", "partial", "namedtuple", "jax", "jnp", "map", "zip",
               "unzip2", "safe_map", "safe_zip", "Any", "Callable", "NamedTuple"}
    aliases = {"Array", "InitFn", "Params", "ParamsFn", "Schedule", "State", "Step",
               "UpdateFn", "Updates"}
    assert theirs - aliases <= set(popt.__all__), sorted(theirs - aliases - set(popt.__all__))
    assert popt.Params is popt.Array is jopt.Params and popt.Step is int
    from ptojax.example_libraries.optimizers import Params, Step
    assert (Params, Step) == (popt.Array, int)
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        popt.Nope
