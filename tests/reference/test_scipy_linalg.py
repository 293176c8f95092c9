"""``pto.scipy.linalg`` against ``jax.scipy.linalg``: values in float32 and float64 (eagerly,
under jit and through make_ir's IR), gradients, vmap, JAX's deprecation warnings and errors."""
import inspect
import warnings

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import dtypes
from helpers import assert_close, positive_definite, well_conditioned
from pnp_reference import check_modes_against, jax_compiled, jax_table, stored, table_inputs

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

psl = pto.scipy.linalg
DTYPES = [dtypes.float32, dtypes.float64]
SCALE = 50   # float32 solves and factorizations: a few hundred ulps


def _solves(sl, a, spd, b, v):
    """a: (2, 4, 4) well conditioned, spd: (2, 4, 4), b: (2, 4, 3), v: (4,)."""
    out = []
    for lower in (False, True):
        c = sl.cho_factor(spd, lower=lower)
        out += [sl.cholesky(spd, lower=lower), c[0], sl.cho_solve(c, b), sl.cho_solve(c, v),
                sl.solve(spd, b, assume_a="pos", lower=lower),
                sl.solve(spd[0], v, assume_a="pos", lower=lower)]
        for trans in (0, 1, 2, "N", "T", "C"):
            for unit in (False, True):
                out.append(sl.solve_triangular(a, b, trans=trans, lower=lower,
                                               unit_diagonal=unit))
        out.append(sl.solve_triangular(a[0], v, lower=lower))
    for trans in (0, 1, 2):
        out += [sl.lu_solve(sl.lu_factor(a), b, trans=trans),
                sl.lu_solve(sl.lu_factor(a[0]), v, trans=trans)]
    out += [sl.solve(a, b), sl.solve(a, b, assume_a="sym"), sl.inv(a), sl.det(a)]
    return out


# JAX's own positive-definite solve calls cho_solve with stacks of vectors, and warns
JAX_INTERNAL_WARNING = "ignore:jax.scipy.linalg.cho_solve:FutureWarning"


def _solves_args(dtype):
    rng = np.random.default_rng(0)
    return [well_conditioned(rng, (2, 4, 4), dtype), positive_definite(rng, (2, 4, 4), dtype),
            rng.standard_normal((2, 4, 3)).astype(dtype), rng.standard_normal(4).astype(dtype)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_solves_match_jax(dtype):
    args = _solves_args(dtype)   # JAX's values stored by jax_golden.py
    check_modes_against(lambda *xs: _solves(psl, *xs),
                        stored(f"scipy-linalg/solves/{dtype}", args, _solves), *args,
                        scale=SCALE)


def _factorizations(sl, m, tall, wide, sym):
    """Sign-invariant forms where signs are a convention (QR and SVD vectors)."""
    out = [*sl.eigh(sym), sl.eigh(sym, lower=False, eigvals_only=True)]
    out[1] = out[1] * out[1]
    for x in (tall, wide):
        out += [*sl.lu(x), *sl.lu(x, permute_l=True), *sl.lu_factor(x)]
        for mode in ("full", "economic"):
            q, r = sl.qr(x, mode=mode)
            d = m.sign(m.diagonal(r, axis1=-2, axis2=-1))
            out += [q[..., :d.shape[-1]] * d, r[..., :d.shape[-1], :] * d[:, None], q @ r]
            q, r, p = sl.qr(x, mode=mode, pivoting=True)
            out += [m.abs(r), p, q @ r]
        out += [m.abs(sl.qr(x, mode="r")[0]), *(m.abs(y) for y in sl.qr(x, mode="r",
                                                                         pivoting=True))]
        u, s, vh = sl.svd(x)
        out += [s, sl.svd(x, compute_uv=False), u * u, vh * vh]
    return out


def _factorizations_args(dtype):
    rng = np.random.default_rng(1)
    tall = (rng.standard_normal((5, 3)) * np.arange(1, 4)).astype(dtype)
    wide = (rng.standard_normal((3, 4)) * np.arange(1, 5)).astype(dtype)
    sym = rng.standard_normal((4, 4))
    sym = (sym + sym.T + np.diag([0.0, 3.0, 6.0, 9.0])).astype(dtype)
    return [tall, wide, sym]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_factorizations_match_jax(dtype):
    args = _factorizations_args(dtype)
    index = (9, 14, 20, 24, 35, 40, 46, 50)   # lu_factor's pivots, qr's permutations
    check_modes_against(lambda *xs: _factorizations(psl, pnp, *xs),
                        stored(f"scipy-linalg/factorizations/{dtype}", args, _factorizations),
                        *args, index=index, scale=SCALE)


def _exponentials(sl, a):
    """Scales picking every Pade degree, with and without squarings, in one stack."""
    scales = np.array([0.01, 0.3, 1.0, 3.0, 40.0], a.dtype)[:, None, None, None]
    return [sl.expm(a * scales), sl.block_diag(a[0], a[1, 0], 2.0, a[1, :2, :3])]


def _exponentials_args(dtype):
    return [(np.random.default_rng(2).standard_normal((2, 4, 4)) * 0.5).astype(dtype)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_expm_and_block_diag_match_jax(dtype):
    args = _exponentials_args(dtype)
    check_modes_against(lambda a: _exponentials(psl, a),
                        stored(f"scipy-linalg/exponentials/{dtype}", args, _exponentials),
                        *args, scale=SCALE * 10)


def test_expm_variants_agree():
    """The triangular solve gives the general result; too few squarings give NaNs (as JAX);
    expm_frechet is the derivative along E; block_diag of nothing is (1, 0)."""
    rng = np.random.default_rng(6)
    a, e = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    upper = np.triu(a)
    assert_close(psl.expm(upper, upper_triangular=True), psl.expm(upper), rtol=1e-12,
                 atol=1e-12)
    assert np.isnan(np.asarray(psl.expm(a * 100, max_squarings=2))).all()
    value, frechet = psl.expm_frechet(a, e)
    eps = 1e-6
    numeric = (np.asarray(psl.expm(a + eps * e)) - np.asarray(psl.expm(a - eps * e))) / (2 * eps)
    assert_close(value, psl.expm(a), rtol=0, atol=0)
    assert_close(frechet, numeric, rtol=1e-6, atol=1e-6)
    assert_close(psl.expm_frechet(a, e, compute_expm=False), frechet, rtol=0, atol=0)
    with pto.enable_x64(False):   # the default dtype (x64 off)
        empty = psl.block_diag()
    assert (empty.shape, empty.dtype) == ((1, 0), np.float32)


UPPER = np.triu(np.ones((4, 4)))
GRADS = {
    "expm": lambda sl, a, spd, b: sl.expm(a * np.array([0.1, 1.0, 20.0])[:, None, None, None]),
    "expm_triangular": lambda sl, a, spd, b: sl.expm(a[0] * UPPER, upper_triangular=True),
    "cholesky": lambda sl, a, spd, b: sl.cholesky(spd),
    "cho_solve": lambda sl, a, spd, b: sl.cho_solve(sl.cho_factor(spd, lower=True), b),
    "solve_pos": lambda sl, a, spd, b: sl.solve(spd, b, assume_a="pos"),
    "solve_triangular": lambda sl, a, spd, b: sl.solve_triangular(a, b, trans=1, lower=True),
    "lu_solve": lambda sl, a, spd, b: sl.lu_solve(sl.lu_factor(a), b, trans=1),
    "lu": lambda sl, a, spd, b: sl.lu(a[0])[2],
}


def _grads_args():
    rng = np.random.default_rng(3)
    return [well_conditioned(rng, (2, 4, 4), np.float64) * 0.3, positive_definite(rng, (2, 4, 4), np.float64),
            rng.standard_normal((2, 4, 3))]


def _weigh(m, y):
    return m.sum(y * m.cos(m.reshape(m.arange(y.size, dtype=y.dtype), y.shape)))


def _grads(sl, grad, m):
    """The gradients of each of GRADS (weighed), in the order of GRADS, as one list."""
    return lambda *xs: [grad(lambda *xs: _weigh(m, f(sl, *xs)), argnums=(0, 1, 2))(*xs)
                        for f in GRADS.values()]


GRADS_TABLE = (_weigh, _grads, "".join(f"{name}: {inspect.getsource(f)}"
                                       for name, f in GRADS.items()))


def test_gradients_match_jax():
    args = _grads_args()
    got = _grads(psl, pto.grad, pnp)(*args)
    want = stored("scipy-linalg/gradients", args, *GRADS_TABLE)
    assert len(want) == 3 * len(GRADS)
    for k, name in enumerate(GRADS):
        assert_close(got[k], want[3 * k:3 * k + 3], rtol=1e-8, atol=1e-8)


def _vmap_args():
    rng = np.random.default_rng(4)
    a, spd = well_conditioned(rng, (3, 4, 4), np.float32) * 0.3, positive_definite(rng, (3, 4, 4), np.float32)
    return [a, spd, rng.standard_normal((4, 3)).astype(np.float32)]


def _vmapped(sl, vmap, a, spd, b):
    return [vmap(sl.expm)(a * 10), vmap(lambda c, b: sl.cho_solve((c, True), b),
                                         in_axes=(0, 1))(sl.cholesky(spd, lower=True), b),
            vmap(lambda x: sl.solve_triangular(x, b[:, 0]))(a),
            vmap(lambda x: sl.lu_factor(x)[0])(a)]


def test_vmap_matches_jax():
    args = _vmap_args()
    assert_close(_vmapped(psl, pto.vmap, *args), stored("scipy-linalg/vmap", args, _vmapped),
                 rtol=1e-4, atol=1e-4)


def test_batched_vector_solves_warn_like_jax():
    """JAX deprecates b of shape (..., n) against a stack of (n, n) (a 2D solve some day)."""
    spd = positive_definite(np.random.default_rng(5), (2, 3, 3), np.float32)
    b = np.ones((2, 3), np.float32)
    for call in (lambda: psl.cho_solve((spd, False), b),
                 lambda: psl.solve_triangular(spd, b),
                 lambda: psl.lu_solve(psl.lu_factor(spd), b)):
        with pytest.warns(FutureWarning, match="batched 1D solves"):
            assert call().shape == (2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert psl.cho_solve((spd, False), b[..., None]).shape == (2, 3, 1)


@pytest.mark.parametrize("call,error,message", [
    (lambda: psl.eigh(np.eye(2), np.eye(2)), NotImplementedError, "b=None"),
    (lambda: psl.eigh(np.eye(2), type=2), NotImplementedError, "type=1"),
    (lambda: psl.solve(np.eye(2), np.ones(2), assume_a="tri"), ValueError, "assume_a"),
    (lambda: psl.solve(np.eye(2), np.ones(3), assume_a="pos"), ValueError, "shape"),
    (lambda: psl.solve_triangular(np.eye(2), np.ones(2), trans=3), ValueError, "trans"),
    (lambda: psl.lu_solve((np.eye(2), np.zeros(2, np.int32)), np.ones(2), trans=4),
     ValueError, "trans"),
    (lambda: psl.qr(np.eye(2), mode="raw"), ValueError, "mode"),
    (lambda: psl.expm(np.ones((2, 3))), ValueError, "square"),
    (lambda: psl.expm(np.eye(2, dtype=np.float16)), TypeError, "float16"),
    (lambda: psl.expm_frechet(np.eye(2), np.eye(3)), ValueError, "one shape"),
    (lambda: psl.block_diag(np.ones((2, 2, 2))), ValueError, "at most 2"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_bad_arguments_raise_jax_exception_classes(call, error, message):
    with pytest.raises(error, match=message):
        call()


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py: this module's fixed-input
    tables (JAX programs of tens of scipy.linalg calls; compiling them took ~1.5 min on a busy
    machine). Inputs end with the source of the table's definitions."""
    import jax.scipy.linalg as jsl
    jnp = jax.numpy
    with warnings.catch_warnings():   # JAX's own pos. def. solve warns (JAX_INTERNAL_WARNING)
        warnings.filterwarnings("ignore", "jax.scipy.linalg.cho_solve", FutureWarning)
        for dtype in DTYPES:
            for name, args, fn, jax_fn in [
                    ("solves", _solves_args(dtype), _solves, lambda *xs: _solves(jsl, *xs)),
                    ("factorizations", _factorizations_args(dtype), _factorizations,
                     lambda *xs: _factorizations(jsl, jnp, *xs)),
                    ("exponentials", _exponentials_args(dtype), _exponentials,
                     lambda a: _exponentials(jsl, a))]:
                yield (f"scipy-linalg/{name}/{dtype}", table_inputs(args, fn),
                       jax_table(jax_fn))
        yield ("scipy-linalg/gradients", table_inputs(_grads_args(), *GRADS_TABLE),
               jax_table(_grads(jsl, jax.grad, jnp)))
        # as the test compared before: the arrays closed over (constants of the program)
        yield ("scipy-linalg/vmap", table_inputs(_vmap_args(), _vmapped),
               lambda *inputs: [np.asarray(v) for v in jax_compiled(
                   lambda: _vmapped(jsl, jax.vmap, *inputs[:-1]))])
