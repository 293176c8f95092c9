"""Type promotion of ptojax.numpy against JAX's: every dtype pair, weak Python scalars on either
side, results weak or not — eagerly and under jit. JAX's side is ``jax.eval_shape`` (no
compilation), mapped to ptojax's 32-bit defaults by the oracle in pnp_reference."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.errors import DtypeError
from pnp_reference import ALL_DTYPES, expected_dtype, explicit_dtypes

SCALARS = [True, 3, 2.5]
BINARY = ["add", "multiply", "maximum", "where_xy"]


def _jax_result(jax, jnp, name, a, b):
    """(dtype, weak) of the JAX result without x64 (ptojax's default mode), or None if JAX
    refuses to promote."""
    fn = (lambda x, y: jnp.where(True, x, y)) if name == "where_xy" else getattr(jnp, name)
    try:
        with jax.enable_x64(False):
            out = jax.eval_shape(fn, a, b)
    except (TypeError, jax.dtypes.TypePromotionError):
        return None
    return np.dtype(out.dtype), out.weak_type


def _pto_fn(name):
    if name == "where_xy":
        return lambda x, y: pnp.where(True, x, y)
    return getattr(pnp, name)


def _abstract(jax, x):
    if isinstance(x, np.ndarray):
        return jax.ShapeDtypeStruct(x.shape, x.dtype)
    return x


def _assert_promotes_like_jax(jax, jnp, name, a, b):
    expected = _jax_result(jax, jnp, name, _abstract(jax, a), _abstract(jax, b))
    fn = _pto_fn(name)
    if expected is None:
        with pytest.raises(DtypeError, match="no common dtype"):
            fn(a, b)
        return
    dtype, weak = expected
    for mode, out in (("eager", fn(a, b)), ("jit", pto.jit(fn)(a, b))):
        if dtype == pnp.bool_:  # JAX never marks bools weak; ptojax keeps Python bools weak,
            weak = out.weak_type  # which cannot change any promotion (bool has no weak node)
        assert (out.dtype, out.weak_type) == (dtype, weak), \
            f"{mode} {name}({a!r:.30}, {b!r:.30}): ({out.dtype}, weak={out.weak_type}), " \
            f"expected ({dtype}, weak={weak})"


@pytest.mark.parametrize("left", ALL_DTYPES, ids=str)
def test_array_pairs_promote_like_jax(jax, jnp, left):
    for right in ALL_DTYPES:
        a, b = np.ones(2, left), np.zeros(2, right)
        _assert_promotes_like_jax(jax, jnp, "add", a, b)


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_weak_python_scalars_promote_like_jax(jax, jnp, name, dtype):
    x = np.ones(3, dtype)
    for s in SCALARS:
        _assert_promotes_like_jax(jax, jnp, name, x, s)
        _assert_promotes_like_jax(jax, jnp, name, s, x)


@pytest.mark.parametrize("a", SCALARS + [np.float16(1), np.int64(2)], ids=repr)
@pytest.mark.parametrize("b", SCALARS, ids=repr)
def test_scalar_only_operations_give_weak_32_bit_defaults(jax, jnp, a, b):
    _assert_promotes_like_jax(jax, jnp, "add", a, b)


@pytest.mark.parametrize("a", ALL_DTYPES, ids=str)
def test_result_type_and_promote_types_match_jax(jax, jnp, a):
    """As JAX without x64: ``promote_types`` keeps 64-bit types, ``result_type`` of arrays
    gives the canonical (32-bit) type."""
    for b in ALL_DTYPES:
        with jax.enable_x64(False):
            try:
                want = jnp.promote_types(a, b)
            except (TypeError, ValueError):
                with pytest.raises(DtypeError):
                    pnp.promote_types(a, b)
                continue
            want_result = jnp.result_type(np.ones(1, a), np.ones(1, b))
        assert pnp.promote_types(a, b) == want, (a, b)
        assert pnp.result_type(np.ones(1, a), np.ones(1, b)) == want_result, (a, b)


def test_weak_scalar_keeps_a_narrow_array_narrow():
    x = pnp.ones(4, pnp.float16)
    for out in (x * 2.0, 2.0 * x, x + 1, pnp.maximum(x, 0.5), pnp.where(x > 0, x, 0.0)):
        assert out.dtype == pnp.float16 and not out.weak_type
    assert (pnp.ones(4, pnp.int8) + 300).dtype == pnp.int8


def test_64_bit_numpy_inputs_are_32_bit_without_x64_and_stay_64_bit_with_it(jax, jnp):
    cases = [("multiply", np.arange(3.0), 2), ("add", np.arange(3, dtype=np.int64), 1.5),
             ("add", np.arange(3, dtype=np.int32), 1.5), ("mean", np.arange(3, dtype=np.int64)),
             ("mean", np.arange(3, dtype=np.int32))]
    for x64, wide in ((False, pnp.float32), (True, pnp.float64)):
        with jax.enable_x64(x64), pto.enable_x64(x64):
            for name, *args in cases:
                want = getattr(jnp, name)(*args).dtype
                assert getattr(pnp, name)(*args).dtype == want, (x64, name, args)
            assert pnp.multiply(np.arange(3.0), 2).dtype == wide
    assert pnp.add(np.arange(3, dtype=np.int32), 1.5).dtype == pnp.float32


HUGE = 3.4028235677973366e+38        # just beyond float32's largest value


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.float16, np.float32], ids=str)
def test_python_floats_beyond_the_range_become_inf_silently_as_in_jax(jax, jnp, dtype):
    """A Python float a weak dtype cannot hold is inf (as JAX), with no numpy warning, eagerly,
    under jit, and in asarray/full. (The test configuration turns warnings into errors.)"""
    x = np.ones((2,), dtype)
    cases = [(lambda m, v: m.add(v, HUGE), x), (lambda m, v: m.asarray(v) * 1e39, x),
             (lambda m, v: m.full((2,), 1e39, m.float16) + v, x),
             (lambda m, v: m.asarray(-1e39, m.float16) + v, x)]
    for fn, arg in cases:
        jax_value = np.asarray(fn(jnp, arg))       # JAX in x64 mode: narrowed by our oracle
        dtype_expected = expected_dtype(jax_value.dtype, explicit_dtypes(arg))
        with np.errstate(over="ignore"):
            expected = jax_value.astype(dtype_expected)
        for got in (fn(pnp, arg), pto.jit(lambda v: fn(pnp, v))(arg)):
            assert np.asarray(got).dtype == dtype_expected
            np.testing.assert_array_equal(np.asarray(got), expected)


# joins, products, triangles of weakly typed operands: (name, fn(m, x, y)) with x a weak int32 scalar
# array and y weak float32 ones (``asarray`` of Python scalars, ``full`` with a Python fill)
WEAK_COMBINATIONS = [
    ("concatenate", lambda m, x, y: m.concatenate([x[None], m.full(2, 2.0)])),
    ("concatenate axis=None", lambda m, x, y: m.concatenate([x, y], axis=None)),
    ("stack", lambda m, x, y: m.stack([x, y])),
    ("stack of Python scalars", lambda m, x, y: m.stack([1, 2.0])),
    ("hstack", lambda m, x, y: m.hstack([1, 2.0])),
    ("vstack", lambda m, x, y: m.vstack((x, y))),
    ("column_stack", lambda m, x, y: m.column_stack([1, 2.0])),
    ("append", lambda m, x, y: m.append(x, 2.0)),
    ("block", lambda m, x, y: m.block([x[None], y[None]])),
    ("r_", lambda m, x, y: m.r_[1, 2.0]),
    ("concatenate with a strong one", lambda m, x, y: m.concatenate([y[None], m.ones(1)])),
    ("concatenate dtype=", lambda m, x, y: m.concatenate([y[None], y[None]],
                                                          dtype=m.float32)),
    ("dot", lambda m, x, y: m.dot(m.full(2, y), m.full(2, 3.0))),
    ("dot of matrix and vector", lambda m, x, y: m.full((2, 2), 3.0).dot(m.full(2, y))),
    ("matmul", lambda m, x, y: m.full((2, 2), 3.0) @ m.full((2, 2), y)),
    ("matmul with a strong one", lambda m, x, y: m.full((2, 2), 3.0) @ m.ones((2, 2))),
    ("outer", lambda m, x, y: m.outer(x, y)),
    ("inner", lambda m, x, y: m.inner(m.full(2, y), m.full(2, y))),
    ("vdot", lambda m, x, y: m.vdot(m.full(2, y), m.full(2, y))),
    ("tensordot", lambda m, x, y: m.tensordot(m.full((2, 2), y), m.full((2, 2), y))),
    ("einsum", lambda m, x, y: m.einsum("ij,j->i", m.full((2, 2), y), m.full(2, y))),
    ("matvec", lambda m, x, y: m.matvec(m.full((2, 2), y), m.full(2, y))),
    ("vecdot", lambda m, x, y: m.vecdot(m.full(2, y), m.full(2, y))),
    ("tril", lambda m, x, y: m.tril(m.full((2, 3), y))),
    ("triu", lambda m, x, y: m.triu(m.full((3, 2), y), 1)),
    ("diag of a vector", lambda m, x, y: m.diag(m.full(2, y), -1)),
    ("diag of a strong vector", lambda m, x, y: m.diag(m.ones(2))),
    ("insert", lambda m, x, y: m.insert(m.full(3, y), 1, 5.0)),
    ("interp", lambda m, x, y: m.interp(m.full(2, 0.5), m.arange(3.0) * y, m.full(3, y))),
    # strong in JAX: ends converted to the array's dtype, branches too, a stacked 3-D cross
    ("ediff1d to_begin", lambda m, x, y: m.ediff1d(m.full(3, y), to_begin=1.0)),
    ("ediff1d", lambda m, x, y: m.ediff1d(m.full(3, y))),
    ("piecewise", lambda m, x, y: m.piecewise(m.full(3, y), [m.full(3, y) > 1],
                                              [lambda v: v * 2, 0.0])),
    ("cross", lambda m, x, y: m.cross(m.full(3, 1.0), m.full(3, y))),
    ("cross of 2-vectors", lambda m, x, y: m.cross(m.full(2, 1.0), m.full(2, y))),
]


@pytest.mark.parametrize("name, fn", WEAK_COMBINATIONS, ids=[n for n, _ in WEAK_COMBINATIONS])
def test_joins_and_products_of_weak_operands_stay_weak_as_jax(jax, jnp, name, fn):
    """A join (concatenate and the stacks built on it) or a product (dot_general) of weakly
    typed operands is weak, with the dtype the weak ones promote to, as in JAX (eagerly and
    under jit); one strong operand, or an explicit dtype, makes it strong. A triangle or a
    diagonal matrix of a weak input is weak (its zeros are), as are insert and interp of weak
    operands."""
    with jax.enable_x64(False):
        want = fn(jnp, jnp.asarray(1), jnp.asarray(2.0))
    for mode, got in (("eager", fn(pnp, pnp.asarray(1), pnp.asarray(2.0))),
                      ("jit", pto.jit(lambda x, y: fn(pnp, x, y))(pnp.asarray(1),
                                                                 pnp.asarray(2.0)))):
        assert (got.dtype, got.weak_type) == (want.dtype, want.aval.weak_type), mode
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


# reductions of weakly typed operands (x: weak float32 (2, 3) ones, as ``full`` with a Python
# fill makes them; also a Python scalar): JAX ends every reduction in a conversion to its
# result dtype, so each result is strong
WEAK_REDUCTIONS = [
    ("sum", lambda m, x: m.sum(x)), ("sum axis", lambda m, x: m.sum(x, 0)),
    ("sum of a Python float", lambda m, x: m.sum(2.0)), ("prod", lambda m, x: m.prod(x, 1)),
    ("max", lambda m, x: m.max(x)), ("min initial", lambda m, x: m.min(x, initial=0.0)),
    ("mean", lambda m, x: m.mean(x, 0)), ("var", lambda m, x: m.var(x)),
    ("std keepdims", lambda m, x: m.std(x, 1, keepdims=True)),
    ("cumsum", lambda m, x: m.cumsum(x)), ("cumprod", lambda m, x: m.cumprod(x, 1)),
    ("cumulative_sum", lambda m, x: m.cumulative_sum(x, axis=1, include_initial=True)),
    ("ptp", lambda m, x: m.ptp(x)), ("trace", lambda m, x: m.trace(x)),
    ("average", lambda m, x: m.average(x, 0)), ("norm", lambda m, x: m.linalg.norm(x)),
    ("nansum", lambda m, x: m.nansum(x)), ("nanmean", lambda m, x: m.nanmean(x)),
    ("a reduction plus a float16 array stays float32",
     lambda m, x: m.mean(x) + m.ones(2, m.float16)),
]


@pytest.mark.parametrize("name, fn", WEAK_REDUCTIONS, ids=[n for n, _ in WEAK_REDUCTIONS])
def test_reductions_of_weak_operands_are_strong_as_jax(jax, jnp, name, fn):
    with jax.enable_x64(False):
        want = fn(jnp, jnp.full((2, 3), 2.0))
    for mode, got in (("eager", fn(pnp, pnp.full((2, 3), 2.0))),
                      ("jit", pto.jit(lambda x: fn(pnp, x))(pnp.full((2, 3), 2.0)))):
        assert (got.dtype, got.weak_type) == (want.dtype, want.aval.weak_type), mode
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
