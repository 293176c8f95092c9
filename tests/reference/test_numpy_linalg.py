"""Products and ``pnp.linalg`` against jax.numpy: matmul/@ with vectors and broadcast batches,
dot, vdot, inner, outer, tensordot and einsum with explicit, implicit, batched, traced,
ellipsis and many-operand specs; every pnp.linalg function (solvers, determinants, norms,
decompositions, products and views) in float32 and float64 — eagerly, under jit and through
make_ir's IR — with their gradients (against JAX's and to second order against numerical
differences), vmap and errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import dtypes
from helpers import assert_close, positive_definite, separated_spectrum, well_conditioned
from pnp_reference import (check_modes, check_modes_against, jax_compiled, jax_table,
                           random_array, stored)

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

PRODUCT_DTYPES = [dtypes.float32, dtypes.float16, dtypes.bfloat16, dtypes.float64,
                  dtypes.int8, dtypes.int32, dtypes.bool_]


def _scale(dtype):
    """Sums of products round differently in narrow floats (ptojax accumulates in f32)."""
    return 4.0 if dtype in (dtypes.float16, dtypes.bfloat16) else 1.0


@given(shapes=mutually_broadcastable_shapes(signature="(m?,n),(n,p?)->(m?,p?)", max_dims=4,
                                            max_side=3),
       dtype=st.sampled_from(PRODUCT_DTYPES), seed=st.integers(0, 2**16))
def test_matmul_matches_jax_for_vectors_matrices_and_broadcast_batches(jnp, shapes, dtype,
                                                                       seed):
    rng = np.random.default_rng(seed)
    a, b = (random_array(rng, s, dtype) for s in shapes.input_shapes)
    check_modes(lambda x, y: [pnp.matmul(x, y), pnp.asarray(x) @ y],
                lambda x, y: [jnp.matmul(x, y), jnp.asarray(x) @ y], a, b,
                scale=_scale(dtype))


SPECS = ["ij,jk->ik", "ij,jk", "bhqd,bhkd->bhqk", "bqhd,bkhd->bhqk", "ii->i", "ii", "ij->",
         "ij->ji", "i,i->", "i,j->ij", "ij,ij->ij", "ij,kj->ik", "ijk->kji", "iij->j",
         "ab,bc,cd->ad", "ij,j->i", "bij,jk->bik", "...d,...d->...", "b...i,b...i->b",
         "ij,jk,kl", "i,i,i->i", "abc,cb->a", "ab,ab,ab->"]


def _operand_shapes(spec, sizes):
    inputs = spec.split("->")[0].split(",")
    ellipsis = (2, 1)
    return [tuple(ellipsis if c == "." else sizes[c] for c in s.replace("...", ".")
                  ) for s in inputs]


def _flatten_ellipsis(shape):
    out = []
    for d in shape:
        out.extend(d if isinstance(d, tuple) else (d,))
    return tuple(out)


@given(spec=st.sampled_from(SPECS), sizes=st.fixed_dictionaries(
    {c: st.integers(1, 3) for c in "abcdhijklpq"}), seed=st.integers(0, 2**16),
       dtype=st.sampled_from([dtypes.float32, dtypes.int32]))
def test_einsum_matches_jax_for_any_spec_and_sizes(jnp, spec, sizes, seed, dtype):
    rng = np.random.default_rng(seed)
    operands = [random_array(rng, _flatten_ellipsis(s), dtype)
                for s in _operand_shapes(spec, sizes)]
    check_modes(lambda *xs: pnp.einsum(spec, *xs), lambda *xs: jnp.einsum(spec, *xs),
                *operands)


def test_all_einsum_specs_match_jax_together(jnp):
    rng = np.random.default_rng(3)
    sizes = {c: n for c, n in zip("abcdhijklpq", (2, 3, 2, 4, 3, 2, 3, 4, 2, 3, 2))}
    groups = [[random_array(rng, _flatten_ellipsis(s), dtypes.float32)
               for s in _operand_shapes(spec, sizes)] for spec in SPECS]
    flat = [x for g in groups for x in g]

    def run(einsum):
        def fn(*xs):
            out, k = [], 0
            for spec, g in zip(SPECS, groups):
                out.append(einsum(spec, *xs[k:k + len(g)]))
                k += len(g)
            return out
        return fn
    check_modes(run(pnp.einsum), run(jnp.einsum), *flat, labels=SPECS)


def _products(m, a, b, v, w, t):
    """a: (2, 3), b: (3, 4), v: (3,), w: (4,), t: (2, 3, 4)."""
    return [m.dot(a, b), m.dot(a, v), m.dot(v, v), m.dot(t, w), m.dot(a, t), m.dot(a, 2.0),
            m.vdot(a, a), m.inner(v, v), m.inner(a, a), m.inner(t, w), m.outer(v, w),
            m.outer(a, v), m.tensordot(a, b, 1), m.tensordot(t, t, 3),
            m.tensordot(t, b, ([1, 2], [0, 1])), m.tensordot(a, t, axes=([0, 1], [0, 1])),
            m.matmul(v, b), m.matmul(t, w), m.matmul(a, b, preferred_element_type=None)]


PRODUCTS_DTYPES = [dtypes.float32, dtypes.int8, dtypes.float16]


def _products_args(dtype):
    rng = np.random.default_rng(4)
    return [random_array(rng, s, dtype) for s in [(2, 3), (3, 4), (3,), (4,), (2, 3, 4)]]


@pytest.mark.parametrize("dtype", PRODUCTS_DTYPES, ids=str)
def test_dot_vdot_inner_outer_tensordot_match_jax(dtype):
    args = _products_args(dtype)
    check_modes_against(lambda *xs: _products(pnp, *xs),
                        stored(f"numpy-linalg/products/{dtype}", args, _products), *args,
                        scale=_scale(dtype))


def _preferred_args():
    rng = np.random.default_rng(5)
    a, b = random_array(rng, (2, 3), dtypes.int8), random_array(rng, (3, 4), dtypes.int8)
    return [a, b, a.astype(np.float16), b.astype(np.float16)]


def _preferred(m, a, b, h, k):
    return [m.matmul(a, b, preferred_element_type=np.int32),
            m.dot(h, k, preferred_element_type=np.float32),
            m.einsum("ij,jk->ik", a, b, preferred_element_type=np.int32)]


def test_preferred_element_type_widens_the_result_like_jax():
    args = _preferred_args()
    check_modes_against(lambda *xs: _preferred(pnp, *xs),
                        stored("numpy-linalg/preferred", args, _preferred), *args)


def _mixed_args():
    rng = np.random.default_rng(6)
    return [random_array(rng, (2, 3), dtypes.int8), random_array(rng, (3, 2), dtypes.float16)]


def _mixed(m, x, y):
    return [m.matmul(x, y), m.einsum("ij,jk", x, y), m.outer(x, y)]


def test_mixed_dtype_products_promote_like_jax():
    args = _mixed_args()
    check_modes_against(lambda *xs: _mixed(pnp, *xs), stored("numpy-linalg/mixed", args, _mixed),
                        *args)


MISMATCHED_PRODUCTS = {
    "dot": lambda np_, lax_, a, b: np_.dot(a, b),
    "matmul": lambda np_, lax_, a, b: np_.matmul(a, b),
    "@": lambda np_, lax_, a, b: np_.asarray(a) @ b,
    "dot_general": lambda np_, lax_, a, b: lax_.dot_general(a, b, (((1,), (0,)), ((), ()))),
}


@pytest.mark.parametrize("name", sorted(MISMATCHED_PRODUCTS))
def test_product_shape_mismatches_are_type_errors_as_in_jax(jax, jnp, name):
    """As JAX, a contraction of unequal sizes raises a TypeError (ptojax's ShapeError is both
    a ValueError and a TypeError)."""
    from ptojax import lax
    from ptojax.errors import ShapeError
    a, b = np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)
    fn = MISMATCHED_PRODUCTS[name]
    with pytest.raises(TypeError):
        fn(jnp, jax.lax, a, b)
    with pytest.raises(TypeError) as info:
        fn(pnp, lax, a, b)
    assert isinstance(info.value, ShapeError) and "test_numpy_linalg.py" in str(info.value)


# pnp.linalg --------------------------------------------------------------------------------------
# Well-conditioned inputs: a random matrix plus a multiple of the identity, SPD matrices,
# symmetric matrices with separated eigenvalues and matrices with separated singular values, so
# that eigen- and singular vectors are defined up to sign; the decompositions are compared
# through quantities invariant under those signs.
LINALG_DTYPES = [dtypes.float32, dtypes.float64]
# float32 results of n x n solves and decompositions: a few hundred ulps
LINALG_SCALE = 50


def _solvers(m, a, b, v, a5, tall, s3):
    """a: (2, 4, 4), b: (2, 4, 3), v: (4,), a5: (5, 5), tall: (5, 3), s3: (3, 3)."""
    la = m.linalg
    x, resid, rank, sv = la.lstsq(tall, a5[:, :2])
    return [la.inv(a), la.solve(a, b), la.solve(a, v), la.solve(a[0], b), la.det(a),
            la.det(a5), la.det(s3), la.det(a[..., :2, :2]), la.det(a[..., :1, :1]),
            *la.slogdet(a), *la.slogdet(a5, method="qr"), *la.slogdet(s3[:2, :2]),
            la.tensorinv(m.reshape(a5[:4, :4], (2, 2, 4)), ind=2),
            la.tensorsolve(m.reshape(a[0], (2, 2, 4)), m.reshape(b[0, :, 0], (2, 2))),
            x, resid, rank, sv, la.lstsq(tall, a5[:, 0])[0], la.pinv(tall), la.pinv(a),
            la.pinv(s3, hermitian=True), la.matrix_power(a, 5), la.matrix_power(a, -2),
            la.matrix_power(a, 0), la.matrix_rank(a), la.matrix_rank(tall[:, :1] * tall),
            la.matrix_rank(v), la.cond(a), la.cond(a, 1), la.cond(a, -np.inf), la.cond(a, -2),
            la.cond(a, "fro")]


def _solvers_args(dtype):
    rng = np.random.default_rng(10)
    return [well_conditioned(rng, (2, 4, 4), dtype), rng.standard_normal((2, 4, 3)).astype(dtype),
            rng.standard_normal(4).astype(dtype), well_conditioned(rng, (5, 5), dtype),
            separated_spectrum(rng, (5, 3), dtype), separated_spectrum(rng, (3, 3), dtype, symmetric=True)]


@pytest.mark.parametrize("dtype", LINALG_DTYPES, ids=str)
def test_solvers_determinants_and_inverses_match_jax(dtype):
    args = _solvers_args(dtype)
    check_modes_against(lambda *xs: _solvers(pnp, *xs),
                        stored(f"numpy-linalg/solvers/{dtype}", args, _solvers), *args,
                        index=(19, 28, 29, 30), scale=LINALG_SCALE)


def _norms(m, x, v, i):
    """x: (2, 3, 4), v: (5,), i: int32 (3, 3)."""
    la = m.linalg
    out = [la.norm(x), la.norm(x, keepdims=True), la.norm(v), la.norm(i), la.norm(x[0], 2),
           la.vector_norm(x), la.vector_norm(x, axis=(0, 2), keepdims=True),
           la.matrix_norm(x), la.matrix_norm(x, ord="nuc", keepdims=True)]
    for ord in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        for axis in ((1, 2), (2, 0)):
            for keepdims in (False, True):
                out.append(la.norm(x, ord, axis, keepdims))
    for ord in (None, 0, 1, 2, 3, -1, 0.5, np.inf, -np.inf):
        out += [la.norm(x, ord, 1), la.norm(x, ord, -1, True), la.vector_norm(v, ord=ord)]
    return out


def _norms_args(dtype):
    rng = np.random.default_rng(11)
    return [rng.standard_normal((2, 3, 4)).astype(dtype), rng.standard_normal(5).astype(dtype),
            rng.integers(-3, 4, (3, 3)).astype(np.int32)]


@pytest.mark.parametrize("dtype", LINALG_DTYPES, ids=str)
def test_every_norm_matches_jax(dtype):
    args = _norms_args(dtype)
    check_modes_against(lambda *xs: _norms(pnp, *xs),
                        stored(f"numpy-linalg/norms/{dtype}", args, _norms), *args,
                        scale=LINALG_SCALE)


def test_complex_two_norms_are_real_as_jax(jnp):
    """The 2-norms that sum squares (vector 2-norm, Frobenius) sum |x|**2, not x**2."""
    rng = np.random.default_rng(12)
    x = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(np.complex64)
    for m in (pnp, jnp):
        got = [m.linalg.norm(x), m.linalg.norm(x, axis=1), m.linalg.norm(x, "fro", (0, 1)),
               m.linalg.vector_norm(x), m.linalg.matrix_norm(x)]
        if m is pnp:
            ours = got
    for a, b in zip(ours, got):
        assert a.dtype == np.float32
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def _column_signs(v):
    """Each column's sign-invariant form (``v * v``) and the product of two columns' entries."""
    return [v * v, v[..., :, :1] * v]


def _decompositions(m, spd, sym, tall, wide, square):
    la = m.linalg
    out = [la.cholesky(spd), la.cholesky(spd, upper=True),
           la.cholesky(spd, symmetrize_input=False), la.eigvalsh(sym), la.eigvalsh(sym, "U")]
    for uplo, symmetrize in ((None, True), ("U", False), ("L", False)):
        w, v = la.eigh(sym, UPLO=uplo, symmetrize_input=symmetrize)
        out += [w, *_column_signs(v)]
    for x in (tall, wide, square):
        u, s, vh = la.svd(x, full_matrices=False)
        out += [s, la.svdvals(x), la.svd(x, compute_uv=False), *_column_signs(u),
                *_column_signs(m.swapaxes(vh, -1, -2)), (u * s[..., None, :]) @ vh]
        u, s, vh = la.svd(x)
        out += [s, u @ m.swapaxes(u, -1, -2), vh @ m.swapaxes(vh, -1, -2)]
        for mode in ("reduced", "complete"):
            q, r = la.qr(x, mode=mode)
            d = m.sign(m.diagonal(r, axis1=-2, axis2=-1))
            k = d.shape[-1]
            out += [q[..., :k] * d[..., None, :], r[..., :k, :] * d[..., :, None], q @ r]
        out += [m.abs(la.qr(x, mode="r")), *(m.abs(h) for h in la.qr(x, mode="raw"))]
    u, s, vh = la.svd(sym, hermitian=True)
    out += [s, la.svd(sym, hermitian=True, compute_uv=False), (u * s[..., None, :]) @ vh,
            *_column_signs(u)]
    return out


def _decompositions_args(dtype):
    rng = np.random.default_rng(12)
    return [positive_definite(rng, (2, 4, 4), dtype), separated_spectrum(rng, (2, 4, 4), dtype, symmetric=True),
            separated_spectrum(rng, (2, 5, 3), dtype), separated_spectrum(rng, (3, 5), dtype),
            separated_spectrum(rng, (4, 4), dtype)]


@pytest.mark.parametrize("dtype", LINALG_DTYPES, ids=str)
def test_decompositions_match_jax_through_sign_invariant_quantities(dtype):
    args = _decompositions_args(dtype)
    check_modes_against(lambda *xs: _decompositions(pnp, *xs),
                        stored(f"numpy-linalg/decompositions/{dtype}", args, _decompositions,
                               _column_signs), *args, scale=LINALG_SCALE)


def _linalg_products(m, a, b, c, v, w, t):
    """a: (2, 3), b: (3, 4), c: (4, 2), v: (3,), w: (2,), t: (2, 3, 4)."""
    la = m.linalg
    return [la.multi_dot([a, b, c]), la.multi_dot([v, b, c, w]), la.multi_dot([b, c]),
            la.multi_dot([a, v]), la.outer(v, w), la.cross(t[..., :3], t[..., 1:]),
            la.cross(t[:, :, :3], t[:, :, 1:], axis=-1), la.vecdot(t, c[:, 0]),
            la.vecdot(t, t, axis=1), la.matmul(t, c), la.tensordot(t, c, axes=1),
            la.tensordot(t, t, axes=([1, 2], [1, 2])), la.trace(t), la.trace(t, offset=1),
            la.trace(a, offset=-1, dtype=m.float32), la.diagonal(t), la.diagonal(t, offset=2),
            la.matrix_transpose(t)]


LINALG_PRODUCTS_DTYPES = [dtypes.float32, dtypes.int32]


def _linalg_products_args(dtype):
    rng = np.random.default_rng(13)
    return [random_array(rng, s, dtype) for s in [(2, 3), (3, 4), (4, 2), (3,), (2,),
                                                 (2, 3, 4)]]


@pytest.mark.parametrize("dtype", LINALG_PRODUCTS_DTYPES, ids=str)
def test_products_and_views_of_pnp_linalg_match_jax(dtype):
    args = _linalg_products_args(dtype)
    check_modes_against(lambda *xs: _linalg_products(pnp, *xs),
                        stored(f"numpy-linalg/linalg-products/{dtype}", args, _linalg_products),
                        *args)


def _singular(m, s):
    """s: (2, 4, 4) matrices of rank 3 and 2."""
    la = m.linalg
    return [la.det(s), *la.slogdet(s), la.matrix_rank(s), la.pinv(s) @ s @ la.pinv(s)]


def _singular_args():
    rng = np.random.default_rng(14)
    s = rng.standard_normal((2, 4, 4))
    s[0, 3], s[1, 2:] = 0, 0
    return [s]


def test_singular_matrices_match_jax():
    """Zero rows make the LU's last pivots exactly zero: determinant 0, sign 0, log -inf."""
    args = _singular_args()
    check_modes_against(lambda x: _singular(pnp, x),
                        stored("numpy-linalg/singular", args, _singular), *args, index=(3,),
                        scale=1e3)


# pnp.linalg derivatives -------------------------------------------------------------------------
def _weigh(m, y):
    """A scalar depending on every element of ``y`` differently."""
    return m.sum(y * m.cos(m.reshape(m.arange(y.size, dtype=y.dtype), y.shape)))


_RNG = np.random.default_rng(15)
_B = _RNG.standard_normal((2, 4, 3))
_A = well_conditioned(_RNG, (2, 4, 4), np.float64)
INPUTS = {"square": _A, "rhs": _B, "square5": well_conditioned(_RNG, (5, 5), np.float64),
          "spd": positive_definite(_RNG, (2, 4, 4), np.float64),
          "sym": separated_spectrum(_RNG, (2, 4, 4), np.float64, symmetric=True),
          "tall": separated_spectrum(_RNG, (5, 3), np.float64),
          "wide": separated_spectrum(_RNG, (2, 3, 4), np.float64),
          "singular": np.array([[1.0, 2.0, 0.5], [2.0, 4.0, 1.0], [0.3, -1.0, 2.0]])}
# (name, function of (module, x), input): every function JAX differentiates, by composition
# or by its custom rule (solve, det, slogdet, pinv)
GRADS = [
    ("inv", lambda m, x: m.linalg.inv(x), "square"),
    ("solve_a", lambda m, x: m.linalg.solve(x, _B), "square"),
    ("solve_b", lambda m, x: m.linalg.solve(_A, x), "rhs"),
    ("solve_vector", lambda m, x: m.linalg.solve(x, _B[0, :, 0]), "square"),
    ("det", lambda m, x: m.linalg.det(x), "square5"),
    ("det_2x2", lambda m, x: m.linalg.det(x[..., :2, :2]), "square"),
    ("det_3x3", lambda m, x: m.linalg.det(x[..., :3, :3]), "square"),
    ("det_singular", lambda m, x: m.linalg.det(x), "singular"),
    ("slogdet", lambda m, x: m.linalg.slogdet(x)[1], "square"),
    ("slogdet_qr", lambda m, x: m.linalg.slogdet(x, method="qr")[1], "square5"),
    ("slogdet_2x2", lambda m, x: m.linalg.slogdet(x[..., :2, :2])[1], "square"),
    ("cholesky", lambda m, x: m.linalg.cholesky(x), "spd"),
    ("cholesky_upper", lambda m, x: m.linalg.cholesky(x, upper=True), "spd"),
    ("eigvalsh", lambda m, x: m.linalg.eigvalsh(x), "sym"),
    ("eigh_vectors", lambda m, x: m.linalg.eigh(x)[1] ** 2, "sym"),
    ("svdvals", lambda m, x: m.linalg.svdvals(x), "wide"),
    ("svd_vectors", lambda m, x: m.linalg.svd(x, full_matrices=False)[0] ** 2, "tall"),
    ("svd_hermitian", lambda m, x: m.linalg.svd(x, hermitian=True, compute_uv=False), "sym"),
    ("qr", lambda m, x: m.abs(m.linalg.qr(x)[1]), "tall"),
    ("qr_complete", lambda m, x: m.linalg.qr(x, mode="complete")[0] ** 2, "tall"),
    ("pinv", lambda m, x: m.linalg.pinv(x), "wide"),
    ("pinv_tall", lambda m, x: m.linalg.pinv(x), "tall"),
    ("lstsq", lambda m, x: m.linalg.lstsq(x, _B[0, :, 0].repeat(2)[:5])[0], "tall"),
    ("norm", lambda m, x: m.linalg.norm(x), "square"),
    ("norm_nuc", lambda m, x: m.linalg.norm(x, "nuc", (1, 2)), "wide"),
    ("norm_2", lambda m, x: m.linalg.norm(x, 2, (1, 2)), "wide"),
    ("norm_-2", lambda m, x: m.linalg.norm(x, -2, (1, 2)), "wide"),
    ("norm_1", lambda m, x: m.linalg.norm(x, 1, (1, 2)), "wide"),
    ("norm_inf", lambda m, x: m.linalg.norm(x, np.inf, (1, 2)), "wide"),
    ("vector_norm_3", lambda m, x: m.linalg.vector_norm(x, ord=3, axis=1), "wide"),
    ("matrix_power", lambda m, x: m.linalg.matrix_power(x, -3), "square"),
    ("cond", lambda m, x: m.linalg.cond(x), "wide"),
    ("cond_1", lambda m, x: m.linalg.cond(x, 1), "square"),
    ("tensorsolve", lambda m, x: m.linalg.tensorsolve(m.reshape(x[0], (2, 2, 4)),
                                                     _B[0, :, :2].T.reshape(2, 2, 2)[0]),
     "square"),
    ("multi_dot", lambda m, x: m.linalg.multi_dot([x[0], x[1], _B[0]]), "square"),
]


# JAX compiles each gradient for ~0.5 s here: compared with JAX are the custom rules and the
# decompositions' rules; numerical differences check every entry of GRADS below.
JAX_COMPARED = ["inv", "solve_a", "solve_b", "det", "det_singular", "slogdet", "slogdet_qr",
                "cholesky", "eigh_vectors", "svdvals", "svd_vectors", "qr", "qr_complete",
                "pinv", "lstsq", "norm_nuc", "norm_1", "cond"]


def _gradients_table():
    """The inputs and definitions JAX's stored gradients are computed from: the JAX_COMPARED
    entries of GRADS (their names, inputs and functions' source)."""
    chosen = [g for name in JAX_COMPARED for g in GRADS if g[0] == name]
    return (list(INPUTS.values()),
            [_weigh, repr([(name, arg) for name, _, arg in chosen]),
             *(f for _, f, _ in chosen)])


def _jax_gradients(jax):
    """JAX's gradients of the JAX_COMPARED entries of GRADS, in that order (one program)."""
    chosen = {g[0]: g for g in GRADS}
    def grads(inputs):
        return [jax.grad(lambda x, f=chosen[name][1]: _weigh(jax.numpy, f(jax.numpy, x)))(
            inputs[chosen[name][2]]) for name in JAX_COMPARED]
    return lambda *inputs: [np.asarray(v) for v in jax_compiled(
        grads, dict(zip(INPUTS, inputs[:-1], strict=True)))]


def test_gradients_match_jax():
    chosen = {g[0]: g for g in GRADS}
    args, definitions = _gradients_table()
    want = stored("numpy-linalg/gradients", args, *definitions)
    for name, w in zip(JAX_COMPARED, want, strict=True):
        _, f, arg = chosen[name]
        got = pto.grad(lambda x: _weigh(pnp, f(pnp, x)))(INPUTS[arg])
        assert_close(got, w, rtol=1e-8, atol=1e-8)


def _check_grads(fn, x, eps=1e-5, rtol=1e-6):
    """``jax.test_util.check_grads(fn, (x,), order=2)``'s checks for ptojax: forward mode
    against central differences, reverse mode against forward mode (``<ct, J t> =
    <J^T ct, t>``), and both again for the gradient of ``<ct, fn(x)>``."""
    rng = np.random.default_rng(0)
    t = rng.standard_normal(x.shape)
    out, tangent = pto.jvp(fn, (x,), (t,))
    numeric = (np.asarray(fn(x + eps * t)) - np.asarray(fn(x - eps * t))) / (2 * eps)
    scale = 1 + np.max(np.abs(numeric))
    assert_close(tangent, numeric, rtol=rtol, atol=rtol * scale)
    ct = rng.standard_normal(np.shape(out))
    (cotangent,) = pto.vjp(fn, x)[1](ct)
    np.testing.assert_allclose(np.sum(ct * np.asarray(tangent)),
                               np.sum(np.asarray(cotangent) * t), rtol=1e-9,
                               atol=1e-9 * scale * (1 + np.max(np.abs(ct))))
    grad = pto.grad(lambda x: pnp.sum(ct * fn(x)))
    second = (np.asarray(grad(x + eps * t)) - np.asarray(grad(x - eps * t))) / (2 * eps)
    _, hvp = pto.jvp(grad, (x,), (t,))
    assert_close(hvp, second, rtol=100 * rtol, atol=100 * rtol * (1 + np.max(np.abs(second))))


@pytest.mark.parametrize("name", [g[0] for g in GRADS])
def test_gradients_match_numerical_differences_to_second_order(name):
    _, f, arg = next(g for g in GRADS if g[0] == name)
    _check_grads(lambda x: f(pnp, x), INPUTS[arg])


def _batched(m, vmap, grad, a, b, spd, tall):
    la = m.linalg
    return [vmap(la.inv)(a), vmap(la.solve, in_axes=(0, None))(a, b[0]),
            vmap(la.solve, in_axes=(None, 1), out_axes=1)(a[0], b[0]),
            vmap(la.det)(a), vmap(la.slogdet)(a), vmap(lambda x: la.norm(x, 2))(a),
            vmap(la.cholesky)(spd), vmap(la.eigvalsh)(spd), vmap(la.svdvals)(tall),
            vmap(la.pinv)(tall), vmap(lambda x: la.lstsq(x, b[0, :, 0].repeat(2)[:5])[0])(tall),
            vmap(lambda x: m.abs(la.qr(x)[1]), in_axes=1)(tall),
            vmap(lambda x: la.matrix_power(x, 3))(a), vmap(la.cond)(a),
            vmap(grad(la.det))(a)]


def _batched_args():
    rng = np.random.default_rng(16)
    a, b = well_conditioned(rng, (3, 4, 4), np.float64), rng.standard_normal((3, 4, 2))
    spd, tall = positive_definite(rng, (3, 4, 4), np.float64), separated_spectrum(rng, (3, 5, 3), np.float64)
    return [a, b, spd, tall]


def test_vmap_of_pnp_linalg_matches_jax():
    args = _batched_args()
    got = _batched(pnp, pto.vmap, pto.grad, *args)
    want = stored("numpy-linalg/vmap", args, _batched)
    assert_close(pto.tree_util.tree_leaves(got), want, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("call,error,message", [
    (lambda: pnp.linalg.inv(np.ones((2, 3))), ValueError, "square"),
    (lambda: pnp.linalg.inv(np.eye(2, dtype=np.float16)), NotImplementedError, "float32"),
    (lambda: pnp.linalg.solve(np.eye(3), np.ones((2, 3))), ValueError, "b[..., None]"),
    (lambda: pnp.linalg.solve(np.eye(3), np.ones((4, 2))), ValueError, "3 rows"),
    (lambda: pnp.linalg.qr(np.eye(3), mode="economic"), ValueError, "mode"),
    (lambda: pnp.linalg.norm(np.eye(3), ord="nope"), ValueError, "order"),
    (lambda: pnp.linalg.norm(np.ones(3), ord="inf"), ValueError, "pnp.inf"),
    (lambda: pnp.linalg.norm(np.ones((2, 2, 2)), axis=(0, 1, 2)), ValueError, "axes"),
    (lambda: pnp.linalg.eigh(np.eye(3), UPLO="X"), ValueError, "UPLO"),
    (lambda: pnp.linalg.matrix_power(np.eye(3), 1.5), TypeError, "integer"),
    (lambda: pnp.linalg.slogdet(np.eye(3), method="svd"), ValueError, "method"),
    (lambda: pnp.linalg.lstsq(np.ones((2, 2, 2)), np.ones(2)), TypeError, "two-dimensional"),
    (lambda: pnp.linalg.multi_dot([np.ones(3)]), ValueError, "two arrays"),
    (lambda: pnp.linalg.outer(np.ones((2, 2)), np.ones(2)), ValueError, "two vectors"),
    (lambda: pnp.linalg.cross(np.ones(2), np.ones(2)), ValueError, "3-vectors"),
    (lambda: pnp.linalg.tensorinv(np.ones((2, 3)), ind=1), ValueError, "as many"),
    (lambda: pnp.linalg.pinv(np.eye(2), rtol=0.1, rcond=0.1), ValueError, "rtol and rcond"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_bad_arguments_raise_jax_exception_classes(call, error, message):
    with pytest.raises(error, match=message):
        call()


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py: this module's fixed-input
    tables (each a JAX program of tens of linalg calls; compiling them took ~1 min of the
    module's ~2 on a busy machine). Inputs end with the source of the table's definitions."""
    from pnp_reference import table_inputs
    jnp = jax.numpy

    def table(key, args, fn, *definitions):
        return key, table_inputs(args, fn, *definitions), jax_table(lambda *xs: fn(jnp, *xs))

    for dtype in PRODUCTS_DTYPES:
        yield table(f"numpy-linalg/products/{dtype}", _products_args(dtype), _products)
    yield table("numpy-linalg/preferred", _preferred_args(), _preferred)
    yield table("numpy-linalg/mixed", _mixed_args(), _mixed)
    for dtype in LINALG_DTYPES:
        yield table(f"numpy-linalg/solvers/{dtype}", _solvers_args(dtype), _solvers)
        yield table(f"numpy-linalg/norms/{dtype}", _norms_args(dtype), _norms)
        yield table(f"numpy-linalg/decompositions/{dtype}", _decompositions_args(dtype),
                    _decompositions, _column_signs)
    for dtype in LINALG_PRODUCTS_DTYPES:
        yield table(f"numpy-linalg/linalg-products/{dtype}", _linalg_products_args(dtype),
                    _linalg_products)
    yield table("numpy-linalg/singular", _singular_args(), _singular)
    args, definitions = _gradients_table()
    yield "numpy-linalg/gradients", table_inputs(args, *definitions), _jax_gradients(jax)
    # as the test compared before: jax.jit with XLA's default optimizations
    yield ("numpy-linalg/vmap", table_inputs(_batched_args(), _batched),
           lambda *inputs: [np.asarray(v) for v in pto.tree_util.tree_leaves(jax.jit(
               lambda *xs: _batched(jnp, jax.vmap, jax.grad, *xs))(*inputs[:-1]))])
