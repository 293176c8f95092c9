"""The tile rule of each primitive: how a tensor-level equation splits into tile operations.

A kernel's iteration space is a 2-D view ``(M, N)`` of its anchor tensor (leading dimensions
flattened into rows, the last dimension as columns). Every tensor in a fused group has a
*layout* in that space:

    full    an (M, N) tensor; tile (R, C)          (e.g. x, softmax(x))
    row     one value per row, M values; tile (R, 1)   (e.g. a row max, a row mean)
    col     one value per column, N values; tile (1, C)   (e.g. a bias vector) — inputs only
    scalar  one value; a scalar operand                    — inputs only
    colsum  a column sum over all rows (e.g. a bias gradient): each tile adds its partial
            sums into the zero-initialized output with atomic stores — outputs only

A rule answers two questions: ``layout`` — given the layouts of the operands already in the
group (None for values from outside), is the equation expressible in this space, and with
which layouts (or why not, as a string); and ``build`` — emit its tile operations into a kernel
body (see ``tile_build.BodyBuilder``). ``check`` says why an equation can never be tiled on a
target. ``RULES`` maps each kind of ``TileForm`` (a primitive's ``tile`` fact) to its rule; a
primitive whose tile fact is ``Unsupported`` stays a tensor-level equation, and
``unsupported_reason`` says why.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional

from ptojax import dtypes
from ptojax.tile.ops import accumulator_dtype
from ptojax.trace import Unsupported

FULL, ROW, COL, SCALAR = "full", "row", "col", "scalar"
COLSUM = "colsum"    # partial column sums of a tile; complete only after the whole kernel


def view2d(shape) -> tuple:
    """The (rows, cols) view of a tensor: leading dimensions flattened into rows."""
    shape = tuple(shape)
    if not shape:
        return (1, 1)
    return (math.prod(shape[:-1]), shape[-1])


def fits(shape, layout, space) -> bool:
    m, n = space
    size = math.prod(shape)
    if layout == FULL:
        return view2d(shape) == space and len(shape) >= 1
    if layout == ROW:
        return size == m
    if layout in (COL, COLSUM):
        return size == n
    return size == 1


@dataclass(frozen=True)
class TileRule:
    kind: str                       # elementwise | reduce | broadcast | reshape | matmul
    check: Callable                 # (eqn, target) -> reason or None
    layout: Callable                # (eqn, in_layouts, space) -> (out_layout, in_layouts) | str
    build: Callable                 # (builder, eqn, in_layouts) -> None
    seed_space: Callable            # eqn -> (M, N) when the equation starts a group


# --- dtype checks ----------------------------------------------------------------------------
def _dtype_reason(eqn, target) -> Optional[str]:
    for a in (*eqn.inputs, *eqn.outputs):
        if a.type.dtype.name not in target.tile_dtypes:
            return f"{dtypes.short_name(a.type.dtype)} tensors have no tile form on {target.name}"
    return None


def _arith_dtype_reason(dtype, target) -> Optional[str]:
    if dtype.name in target.vector_dtypes or dtypes.is_float(dtype):
        return None
    return f"the {target.name} vector unit has no {dtype.name} arithmetic"


# --- elementwise -----------------------------------------------------------------------------
def form_of(eqn):
    """The equation's TileForm (None when its primitive has no tile form)."""
    return eqn.prim.fact("tile")


def _ew_check(eqn, target):
    reason = _dtype_reason(eqn, target)
    if reason:
        return reason
    form = form_of(eqn)
    if form.check is not None:
        reason = form.check(eqn)
        if reason:
            return reason
    if form.arith:
        return _arith_dtype_reason(eqn.inputs[0].type.dtype, target)
    return None


def _ew_layout(eqn, in_layouts, space):
    out = eqn.outputs[0].type
    if out.shape == ():
        return "a scalar computation (nothing to tile)"
    known = {l for l in in_layouts if l is not None and l != SCALAR}
    if COLSUM in known:
        return "its operand is a column sum, complete only after the whole kernel"
    if len(known) > 1:
        return f"operands mix layouts {sorted(known)}"
    layout = known.pop() if known else FULL
    if layout not in (FULL, ROW) or not fits(out.shape, layout, space):
        return f"its {out} result is not a {layout} value of the {space} kernel space"
    resolved = [l if l is not None else (SCALAR if a.type.shape == () else layout)
                for a, l in zip(eqn.inputs, in_layouts)]
    return layout, resolved


def _ew_build(b, eqn, in_layouts):
    b.elementwise(eqn, in_layouts)


def _seed_output(eqn):
    return view2d(eqn.outputs[0].type.shape)


ELEMENTWISE_RULE = TileRule("elementwise", _ew_check, _ew_layout, _ew_build, _seed_output)


# --- row reductions --------------------------------------------------------------------------
def reduce_layout_of(eqn) -> Optional[str]:
    """ROW for a reduction over the last axis, COLSUM over all leading axes, else None."""
    x = eqn.inputs[0].type
    axes = tuple(sorted(eqn.params["axes"]))
    if x.ndim >= 1 and axes == (x.ndim - 1,):
        return ROW
    if x.ndim >= 2 and axes == tuple(range(x.ndim - 1)) and form_of(eqn).column_sum:
        return COLSUM
    return None


def _reduce_check(eqn, target):
    reason = _dtype_reason(eqn, target)
    if reason:
        return reason
    x = eqn.inputs[0].type
    layout = reduce_layout_of(eqn)
    if layout is None:
        return (f"{eqn.prim.name} over axes {tuple(eqn.params['axes'])} of {x}: only "
                f"reductions over the last axis (rows) and sums over all leading axes "
                f"(columns) are tiled")
    if not dtypes.is_float(x.dtype):
        return f"{eqn.prim.name} of {x}: reductions are tiled for floating point only"
    if layout == COLSUM and x.dtype.name != "float32":
        return (f"column sum of {x}: fused column sums accumulate with atomic float32 "
                f"stores, so they are tiled for float32 only")
    return None


def _reduce_layout(eqn, in_layouts, space):
    x = eqn.inputs[0].type
    if in_layouts[0] not in (None, FULL) or view2d(x.shape) != space:
        return f"it reduces {x}, not the {space} kernel space"
    return reduce_layout_of(eqn), [FULL]


def _reduce_build(b, eqn, in_layouts):
    b.reduce(eqn)


def _seed_input(eqn):
    return view2d(eqn.inputs[0].type.shape)


REDUCE_RULE = TileRule("reduce", _reduce_check, _reduce_layout, _reduce_build, _seed_input)


# --- broadcasts and reshapes -----------------------------------------------------------------
def broadcast_kind(eqn) -> str:
    """How broadcast_in_dim maps its operand onto the output: identity/row/col/scalar/other."""
    x, out = eqn.inputs[0].type, eqn.outputs[0].type
    expanded = [1] * out.ndim
    for i, d in enumerate(eqn.params["broadcast_dimensions"]):
        expanded[d] = x.shape[i]
    if tuple(expanded) == out.shape:
        return "identity"
    if x.size == 1:
        return "scalar"
    if out.ndim and expanded[-1] == 1 and tuple(expanded[:-1]) == out.shape[:-1]:
        return "row"
    if out.ndim and expanded[-1] == out.shape[-1] and all(e == 1 for e in expanded[:-1]):
        return "col"
    return "other"


def _broadcast_layout(eqn, in_layouts, space, want=None):
    out = eqn.outputs[0].type
    result = _broadcast_layout_any(eqn, in_layouts, space)
    if want is not None and not isinstance(result, str) and result[0] != want:
        return f"broadcast to {out} gives a {result[0]} value, not {want}"
    return result


def _broadcast_layout_any(eqn, in_layouts, space):
    out = eqn.outputs[0].type
    kind = broadcast_kind(eqn)
    known = in_layouts[0]
    if known == COLSUM:
        return "its operand is a column sum, complete only after the whole kernel"
    if fits(out.shape, FULL, space) and (known != ROW or kind != "identity"):
        need = {"identity": FULL, "row": ROW, "col": COL, "scalar": SCALAR}.get(kind)
        if kind == "scalar" and known == ROW and space[0] == 1:
            need = ROW
        if need is None or (known is not None and known != need):
            return f"broadcast of {eqn.inputs[0].type} to {out} is not a row/column broadcast"
        return FULL, [need]
    if fits(out.shape, ROW, space):
        need = ROW if kind == "identity" else SCALAR if kind == "scalar" else None
        if need is None or (known is not None and known != need):
            return f"broadcast of {eqn.inputs[0].type} to {out} does not fit the kernel rows"
        return ROW, [need]
    return f"broadcast result {out} is not part of the {space} kernel space"


def _broadcast_build(b, eqn, in_layouts):
    b.broadcast(eqn, in_layouts)


BROADCAST_RULE = TileRule("broadcast", _dtype_reason, _broadcast_layout, _broadcast_build,
                          _seed_output)


def _reshape_layout(eqn, in_layouts, space, want=None):
    x, out = eqn.inputs[0].type, eqn.outputs[0].type
    options = [in_layouts[0]] if in_layouts[0] is not None else \
        [want] if want is not None else [FULL, ROW]
    for layout in options:
        if fits(x.shape, layout, space) and fits(out.shape, layout, space) and \
                (in_layouts[0] is not None or layout != FULL or view2d(x.shape) == space):
            return layout, [layout]
    return f"reshape {x} -> {out} changes the kernel's row/column structure"


def _reshape_build(b, eqn, in_layouts):
    b.alias(eqn, in_layouts)


RESHAPE_RULE = TileRule("reshape", _dtype_reason, _reshape_layout, _reshape_build,
                        _seed_output)


# --- matmul ----------------------------------------------------------------------------------
CUBE_DTYPES = frozenset({"float16", "bfloat16", "float32", "int8", "float8_e4m3fn",
                         "float8_e5m2"})


@dataclass(frozen=True)
class MatmulShape:
    """A cube-tileable dot_general: ``batch`` leading batch elements (1 if none) of an
    (M, K) x (K, N) product; ``lt``/``rt``: the lhs is stored [K, M] / the rhs [N, K]."""
    batch: int
    m: int
    k: int
    n: int
    lt: bool
    rt: bool


def matmul_shape(eqn) -> Optional[MatmulShape]:
    """The matmul a dot_general is, if the cube can tile it, else None.

    Unbatched: lhs [..., M, K] (leading dims folded into M) or [K, M]; rhs [K, N] or [N, K].
    Batched: the batch dims lead both operands in order and each operand has exactly two
    more: lhs [*b, M, K] or [*b, K, M]; rhs [*b, K, N] or [*b, N, K].
    """
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lhs, rhs = eqn.inputs[0].type, eqn.inputs[1].type
    nb = len(lb)
    if tuple(lb) != tuple(range(nb)) or tuple(rb) != tuple(range(nb)) or len(lc) != 1 or \
            len(rc) != 1 or rhs.ndim != nb + 2 or lhs.ndim < 1:
        return None
    if nb and lhs.ndim != nb + 2:
        return None
    if lc == (lhs.ndim - 1,) and lhs.ndim >= 2:
        lt = False
    elif lhs.ndim == nb + 2 and lc == (nb,):
        lt = True
    else:
        return None
    rt = rc == (nb + 1,)
    k = lhs.shape[lc[0]]
    m = lhs.shape[nb + 1] if lt else math.prod(lhs.shape[nb:-1])
    n = rhs.shape[nb] if rt else rhs.shape[nb + 1]
    return MatmulShape(math.prod(lhs.shape[:nb]), m, k, n, lt, rt)


def matmul_operands(eqn):
    """(lhs_transposed, rhs_transposed) for a dot_general the cube can tile, else None."""
    shape = matmul_shape(eqn)
    return None if shape is None else (shape.lt, shape.rt)


def _matmul_check(eqn, target):
    if matmul_operands(eqn) is None:
        return f"dot_general with dimension numbers {eqn.params['dimension_numbers']} " \
               f"is not a (transposed, leading-batch) matmul"
    dtype = eqn.inputs[0].type.dtype
    if dtype.name not in CUBE_DTYPES or dtype.name not in target.cube_macs_per_cycle:
        fp8 = " (ascend950 has an fp8 cube)" if dtype in dtypes.FLOAT8 else ""
        return f"the {target.name} cube unit does not multiply {dtype.name} matrices{fp8}"
    out, acc = eqn.outputs[0].type.dtype, accumulator_dtype(dtype)
    if out not in (acc, dtype):
        return (f"the cube accumulates {dtypes.short_name(dtype)} products in "
                f"{dtypes.short_name(acc)}, so its results are {dtypes.short_name(acc)} or "
                f"{dtypes.short_name(dtype)}, not {dtypes.short_name(out)}")
    return _dtype_reason(eqn, target)


def _matmul_layout(eqn, in_layouts, space):
    if any(l is not None for l in in_layouts) or view2d(eqn.outputs[0].type.shape) != space:
        return "a matmul starts its own (cube) kernel"
    return FULL, [None, None]


def _matmul_build(b, eqn, in_layouts):
    b.matmul(eqn)


MATMUL_RULE = TileRule("matmul", _matmul_check, _matmul_layout, _matmul_build, _seed_output)


# --- convolution -------------------------------------------------------------------------------
# A 2-D convolution in the canonical layout (NHWC input, HWIO filter, NHWC output; tile/prepare
# rewrites the others into it) tiles as one cube kernel that expands its im2col blocks on chip
# (tile_img2col); its (batch x output position, output feature) result is a matmul's.
CONV_SPECS = ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))   # NHWC, HWIO, NHWC
TIMG2COL_LIMITS = dict(pad=255, filter=255, stride=63, dilation=255)   # fmatrix field ranges


def conv_matmul_shape(eqn) -> MatmulShape:
    """The matmul a canonical convolution is: per image, (OH*OW, KH*KW*C) x (KH*KW*C, O)."""
    n, h, w, c = eqn.inputs[0].type.shape
    kh, kw, _, o = eqn.inputs[1].type.shape
    _, oh, ow, _ = eqn.outputs[0].type.shape
    return MatmulShape(n, oh * ow, kh * kw * c, o, False, False)


def conv_c0(dtype, target) -> int:
    """Channels per NC1HWC0 block: one 32-byte row (16 fp16, 32 int8)."""
    return target.row_alignment // dtype.itemsize


def direct_conv_reason(eqn, target, layout_free=True, phases=False) -> Optional[str]:
    """Why a convolution cannot be one on-chip-im2col cube kernel on ``target`` (None if it
    can). ``layout_free``: any dimension numbers and channel count (tile/prepare transposes
    into NHWC/HWIO and zero-pads the channels to a multiple of C0); ``phases``: a unit-stride
    lhs-dilated one is split into dilation-free phase convolutions
    (``tile/convolution.py``)."""
    p = eqn.params
    lhs, rhs = eqn.inputs[0].type, eqn.inputs[1].type
    dtype = lhs.dtype
    if lhs.ndim != 4:
        return f"a {lhs.ndim - 2}-d convolution (the on-chip im2col kernel is 2-d)"
    if p["feature_group_count"] != 1 or p["batch_group_count"] != 1:
        return "a grouped convolution (it tiles as a batched matmul over the im2col expansion)"
    if any(d != 1 for d in p["lhs_dilation"]) and not (
            phases and all(s == 1 for s in p["window_strides"])
            and all(d == 1 for d in p["rhs_dilation"])):
        return ("lhs dilation (a transposed convolution or a strided one's input gradient) "
                "with window strides or rhs dilation: TIMG2COL reads no holes between input "
                "pixels, and only a unit-stride, undilated-filter one splits into phases")
    if not layout_free and tuple(map(tuple, p["dimension_numbers"])) != CONV_SPECS:
        return "its dimension numbers are not NHWC/HWIO/NHWC"
    if dtype.name not in CUBE_DTYPES or dtype.name not in target.cube_macs_per_cycle:
        return f"the {target.name} cube unit does not multiply {dtype.name} matrices"
    if not target.cube_convolves(dtype):
        return f"{target.name} runs {dtype.name} convolutions tensor-level (im2col + BLAS)"
    out, acc = eqn.outputs[0].type.dtype, accumulator_dtype(dtype)
    if out not in (acc, dtype):
        return f"its {dtypes.short_name(out)} result is neither the operand nor the " \
               f"accumulator dtype"
    spec = p["dimension_numbers"][0]
    c = lhs.shape[spec[1]]
    h, w = (lhs.shape[d] for d in spec[2:])
    c0 = conv_c0(dtype, target)
    if c % c0 and not layout_free:
        return f"its {c} input channels are not a multiple of C0 = {c0} (NC1HWC0 blocks)"
    kernel = [rhs.shape[d] for d in p["dimension_numbers"][1][2:]]
    out_w = eqn.outputs[0].type.shape[p["dimension_numbers"][2][3]]
    out_h = eqn.outputs[0].type.shape[p["dimension_numbers"][2][2]]
    rows = min(out_h, -(-16 // out_w) + 1)         # output rows of a 16-position tile
    band = min(h, (rows - 1) * p["window_strides"][0] + (kernel[0] - 1) * p["rhs_dilation"][0]
               + 1)
    fmap = band * w * -(-c // c0) * c0 * dtype.itemsize
    if 2 * fmap > target.capacity("L1") // 2:
        return (f"the image rows one 16-position output tile reads ({fmap:,} bytes) "
                f"double-buffered take more than half of {target.name}'s L1")
    lim = TIMG2COL_LIMITS
    split = phases and any(d != 1 for d in p["lhs_dilation"])   # phases crop, pads >= 0
    if any((not split and min(lo, hi) < 0) or max(lo, hi) > lim["pad"]
           for lo, hi in p["padding"]) \
            or max(kernel) > lim["filter"] or max(p["window_strides"]) > lim["stride"] \
            or max(p["rhs_dilation"]) > lim["dilation"]:
        return "its padding/filter/stride/dilation is outside the fmatrix fields' ranges"
    return _dtype_reason(eqn, target)


def _conv_check(eqn, target):
    return direct_conv_reason(eqn, target, layout_free=False)


def _conv_build(b, eqn, in_layouts):
    b.conv(eqn)


CONV_RULE = TileRule("conv", _conv_check, _matmul_layout, _conv_build, _seed_output)


# --- the rules by kind ------------------------------------------------------------------------
RULES = {"elementwise": ELEMENTWISE_RULE, "reduce": REDUCE_RULE, "broadcast": BROADCAST_RULE,
         "reshape": RESHAPE_RULE, "matmul": MATMUL_RULE, "conv": CONV_RULE}
CUBE_KINDS = ("matmul", "conv")     # rules whose equation starts a cube kernel


def rule_of(eqn):
    """The tile rule of ``eqn``'s primitive, or None."""
    form = form_of(eqn)
    return RULES.get(form.kind) if form is not None else None


def unsupported_reason(eqn, target) -> Optional[str]:
    """Why ``eqn`` can never be part of a tile kernel on ``target`` (None if it can be)."""
    fact = eqn.prim.facts.get("tile")
    if type(fact) is Unsupported:
        return fact.reason
    if fact is not None and fact.kind == "expand" and fact.check:
        return fact.check(eqn)      # unexpanded: the reason it was not expanded
    rule = rule_of(eqn)
    if rule is None:
        return f"no tile rule for `{eqn.prim.name}`"
    return rule.check(eqn, target)
