"""The decomposition primitives (ops/decompositions.py) through ``pto.lax.linalg`` against
``jax.lax.linalg``: values (float32 and float64, stacks of matrices, eagerly and under jit),
compared directly where the result is unique and through invariants where it is not (signs of
eigen- and singular vectors), NaNs where a factorization fails, vmap, derivatives JAX gets
wrong or refuses, errors, sharding of stacks and flop counts. The generic impl/vmap/autodiff
checks of every primitive (tests/ops/prim_cases.py, tests/autodiff/ad_cases.py) cover them
too."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import lax
from ptojax.errors import DtypeError, ShapeError, UnsupportedError
from ptojax.ops.decompositions import geqrf
from ptojax.tools.flops import flops_by_primitive
from helpers import assert_close, positive_definite, tol

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

DTYPES = [np.float32, np.float64]
P = pto.P


def _random(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


def _signs_fixed(v, axis=-2):
    """Columns (``axis=-2``) of ``v`` with their largest-magnitude entry made positive."""
    big = np.take_along_axis(v, np.expand_dims(np.argmax(np.abs(v), axis=axis), axis), axis)
    return v * np.sign(big)


def _both_modes(fn, *args):
    """``fn`` eagerly and under jit: the same values."""
    eager = fn(*args)
    assert_close(pto.jit(fn)(*args), eager, rtol=0, atol=0)
    return eager


def _close(actual, expected, dtype, scale=50):
    assert_close(np.asarray(actual), np.asarray(expected, dtype=np.asarray(actual).dtype),
                 rtol=tol(dtype, scale), atol=tol(dtype, scale))


# values against JAX ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_unique_results_match_jax(jax, dtype):
    """cholesky, triangular_solve (every flag), lu (with its pivots), geqrf (LAPACK's QR, which
    JAX exposes as ``qr(mode="raw")``) and lu_pivots_to_permutation have one answer: JAX's."""
    rng = np.random.default_rng(0)
    spd = positive_definite(rng, (2, 4, 4), dtype)
    a = (_random(rng, (2, 4, 4), dtype) + 4 * np.eye(4)).astype(dtype)
    b_left, b_right = _random(rng, (2, 4, 3), dtype), _random(rng, (2, 3, 4), dtype)
    wide, tall = _random(rng, (2, 3, 5), dtype), _random(rng, (5, 3), dtype)
    flags = [dict(left_side=l, lower=lo, transpose_a=t, unit_diagonal=u)
             for l in (True, False) for lo in (True, False) for t in (True, False)
             for u in (True, False)]

    def run(linalg, geqrf, spd, a, b_left, b_right, wide, tall):
        outs = [linalg.cholesky(spd), linalg.cholesky(spd, symmetrize_input=False)]
        outs += [linalg.triangular_solve(a, b_left if f["left_side"] else b_right, **f)
                 for f in flags]
        outs += [linalg.triangular_solve(a[0], b_left[0, :, 0], left_side=True)]
        for x in (a, wide, tall):
            lu, pivots, permutation = linalg.lu(x)
            outs += [lu, pivots, permutation,
                     linalg.lu_pivots_to_permutation(pivots, x.shape[-2])]
            outs += list(geqrf(x))
        return outs

    def jax_geqrf(x):  # JAX's geqrf is jnp.linalg.qr(mode="raw"), transposed
        h, taus = jax.numpy.linalg.qr(x, mode="raw")
        return h.mT, taus

    args = (spd, a, b_left, b_right, wide, tall)
    got = _both_modes(lambda *xs: run(lax.linalg, geqrf, *xs), *args)
    want = jax.jit(lambda *xs: run(jax.lax.linalg, jax_geqrf, *xs))(*args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        _close(g, w, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 3), (3, 5)], ids=str)
def test_qr_and_svd_match_jax_up_to_signs(jax, dtype, shape):
    rng = np.random.default_rng(1)
    x = _random(rng, shape, dtype)

    def run(linalg, x):
        outs = []
        for full in (True, False):
            q, r = linalg.qr(x, full_matrices=full)
            outs += [q, r]
            u, s, vt = linalg.svd(x, full_matrices=full)
            outs += [u, s, vt]
        outs.append(linalg.svd(x, compute_uv=False))
        return outs

    got = _both_modes(lambda x: run(lax.linalg, x), x)
    want = jax.jit(lambda x: run(jax.lax.linalg, x))(x)
    k = min(shape[-2:])
    for full, at in ((True, 0), (False, 5)):
        q, r, u, s, vt = (np.asarray(v) for v in got[at:at + 5])
        jq, jr, ju, js, jvt = (np.asarray(v) for v in want[at:at + 5])
        assert (q.shape, r.shape, u.shape, vt.shape) == (jq.shape, jr.shape, ju.shape,
                                                         jvt.shape)
        assert q.dtype == r.dtype == u.dtype == s.dtype == np.dtype(dtype)
        _close(q @ r, x, dtype)
        _close(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2]
                                                           + (q.shape[-1],) * 2), dtype)
        _close(np.triu(r), r, dtype)
        signs = np.sign(np.diagonal(r, axis1=-2, axis2=-1))
        jsigns = np.sign(np.diagonal(jr, axis1=-2, axis2=-1))
        _close(q[..., :k] * signs[..., None, :], jq[..., :k] * jsigns[..., None, :], dtype)
        _close(r[..., :k, :] * signs[..., :, None], jr[..., :k, :] * jsigns[..., :, None],
               dtype)
        _close(s, js, dtype)
        _close((u[..., :k] * s[..., None, :]) @ vt[..., :k, :], x, dtype)
        _close(_signs_fixed(u[..., :k]), _signs_fixed(ju[..., :k]), dtype)
        flip = np.sign(np.take_along_axis(u[..., :k], np.argmax(np.abs(u[..., :k]), -2)[
            ..., None, :], -2))
        jflip = np.sign(np.take_along_axis(ju[..., :k], np.argmax(np.abs(ju[..., :k]), -2)[
            ..., None, :], -2))
        _close(vt[..., :k, :] * np.swapaxes(flip, -1, -2),
               jvt[..., :k, :] * np.swapaxes(jflip, -1, -2), dtype)
    _close(got[-1], want[-1], dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_eigh_matches_jax_up_to_signs(jax, dtype):
    rng = np.random.default_rng(2)
    x = _random(rng, (2, 5, 5), dtype)

    def run(linalg, x):
        return [linalg.eigh(x), linalg.eigh(x, lower=False, symmetrize_input=False),
                linalg.eigh(x, symmetrize_input=False)]

    got = _both_modes(lambda x: run(lax.linalg, x), x)
    want = jax.jit(lambda x: run(jax.lax.linalg, x))(x)
    for (v, w), (jv, jw) in zip(got, want):
        v, w = np.asarray(v), np.asarray(w)
        assert v.dtype == w.dtype == np.dtype(dtype)
        _close(w, jw, dtype)
        _close(_signs_fixed(v), _signs_fixed(np.asarray(jv)), dtype)
        assert np.all(np.diff(w, axis=-1) >= 0)


def test_eigh_subset_by_index_keeps_the_chosen_eigenpairs():
    """(JAX on CPU refuses subset_by_index; the subset is the slice of the full result.)"""
    x = positive_definite(np.random.default_rng(3), (2, 5, 5))
    v, w = lax.linalg.eigh(x)
    vs, ws = lax.linalg.eigh(x, subset_by_index=(1, 4))
    assert_close(ws, np.asarray(w)[..., 1:4])
    assert_close(vs, np.asarray(v)[..., 1:4])
    s = lax.linalg.svd(x, compute_uv=False, subset_by_index=(0, 2))
    assert_close(s, np.asarray(lax.linalg.svd(x, compute_uv=False))[..., :2])


@pytest.mark.parametrize("shape", [(5, 3), (4, 4), (3, 5)], ids=str)
def test_pivoted_qr_orders_columns_like_jax(jax, shape):
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape) * np.arange(1, shape[1] + 1)
    q, r, p = _both_modes(lambda x: lax.linalg.qr(x, pivoting=True), x)
    jq, jr, jp = jax.lax.linalg.qr(x, pivoting=True)
    np.testing.assert_array_equal(p, jp)
    assert np.asarray(p).dtype == np.int32
    _close(np.asarray(q) @ np.asarray(r), x[:, np.asarray(p)], np.float64)
    _close(np.abs(r), np.abs(np.asarray(jr)), np.float64)
    assert np.all(np.diff(np.abs(np.diagonal(np.asarray(r)))) <= 0)


def test_failed_factorizations_give_nans_for_their_matrices_only(jax):
    x = np.stack([np.eye(3), -np.eye(3), np.diag([1.0, 4.0, 9.0])])
    got = np.asarray(lax.linalg.cholesky(x))
    want = np.asarray(jax.lax.linalg.cholesky(x))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))   # the lower triangle
    assert np.isnan(got[1]).any() and not np.isnan(got[[0, 2]]).any()
    assert_close(got, want)
    nan_input = np.array([[np.nan, 1.0], [1.0, 2.0]])
    assert np.isnan(np.asarray(lax.linalg.svd(nan_input, compute_uv=False))).all()


# vmap -------------------------------------------------------------------------------------------
def test_vmap_of_every_decomposition_matches_jax(jax):
    rng = np.random.default_rng(5)
    spd = positive_definite(rng, (3, 4, 4), np.float32)
    a = (_random(rng, (3, 4, 4), np.float32) + 4 * np.eye(4)).astype(np.float32)
    b = _random(rng, (4, 3, 2), np.float32)   # batch on axis 1

    def run(linalg, vmap, spd, a, b):
        solve = vmap(lambda a, b: linalg.triangular_solve(a, b, left_side=True, lower=True),
                     in_axes=(0, 1))
        solve_b = vmap(lambda b: linalg.triangular_solve(a[0], b, left_side=True),
                       in_axes=1, out_axes=2)
        solve_right = vmap(lambda b: linalg.triangular_solve(a[0], b.T, transpose_a=True),
                           in_axes=1)
        outs = [vmap(linalg.cholesky)(spd), solve(a, b), solve_b(b), solve_right(b),
                *vmap(linalg.lu)(a), vmap(lambda x: linalg.svd(x, compute_uv=False))(a),
                vmap(lambda x: linalg.eigh(x)[1])(spd),
                vmap(lambda x: linalg.qr(x)[1], in_axes=2)(a)]
        pivots = vmap(linalg.lu)(a)[1]
        outs.append(vmap(lambda p: linalg.lu_pivots_to_permutation(p, 4))(pivots))
        return outs

    got = run(lax.linalg, pto.vmap, spd, a, b)
    want = jax.jit(lambda *xs: run(jax.lax.linalg, jax.vmap, *xs))(spd, a, b)
    for g, w in zip(got, want):
        assert np.asarray(g).shape == np.asarray(w).shape
        _close(g, w, np.float32)


def test_vmap_of_a_solve_against_one_matrix_folds_the_batch_into_columns():
    """No copy of ``a`` per example: one triangular_solve with more columns."""
    rng = np.random.default_rng(6)
    a = np.tril(rng.standard_normal((4, 4))) + 4 * np.eye(4)
    b = rng.standard_normal((5, 4, 2))

    def solve(b):
        return lax.linalg.triangular_solve(a, b, left_side=True, lower=True)
    closed = pto.make_ir(pto.vmap(solve))(b)
    solves = [e for e in closed.eqns if e.prim.name == "triangular_solve"]
    assert [tuple(e.inputs[0].type.shape) for e in solves] == [(4, 4)]
    assert_close(pto.vmap(solve)(b), np.stack([np.linalg.solve(a, x) for x in b]),
                 rtol=1e-12, atol=1e-12)


# derivatives -----------------------------------------------------------------------------------
def test_wide_pivoted_qr_derivative_matches_finite_differences():
    """JAX 0.10 uses the unpermuted trailing columns here (a wrong tangent of r)."""
    rng = np.random.default_rng(7)
    x, t = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))

    def fn(x):
        q, r, _ = lax.linalg.qr(x, pivoting=True, full_matrices=False)
        return r, q * q
    _, tangent = pto.jvp(fn, (x,), (t,))
    eps = 1e-6
    plus, minus = fn(x + eps * t), fn(x - eps * t)
    for tan, p, m in zip(tangent, plus, minus):
        assert_close(tan, (np.asarray(p) - np.asarray(m)) / (2 * eps), rtol=1e-6, atol=1e-6)


def test_grad_of_grad_through_cholesky_matches_jax(jax):
    x = positive_definite(np.random.default_rng(8), (3, 3))

    def loss(linalg, sum_):
        return lambda x: sum_(linalg.cholesky(x) ** 3)
    hess = pto.hessian(loss(lax.linalg, pnp.sum))(x)
    assert_close(hess, jax.jit(jax.hessian(loss(jax.lax.linalg, jax.numpy.sum)))(x), rtol=1e-9,
                 atol=1e-9)


@pytest.mark.parametrize("fn,shape,why", [
    (lambda x: geqrf(x)[0], (3, 4), "Householder form of QR has no derivative"),
    (lambda x: lax.linalg.svd(x)[0], (4, 3), "full_matrices=True is implemented for square"),
    (lambda x: lax.linalg.eigh(x, subset_by_index=(0, 2))[1], (3, 3),
     "full decomposition only"),
], ids=["geqrf", "svd_full_rectangular", "eigh_subset"])
def test_missing_derivatives_say_why(fn, shape, why):
    x = np.random.default_rng(9).standard_normal(shape)
    with pytest.raises(UnsupportedError, match=why):
        pto.grad(lambda x: pnp.sum(fn(x)))(x)


# errors ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("call,error,message", [
    (lambda: lax.linalg.cholesky(np.ones((2, 3), np.float32)), ShapeError, "square"),
    (lambda: lax.linalg.cholesky(np.eye(2, dtype=np.int32)), DtypeError, "floating-point"),
    (lambda: lax.linalg.cholesky(np.eye(2, dtype=np.float16)), UnsupportedError,
     "float32 or float64"),
    (lambda: lax.linalg.svd(np.ones(3, np.float32)), ShapeError, "matrices"),
    (lambda: lax.linalg.triangular_solve(np.eye(2, dtype=np.float32),
                                         np.ones((3, 2, 2), np.float32)), ShapeError, "stacks"),
    (lambda: lax.linalg.triangular_solve(np.eye(2, dtype=np.float32),
                                         np.ones((3, 2), np.float32), left_side=True),
     ShapeError, "from the left"),
    (lambda: lax.linalg.lu_pivots_to_permutation(np.zeros(3, np.int32), 2), ShapeError,
     "smaller"),
    (lambda: lax.linalg.eigh(np.eye(3, dtype=np.float32), subset_by_index=(2, 5)),
     ShapeError, "subset_by_index"),
], ids=["non_square", "int", "float16", "vector", "stacks", "side", "pivots", "subset"])
def test_bad_operands_raise_clear_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# sharding and cost -----------------------------------------------------------------------------
def _collectives(closed):
    body = closed.eqns[-1].params["body"]
    return [e.prim.name for e in body.eqns if e.prim.collective]


def test_a_sharded_stack_factors_each_block_without_communication():
    rng = np.random.default_rng(10)
    x = positive_definite(rng, (8, 3, 3), np.float32)
    b = _random(rng, (8, 3, 4), np.float32)
    mesh = pto.make_mesh((4,), ("x",))

    def fn(x, b):
        lower = lax.linalg.cholesky(x)
        return lax.linalg.triangular_solve(lower, b, left_side=True, lower=True), \
            lax.linalg.eigh(x)[1]
    sharded = pto.shard(fn, mesh=mesh, in_specs=(P("x"), P("x")), out_specs=P("x"))
    assert_close(sharded(x, b), fn(x, b), rtol=1e-5, atol=1e-5)
    assert _collectives(pto.make_ir(sharded)(x, b)) == []


def test_split_matrix_dimensions_are_gathered_and_right_hand_sides_stay_split():
    rng = np.random.default_rng(11)
    a = (np.tril(_random(rng, (4, 4), np.float32)) + 4 * np.eye(4)).astype(np.float32)
    b = _random(rng, (4, 8), np.float32)
    mesh = pto.make_mesh((4,), ("x",))

    def fn(a, b):
        return lax.linalg.triangular_solve(a, b, left_side=True, lower=True)
    columns = pto.shard(fn, mesh=mesh, in_specs=(P(), P(None, "x")), out_specs=P(None, "x"))
    assert _collectives(pto.make_ir(columns)(a, b)) == []
    rows = pto.shard(fn, mesh=mesh, in_specs=(P("x"), P("x")), out_specs=P())
    assert _collectives(pto.make_ir(rows)(a, b))
    for sharded in (columns, rows):
        assert_close(sharded(a, b), fn(a, b), rtol=1e-5, atol=1e-5)


def test_flop_counts_follow_the_lapack_operation_counts():
    x = np.eye(6, dtype=np.float32)[None].repeat(2, 0)
    b = np.ones((2, 6, 3), np.float32)

    def fn(x, b):
        return (lax.linalg.cholesky(x, symmetrize_input=False),
                lax.linalg.triangular_solve(x, b, left_side=True), lax.linalg.lu(x),
                lax.linalg.qr(x), lax.linalg.eigh(x, symmetrize_input=False),
                lax.linalg.svd(x), lax.linalg.svd(x, compute_uv=False))
    counts = flops_by_primitive(pto.make_ir(fn)(x, b))
    assert counts["cholesky"] == 2 * 6 ** 3 // 3
    assert counts["triangular_solve"] == 2 * 6 * 6 * 3
    assert counts["lu"] == 2 * round(2 * 6 ** 3 / 3)
    assert counts["qr"] == 2 * round(4 * 6 ** 3 - 4 * 6 ** 3 / 3)
    assert counts["eigh"] == 2 * 9 * 6 ** 3
    assert counts["svd"] == 2 * (14 * 6 ** 3 + 8 * 6 ** 3) + 2 * round(4 * 6 ** 3 - 4 * 6 ** 3
                                                                       / 3)


def test_reference_facts_compute_what_the_impls_compute(jax):
    """check_numerics(reference="jax") evaluates each decomposition equation with JAX."""
    rng = np.random.default_rng(12)
    spd, x = positive_definite(rng, (2, 4, 4), np.float32), _random(rng, (2, 4, 3), np.float32)

    def fn(spd, x):   # signs are a convention: only sign-free results are compared
        lower = lax.linalg.cholesky(spd, symmetrize_input=False)
        lu, pivots, _ = lax.linalg.lu(x)
        return (lax.linalg.triangular_solve(lower, x, left_side=True, lower=True), lu,
                lax.linalg.lu_pivots_to_permutation(pivots, 4),
                lax.linalg.eigh(spd, symmetrize_input=False)[1],
                lax.linalg.svd(x, compute_uv=False), lax.linalg.qr(x, pivoting=True)[2],
                geqrf(x)[1])
    report = pto.tools.check_numerics(fn, spd, x, reference="jax")
    trace = report.stages[0]
    assert report.ok and trace.status == "ok" and trace.compared > 0, str(report)
    assert not trace.note, trace.note
