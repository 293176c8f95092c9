"""JAX's own mini-libraries, ``jax.example_libraries.stax`` and ``.optimizers``, run unchanged on
ptojax: their source is read from the INSTALLED jax package at test time and executed with a
name-only mapping (``jax`` -> ``ptojax``, ``jax.numpy`` -> ``ptojax.numpy``, ...). Small models and
every optimizer train a few steps under ``pto.jit(pto.grad(...))`` and must match the same code
run by JAX (in its default 32-bit mode) on the same inputs (the training programs against
JAX's results stored by jax_golden.py)."""
import os

import numpy as np
import pytest

import ptojax as pto
from helpers import assert_close, load_source
from jax_golden import expected


@pytest.fixture(scope="module")
def libs(jax):
    """(stax, optimizers, random, jit, grad, tree) for ptojax and for JAX."""
    from jax.example_libraries import optimizers, stax
    here = os.path.join(os.path.dirname(jax.__file__), "example_libraries")
    stax_pto, optimizers_pto = (load_source(os.path.join(here, f"{name}.py"), name, mapped=True)
                                for name in ("stax", "optimizers"))
    mapped = (stax_pto, optimizers_pto, pto.random, pto.jit, pto.grad, pto.tree)
    return {"pto": mapped, "jax": (stax, optimizers, jax.random, jax.jit, jax.grad, jax.tree)}


def _run_both(jax, libs, program):
    """``program(*libs)`` under ptojax and under JAX (32-bit mode), results as numpy."""
    got = program(*libs["pto"])
    with jax.enable_x64(False):
        want = jax.tree.map(np.asarray, program(*libs["jax"]))
    return got, want


X = np.random.RandomState(0).randn(6, 5).astype(np.float32)
Y = np.eye(4, dtype=np.float32)[np.arange(6) % 4]


def _train(stax, init_fun, apply_fun, random, jit, grad, tree, x=X, steps=2, lr=0.1):
    """Initialise with key 0, then ``steps`` plain gradient steps of a cross-entropy loss."""
    _, params = init_fun(random.key(0), x.shape)
    loss = lambda p: -(stax.logsoftmax(apply_fun(p, x)) * Y).sum(axis=1).mean()

    @jit
    def step(p):
        return tree.map(lambda w, dw: w - lr * dw, p, grad(loss)(p))

    for _ in range(steps):
        params = step(params)
    return params, apply_fun(params, x)


MODELS = {
    "dense_relu_logsoftmax": lambda s: s.serial(s.Dense(8), s.Relu, s.Dense(4), s.LogSoftmax),
    "activations": lambda s: s.serial(s.Dense(8), s.Softplus, s.Dense(8), s.Gelu, s.Dense(8),
                                      s.Elu, s.Dense(8), s.LeakyRelu, s.Dense(8), s.Tanh,
                                      s.Dense(8), s.Sigmoid, s.Identity, s.Dense(4), s.Softmax),
    # the VAE encoder's shape: FanOut into two parallel heads, summed / concatenated back
    "fanout_parallel_faninsum": lambda s: s.serial(
        s.Dense(8), s.Relu, s.FanOut(2),
        s.parallel(s.Dense(4), s.serial(s.Dense(4), s.Softplus)), s.FanInSum),
    "fanout_parallel_faninconcat": lambda s: s.serial(
        s.Dense(8), s.FanOut(3), s.parallel(s.Dense(2), s.Identity, s.Dense(2)),
        s.FanInConcat(axis=-1), s.Dense(4)),
    "shape_dependent": lambda s: s.serial(s.Dense(8), s.Flatten, s.Dense(4), s.Exp, s.Dense(4)),
}


IMAGES = np.random.RandomState(1).rand(6, 8, 8, 2).astype(np.float32)  # NHWC
# differentially_private_sgd's shape: convolutions and max pooling, flattened into a dense head
CONV_NET = lambda s: s.serial(s.Conv(3, (3, 3), padding="SAME", strides=(2, 2)), s.Relu,
                              s.MaxPool((2, 2), (1, 1)), s.Conv(4, (2, 2)), s.Relu,
                              s.AvgPool((2, 2), padding="SAME"), s.Flatten, s.Dense(4))


def _conv_net_program(stax, optimizers, random, jit, grad, tree):
    init_fun, apply_fun = CONV_NET(stax)
    return _train(stax, init_fun, apply_fun, random, jit, grad, tree, x=IMAGES)


def _model_program(name):
    def program(stax, optimizers, random, jit, grad, tree):
        init_fun, apply_fun = MODELS[name](stax)
        return _train(stax, init_fun, apply_fun, random, jit, grad, tree)
    return program


def test_stax_conv_net_trains_like_jax(libs):
    _check_against_stored(libs, "stax-conv-net", _conv_net_program)


@pytest.mark.parametrize("name", MODELS)
def test_stax_model_trains_like_jax(libs, name):
    _check_against_stored(libs, f"stax/{name}", _model_program(name))


def test_stax_shape_inference_like_jax(jax, libs):
    def program(stax, optimizers, random, jit, grad, tree):
        init_fun, _ = MODELS["fanout_parallel_faninconcat"](stax)
        shape, params = init_fun(random.key(1), (-1, 5))
        return shape, [np.shape(p) for p in tree.leaves(params)]

    got = program(*libs["pto"])
    traced = {}   # JAX's side traced (jax.eval_shape): run, it compiled each random draw
    with jax.enable_x64(False):
        jax.eval_shape(lambda: traced.update(want=program(*libs["jax"])))
    assert got == traced["want"]


OPTIMIZERS = {
    "sgd": lambda o: o.sgd(0.1),
    "sgd_schedule": lambda o: o.sgd(o.exponential_decay(0.1, 2, 0.5)),
    "momentum": lambda o: o.momentum(0.1, mass=0.9),
    "nesterov": lambda o: o.nesterov(0.1, mass=0.9),
    "adagrad": lambda o: o.adagrad(0.1),
    "rmsprop": lambda o: o.rmsprop(o.inverse_time_decay(0.05, 2, 0.5)),
    "rmsprop_momentum": lambda o: o.rmsprop_momentum(0.05),
    "adam": lambda o: o.adam(o.piecewise_constant([2], [0.1, 0.01])),
    "adamax": lambda o: o.adamax(0.1),
    "sm3": lambda o: o.sm3(0.1),
}


def _objective(params):
    w, b = params["w"], params["b"]
    return ((X @ w + b - Y) ** 2).mean() + 0.01 * (w ** 2).sum()


def _optimizer_program(name):
    def program(stax, optimizers, random, jit, grad, tree):
        opt_init, opt_update, get_params = OPTIMIZERS[name](optimizers)
        params = {"w": np.full((5, 4), 0.1, np.float32), "b": np.zeros(4, np.float32)}
        gradient = jit(grad(_objective))  # the update runs eagerly: sm3 keeps shapes in its state
        state = opt_init(params)
        for i in range(4):
            state = opt_update(i, gradient(get_params(state)), state)
        flat = optimizers.unpack_optimizer_state(state)
        return get_params(optimizers.pack_optimizer_state(flat))
    return program


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_steps_like_jax(libs, name):
    _check_against_stored(libs, f"optimizer/{name}", _optimizer_program(name))


# JAX's results of the programs above (JAX in 32-bit mode, as _run_both runs it) are stored
# by jax_golden.py: JAX compiled each eager operation of the stax inits and of the optimizer
# updates separately, ~30 s for these 16 programs on a busy machine. The key names the
# program; the digest covers the module's inputs (X, Y, IMAGES).
def _stored_programs() -> dict:
    return {"stax-conv-net": _conv_net_program,
            **{f"stax/{name}": _model_program(name) for name in MODELS},
            **{f"optimizer/{name}": _optimizer_program(name) for name in OPTIMIZERS}}


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py."""
    from jax.example_libraries import optimizers, stax
    theirs = (stax, optimizers, jax.random, jax.jit, jax.grad, jax.tree)
    for key, program in _stored_programs().items():
        def run(*_, program=program):
            with jax.enable_x64(False):
                return [np.asarray(a) for a in jax.tree.leaves(program(*theirs))]
        yield f"example-libraries/{key}", [X, Y, IMAGES], run


def _check_against_stored(libs, key, program):
    """``program`` run by ptojax against JAX's stored result leaves."""
    want = expected(f"example-libraries/{key}", [X, Y, IMAGES])
    assert_close(program(*libs["pto"]), want, rtol=2e-5, atol=2e-6)


def test_gradient_utilities_like_jax(jax, libs):
    def program(stax, optimizers, random, jit, grad, tree):
        tree = {"a": np.arange(3.0, dtype=np.float32), "b": [np.ones((2, 2), np.float32) * 4]}
        return optimizers.l2_norm(tree), optimizers.clip_grads(tree, 2.0)

    got, want = _run_both(jax, libs, program)
    assert_close(got, want, rtol=1e-6)
