"""lax.conv_general_dilated and its wrappers against JAX: strides, every padding form, lhs/rhs
dilation, feature and batch groups, string and explicit dimension numbers; gradients of both
operands (and second order), vmap over either or both operands, low-precision and int8
accumulation; its tiling as im2col into a cube kernel and the host kernels."""
import ml_dtypes
import numpy as np
import pytest

import ptojax as pto
from ptojax import lax
from helpers import assert_close
from jax_golden import expected

CASES = {
    "same": ((2, 3, 9, 8), (4, 3, 3, 2), dict(window_strides=(1, 1), padding="SAME")),
    "valid-strided": ((2, 3, 9, 8), (4, 3, 3, 2), dict(window_strides=(2, 3), padding="VALID")),
    "dilated-negative-pad": ((2, 3, 9, 8), (4, 3, 3, 2), dict(
        window_strides=(2, 1), padding=((1, 2), (0, -1)), lhs_dilation=(2, 1),
        rhs_dilation=(1, 2))),
    "lhs-dilation-phases": ((2, 4, 5, 6), (6, 2, 3, 4), dict(
        window_strides=(2, 1), padding=((2, 1), (-1, 3)), lhs_dilation=(3, 2),
        rhs_dilation=(2, 1), feature_group_count=2)),
    "feature-groups": ((2, 6, 7, 8), (4, 3, 3, 3), dict(
        window_strides=(1, 2), padding="SAME", feature_group_count=2)),
    "batch-groups": ((4, 3, 7, 8), (6, 3, 3, 3), dict(
        window_strides=(1, 1), padding="VALID", batch_group_count=2)),
    "nhwc": ((2, 9, 8, 3), (3, 2, 3, 4), dict(
        window_strides=(1, 1), padding="SAME_LOWER",
        dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    "mixed-layouts": ((2, 9, 8, 6), (3, 2, 3, 4), dict(
        window_strides=(2, 1), padding=((1, 1), (2, 0)), rhs_dilation=(2, 1),
        feature_group_count=2, dimension_numbers=("NHWC", "HWIO", "NCHW"))),
    "1d": ((2, 3, 9), (4, 3, 3), dict(window_strides=(2,), padding="SAME")),
    "3d": ((1, 2, 5, 4, 6), (3, 2, 2, 3, 2), dict(window_strides=(1, 2, 1),
                                                  padding="VALID")),
}


def _operands(case, dtype=np.float32, seed=0):
    xs, ws, _ = CASES[case]
    rng = np.random.default_rng(seed)
    return rng.normal(size=xs).astype(dtype), rng.normal(size=ws).astype(dtype)


def _conv(lax_, **kw):
    return lambda x, w: lax_.conv_general_dilated(x, w, **kw)


def _highest(jax, **kw):
    return _conv(jax.lax, precision=jax.lax.Precision.HIGHEST, **kw)


def _cotangent(shape):
    return np.random.default_rng(1).normal(size=shape).astype(np.float32)


def _batched(x, w, stack=np.stack):
    """vmap's in_axes and operands: over x, over w, over both."""
    xb, wb = stack([x, 2 * x]), stack([w, -w])
    return (((0, None), (xb, w)), ((None, 0), (x, wb)), ((0, 0), (xb, wb)))


def _jax_values_gradients_and_vmap(jax, kw):
    theirs = _highest(jax, **kw)

    def reference(x, w, ct):
        grads = jax.grad(lambda a, b: (theirs(a, b) * ct).sum(), argnums=(0, 1))(x, w)
        return [theirs(x, w), *grads, *(jax.vmap(theirs, in_axes=in_axes)(*args)
                                        for in_axes, args in _batched(x, w, jax.numpy.stack))]
    return jax.jit(reference)


def _jax_second_order(jax, kw):
    theirs = _highest(jax, **kw)

    def reference(x, w):
        g = jax.grad(lambda a, b: (theirs(a, b) ** 2).sum(), argnums=(0, 1))
        return list(jax.grad(lambda a, b: sum((t * t).sum() for t in g(a, b)),
                             argnums=(0, 1))(x, w))
    return jax.jit(reference)


SECOND_ORDER = ["dilated-negative-pad", "mixed-layouts"]


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py: the fixed-input tables of
    this module (one JAX program a case; compiling them took ~1 min on a busy machine)."""
    for case in CASES:
        x, w = _operands(case)
        ct = _cotangent(jax.eval_shape(_highest(jax, **CASES[case][2]), x, w).shape)
        yield f"lax-conv/{case}", [x, w, ct], _jax_values_gradients_and_vmap(jax, CASES[case][2])
    for case in SECOND_ORDER:
        yield (f"lax-conv-second-order/{case}", list(_operands(case, np.float64)),
               _jax_second_order(jax, CASES[case][2]))
    for padding, (strides, transpose_kernel, consistent) in TRANSPOSES:
        kw = _transpose_kw(padding, strides, transpose_kernel, consistent)
        yield (f"lax-conv-transpose/{kw}", _transpose_operands(transpose_kernel),
               _jax_conv_transpose(jax, kw))
    for case in HOST_LAYOUTS:
        x, w, kw = _host_layout(case)
        yield f"lax-conv-host-layout/{case}", [x, w], jax.jit(
            lambda a, b, kw=kw: [_highest(jax, **kw)(a, b)])


@pytest.mark.parametrize("case", CASES)
def test_conv_values_gradients_and_vmap_match_jax(case):
    """Against JAX's values stored by jax_golden.py."""
    x, w = _operands(case)
    kw = CASES[case][2]
    ours = _conv(lax, **kw)
    got = ours(x, w)
    ct = _cotangent(got.shape)
    want, *want_vjp = expected(f"lax-conv/{case}", [x, w, ct])
    want_grads, want_vmaps = want_vjp[:2], want_vjp[2:]
    assert_close(got, want, scale=4)
    assert_close(pto.jit(ours)(x, w), want, scale=4)

    def loss(f):
        return lambda a, b: (f(a, b) * ct).sum()

    assert_close(pto.grad(loss(ours), argnums=(0, 1))(x, w), tuple(want_grads), scale=8)
    for (in_axes, args), want_vmap in zip(_batched(x, w), want_vmaps, strict=True):
        assert_close(pto.vmap(ours, in_axes=in_axes)(*args), want_vmap, scale=4)


@pytest.mark.parametrize("case", SECOND_ORDER)
def test_conv_second_order_gradients_match_jax(case):
    """Against JAX's values stored by jax_golden.py."""
    x, w = _operands(case, np.float64)   # float64 second derivatives: x64 mode
    ours = _conv(lax, **CASES[case][2])

    def hvp(grad, f):
        g = grad(lambda a, b: (f(a, b) ** 2).sum(), argnums=(0, 1))
        return grad(lambda a, b: sum((t * t).sum() for t in g(a, b)), argnums=(0, 1))(x, w)

    with pto.enable_x64(True):
        ours_hvp = hvp(pto.grad, ours)
    assert_close(ours_hvp, tuple(expected(f"lax-conv-second-order/{case}", [x, w])), scale=10)


def test_vmap_of_grouped_conv_over_in_axes_inside_the_operands(jax):
    x, w = _operands("batch-groups")
    kw = CASES["batch-groups"][2]
    xb, wb = np.stack([x, -x], axis=2), np.stack([w, 3 * w], axis=3)
    for in_axes, args in (((2, None), (xb, w)), ((None, 3), (x, wb)), ((2, 3), (xb, wb))):
        assert_close(pto.vmap(_conv(lax, **kw), in_axes=in_axes)(*args),
                     np.asarray(jax.vmap(_highest(jax, **kw), in_axes=in_axes)(*args)),
                     scale=4)


@pytest.mark.parametrize("dtype,pet", [("bfloat16", None), ("bfloat16", np.float32),
                                       ("float16", np.float32), ("int8", np.int32)])
def test_conv_preferred_element_type_matches_jax(jax, jnp, dtype, pet):
    rng = np.random.default_rng(2)
    x = rng.integers(-100, 100, (2, 4, 7, 7)).astype(np.float32)
    w = rng.integers(-100, 100, (5, 4, 3, 3)).astype(np.float32)
    if dtype != "int8":
        x, w = x / 64, w / 64
    x, w = np.asarray(jnp.asarray(x, dtype)), np.asarray(jnp.asarray(w, dtype))
    kw = dict(window_strides=(1, 1), padding="SAME", preferred_element_type=pet)
    got, want = _conv(lax, **kw)(x, w), np.asarray(_highest(jax, **kw)(x, w))
    assert got.dtype == want.dtype
    assert_close(got, want)
    assert_close(pto.jit(_conv(lax, **kw))(x, w), want)


def test_conv_wrappers_match_jax(jax):
    x, w = _operands("same")
    assert_close(lax.conv(x, w, (2, 1), "VALID"),
                 np.asarray(jax.lax.conv(x, w, (2, 1), "VALID", jax.lax.Precision.HIGHEST)))
    args = (x, w, (1, 2), ((2, 1), (0, 1)), (2, 1), (1, 2))
    assert_close(lax.conv_with_general_padding(*args),
                 np.asarray(jax.lax.conv_with_general_padding(
                     *args, precision=jax.lax.Precision.HIGHEST)))


TRANSPOSES = [(padding, case) for case in [((2, 2), False, False), ((2, 1), True, False),
                                           ((3, 2), False, True)]
              for padding in ["SAME", "VALID", ((1, 2), (0, 1))]]


def _transpose_kw(padding, strides, transpose_kernel, consistent):
    return dict(strides=strides, padding=padding, transpose_kernel=transpose_kernel,
                use_consistent_padding=consistent)


def _transpose_operands(transpose_kernel):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 5, 6, 3)).astype(np.float32)
    w = rng.normal(size=(3, 2, 4, 3) if transpose_kernel else (3, 2, 3, 4)).astype(np.float32)
    return [x, w]


def _jax_conv_transpose(jax, kw):
    def theirs(a, b):
        return jax.lax.conv_transpose(a, b, precision=jax.lax.Precision.HIGHEST, **kw)
    return jax.jit(lambda x, w: [theirs(x, w), *jax.grad(
        lambda a, b: (theirs(a, b) ** 2).sum(), argnums=(0, 1))(x, w)])


@pytest.mark.parametrize("padding", ["SAME", "VALID", ((1, 2), (0, 1))])
@pytest.mark.parametrize("strides,transpose_kernel,consistent", [
    ((2, 2), False, False), ((2, 1), True, False), ((3, 2), False, True)])
def test_conv_transpose_matches_jax(padding, strides, transpose_kernel, consistent):
    """Against JAX's values stored by jax_golden.py."""
    x, w = _transpose_operands(transpose_kernel)
    kw = _transpose_kw(padding, strides, transpose_kernel, consistent)
    want, *want_grads = expected(f"lax-conv-transpose/{kw}", [x, w])
    assert_close(lax.conv_transpose(x, w, **kw), want, scale=4)
    got = pto.grad(lambda a, b: (lax.conv_transpose(a, b, **kw) ** 2).sum(),
                   argnums=(0, 1))(x, w)
    assert_close(got, tuple(want_grads), scale=8)


def test_conv_errors_name_the_problem():
    x, w = _operands("same")
    with pytest.raises(pto.errors.ShapeError, match="feature_group_count"):
        lax.conv_general_dilated(x, w, (1, 1), "SAME", feature_group_count=2)
    with pytest.raises(pto.errors.ShapeError, match="exactly once"):
        lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                 dimension_numbers=("NHWW", "OIHW", "NCHW"))
    with pytest.raises(pto.errors.ShapeError, match="lhs_dilation"):
        lax.conv_general_dilated(x, w, (1, 1), "SAME", lhs_dilation=(2, 1))
    with pytest.raises(pto.errors.ShapeError, match="padding"):
        lax.conv_general_dilated(x, w, (1, 1), "FULL")
    with pytest.raises(pto.errors.ShapeError, match="window_strides"):
        lax.conv_general_dilated(x, w, (1,), "VALID")
    with pytest.raises(pto.errors.DtypeError):
        lax.conv_general_dilated(x, w.astype(np.float16), (1, 1), "VALID")


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_conv_tiles_as_im2col_into_a_cube_kernel_with_its_epilogue(dtype):
    x, w = _operands("nhwc", dtype)
    w = np.concatenate([w, w], axis=2)[:, :, :3]

    def f(a, b):
        return pto.nn.relu(lax.conv_general_dilated(
            a, b, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")))

    tiled = pto.tile(f, target=pto.targets.host_cpu)
    kernels = [e for e in pto.make_ir(tiled)(x, w).eqns if e.prim.name == "tile_kernel"]
    assert [k.params["kind"] for k in kernels] == ["cube"]     # relu fused as the epilogue
    body = {e.prim.name for e in kernels[0].params["bodies"][0].eqns}
    assert "tile_matmul" in body and "tile_select" in body
    assert_close(tiled(x, w), f(x, w))
    host = pto.jit(f, backend=pto.lower.host.backend.CpuBackend(
        tiered=False, min_elements=0, target=pto.targets.host_cpu))
    assert_close(host(x, w), f(x, w))
    assert "TMATMUL" in pto.jit(f).lower(x, w).as_text("pto-cpp")


def test_float_convs_stay_in_blas_on_host_jit():
    """host_jit (pto.jit's cpu backend) runs float convolutions as im2col + BLAS: they are
    neither expanded nor tiled there; an int8 one (no BLAS for it) and an Ascend target's
    float16 one still become cube kernels."""
    x, w = _operands("same")

    def f(a, b):
        return lax.conv_general_dilated(a, b, (1, 1), "SAME")

    cases = ((np.float32, pto.targets.host_jit, []),
             (np.float16, pto.targets.host_jit, []),
             (ml_dtypes.bfloat16, pto.targets.host_jit, []),
             (np.int8, pto.targets.host_jit, ["cube"]),
             (np.float16, pto.targets.ascend910b, ["cube"]))
    for dtype, target, kernels in cases:
        a, b = x.astype(dtype), w.astype(dtype)
        ir = pto.make_ir(pto.tile(f, target=target))(a, b)
        assert [e.params["kind"] for e in ir.eqns if e.prim.name == "tile_kernel"] == kernels
        assert any(e.prim.name == "conv_general_dilated" for e in ir.eqns) == (not kernels)


HOST_LAYOUTS = {   # dimension numbers, fortran-ordered input, groups, the matrix's outer block
    "nhwc-grouped": (("NHWC", "HWIO", "NHWC"), False, dict(feature_group_count=2),
                     "_rows_outer"),
    "nhwc-batch-groups": (("NHWC", "HWIO", "NHWC"), False, dict(batch_group_count=2),
                          "_rows_outer"),
    "filter-grad": (("CHWN", "IOHW", "HWNC"), False, {}, "_columns_outer"),
    "nchw-grouped": (("NCHW", "OIHW", "NCHW"), False, dict(feature_group_count=2),
                     "_columns_outer"),
    "batch-groups-fortran": (("NHWC", "OHWI", "NCHW"), True, dict(batch_group_count=2),
                             "_columns_outer"),
}


def _host_layout(case):
    """The operands (x in its layout) and the convolution's keywords of a HOST_LAYOUTS case."""
    dn, fortran, groups, _ = HOST_LAYOUTS[case]
    sizes = dict(N=4, C=4, H=7, W=6, O=6, I=2 if "feature_group_count" in groups else 4)
    x = np.random.default_rng(4).normal(size=[sizes[c] for c in dn[0]]).astype(np.float32)
    w = np.random.default_rng(5).normal(
        size=[sizes[c] if c not in "HW" else 3 for c in dn[1]]).astype(np.float32)
    x = np.asfortranarray(x) if fortran else x
    kw = dict(window_strides=(2, 1), padding=((1, 2), (1, 0)), lhs_dilation=(1, 2),
              rhs_dilation=(2, 1), dimension_numbers=dn, **groups)
    return x, w, kw


def _spy_slab_orders(monkeypatch, im2col):
    """The set into which im2col's slab loops (``_rows_outer``, ``_columns_outer``) record
    their names when they run."""
    used = set()
    for name in ("_rows_outer", "_columns_outer"):
        def spy(*args, _name=name, _f=getattr(im2col, name)):
            used.add(_name)
            return _f(*args)
        monkeypatch.setattr(im2col, name, spy)
    return used


@pytest.mark.parametrize("case", HOST_LAYOUTS)
def test_host_im2col_in_slabs_matches_jax(monkeypatch, case):
    """The host kernel copies the window matrix in cache-sized slabs, in the input's own
    layout (columns outer when its fastest axis is spatial); tiny slabs exercise every split
    of the rows and the features-innermost copy of the input."""
    from ptojax.ops import im2col
    outer = HOST_LAYOUTS[case][3]
    x, w, kw = _host_layout(case)
    (want,) = expected(f"lax-conv-host-layout/{case}", [x, w])   # stored by jax_golden.py
    used = _spy_slab_orders(monkeypatch, im2col)
    for cache, slab in ((64, 64), (200, 200), (1 << 22, 64), (1 << 22, 1 << 22)):
        monkeypatch.setattr(im2col, "LARGE_OUTPUT", cache)
        monkeypatch.setattr(im2col, "_slab_bytes", lambda total, reread: slab)
        used.clear()
        assert_close(_conv(lax, **kw)(x, w), want, scale=4)
        # an output large next to a slab: the input is copied features-innermost first
        assert used == {outer if cache == 1 << 22 else "_rows_outer"}


@pytest.mark.parametrize("large", [16000, 1 << 23])
def test_host_nchw_filter_gradient_puts_its_batch_innermost_when_its_kernel_is_large(
        jax, monkeypatch, large):
    """An NCHW filter gradient (the input's features as batch, the output cotangent as a
    large kernel): row slabs would each re-read that kernel, so the input is first copied
    with its batch (the input's features) innermost, as in NHWC, and the matrix summed in
    column slabs into the small filter; results as JAX's either way."""
    from ptojax.ops import im2col
    rng = np.random.default_rng(6)
    x = rng.normal(size=(4, 6, 7, 6)).astype(np.float32)      # (n, c, h, w)
    ct = rng.normal(size=(4, 5, 7, 6)).astype(np.float32)     # (n, o, h, w)
    kw = dict(window_strides=(1, 1), padding=((1, 1), (1, 1)),
              dimension_numbers=("CNHW", "IOHW", "NCHW"))
    want = np.asarray(_highest(jax, **kw)(x, ct))
    used = _spy_slab_orders(monkeypatch, im2col)
    monkeypatch.setattr(im2col, "LARGE_OUTPUT", large)
    assert_close(_conv(lax, **kw)(x, ct), want, scale=4)
    assert used == {"_columns_outer" if large == 16000 else "_rows_outer"}


def test_host_im2col_slabs_fit_the_cache_and_grow_with_what_they_reread():
    """Slabs of ``SLAB_BYTES`` (a core's cache), at least 8x the kernel (or output) each slab
    re-reads, at most the whole matrix."""
    from ptojax.ops import im2col
    mib = 1 << 20
    assert im2col._slab_bytes(100 * mib, 64 * 1024) == im2col.SLAB_BYTES == 2 * mib
    assert im2col._slab_bytes(100 * mib, mib) == 8 * mib
    assert im2col._slab_bytes(mib, 64 * 1024) == mib
    assert im2col._slab_bytes(0, 0) == 1


PRECISIONS = [None, "default", "high", "highest", "fastest", "bfloat16", "tensorfloat32",
              "float32", "bfloat16_3x", ("default", "highest")]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_conv_precision_is_checked_recorded_and_a_no_op_on_the_host_as_on_jax_cpu(
        jax, jnp, dtype):
    """JAX's CPU backend gives the same bits for every Precision (float32 in float32, bf16
    in float32 then rounded); so does the host. The value is validated as JAX and recorded
    in the IR (and in the gradient's convolutions)."""
    x, w = (np.asarray(jnp.asarray(v, dtype)) for v in _operands("mixed-layouts"))
    kw = CASES["mixed-layouts"][2]
    precisions = [None, "bfloat16", (jax.lax.Precision.DEFAULT, jax.lax.Precision.HIGHEST)]
    theirs = {str(p): np.asarray(jax.lax.conv_general_dilated(x, w, precision=p, **kw))
              for p in precisions}
    assert all(np.array_equal(t, theirs["None"]) for t in theirs.values())
    ours = [np.asarray(lax.conv_general_dilated(x, w, precision=p, **kw)) for p in PRECISIONS]
    assert all(np.array_equal(o, ours[0]) for o in ours)
    assert_close(ours[0], theirs["None"])
    loss = lambda a, b: lax.conv_general_dilated(a, b, precision="highest", **kw).sum()  # noqa
    ir = str(pto.make_ir(pto.grad(loss, argnums=(0, 1)))(x, w))
    assert ir.count("precision=(Precision.HIGHEST, Precision.HIGHEST)") == 3


def test_conv_and_dot_reject_the_precisions_jax_rejects(jax):
    x, w = _operands("same")
    for bad in ("fast", "HIGHEST", 3, ("default",), (lax.Precision.DEFAULT, "highest")):
        jax_bad = (jax.lax.Precision.DEFAULT, "highest") if isinstance(bad, tuple) and \
            len(bad) == 2 else bad
        with pytest.raises(ValueError):
            jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", precision=jax_bad)
        with pytest.raises(ValueError, match="precision"):
            lax.conv_general_dilated(x, w, (1, 1), "SAME", precision=bad)
        with pytest.raises(ValueError, match="precision"):
            lax.conv_transpose(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW"),
                               precision=bad)
        with pytest.raises(ValueError, match="precision"):
            lax.dot(x[0, 0], x[0, 0], precision=bad)
