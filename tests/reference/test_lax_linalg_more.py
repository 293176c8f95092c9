"""``pto.lax.linalg``'s packed Householder forms, rank updates, tridiagonal solve, ``eig``,
``schur``, ``qdwh`` and the algorithm keywords against ``jax.lax.linalg``: values (or, where a
decomposition is not unique, its reconstruction and invariants), dtypes, errors, and grad,
jit and vmap where JAX has them. Cases are those of JAX's ``tests/linalg_test.py``, smaller."""
import numpy as np
import pytest

import ptojax as pto
from helpers import assert_close

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 cases: x64 mode

L = pto.lax.linalg
RNG = np.random.default_rng(0)
DTYPES = [np.float32, np.complex64, np.float64, np.complex128]
TOL = {np.float32: 1e-4, np.complex64: 1e-4, np.float64: 1e-10, np.complex128: 1e-10}


def _random(shape, dtype):
    x = RNG.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def _close(got, want, dtype, scale=1.0):
    assert_close(got, [np.asarray(w) for w in want] if isinstance(want, (list, tuple))
                 else np.asarray(want), rtol=TOL[dtype] * scale, atol=TOL[dtype] * scale)


def _jax_list(out):
    return [np.asarray(o) for o in out]


def _jitted(jax, fn, *args):
    """``fn(*args)`` computed by JAX as one jit program with the arrays as arguments: a test's
    JAX references in one XLA compile instead of one per eager operation (and per primitive
    of an eager jvp, grad or vmap)."""
    return jax.jit(fn)(*args)


# hessenberg, tridiagonal, householder_product, ormqr: LAPACK's packed forms ----------------------
@pytest.mark.parametrize("dtype,shape", [(np.float32, (1, 1)), (np.float32, (2, 4, 4)),
                                         (np.complex64, (2, 4, 4)), (np.float64, (5, 5)),
                                         (np.complex128, (3, 3))])
def test_packed_reductions_equal_jax(jax, dtype, shape):
    a = _random(shape, dtype)
    lowers = (True, False)
    want, *want_tridiagonal = _jitted(jax, lambda a: [jax.lax.linalg.hessenberg(a)] + [
        jax.lax.linalg.tridiagonal(a, lower=lower) for lower in lowers], a)
    _close(L.hessenberg(a), _jax_list(want), dtype)
    for lower, w in zip(lowers, want_tridiagonal, strict=True):
        _close(L.tridiagonal(a, lower=lower), _jax_list(w), dtype)


@pytest.mark.parametrize("dtype,shape", [(np.float32, (2, 5, 3)), (np.complex64, (4, 3)),
                                         (np.float64, (4, 4)), (np.complex128, (2, 4, 2))])
def test_householder_product_and_ormqr_equal_jax(jax, jnp, dtype, shape):
    h, taus = _jitted(jax, lambda x: jnp.linalg.qr(x, mode="raw"), _random(shape, dtype))
    a, taus = np.asarray(jnp.swapaxes(h, -1, -2)), np.asarray(taus)
    m = shape[-2]
    c = _random((*shape[:-2], m, 2), dtype)
    ct = np.swapaxes(c, -1, -2)
    transposes = (False, True)
    want, *want_ormqr = _jitted(jax, lambda a, taus, c, ct: [
        jax.lax.linalg.householder_product(a, taus)] + [
        f(transpose) for transpose in transposes for f in (
            lambda t: jax.lax.linalg.ormqr(a, taus, c, transpose=t),
            lambda t: jax.lax.linalg.ormqr(a, taus, ct, left=False, transpose=t))],
        a, taus, c, ct)
    _close(L.householder_product(a, taus), want, dtype)
    want_ormqr = iter(want_ormqr)
    for transpose in transposes:
        _close(L.ormqr(a, taus, c, transpose=transpose), next(want_ormqr), dtype)
        _close(L.ormqr(a, taus, ct, left=False, transpose=transpose), next(want_ormqr), dtype)


def test_packed_forms_jit_vmap_and_no_derivative():
    a = _random((3, 4, 4), np.float32)
    _close(pto.jit(L.hessenberg)(a), L.hessenberg(a), np.float32)
    _close(pto.vmap(lambda x: L.tridiagonal(x, lower=False))(a),
           L.tridiagonal(a, lower=False), np.float32)
    h, taus = L.hessenberg(a)
    _close(pto.vmap(L.householder_product, in_axes=(0, None))(h, taus[0]),
           L.householder_product(h, np.broadcast_to(taus[0], taus.shape)), np.float32)
    with pytest.raises(NotImplementedError, match="no derivative"):
        pto.grad(lambda x: L.hessenberg(x)[0].sum())(a[0])


@pytest.mark.parametrize("call,match", [
    (lambda: L.householder_product(np.zeros((2, 3), np.float32), np.zeros(2, np.float32)),
     "at least as many rows as columns"),
    (lambda: L.householder_product(np.zeros((3, 2), np.float32), np.zeros(3, np.float32)),
     "must not have more rows"),
    (lambda: L.ormqr(np.zeros((3, 3), np.float32), np.ones(2, np.float32),
                     np.ones((2, 3), np.float32)), "same number of rows"),
    (lambda: L.ormqr(np.zeros((3, 3), np.float32), np.ones(2, np.float32),
                     np.ones((3, 2), np.float32), left=False), "same number of columns"),
    (lambda: L.tridiagonal(np.zeros((0, 0), np.float32)), "square"),
    (lambda: L.hessenberg(np.zeros((2, 3), np.float32)), "square"),
])
def test_packed_form_errors_as_jax(jax, call, match):
    with pytest.raises(ValueError, match=match):
        call()


# cholesky_update, symmetric_product ------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64])
def test_cholesky_update_equals_jax(jax, dtype):
    x = RNG.standard_normal((5, 5))
    r = np.linalg.cholesky(x @ x.T + 5 * np.eye(5)).T.astype(dtype)
    w = RNG.standard_normal(5).astype(dtype)
    got = L.cholesky_update(r, w)
    _close(got, jax.lax.linalg.cholesky_update(r, w), dtype, scale=10)
    _close(np.asarray(got).T @ np.asarray(got), r.T @ r + np.outer(w, w), dtype, scale=100)
    stack = np.stack([r, 2 * r])       # beyond JAX: stacks, so vmap works
    _close(pto.vmap(L.cholesky_update, in_axes=(0, None))(stack, w),
           np.stack([np.asarray(L.cholesky_update(s, w)) for s in stack]), dtype)
    with pytest.raises(ValueError, match="vector of the same size"):
        L.cholesky_update(r, w[:3])
    with pytest.raises(NotImplementedError):
        pto.grad(lambda r: L.cholesky_update(r, w).sum())(r)


@pytest.mark.parametrize("dtype,symmetrize_output", [(np.float32, False), (np.float64, True)])
def test_symmetric_product_equals_jax(jax, dtype, symmetrize_output):
    a = _random((3, 5, 2), dtype)
    c = _random((3, 5, 5), dtype)
    c = c + np.swapaxes(c, -1, -2)
    kwargs = dict(alpha=2.0, beta=0.5, symmetrize_output=symmetrize_output)
    theirs = lambda a, c: jax.lax.linalg.symmetric_product(a, c, **kwargs)
    want, want_vmap = _jitted(jax, lambda a, c: (theirs(a, c), jax.vmap(theirs)(a, c)), a, c)
    _close(L.symmetric_product(a, c, **kwargs), want, dtype)
    _close(pto.vmap(lambda a, c: L.symmetric_product(a, c, **kwargs))(a, c), want_vmap, dtype)


def test_symmetric_product_errors_as_jax(jax):
    for lax in (jax.lax.linalg, L):
        with pytest.raises(ValueError, match="symmetric_update expects"):
            lax.symmetric_product(np.ones((3, 3), np.float32), np.eye(2, dtype=np.float32))
        with pytest.raises(TypeError):
            lax.symmetric_product(np.ones((3, 3), np.complex64), np.eye(3, dtype=np.complex64))
        with pytest.raises(NotImplementedError):
            (jax.grad if lax is jax.lax.linalg else pto.grad)(
                lambda a: lax.symmetric_product(a, np.eye(3, dtype=np.float32)).sum())(
                np.eye(3, dtype=np.float32))


# tridiagonal_solve -----------------------------------------------------------------------------
def _tridiagonal_system(shape, dtype, k=2):
    d = (2.0 + np.abs(_random(shape, dtype))).astype(dtype)
    return _random(shape, dtype), d, _random(shape, dtype), _random(shape + (k,), dtype)


@pytest.mark.parametrize("dtype,shape", [(np.float32, (2,)), (np.complex64, (3, 4)),
                                         (np.float64, (2, 3, 4)), (np.complex128, (3,))])
@pytest.mark.parametrize("perturb_singular", [False, True])
def test_tridiagonal_solve_equals_jax(jax, dtype, shape, perturb_singular):
    args = _tridiagonal_system(shape, dtype)
    got = L.tridiagonal_solve(*args, perturb_singular=perturb_singular)
    _close(got, jax.lax.linalg.tridiagonal_solve(*args, perturb_singular=perturb_singular),
           dtype, scale=10)


@pytest.mark.parametrize("perturb_singular", [False, True])
@pytest.mark.parametrize("dl,d,du,b", [
    ([0.0, 2.0, -2.0, 3.0], [1.0, 4.0, 1.0, -1.0], [2.0, -1.0, 1.0, 0.0], [1, 2, 3, 4]),
    ([0.0, 1.0, -6.0, 1.0], [1.0, -1.0, 2.0, 1.0], [2.0, 1.0, -1.0, 0.0], [1, 2, -1, -2]),
    ([0.0, 1.0], [1.0, 3.0], [3.0, 0.0], [1, 4]),                       # singular
    ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1, 1, 1]),     # zero matrix
    ([0.0, 1.0, 1.0], [0.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1, 1, 1]),     # singular
])
def test_tridiagonal_solve_pivoting_and_singular_cases_as_jax(jax, dl, d, du, b,
                                                              perturb_singular):
    args = [np.asarray(x, np.float32) for x in (dl, d, du)]
    args.append(np.asarray(b, np.float32)[:, None])
    got = np.asarray(L.tridiagonal_solve(*args, perturb_singular=perturb_singular))
    want = np.asarray(jax.lax.linalg.tridiagonal_solve(*args, perturb_singular=perturb_singular))
    np.testing.assert_allclose(got, want, rtol=1e-6)     # NaNs where JAX's are NaN


def test_tridiagonal_solve_derivatives_jit_vmap(jax):
    dtype = np.float64
    args = _tridiagonal_system((2, 4), dtype, k=3)

    def loss(lax):
        return lambda *a: (lax.linalg.tridiagonal_solve(*a) ** 2).sum()
    tangents = _tridiagonal_system((2, 4), dtype, k=3)
    many_b = _random((5, 2, 4, 3), dtype)      # right-hand sides batched alone, then all
    solve = jax.lax.linalg.tridiagonal_solve
    want_grad, want_jvp, want_vmap_b, want_vmap = _jitted(jax, lambda args, tangents, many_b: (
        jax.grad(loss(jax.lax), argnums=(0, 1, 2, 3))(*args),
        jax.jvp(solve, args, tangents),
        jax.vmap(solve, in_axes=(None, None, None, 0))(*args[:3], many_b),
        jax.vmap(solve, in_axes=(1, 1, 1, 1))(*args)), tuple(args), tuple(tangents), many_b)
    _close(pto.grad(loss(pto.lax), argnums=(0, 1, 2, 3))(*args), want_grad, dtype)
    _close(pto.jvp(L.tridiagonal_solve, args, tangents), want_jvp, dtype)
    _close(pto.jit(L.tridiagonal_solve)(*args), L.tridiagonal_solve(*args), dtype)
    _close(pto.vmap(L.tridiagonal_solve, in_axes=(None, None, None, 0))(*args[:3], many_b),
           want_vmap_b, dtype)
    _close(pto.vmap(L.tridiagonal_solve, in_axes=(1, 1, 1, 1))(*args), want_vmap, dtype)


@pytest.mark.parametrize("shapes,dtypes_,match", [
    (((3,), (2,), (3,), (3, 1)), None, "same shape"),
    (((3,), (3,), (3,), (3,)), None, "rank at least 2"),
    (((3,), (3,), (3,), (2, 1)), None, "leading ndim-1"),
    (((3,), (3,), (3,), (3, 1)), np.float16, "same dtypes"),
])
def test_tridiagonal_solve_errors_as_jax(jax, shapes, dtypes_, match):
    args = [np.ones(s, np.float32) for s in shapes]
    if dtypes_ is not None:
        args[3] = args[3].astype(dtypes_)
    for lax in (jax.lax.linalg, L):
        with pytest.raises(TypeError, match=match):
            lax.tridiagonal_solve(*args)


# eig -------------------------------------------------------------------------------------------
def _same_up_to_phase(got, want, dtype):
    """Eigenvector columns equal up to a unit-modulus factor each."""
    got, want = np.asarray(got), np.asarray(want)
    ratio = np.sum(np.conj(want) * got, axis=-2)
    _close(np.abs(ratio), np.ones(ratio.shape, np.finfo(dtype).dtype), dtype, scale=10)
    _close(got, want * ratio[..., None, :], dtype, scale=10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eig_equals_jax_up_to_phase(jax, dtype):
    a = _random((2, 4, 4), dtype)
    w, vl, vr = L.eig(a)
    jw, jvl, jvr = jax.lax.linalg.eig(a)
    complex_dtype = np.result_type(dtype, np.complex64)
    assert [np.asarray(x).dtype for x in (w, vl, vr)] == [complex_dtype] * 3
    _close(w, jw, dtype, scale=10)
    _same_up_to_phase(vr, jvr, dtype)
    _same_up_to_phase(vl, jvl, dtype)
    out = L.eig(a, compute_left_eigenvectors=False)
    assert isinstance(out, list) and len(out) == 2
    _same_up_to_phase(out[1], jvr, dtype)
    only = L.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    assert isinstance(only, list) and len(only) == 1
    _close(only[0], jw, dtype, scale=10)


def test_eig_derivatives_jit_vmap_and_errors(jax):
    a = _random((3, 3), np.float64)
    t = _random((3, 3), np.float64)

    def values(lax):
        return lambda x: lax.linalg.eig(x, compute_left_eigenvectors=False,
                                        compute_right_eigenvectors=False)[0]
    want_jvp, want_grad = _jitted(jax, lambda a, t: (
        jax.jvp(values(jax.lax), (a,), (t,)),
        jax.grad(lambda x: values(jax.lax)(x).real.sum())(a)), a, t)
    _close(pto.jvp(values(pto.lax), (a,), (t,)), want_jvp, np.float64, scale=100)
    _close(pto.grad(lambda x: values(pto.lax)(x).real.sum())(a), want_grad, np.float64,
           scale=100)
    _close(pto.jit(values(pto.lax))(a), values(pto.lax)(a), np.float64)
    stack = _random((2, 3, 3), np.float64)
    _close(pto.vmap(values(pto.lax))(stack), values(pto.lax)(stack), np.float64)
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
        pto.jvp(lambda x: L.eig(x)[2], (a,), (t,))
    for impl in (L.EigImplementation.MAGMA, L.EigImplementation.CUSOLVER):
        with pytest.raises(ValueError, match="Only the lapack"):
            L.eig(a, implementation=impl)
    with pytest.raises(ValueError, match="square"):
        L.eig(np.ones((2, 3)))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_eig_vector_derivatives_when_enabled_equal_jax(jax, dtype):
    """With ``enable_eigvec_derivs``: tangents of geev-normalised eigenvectors, equal to
    JAX's up to the same per-column phase as the eigenvectors themselves."""
    a, t = _random((2, 3, 3), dtype), _random((2, 3, 3), dtype)

    def eig(lax):
        return lambda x: lax.linalg.eig(x, enable_eigvec_derivs=True)
    (w, vl, vr), (dw, dvl, dvr) = pto.jvp(eig(pto.lax), (a,), (t,))
    (jw, jvl, jvr), (jdw, jdvl, jdvr) = _jitted(
        jax, lambda a, t: jax.jvp(eig(jax.lax), (a,), (t,)), a, t)
    _close(dw, jdw, dtype, scale=1e3)
    for v, dv, jv, jdv in ((vl, dvl, jvl, jdvl), (vr, dvr, jvr, jdvr)):
        phase = np.sum(np.conj(np.asarray(jv)) * np.asarray(v), axis=-2, keepdims=True)
        _close(dv, np.asarray(jdv) * phase, dtype, scale=1e3)


# schur -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (3, 2, 2)])
def test_schur_reconstructs_as_jax(jax, dtype, shape):
    a = _random(shape, dtype)
    t, q = L.schur(a)
    jt, _ = jax.lax.linalg.schur(a)
    assert np.asarray(t).dtype == np.asarray(jt).dtype == dtype
    t, q = np.asarray(t), np.asarray(q)
    qh = np.conj(np.swapaxes(q, -1, -2))
    _close(q @ t @ qh, a, dtype, scale=100)
    _close(q @ qh, np.broadcast_to(np.eye(shape[-1]), a.shape).astype(dtype), dtype, scale=100)
    below = -2 if np.isrealobj(a) else -1                   # quasi-triangular when real
    assert np.all(np.tril(t, below) == 0)
    _close(np.sort_complex(np.linalg.eigvals(t).ravel()),
           np.sort_complex(np.linalg.eigvals(np.asarray(jt)).ravel()), dtype, scale=100)
    only = L.schur(a, compute_schur_vectors=False)
    assert isinstance(only, list) and len(only) == 1
    _close(pto.vmap(L.schur)(a.reshape(-1, *shape[-2:]))[0], t.reshape(-1, *shape[-2:]), dtype)


def test_schur_errors_as_jax(jax):
    a = np.ones((3, 3), np.float32)
    for lax in (jax.lax.linalg, L):
        with pytest.raises(NotImplementedError, match="sort feature"):
            lax.schur(a, sort_eig_vals=True)
    with pytest.raises(NotImplementedError):
        pto.grad(lambda x: L.schur(x)[0].sum())(a)


# qdwh ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,shape", [(np.float32, (5, 3)), (np.float64, (4, 4))])
def test_qdwh_equals_jax(jax, dtype, shape):
    """(JAX compiles each QDWH call for seconds: one per dtype here; the rest is checked
    through invariants.)"""
    a = _random(shape, dtype)
    got, want = L.qdwh(a), jax.lax.linalg.qdwh(a)
    _close(got[:2], want[:2], dtype, scale=100)
    assert [np.asarray(x).dtype for x in got] == [dtype, dtype, np.int32, np.bool_]
    assert int(got[2]) == int(want[2]) and bool(got[3]) == bool(want[3])


def _polar_by_svd(a):
    w, s, vh = np.linalg.svd(a, full_matrices=False)
    return w @ vh, np.conj(vh.T) * s @ vh


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_qdwh_invariants_and_options(dtype):
    a = _random((5, 3), dtype)
    u, h, steps, converged = L.qdwh(a)
    assert np.asarray(u).dtype == np.asarray(h).dtype == dtype and bool(converged)
    _close((u, h), _polar_by_svd(a), dtype, scale=100)       # the polar factors are unique
    steps2, converged2 = L.qdwh(a, max_iterations=2)[2:]     # JAX's for float32: (2, False)
    assert (int(steps2), bool(converged2)) == (2, False)
    u, h, _, _ = L.qdwh(a, dynamic_shape=(4, 2))              # the leading block; zeros around
    _close((np.asarray(u)[:4, :2], np.asarray(h)[:2, :2]), _polar_by_svd(a[:4, :2]), dtype,
           scale=100)
    assert not np.asarray(u)[4:].any() and not np.asarray(u)[:, 2:].any()


def test_qdwh_derivatives_jit_vmap_errors(jax):
    x, t = _random((4, 3), np.float64), _random((4, 3), np.float64)
    polar_u = lambda x: pto.scipy.linalg.polar(x, method="svd")[0]   # noqa: E731 (unique)
    _close(pto.jvp(lambda x: L.qdwh(x)[0], (x,), (t,)), pto.jvp(polar_u, (x,), (t,)),
           np.float64, scale=1e4)
    _close(pto.jit(L.qdwh)(x), L.qdwh(x), np.float64)
    stack = _random((2, 4, 3), np.float64)
    _close(pto.vmap(L.qdwh)(stack)[:2], [np.stack([np.asarray(L.qdwh(s)[k]) for s in stack])
                                         for k in (0, 1)], np.float64)
    for lax in (jax.lax.linalg, L):
        with pytest.raises(ValueError, match="M >= N"):
            lax.qdwh(np.ones((2, 3), np.float32))


# the algorithm keywords ------------------------------------------------------------------------
def test_algorithm_enums_and_keywords_as_jax(jax):
    for name in ("EigImplementation", "EighImplementation", "SvdAlgorithm"):
        assert [(m.name, m.value) for m in getattr(L, name)] == \
            [(m.name, m.value) for m in getattr(jax.lax.linalg, name)]
    a = _random((3, 3), np.float32)
    s = a + a.T
    for impl in (None, L.EighImplementation.QR):
        _close(L.eigh(s, implementation=impl)[1], jax.lax.linalg.eigh(s)[1], np.float32)
    for algorithm in (None, L.SvdAlgorithm.DEFAULT, L.SvdAlgorithm.QR,
                      L.SvdAlgorithm.DIVIDE_AND_CONQUER):
        _close(L.svd(a, compute_uv=False, algorithm=algorithm),
               jax.lax.linalg.svd(a, compute_uv=False), np.float32)
    for ours, theirs, match in [
            (L.EighImplementation.JACOBI, jax.lax.linalg.EighImplementation.JACOBI, "Jacobi"),
            (L.EighImplementation.QDWH, jax.lax.linalg.EighImplementation.QDWH, "QDWH")]:
        for lax, impl in ((jax.lax.linalg, theirs), (L, ours)):
            with pytest.raises(NotImplementedError, match=match):
                lax.eigh(s, implementation=impl)
    for lax in (jax.lax.linalg, L):
        for algorithm in (lax.SvdAlgorithm.JACOBI, lax.SvdAlgorithm.POLAR):
            with pytest.raises(NotImplementedError, match="not implemented on CPU"):
                lax.svd(a, algorithm=algorithm)
