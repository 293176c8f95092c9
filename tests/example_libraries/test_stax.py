"""``pto.example_libraries.stax`` against the installed ``jax.example_libraries.stax``: each
layer initialised with the same PRNG key (ptojax's Threefry bits are JAX's) on the same input
shape must give the same output shape and params, and applied to the same inputs the same
values; gradients through jit, vmap and the combinators' key splitting too."""
import numpy as np
import pytest

import ptojax as pto
from ptojax.example_libraries import stax as pstax
from helpers import assert_close
from jax_golden import expected

RNG = np.random.RandomState(0)
IMAGES = RNG.rand(3, 7, 6, 2).astype(np.float32)            # NHWC
SEQUENCE = RNG.rand(3, 9, 2).astype(np.float32)             # NHC
VECTORS = RNG.randn(4, 5).astype(np.float32)


@pytest.fixture(scope="module")
def jstax(jax):
    from jax.example_libraries import stax
    return stax


# name: (layer from a stax module, input)
LAYERS = {
    "dense": (lambda s: s.Dense(3), VECTORS),
    "dense_inits": (lambda s: s.Dense(3, W_init=s.randn(0.5), b_init=s.zeros), VECTORS),
    "conv_same_strided": (lambda s: s.Conv(4, (3, 3), strides=(2, 1), padding="SAME"), IMAGES),
    "conv_explicit_padding": (lambda s: s.Conv(2, (2, 3), padding=((1, 0), (2, 1))), IMAGES),
    "general_conv_nchw": (lambda s: s.GeneralConv(("NCHW", "OIHW", "NCHW"), 3, (2, 2)),
                          IMAGES),
    "conv_transpose": (lambda s: s.ConvTranspose(3, (3, 3), strides=(2, 2), padding="SAME"),
                       IMAGES),
    "conv1d_transpose": (lambda s: s.Conv1DTranspose(2, (3,), strides=(2,)), SEQUENCE),
    "batch_norm": (lambda s: s.BatchNorm(), IMAGES),
    "batch_norm_axis0_scale_only": (lambda s: s.BatchNorm(axis=0, center=False), VECTORS),
    "batch_norm_center_only": (lambda s: s.BatchNorm(axis=(0, 1), scale=False), IMAGES),
    "max_pool": (lambda s: s.MaxPool((2, 2), strides=(2, 2)), IMAGES),
    "sum_pool_same": (lambda s: s.SumPool((3, 2), padding="SAME"), IMAGES),
    "avg_pool_same_strided": (lambda s: s.AvgPool((3, 3), strides=(2, 2), padding="SAME"),
                              IMAGES),
    "avg_pool_spec_nchw": (lambda s: s.AvgPool((2, 2), spec="NCHW"), IMAGES),
    "max_pool_1d": (lambda s: s.MaxPool((3,), strides=(2,)), SEQUENCE),
    "flatten_dense": (lambda s: s.serial(s.Flatten, s.Dense(4)), IMAGES),
    "fan_in_concat_axis1": (lambda s: s.serial(s.FanOut(2), s.parallel(s.Dense(2), s.Identity),
                                               s.FanInConcat(axis=1)), VECTORS),
    "shape_dependent": (lambda s: s.shape_dependent(lambda shape: s.Dense(shape[-1] * 2)),
                        VECTORS),
    "elementwise_kwargs": (lambda s: s.elementwise(s.leaky_relu, negative_slope=0.3), VECTORS),
}
ACTIVATIONS = ["Tanh", "Relu", "Exp", "LogSoftmax", "Softmax", "Softplus", "Sigmoid", "Elu",
               "LeakyRelu", "Selu", "Gelu", "Identity"]


def _init_apply(stax, random, layer, x, key=0):
    init_fun, apply_fun = layer(stax)
    shape, params = init_fun(random.PRNGKey(key), x.shape)
    return tuple(shape), params, apply_fun(params, x)


def _in_jax_32bit(jax, fn):
    with jax.enable_x64(False):
        return jax.tree.map(np.asarray, fn())


def _jax_init_abstract(jax, jstax, layer, shape):
    """JAX's (output shape, params as ShapeDtypeStructs) of ``layer``, traced without
    compiling (JAX compiles each eager initializer separately: seconds per layer)."""
    out = {}

    def init(key):
        out["shape"], params = layer(jstax)[0](key, shape)
        return params

    with jax.enable_x64(False):
        params = jax.eval_shape(init, jax.random.PRNGKey(0))
    shape = out["shape"]
    if shape and isinstance(shape[0], (tuple, list)):   # parallel: one shape per branch
        return [tuple(int(d) for d in s) for s in shape], params
    return tuple(int(d) for d in shape), params


@pytest.mark.parametrize("name", LAYERS)
def test_layer_init_and_apply_like_jax(jax, jstax, name):
    """Init: the same output shape and params tree, shapes and dtypes as JAX; apply: the
    same values as JAX's apply_fun on the same params and inputs."""
    layer, x = LAYERS[name]
    shape, params, out = _init_apply(pstax, pto.random, layer, x)
    want_shape, want_params = _jax_init_abstract(jax, jstax, layer, x.shape)
    assert shape == want_shape == out.shape
    assert pto.tree.structure(params) == pto.tree.structure(want_params)
    assert [(p.shape, p.dtype) for p in pto.tree.leaves(params)] == \
        [(p.shape, p.dtype) for p in jax.tree.leaves(want_params)]
    numpy_params = pto.tree.map(np.asarray, params)
    want_out = _in_jax_32bit(jax, lambda: layer(jstax)[1](numpy_params, x))
    assert_close(out, want_out, rtol=2e-5, atol=2e-6)


# init values: the key splitting and initializers of the layers with params, composed
INIT_VALUES = {
    "serial_parallel_dense_conv_batchnorm": (lambda s: s.serial(
        s.Conv(3, (2, 2)), s.BatchNorm(), s.Relu,
        s.GeneralConvTranspose(("NHWC", "HWOI", "NHWC"), 2, (3, 2)), s.Flatten,
        s.FanOut(2), s.parallel(s.Dense(2, W_init=s.randn(0.5)), s.Identity), s.FanInConcat()),
        IMAGES),
}


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py: INIT_VALUES's output
    shape, parameters and output, run by JAX in 32-bit mode (eagerly, JAX compiled every
    random draw of the init: ~7 s)."""
    from jax.example_libraries import stax as jstax
    for name, (layer, x) in INIT_VALUES.items():
        def run(x, layer=layer):
            shape, params, out = _in_jax_32bit(
                jax, lambda: _init_apply(jstax, jax.random, layer, x))
            return [np.array([int(d) for d in shape]), *jax.tree.leaves(params), out]
        yield f"example-libraries/stax-init/{name}", [x], run


@pytest.mark.parametrize("name", INIT_VALUES)
def test_init_values_like_jax(name):
    """Against JAX's values stored by jax_golden.py."""
    layer, x = INIT_VALUES[name]
    shape, params, out = _init_apply(pstax, pto.random, layer, x)
    want_shape, *want_params, want_out = expected(f"example-libraries/stax-init/{name}", [x])
    assert shape == tuple(int(d) for d in want_shape)
    assert_close(params, want_params, rtol=1e-6, atol=1e-7)
    assert_close(out, want_out, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_layers_like_jax(jax, jstax, name):
    layer = lambda s: getattr(s, name)
    shape, params, out = _init_apply(pstax, pto.random, layer, VECTORS)
    want = _in_jax_32bit(jax, lambda: _init_apply(jstax, jax.random, layer, VECTORS))
    assert (shape, params) == (want[0], ())
    assert_close(out, want[2], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("pool, batch", [(False, -1), (True, 0)])
def test_batch_dimension_minus_one_like_jax(jax, jstax, pool, batch):
    """A -1 batch passes through convolutions and Flatten; pooling's window arithmetic makes
    it 0, in JAX as here."""
    model = lambda s: s.serial(s.Conv(3, (3, 3), padding="SAME"), s.Relu,
                               s.MaxPool((2, 2), (2, 2)) if pool else s.Identity, s.Flatten,
                               s.Dense(4))
    shape, params = model(pstax)[0](pto.random.PRNGKey(0), (-1, 8, 8, 2))
    want_shape, want_params = _jax_init_abstract(jax, jstax, model, (-1, 8, 8, 2))
    assert shape == want_shape == (batch, 4)
    assert [p.shape for p in pto.tree.leaves(params)] == \
        [p.shape for p in jax.tree.leaves(want_params)]


def test_parallel_init_returns_shapes_and_params_per_branch(jax, jstax):
    layer = lambda s: s.parallel(s.Dense(2), s.Relu, s.Dense(3))
    shapes, params = layer(pstax)[0](pto.random.PRNGKey(3), [(4, 5), (4, 5), (4, 1)])
    want_shapes, want_params = _jax_init_abstract(jax, jstax, layer, [(4, 5), (4, 5), (4, 1)])
    assert list(shapes) == [(4, 2), (4, 5), (4, 3)]
    assert [p.shape for p in pto.tree.leaves(params)] == \
        [p.shape for p in jax.tree.leaves(want_params)]


DROPOUT_NET = lambda s: s.serial(s.Dense(6), s.Dropout(0.6), s.Relu,
                                 s.FanOut(2), s.parallel(s.Dropout(0.5), s.Identity),
                                 s.FanInSum, s.Dropout(0.9, mode="test"))


def test_dropout_keys_split_like_jax(jax, jstax):
    """``rng=`` is split by serial and parallel exactly as JAX does, so the same units drop;
    ``rate`` is the keep probability and any mode but 'train' is the identity."""
    _, params = DROPOUT_NET(pstax)[0](pto.random.PRNGKey(0), VECTORS.shape)
    params = pto.tree.map(np.asarray, params)

    def run(stax, random):
        return DROPOUT_NET(stax)[1](params, VECTORS, rng=random.PRNGKey(5))

    got = run(pstax, pto.random)
    assert_close(got, _in_jax_32bit(jax, lambda: run(jstax, jax.random)), rtol=1e-6)
    assert 0 < (np.asarray(got) == 0).mean() < 1


def test_dropout_without_key_is_a_clear_error():
    init_fun, apply_fun = pstax.Dropout(0.5)
    with pytest.raises(ValueError, match="needs a PRNG key.*rng=key"):
        apply_fun((), VECTORS)


def test_serial_of_a_constructor_is_a_clear_error():
    with pytest.raises(TypeError, match="Dense must be called"):
        pstax.serial(pstax.Dense(3), pstax.Dense)


def test_jit_grad_and_vmap_through_a_conv_net(jax, jstax):
    model = lambda s: s.serial(s.Conv(3, (2, 2)), s.BatchNorm(), s.Relu,
                               s.AvgPool((2, 2)), s.Flatten, s.Dense(2), s.LogSoftmax)

    _, params = model(pstax)[0](pto.random.PRNGKey(2), IMAGES.shape)
    params = pto.tree.map(np.asarray, params)

    def run(stax, random, jit, grad, vmap, np_):
        apply_fun = model(stax)[1]
        loss = lambda p, x: -apply_fun(p, x)[:, 0].mean()
        per_example = vmap(lambda x: apply_fun(params, x[None])[0])(IMAGES)
        return jit(grad(loss))(params, IMAGES), per_example

    got = run(pstax, pto.random, pto.jit, pto.grad, pto.vmap, pto.numpy)
    want = _in_jax_32bit(jax, lambda: run(jstax, jax.random, jax.jit, jax.grad, jax.vmap,
                                          jax.numpy))
    assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_public_names_match_jax(jstax):
    mine = set(pstax.__all__)
    theirs = {n for n in dir(jstax) if not n.startswith("_")} - {"functools", "math", "lax",
                                                                 "random", "jnp"}
    assert theirs <= mine, sorted(theirs - mine)
