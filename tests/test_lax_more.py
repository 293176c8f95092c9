"""The rest of ``jax.lax``'s public functions and types, against JAX live on the same inputs:
array helpers (empty, stack, unstack, broadcast_like, stage, shape_as_value, dtype), tokens,
composite, platform_dependent, the dot-algorithm presets and accuracy types, scatter_apply,
ragged_dot_general, conv_general_dilated_local and the named-axis collectives."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close

RNG = np.random.RandomState(0)


@pytest.fixture
def jax(jax):
    """JAX without x64, as ptojax runs here: Python scalars and dtypes compare as 32-bit."""
    with jax.enable_x64(False):
        yield jax


def _same(ours, theirs, **tol):
    assert np.asarray(ours).shape == np.asarray(theirs).shape
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype
    assert_close(ours, theirs, **tol)


# array helpers ----------------------------------------------------------------------------------
STACKS = [  # (operands, axis)
    ([1.0, 2.0], 0),
    ([np.ones(2, np.float32), np.zeros(2, np.float32)], 1),
    ([np.arange(6, dtype=np.int32).reshape(2, 3)] * 3, -1),
    ([np.float32(1), 2.0], 0),
]


@pytest.mark.parametrize("operands, axis", STACKS)
def test_stack_and_unstack_match_jax(jax, operands, axis):
    ours, theirs = pto.lax.stack(operands, axis), jax.lax.stack(operands, axis)
    _same(ours, theirs)
    assert ours.weak_type == theirs.weak_type
    for a, b in zip(pto.lax.unstack(ours, axis), jax.lax.unstack(theirs, axis)):
        _same(a, b)


def test_stack_unstack_errors_grad_and_jit(jax):
    for operands in ([np.ones(2, np.int32), np.zeros(2, np.float32)], [np.int8(1), 2]):
        with pytest.raises(TypeError, match="same dtypes"):
            pto.lax.stack(operands)
        with pytest.raises(TypeError, match="same dtypes"):
            jax.lax.stack(operands)
    with pytest.raises(ValueError, match="same shape"):
        pto.lax.stack([np.ones(2, np.float32), np.ones(3, np.float32)])
    with pytest.raises(ValueError):
        pto.lax.unstack(np.ones(3, np.float32), axis=2)
    x = RNG.randn(3, 2).astype(np.float32)

    def f(lib):
        return lambda v: (lib.lax.stack(lib.lax.unstack(v, 1)[::-1], 0) ** 2).sum()
    assert_close(pto.grad(f(pto))(x), jax.grad(f(jax))(x))
    assert_close(pto.jit(f(pto))(x), jax.jit(f(jax))(x))
    g = lambda lib: lambda v: lib.lax.stack([v, 2 * v], 1)      # noqa: E731
    _same(pto.vmap(g(pto))(x), jax.vmap(g(jax))(x))


def test_empty_broadcast_like_stage_shape_as_value(jax):
    for shape, dtype in (((2, 3), np.float32), ((), np.int32), ((0, 2), np.bool_)):
        ours, theirs = pto.lax.empty(shape, dtype), jax.lax.empty(shape, dtype)
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    for arr, like in ((np.ones(3, np.float32), np.zeros((2, 3), np.float32)),
                      (1.0, np.ones((2, 3), np.int32)),
                      (np.ones((2, 1), np.int32), np.ones((4, 2, 3), np.float32))):
        ours, theirs = pto.lax.broadcast_like(arr, like), jax.lax.broadcast_like(arr, like)
        _same(ours, theirs)
        assert ours.weak_type == theirs.weak_type
    with pytest.raises(ValueError, match="Incompatible"):
        pto.lax.broadcast_like(np.ones(3), np.ones((3, 2)))
    for x in (3.0, np.float64(3), np.ones(2), 7):
        ours, theirs = pto.lax.stage(x), jax.lax.stage(x)
        _same(ours, theirs)
        assert ours.weak_type == theirs.weak_type
    assert_close(pto.jit(pto.lax.stage)(2.0), np.float32(2.0))
    for shape in ((2, 3), (), (5,)):
        _same(pto.lax.shape_as_value(shape), jax.lax.shape_as_value(shape))


@pytest.mark.parametrize("x", [1.0, 3, True, np.int64(3), np.ones(2, np.int8), "float32",
                               np.float16, "bfloat16", complex(1, 2)])
def test_dtype_matches_jax(jax, x):
    assert pto.lax.dtype(x) == jax.lax.dtype(x)


# tokens, composite, platform_dependent ----------------------------------------------------------
def test_tokens_pass_through_jit(jax):
    token = pto.lax.create_token()
    assert type(pto.lax.after_all(token, token)) is type(token)
    with pytest.raises(TypeError, match="must be tokens"):
        pto.lax.after_all(pnp.ones(2))
    with pytest.raises(TypeError):
        jax.lax.after_all(np.ones(2))
    out, y = pto.jit(lambda t, x: (pto.lax.after_all(t, pto.lax.create_token(x)), x * 2))(
        token, np.ones(2, np.float32))
    assert type(out) is type(token)
    assert_close(y, np.full(2, 2.0, np.float32))
    assert pto.lax.dce_sink({"a": pnp.ones(2)}) is None
    assert pto.jit(lambda x: pto.lax.dce_sink(x))(1.0) is None


def test_composite_runs_its_decomposition(jax):
    def scale(lib):
        return lib.lax.composite(lambda x, *, n: lib.numpy.sin(x) * n, name="my.scale")
    x = RNG.randn(3).astype(np.float32)
    _same(scale(pto)(x, n=3.0), scale(jax)(x, n=3.0))
    _same(pto.jit(lambda v: scale(pto)(v, n=2.0))(x), jax.jit(lambda v: scale(jax)(v, n=2.0))(x))
    # JAX has no batching rule or JVP for composites; ptojax transforms the decomposition
    _same(pto.vmap(lambda v: scale(pto)(v, n=2.0))(x), scale(jax)(x, n=2.0), rtol=1e-6)
    assert_close(pto.grad(lambda v: scale(pto)(v, n=3.0).sum())(x), 3 * np.cos(x), rtol=1e-6)
    with pytest.raises(ValueError, match="name must be a non-empty string"):
        pto.lax.composite(lambda x: x, name="")(x)     # checked when called, as JAX's
    with pytest.raises(TypeError, match="decomposition must be callable"):
        pto.lax.composite([1.0], name="my.scale")(x)


def test_platform_dependent_picks_cpu(jax):
    x = RNG.randn(3).astype(np.float32)

    def f(lib, **branches):
        return lambda v: lib.lax.platform_dependent(v, **branches)
    for branches in (dict(cpu=lambda v: v * 2, default=lambda v: v),
                     dict(tpu=lambda v: v * 2, default=lambda v: v - 1),
                     dict(cpu=lambda v: v * v)):
        _same(f(pto, **branches)(x), f(jax, **branches)(x))
        _same(pto.jit(f(pto, **branches))(x), jax.jit(f(jax, **branches))(x))
        _same(pto.vmap(f(pto, **branches))(x), jax.vmap(f(jax, **branches))(x))
    g = dict(cpu=lambda v: v * v, default=lambda v: v)
    assert_close(pto.grad(f(pto, **g))(3.0), jax.grad(f(jax, **g))(3.0))
    with pytest.raises(NotImplementedError):
        pto.lax.platform_dependent(x, tpu=lambda v: v)
    with pytest.raises(NotImplementedError):
        jax.lax.platform_dependent(x, tpu=lambda v: v)


# precision presets, rounding, accuracy ----------------------------------------------------------
PRESETS = ["DEFAULT", "F16_F16_F16", "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6",
           "F32_F32_F32", "F64_F64_F64"]
REJECTED = ["ANY_F8_ANY_F8_F32", "TF32_TF32_F32", "BF16_BF16_BF16", "F16_F16_F32",
            "BF16_BF16_F32_X9"]


def test_dot_algorithm_presets_match_jax_on_cpu(jax):
    x = RNG.randn(4, 5).astype(np.float32)
    y = RNG.randn(5, 3).astype(np.float32)
    assert [p.name for p in pto.lax.DotAlgorithmPreset] == \
        [p.name for p in jax.lax.DotAlgorithmPreset]
    for name in PRESETS:
        for precision in (getattr(pto.lax.DotAlgorithmPreset, name), name):
            jprecision = precision if isinstance(precision, str) else \
                getattr(jax.lax.DotAlgorithmPreset, name)
            _same(pto.lax.dot(x, y, precision=precision), jax.lax.dot(x, y, precision=jprecision),
                  rtol=1e-6)
    for name in REJECTED:
        with pytest.raises(ValueError, match="not supported by dot_general on CPU"):
            pto.lax.dot(x, y, precision=getattr(pto.lax.DotAlgorithmPreset, name))
        with pytest.raises(ValueError, match="not supported by dot_general on CPU"):
            jax.lax.dot(x, y, precision=getattr(jax.lax.DotAlgorithmPreset, name))
    algorithm = pto.lax.DotAlgorithm(np.float32, np.float32, np.float32)
    with pytest.raises(ValueError, match="not supported"):
        pto.lax.dot(x, y, precision=algorithm)
    preset = pto.lax.DotAlgorithmPreset.BF16_BF16_F32
    assert preset.accumulation_type == jax.lax.DotAlgorithmPreset.BF16_BF16_F32.accumulation_type

    def loss(lib, p):
        return lambda a: (lib.lax.dot(a, y, precision=p) ** 2).sum()
    assert_close(pto.grad(loss(pto, preset))(x),
                 jax.grad(loss(jax, jax.lax.DotAlgorithmPreset.BF16_BF16_F32))(x), rtol=1e-5)
    _same(pto.jit(loss(pto, "F16_F16_F16"))(x), jax.jit(loss(jax, "F16_F16_F16"))(x), rtol=1e-3)


def test_rounding_method_matches_jax(jax):
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.2], np.float32)
    assert [m.name for m in pto.lax.RoundingMethod] == [m.name for m in jax.lax.RoundingMethod]
    for method in (0, 1, pto.lax.RoundingMethod.TO_NEAREST_EVEN):
        jmethod = int(method)
        _same(pto.lax.round(x, method), jax.lax.round(x, jmethod))
        _same(pto.lax.round(x, rounding_method=method), jax.lax.round(x, rounding_method=jmethod))
    _same(pto.lax.round(x), jax.lax.round(x))
    with pytest.raises(ValueError):
        pto.lax.round(x, 7)


@pytest.mark.parametrize("name", ["cbrt", "cos", "exp", "exp2", "expm1", "log", "log1p",
                                  "logistic", "rsqrt", "sin", "sqrt", "tan", "tanh"])
def test_accuracy_keyword_matches_jax(jax, name):
    x = np.linspace(0.1, 1.5, 5).astype(np.float32)
    for ours, theirs in ((pto.lax.AccuracyMode.HIGHEST, jax.lax.AccuracyMode.HIGHEST),
                         (pto.lax.Tolerance(atol=1e-3), jax.lax.Tolerance(atol=1e-3))):
        _same(getattr(pto.lax, name)(x, accuracy=ours), getattr(jax.lax, name)(x, accuracy=theirs),
              rtol=1e-6)
    with pytest.raises(NotImplementedError):
        getattr(pto.lax, name)(x, accuracy="HIGHEST")


def test_tolerance_checks_like_jax(jax):
    for kwargs in (dict(atol=-1.0), dict()):
        with pytest.raises(ValueError):
            pto.lax.Tolerance(**kwargs)
        with pytest.raises(ValueError):
            jax.lax.Tolerance(**kwargs)


# scatter_apply ----------------------------------------------------------------------------------
SCATTER_APPLY = [  # (operand shape, indices, update_shape, dnums, mode)
    ((5,), [[1], [3], [1], [7]], (4,), ((), (0,), (0,)), None),
    ((5,), [[1], [3], [1], [7]], (4,), ((), (0,), (0,)), "clip"),
    ((4, 3), [[0], [2]], (2, 3), ((1,), (0,), (0,)), None),
    ((4, 3), [[0, 1], [3, 2], [0, 1]], (3,), ((), (0, 1), (0, 1)), "promise_in_bounds"),
]


def _scatter_dn(lib, dn):
    window, inserted, to_operand = dn
    return lib.lax.ScatterDimensionNumbers(update_window_dims=window,
                                           inserted_window_dims=inserted,
                                           scatter_dims_to_operand_dims=to_operand)


@pytest.mark.parametrize("shape, indices, update_shape, dn, mode", SCATTER_APPLY)
def test_scatter_apply_matches_jax(jax, shape, indices, update_shape, dn, mode):
    x = RNG.randn(*shape).astype(np.float32)
    idx = np.array(indices, np.int32)

    def f(lib, fn):
        return lambda v: lib.lax.scatter_apply(v, idx, fn(lib), _scatter_dn(lib, dn),
                                               update_shape=update_shape, mode=mode)
    twice = lambda lib: lambda v: 2 * v + 1     # noqa: E731  (hit twice: applied twice)
    _same(f(pto, twice)(x), f(jax, twice)(x))
    sin = lambda lib: lib.numpy.sin      # noqa: E731
    _same(pto.jit(f(pto, sin))(x), jax.jit(f(jax, sin))(x), rtol=1e-6)
    _same(pto.vmap(f(pto, sin))(np.stack([x, -x])), jax.vmap(f(jax, sin))(np.stack([x, -x])),
          rtol=1e-6)


def test_scatter_apply_keeps_integer_dtype_and_checks(jax):
    x = np.arange(5, dtype=np.int32)
    dn = ((), (0,), (0,))
    idx = np.array([[0], [2]], np.int32)
    _same(pto.lax.scatter_apply(x, idx, lambda v: v * 3, _scatter_dn(pto, dn), update_shape=(2,)),
          jax.lax.scatter_apply(x, idx, lambda v: v * 3, _scatter_dn(jax, dn), update_shape=(2,)))
    with pytest.raises(TypeError):
        pto.lax.scatter_apply(x, idx, lambda v: v, _scatter_dn(pto, dn))   # no update_shape


# ragged_dot_general -----------------------------------------------------------------------------
RAGGED = [  # (lhs shape, rhs shape, dot dimension numbers, lhs ragged, rhs group, JAX grads)
    ((6, 4), (3, 4, 5), (((1,), (1,)), ((), ())), [0], [0], True),
    ((4, 6), (6, 5), (((1,), (0,)), ((), ())), [1], [], False),
    ((6, 4, 3), (6, 3, 5), (((2,), (1,)), ((0,), (0,))), [0], [], False),
    ((2, 4, 6), (2, 6, 5), (((2,), (1,)), ((0,), (0,))), [2], [], False),
    ((2, 6, 4), (2, 3, 4, 5), (((2,), (2,)), ((0,), (0,))), [1], [1], True),
]


@pytest.mark.parametrize("lshape, rshape, dims, ragged, group, grads", RAGGED)
def test_ragged_dot_general_matches_jax(jax, lshape, rshape, dims, ragged, group, grads):
    lhs, rhs = RNG.randn(*lshape).astype(np.float32), RNG.randn(*rshape).astype(np.float32)
    sizes = np.array([2, 0, 3], np.int32)    # the last ragged element is in no group

    def f(lib):
        dn = lib.lax.RaggedDotDimensionNumbers(dims, ragged, group)
        return lambda a, b: lib.lax.ragged_dot_general(a, b, sizes, dn)
    _same(f(pto)(lhs, rhs), f(jax)(lhs, rhs), rtol=1e-5, atol=1e-6)
    _same(pto.jit(f(pto))(lhs, rhs), jax.jit(f(jax))(lhs, rhs), rtol=1e-5, atol=1e-6)
    if grads:   # JAX differentiates only the ragged-free-dimension mode
        def loss(lib):
            return lambda a, b: (f(lib)(a, b) ** 2).sum()
        assert_close(pto.grad(loss(pto), argnums=(0, 1))(lhs, rhs),
                     jax.grad(loss(jax), argnums=(0, 1))(lhs, rhs), rtol=1e-5, atol=1e-5)


BATCHED_GROUPS = [  # group_sizes with the lhs batch dims first (wherever the batch dim is)
    ((2, 6, 4), (2, 3, 4, 5), (((2,), (2,)), ((0,), (0,))), [1], [1]),
    ((2, 4, 6), (2, 6, 5), (((2,), (1,)), ((0,), (0,))), [2], []),
    ((6, 2, 4), (3, 2, 4, 5), (((2,), (2,)), ((1,), (1,))), [0], [0]),
]


@pytest.mark.parametrize("lshape, rshape, dims, ragged, group", BATCHED_GROUPS)
def test_ragged_dot_general_batched_group_sizes_match_jax(jax, lshape, rshape, dims, ragged,
                                                          group):
    lhs, rhs = RNG.randn(*lshape).astype(np.float32), RNG.randn(*rshape).astype(np.float32)
    sizes = np.array([[2, 0, 3], [1, 1, 1]], np.int32)
    ours = pto.lax.ragged_dot_general(lhs, rhs, sizes,
                                      pto.lax.RaggedDotDimensionNumbers(dims, ragged, group))
    theirs = jax.lax.ragged_dot_general(lhs, rhs, sizes,
                                        jax.lax.RaggedDotDimensionNumbers(dims, ragged, group))
    _same(ours, theirs, rtol=1e-5, atol=1e-6)


def test_ragged_dot_general_errors():
    dn = pto.lax.RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), [0], [0])
    lhs, rhs = np.ones((4, 2), np.float32), np.ones((3, 2, 2), np.float32)
    with pytest.raises(TypeError, match="group dimension"):
        pto.lax.ragged_dot_general(lhs, rhs, np.array([1, 2], np.int32), dn)
    with pytest.raises(TypeError, match="expected group_sizes to have shape"):
        pto.lax.ragged_dot_general(lhs, rhs, np.ones((2, 3), np.int32), dn)
    with pytest.raises(TypeError):
        pto.lax.ragged_dot_general(lhs, rhs, np.ones(3, np.int32), "not dimension numbers")


# conv_general_dilated_local ---------------------------------------------------------------------
LOCAL = [  # (lhs shape, conv kwargs)
    ((2, 3, 5, 6), dict(window_strides=(1, 2), padding="SAME", filter_shape=(2, 3))),
    ((2, 3, 5, 6), dict(window_strides=(2, 1), padding=((1, 0), (0, 2)), filter_shape=(3, 2),
                        rhs_dilation=(1, 2))),
    ((2, 5, 6, 3), dict(window_strides=(1, 1), padding="VALID", filter_shape=(2, 2),
                        dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    ((2, 5, 6, 3), dict(window_strides=(1, 1), padding=((0, 1), (1, 1)), filter_shape=(2, 2),
                        dimension_numbers=("NHWC", "OIHW", "NCHW"), lhs_dilation=(2, 1))),
]


def _local_rhs(jax, x, kw, out_features=4):
    """Weights of the shape conv_general_dilated_local needs for ``x`` and ``kw``."""
    patches = jax.lax.conv_general_dilated_patches(
        x, kw["filter_shape"], kw["window_strides"], kw["padding"], kw.get("lhs_dilation"),
        kw.get("rhs_dilation"), kw.get("dimension_numbers"))
    dn = jax.lax.conv_dimension_numbers(x.shape, (1, 1, *kw["filter_shape"]),
                                        kw.get("dimension_numbers"))
    shape = [0] * x.ndim
    shape[dn.rhs_spec[0]], shape[dn.rhs_spec[1]] = out_features, patches.shape[dn.out_spec[1]]
    for o, r in zip(dn.out_spec[2:], dn.rhs_spec[2:]):
        shape[r] = patches.shape[o]
    return RNG.randn(*shape).astype(np.float32)


@pytest.mark.parametrize("shape, kw", LOCAL)
def test_conv_general_dilated_local_matches_jax(jax, shape, kw):
    x = RNG.randn(*shape).astype(np.float32)
    w = _local_rhs(jax, x, kw)

    def f(lib):
        return lambda a, b: lib.lax.conv_general_dilated_local(a, b, **kw)
    _same(f(pto)(x, w), f(jax)(x, w), rtol=1e-5, atol=1e-5)


def test_conv_general_dilated_local_grads_match_jax(jax):
    shape, kw = LOCAL[3]    # (JAX's grad compiles slowly: one case, the most general layout)
    x = RNG.randn(*shape).astype(np.float32)
    w = _local_rhs(jax, x, kw)

    def loss(lib):
        return lambda a, b: (lib.lax.conv_general_dilated_local(a, b, **kw) ** 2).sum()
    assert_close(pto.grad(loss(pto), argnums=(0, 1))(x, w),
                 jax.grad(loss(jax), argnums=(0, 1))(x, w), rtol=1e-4, atol=1e-4)


def test_conv_general_dilated_local_vmap_and_jit(jax):
    shape, kw = LOCAL[0]
    xs = RNG.randn(2, *shape).astype(np.float32)
    w = _local_rhs(jax, xs[0], kw)

    def f(lib):
        return lib.vmap(lambda a: lib.lax.conv_general_dilated_local(a, w, **kw))
    _same(pto.jit(f(pto))(xs), jax.jit(f(jax))(xs), rtol=1e-5, atol=1e-5)


# collectives over named axes ---------------------------------------------------------------------
def test_pshuffle_pswapaxes_pbroadcast_match_jax(jax):
    x = RNG.randn(4, 3).astype(np.float32)
    y = RNG.randn(4, 4, 2).astype(np.float32)

    def named(lib, fn, v):
        return lib.vmap(fn(lib), axis_name="i")(v)
    shuffle = lambda lib: lambda v: lib.lax.pshuffle(v, "i", [1, 2, 3, 0])   # noqa: E731
    swap = lambda lib: lambda v: lib.lax.pswapaxes(v, "i", 0)                # noqa: E731
    _same(named(pto, shuffle, x), named(jax, shuffle, x))
    _same(named(pto, swap, y), named(jax, swap, y))
    _same(pto.jit(lambda v: named(pto, swap, v))(y), named(jax, swap, y))
    # JAX's pbroadcast fails under vmap (0.10): compare with the source's slice
    broadcast = pto.vmap(lambda v: pto.lax.pbroadcast(v, "i", 2), axis_name="i")(x)
    _same(broadcast, np.broadcast_to(x[2], x.shape))
    assert_close(pto.grad(lambda v: (pto.vmap(lambda r: pto.lax.pbroadcast(r, "i", 1) ** 2,
                                              axis_name="i")(v)).sum())(x),
                 _pbroadcast_grad(x, 1))
    with pytest.raises(ValueError, match="permutation"):
        pto.lax.pshuffle(x, "i", [0, 0])
    with pytest.raises(ValueError):
        pto.vmap(lambda v: pto.lax.pbroadcast(v, "i", 9), axis_name="i")(x)


def _pbroadcast_grad(x, source):
    g = np.zeros_like(x)
    g[source] = 2 * x[source] * x.shape[0]
    return g


def test_pcast_keeps_values():
    x = np.arange(3.0, dtype=np.float32)
    _same(pto.vmap(lambda v: pto.lax.pcast(v, "i", to="varying"), axis_name="i")(x), x)
    with pytest.raises(ValueError, match="`to`"):
        pto.lax.pcast(x, "i", to="sideways")
    with pytest.raises(TypeError):
        pto.lax.pcast(x, {"i"}, to="varying")


def test_type_aliases_are_jax_shaped(jax):
    import typing
    assert pto.lax.Precision in typing.get_args(pto.lax.PrecisionLike)
    assert pto.lax.DotAlgorithmPreset in typing.get_args(pto.lax.PrecisionLike)
    assert typing.get_origin(pto.lax.DotDimensionNumbers) is tuple
    assert pto.lax.ConvDimensionNumbers in typing.get_args(
        pto.lax.ConvGeneralDilatedDimensionNumbers)


# rng_bit_generator ------------------------------------------------------------------------------
RNG_SHAPES = [(), (5,), (3, 3), (6, 1, 3), (0, 3)]
RNG_KEYS = [[0, 42, 0, 0], [5, 6, 0xFFFFFFFF, 0xFFFFFFFF]]   # (the second carries into s0)


def _same_bits(ours, theirs):
    for a, b in zip(ours, theirs):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("algorithm", ["RNG_THREE_FRY", "RNG_PHILOX"])
def test_rng_bit_generator_is_bit_exact_with_jax(jax, algorithm):
    ours_alg = getattr(pto.lax.RandomAlgorithm, algorithm)
    theirs_alg = getattr(jax.lax.RandomAlgorithm, algorithm)
    for shape in RNG_SHAPES:
        for words in RNG_KEYS:
            key = np.array(words, np.uint32)
            _same_bits(pto.lax.rng_bit_generator(key, shape, np.uint32, ours_alg),
                       jax.lax.rng_bit_generator(key, shape, np.uint32, theirs_alg))
    key = np.array([1, 2, 3, 4], np.uint32)    # narrower results keep the low bits
    _same_bits(pto.lax.rng_bit_generator(key, (3, 2), np.uint8, ours_alg),
               jax.lax.rng_bit_generator(key, (3, 2), np.uint8, theirs_alg))


def test_rng_bit_generator_default_is_philox_as_on_cpu(jax):
    key = np.array([1, 2, 3, 4], np.uint32)
    _same_bits(pto.lax.rng_bit_generator(key, (7,)), jax.lax.rng_bit_generator(key, (7,)))


def test_rng_bit_generator_jit_vmap_and_errors(jax):
    keys = np.array(RNG_KEYS, np.uint32)

    def f(lib):
        return lambda k: lib.lax.rng_bit_generator(k, (2, 3), np.uint16)
    # vmap is one generator per key (JAX's batching rule draws every row from the first key)
    ours = pto.jit(pto.vmap(f(pto)))(keys)
    theirs = [jax.jit(f(jax))(k) for k in keys]
    for i in range(2):
        np.testing.assert_array_equal(np.asarray(ours[i]), np.stack([t[i] for t in theirs]))
    with pytest.raises(TypeError, match="unsupported dtype"):
        pto.lax.rng_bit_generator(keys[0], (2,), np.int32)
    with pytest.raises(NotImplementedError, match="uint32"):
        pto.lax.rng_bit_generator(keys[0, :2], (2,))


def test_rng_bit_generator_uint64_in_x64(jax):
    key = np.array(RNG_KEYS[1], np.uint32)
    with jax.enable_x64(True), pto.enable_x64(True):
        for algorithm in ("RNG_THREE_FRY", "RNG_PHILOX"):
            ours = pto.lax.rng_bit_generator(key, (3, 3), np.uint64,
                                             getattr(pto.lax.RandomAlgorithm, algorithm))
            theirs = jax.lax.rng_bit_generator(key, (3, 3), np.uint64,
                                               getattr(jax.lax.RandomAlgorithm, algorithm))
            for a, b in zip(ours, theirs):
                assert np.asarray(a).dtype == np.asarray(b).dtype
                np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


# scaled_dot -------------------------------------------------------------------------------------
SCALED = [  # (lhs, rhs, lhs_scale, rhs_scale shapes, dimension_numbers, preferred type)
    ((4, 64), (64, 8), (4, 2), (2, 8), None, None),
    ((2, 4, 32), (2, 32, 8), (2, 4, 4), (2, 4, 8), None, np.float32),
    ((4, 64), (8, 64), (4, 16), (8, 16), (((1,), (1,)), ((), ())), np.float32),
    ((4, 64), (64, 8), None, None, None, None),
]


@pytest.mark.parametrize("lshape, rshape, lscale, rscale, dims, pet", SCALED)
def test_scaled_dot_matches_jax(jax, lshape, rshape, lscale, rscale, dims, pet):
    lhs, rhs = RNG.randn(*lshape).astype(np.float32), RNG.randn(*rshape).astype(np.float32)
    kw = dict(dimension_numbers=dims, preferred_element_type=pet)
    if lscale:
        kw.update(lhs_scale=np.abs(RNG.randn(*lscale)).astype(np.float32),
                  rhs_scale=np.abs(RNG.randn(*rscale)).astype(np.float32))
    ours, theirs = pto.lax.scaled_dot(lhs, rhs, **kw), jax.lax.scaled_dot(lhs, rhs, **kw)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    assert_close(np.asarray(ours, np.float32), np.asarray(theirs, np.float32), rtol=1e-5,
                 atol=1e-5)


def test_scaled_dot_errors_match_jax(jax):
    lhs, rhs = np.ones((4, 6), np.float32), np.ones((6, 2), np.float32)
    for kw in (dict(lhs_scale=np.ones((4, 4), np.float32), rhs_scale=np.ones((3, 2), np.float32)),
               dict(lhs_scale=np.ones((4, 6), np.float32), rhs_scale=np.ones((3, 2), np.float32)),
               dict(lhs_scale=np.ones((3, 3), np.float32), rhs_scale=np.ones((3, 2), np.float32))):
        with pytest.raises(TypeError):
            pto.lax.scaled_dot(lhs, rhs, **kw)
        with pytest.raises(TypeError):
            jax.lax.scaled_dot(lhs, rhs, **kw)
    with pytest.raises(TypeError, match="0-rank and 1-rank"):
        pto.lax.scaled_dot(np.ones(4, np.float32), np.ones(4, np.float32))


# rng_uniform ------------------------------------------------------------------------------------
def test_rng_uniform_draws_fresh_bounded_numbers(jax):
    for a, b in ((2.0, 3.0), (-3, 3), (np.float16(0), np.float16(1))):
        ours, theirs = pto.lax.rng_uniform(a, b, (500,)), jax.lax.rng_uniform(a, b, (500,))
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        values = np.asarray(ours)
        assert (values >= a).all() and (values < b).all()
        assert len(np.unique(values)) > 1
    draw = pto.jit(lambda: pto.lax.rng_uniform(0.0, 1.0, (8,)))
    assert not np.array_equal(np.asarray(draw()), np.asarray(draw()))   # stateful, as JAX
    for args in ((0, 1.0, (2,)), (np.zeros(2, np.float32), 1.0, (2,))):
        with pytest.raises(ValueError):
            pto.lax.rng_uniform(*args)
        with pytest.raises(ValueError):
            jax.lax.rng_uniform(*args)


# ragged_all_to_all (JAX's CPU backend does not run it: against its documented semantics) -----
def _ragged_plan(rng, n, per_device, rows):
    """Consistent per-device arguments: sender s's slices lie back to back in its operand, and
    each receiver packs its incoming slices back to back in its output."""
    k = n * per_device
    send = rng.randint(0, 3, size=(n, k))
    input_offsets = np.concatenate([np.zeros((n, 1), int), np.cumsum(send, 1)[:, :-1]], 1)
    recv = np.zeros((n, k), int)
    output_offsets = np.zeros((n, k), int)
    for r in range(n):
        cursor = 0
        for s in range(n):
            for j in range(per_device):
                size = send[s, r * per_device + j]
                recv[r, s * per_device + j] = size
                output_offsets[s, r * per_device + j] = cursor
                cursor += size
    operand = rng.randn(n, rows, 2).astype(np.float32)
    output = np.full((n, rows, 2), -1.0, np.float32)
    return [operand, output] + [a.astype(np.int32) for a in
                                (input_offsets, send, output_offsets, recv)]


def _ragged_reference(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes):
    """JAX's docstring pseudocode, per receiving device."""
    n, k = input_offsets.shape
    per_device = k // n
    result = output.copy()
    for r in range(n):
        for i in range(k):
            s, j = divmod(i, per_device)
            slot = r * per_device + j        # the sender's slice index for receiver r
            start, size = output_offsets[s, slot], recv_sizes[r, i]
            begin = input_offsets[s, slot]
            result[r, start:start + size] = operand[s, begin:begin + size]
    return result


@pytest.mark.parametrize("n, per_device", [(2, 1), (3, 2)])
def test_ragged_all_to_all_follows_jax_semantics(n, per_device):
    args = _ragged_plan(np.random.RandomState(n), n, per_device, rows=3 * n * per_device)

    def f(*a):
        return pto.lax.ragged_all_to_all(*a, axis_name="i")
    expected = _ragged_reference(*args)
    _same(pto.vmap(f, axis_name="i")(*args), expected)
    _same(pto.jit(pto.vmap(f, axis_name="i"))(*args), expected)
    # linear in the operand: each row's gradient counts the receivers it is written to
    grad = pto.grad(lambda o: pto.vmap(f, axis_name="i")(o, *args[1:]).sum())(args[0])
    sent = np.zeros(args[0].shape, np.float32)
    offsets, sizes = args[2], args[3]
    for s in range(n):
        for i in range(offsets.shape[1]):
            sent[s, offsets[s, i]:offsets[s, i] + sizes[s, i]] += 1
    _same(grad, sent)


def test_ragged_all_to_all_errors():
    x = np.zeros((2, 4), np.float32)
    ints = np.zeros((2, 3), np.int32)
    with pytest.raises(ValueError, match="divisible"):
        pto.vmap(lambda *a: pto.lax.ragged_all_to_all(*a, axis_name="i"), axis_name="i")(
            x, x, ints, ints, ints, ints)
    with pytest.raises(NotImplementedError):
        pto.lax.ragged_all_to_all(x, x, ints, ints, ints, ints, axis_name="i",
                                  axis_index_groups=[[0, 1]])
