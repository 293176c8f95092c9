"""Tile primitives: the operations inside a ``tile_kernel`` body.

A ``tile_kernel`` equation runs its body once per tile of a 2-D grid (``TileGrid``,
``tile/grid.py``). The body's inputs are the tile's row/column indices (``i32[]``), the
kernel's global-memory (GM) tensors — inputs, then outputs (destination-passing), then scratch
workspaces — and it returns the updated output tensors. Inside, values are ``TileType``s living in an on-chip buffer:

    tile_load      GM tensor window -> tile (UB/L1)         [PTO TLOAD]
                   (``stage`` names a pipeline buffer shared by the loads of every K step)
    tile_store     tile -> GM tensor window, returns the    [PTO TSTORE]
                   updated tensor (functional form)
    tile_scalar_load  one GM element -> scalar              [PTO load_scalar]
    tile_<op>      elementwise op on UB tiles; a second operand may be a scalar or a row
                   ([R,1]) / column ([1,C]) tile broadcast  [TADD, TADDS, TROWEXPANDADD, ...]
    tile_fill      scalar -> tile                           [TEXPANDS]
    tile_row_expand / tile_col_expand   [R,1] / [1,C] -> [R,C]   [TROWEXPAND / TCOLEXPAND]
    tile_row_sum / tile_row_max / tile_row_min   [R,C] -> [R',1]  [TROWSUM / TROWMAX / TROWMIN]
                   (row vectors have R' = R rounded up to 32 physical rows: ROW_VECTOR_ALIGN)
    tile_col_sum   [R,C] -> [1,C] partial column sums, added into a zeroed output by atomic
                   stores                                   [TCOLSUM, TSTORE AtomicAdd]
    tile_move      L1 -> L0A / L0B                          [TEXTRACT]
    tile_matmul, tile_matmul_acc   L0A x L0B (+ L0C) -> L0C [TMATMUL / TMATMUL_ACC]
    tile_loop      counted loop over a sub-IR with carried tiles (the matmul K loop)

Tiles have a physical ``shape`` and a ``valid`` region (PTO's valid rows/cols) at ragged
edges. Every impl here computes on the valid region only: a tile's runtime value is the numpy
array of its valid part. Elementwise impls are the tensor primitives' own numpy impls, so a
tiled elementwise chain is bitwise equal to the untiled one.
"""
from __future__ import annotations

import math

import numpy as np

from ptojax import dtypes
from ptojax.errors import DtypeError, ShapeError
from ptojax.ir.core import IR, ClosedIR
from ptojax.ir.types import TensorType, TileType
from ptojax import ops  # noqa: F401  (every family defined: ELEMENTWISE is complete)
from ptojax.eval.interpreter import eval_ir
from ptojax.ir import pto
from ptojax.ir.pto import row_vector_rows
from ptojax.ops.broadcast import reduce_sum_p, sum_impl
from ptojax.ops.costs import input_size, no_flops, output_size
from ptojax.ops.elementwise import ELEMENTWISE
from ptojax.ops.reductions import max_impl, min_impl, reduce_max_p, reduce_min_p
from ptojax.tile.grid import (LAST_GRID_ROW, VALID_COLS, VALID_ROWS, Condition,  # noqa: F401
                              ProgramGrid, TileGrid, is_runtime_extent, runtime_valid_cols,
                              runtime_valid_rows)
from ptojax.trace import Primitive, Unsupported

TILE_PRIMS: list = []   # every tile primitive


# --- helpers ---------------------------------------------------------------------------------
def valid_shape(t) -> tuple:
    """The valid region of a tile type (its shape when it is full)."""
    return t.valid if t.valid is not None else t.shape


def tile_type(shape, dtype, space, valid=None) -> TileType:
    shape = tuple(shape)
    valid = None if valid is None or tuple(valid) == shape else tuple(valid)
    return TileType(shape, dtype, space, valid)


def _is_tile(t) -> bool:
    return isinstance(t, TileType)


def _require_tile(name, t, spaces=("UB",)):
    if not _is_tile(t):
        raise ShapeError(f"{name}: expected a tile operand, got {t}")
    if spaces is not None and t.space not in spaces:
        raise ShapeError(f"{name}: operand {t} must live in {'/'.join(spaces)}")


def _require_index(name, t):
    if _is_tile(t) or t.shape != () or not dtypes.is_integer(t.dtype):
        raise ShapeError(f"{name}: tile offsets must be integer scalars, got {t}")


def _prim(name, abstract_eval, impl, multiple_results=False, inplace=False, scratch=None):
    prim = Primitive(name, abstract_eval, impl, multiple_results)
    prim.tile_inplace = inplace     # may write its result over an operand that dies here
    prim.tile_scratch = scratch     # None, or "input": needs a temporary shaped like input 0
    TILE_PRIMS.append(prim)
    return prim


# --- GM <-> tile -----------------------------------------------------------------------------
def _check_window(name, view, shape, valid):
    if len(view) != 2 or len(shape) != 2 or any(v > s for v, s in zip(valid, shape)):
        raise ShapeError(f"{name}: bad window view={view} shape={shape} valid={valid}")


def _tile_load_abstract(gm, r0, c0, *, space, shape, valid, view, transpose=False, stage=None):
    _require_index("tile_load", r0)
    _require_index("tile_load", c0)
    if _is_tile(gm) or math.prod(view) != gm.size:
        raise ShapeError(f"tile_load: view {view} does not cover {gm}")
    _check_window("tile_load", view, shape, valid)
    return tile_type(shape, gm.dtype, space, valid)


def _gm_window(gm, view, transpose):
    g = np.asarray(gm).reshape(view)
    return g.T if transpose else g


def _tile_load(gm, r0, c0, *, space, shape, valid, view, transpose=False, stage=None):
    r0, c0 = int(r0), int(c0)
    g = _gm_window(gm, view, transpose)
    return np.array(g[r0:r0 + valid[0], c0:c0 + valid[1]])


tile_load_p = _prim("tile_load", _tile_load_abstract, _tile_load)


def _tile_store_abstract(gm, tile, r0, c0, *, view, atomic=False):
    _require_index("tile_store", r0)
    _require_index("tile_store", c0)
    _require_tile("tile_store", tile, ("UB", "L0C"))
    if math.prod(view) != gm.size:
        raise ShapeError(f"tile_store: view {view} does not cover {gm}")
    if tile.space == "UB" and tile.dtype != gm.dtype:
        raise DtypeError(f"tile_store: UB tile {tile} stored into {gm}; convert it first")
    return gm


def _tile_store(gm, tile, r0, c0, *, view, atomic=False):
    out = np.array(gm, copy=True)
    write_window(out, tile, int(r0), int(c0), view, atomic)
    return out


def write_window(gm_array, tile_value, r0, c0, view, atomic=False):
    """Write (or with ``atomic``, add) a tile's valid values into ``gm_array`` in place."""
    g = gm_array.reshape(view)
    vr, vc = np.shape(tile_value)
    values = np.asarray(tile_value).astype(gm_array.dtype)
    if atomic:
        g[r0:r0 + vr, c0:c0 + vc] += values
    else:
        g[r0:r0 + vr, c0:c0 + vc] = values


tile_store_p = _prim("tile_store", _tile_store_abstract, _tile_store)


def _tile_scalar_load_abstract(gm):
    if _is_tile(gm) or gm.size != 1:
        raise ShapeError(f"tile_scalar_load: expected a one-element tensor, got {gm}")
    return TensorType((), gm.dtype)


tile_scalar_load_p = _prim("tile_scalar_load", _tile_scalar_load_abstract,
                           lambda gm: np.asarray(gm).reshape(-1)[0])


# --- elementwise -----------------------------------------------------------------------------
# Every tensor primitive whose tile form is elementwise has a tile op ``tile_<name>``, with the
# same impl (so a tiled chain is bitwise equal to the untiled one) and its PTO recipe. A second
# operand may be a scalar, and for ops whose form allows it a [R,1] / [1,C] tile (PTO's
# TROWEXPAND<op> / TCOLEXPAND<op> family).
def _elementwise_abstract(tensor_prim, form):
    name = f"tile_{tensor_prim.name}"

    def abstract_eval(*operands, **params):
        tiles = [t for t in operands if _is_tile(t)]
        if not tiles:
            raise ShapeError(f"{name}: needs at least one tile operand")
        for t in tiles:
            _require_tile(name, t)
        full = tiles[0]          # a broadcast [R',1] / [1,C] operand always comes second
        for t in tiles[1:]:
            if t.shape == full.shape:
                if valid_shape(t) != valid_shape(full):
                    raise ShapeError(f"{name}: valid regions differ: {t} vs {full}")
                continue
            row = t.shape == (row_vector_rows(full.shape[0]), 1) and \
                valid_shape(t)[0] == valid_shape(full)[0]
            col = t.shape == (1, full.shape[1]) and \
                valid_shape(t)[1] == valid_shape(full)[1]
            if not form.broadcast_operand or not (row or col):
                raise ShapeError(f"{name}: operand {t} does not match {full}")
        for t in operands:
            if not _is_tile(t) and t.shape != ():
                raise ShapeError(f"{name}: non-tile operands must be scalars, got {t}")
        scalar_types = [TensorType((), t.dtype) for t in operands]
        out = tensor_prim.abstract_eval(*scalar_types, **params)
        return tile_type(full.shape, out.dtype, "UB", valid_shape(full))
    return abstract_eval


def _elementwise_tile_prim(tensor_prim, form):
    prim = _prim(f"tile_{tensor_prim.name}", _elementwise_abstract(tensor_prim, form),
                 tensor_prim.impl, inplace=form.may_overwrite,
                 scratch="input" if form.scratch else None)
    prim.tensor_prim = tensor_prim
    prim.elementwise = True
    prim.define(pto=tensor_prim.facts["pto"], cost=output_size)
    return prim


ELEMENTWISE_TILE_PRIMS: dict = {      # tensor primitive -> its tile op
    p: _elementwise_tile_prim(p, p.fact("tile")) for p in ELEMENTWISE
    if p.fact("tile") is not None and p.fact("tile").kind == "elementwise"}


def inplace_ok(prim, params) -> bool:
    """Whether ``prim`` may write its result over an operand that dies at it."""
    inplace = prim.tile_inplace
    return bool(inplace(params) if callable(inplace) else inplace)


def _fill_abstract(value, *, shape, valid):
    if _is_tile(value) or value.shape != ():
        raise ShapeError(f"tile_fill: expected a scalar, got {value}")
    return tile_type(shape, value.dtype, "UB", valid)


tile_fill_p = _prim("tile_fill", _fill_abstract,
                    lambda value, *, shape, valid: np.full(valid, value))


def _expand_abstract(name, axis):
    def abstract_eval(t, *, shape, valid):
        _require_tile(name, t)
        want = (row_vector_rows(shape[0]), 1) if axis == "row" else (1, shape[1])
        if t.shape != want:
            raise ShapeError(f"{name}: expected a {want[0]}x{want[1]} tile, got {t}")
        return tile_type(shape, t.dtype, "UB", valid)
    return abstract_eval


tile_row_expand_p = _prim("tile_row_expand", _expand_abstract("tile_row_expand", "row"),
                          lambda t, *, shape, valid: np.array(np.broadcast_to(t, valid)))
tile_col_expand_p = _prim("tile_col_expand", _expand_abstract("tile_col_expand", "col"),
                          lambda t, *, shape, valid: np.array(np.broadcast_to(t, valid)))


# --- row reductions --------------------------------------------------------------------------
def _row_reduce_abstract(name):
    def abstract_eval(t):
        _require_tile(name, t)
        vr, _ = valid_shape(t)
        return tile_type((row_vector_rows(t.shape[0]), 1), t.dtype, "UB", (vr, 1))
    return abstract_eval


def _row_reduce_impl(reduce):
    def impl(t):
        return np.asarray(reduce(np.asarray(t), (1,))).reshape(-1, 1)
    return impl


tile_row_sum_p = _prim("tile_row_sum", _row_reduce_abstract("tile_row_sum"),
                       _row_reduce_impl(sum_impl), scratch="input")
tile_row_max_p = _prim("tile_row_max", _row_reduce_abstract("tile_row_max"),
                       _row_reduce_impl(max_impl), scratch="input")
tile_row_min_p = _prim("tile_row_min", _row_reduce_abstract("tile_row_min"),
                       _row_reduce_impl(min_impl), scratch="input")
ROW_REDUCTIONS = {reduce_sum_p: tile_row_sum_p, reduce_max_p: tile_row_max_p,
                  reduce_min_p: tile_row_min_p}


def _col_sum_abstract(t):
    _require_tile("tile_col_sum", t)
    _, vc = valid_shape(t)
    return tile_type((1, t.shape[1]), t.dtype, "UB", (1, vc))


# A column sum is the partial sum of one tile's rows: the kernel adds the partials of all
# row tiles into a zero-initialized output with atomic stores (``tile_store[atomic=True]``).
tile_col_sum_p = _prim("tile_col_sum", _col_sum_abstract,
                       lambda t: np.sum(np.asarray(t), axis=0, keepdims=True,
                                        dtype=np.asarray(t).dtype), scratch="input")
# it adds up rows, so two vector sub-blocks cannot each take half of them (tile/row_split.py)
tile_col_sum_p.tile_mixes_rows = True


# --- cube ------------------------------------------------------------------------------------
def _move_abstract(t, *, space, stage=None, index=(0, 0), shape=None, valid=None, k_copy=None):
    """The L0 tile TEXTRACT fills: all of the L1 tile ``t``, or (``shape``, ``valid`` given)
    its block at ``index`` (row, col) -- one K step of an operand kept whole in L1.
    ``k_copy`` (0 or 1): the K step's copy of its operand's double buffer, chosen by the K
    step's parity rather than the loop step's (``tile/memory.py``)."""
    _require_tile("tile_move", t, ("L1",))
    if space not in ("L0A", "L0B"):
        raise ShapeError(f"tile_move: destination must be L0A or L0B, got {space}")
    if shape is None:
        return tile_type(t.shape, t.dtype, space, t.valid)
    vr, vc = valid or shape
    (r, c), (tr, tc) = index, valid_shape(t)
    if r < 0 or c < 0 or r + vr > tr or c + vc > tc:
        raise ShapeError(f"tile_move: a {vr} x {vc} block at {index} is outside {t}")
    return tile_type(shape, t.dtype, space, valid)


def _move(t, *, space, stage=None, index=(0, 0), shape=None, valid=None, k_copy=None):
    if shape is None:
        return np.array(t)
    (r, c), (vr, vc) = index, valid or shape
    return np.array(np.asarray(t)[r:r + vr, c:c + vc])


tile_move_p = _prim("tile_move", _move_abstract, _move)


def accumulator_dtype(dtype):
    return dtypes.int32 if dtypes.is_integer(dtype) else dtypes.float32


def _matmul_type(name, a, b):
    _require_tile(name, a, ("L0A",))
    _require_tile(name, b, ("L0B",))
    if a.shape[1] != b.shape[0] or valid_shape(a)[1] != valid_shape(b)[0] or a.dtype != b.dtype:
        raise ShapeError(f"{name}: {a} and {b} do not chain")
    (vm, _), (_, vn) = valid_shape(a), valid_shape(b)
    return tile_type((a.shape[0], b.shape[1]), accumulator_dtype(a.dtype), "L0C", (vm, vn))


def _matmul(a, b):
    acc = accumulator_dtype(a.dtype)
    return np.matmul(np.asarray(a).astype(acc), np.asarray(b).astype(acc))


tile_matmul_p = _prim("tile_matmul", lambda a, b: _matmul_type("tile_matmul", a, b), _matmul)


def _matmul_acc_abstract(acc, a, b):
    out = _matmul_type("tile_matmul_acc", a, b)
    if (acc.shape, acc.dtype, acc.space, acc.valid) != (out.shape, out.dtype, out.space,
                                                       out.valid):
        raise ShapeError(f"tile_matmul_acc: accumulator {acc} does not match {out}")
    return out


tile_matmul_acc_p = _prim("tile_matmul_acc", _matmul_acc_abstract,
                          lambda acc, a, b: np.asarray(acc) + _matmul(a, b))


# --- loops -----------------------------------------------------------------------------------
# tile_loop(*carries, *invariants[, start][, stop]; start, stop, body, num_carry): the body
# (k, *carries, *invariants) -> carries for k in [start, stop). A bound given as None in the
# params is a trailing int32 scalar operand (start first): a loop whose trip count depends on
# the program (a causal attention loop ends at the diagonal).
def loop_operands(args, params):
    """(carries, invariants, start, stop) of a tile_loop's operands (bounds: ints or atoms)."""
    start, stop = params["start"], params["stop"]
    n_dyn = (start is None) + (stop is None)
    body_args = args[:len(args) - n_dyn]
    bounds = list(args[len(args) - n_dyn:])
    if start is None:
        start = bounds.pop(0)
    if stop is None:
        stop = bounds.pop(0)
    n = params["num_carry"]
    return list(body_args[:n]), list(body_args[n:]), start, stop


def _loop_abstract(*args, start, stop, body, num_carry):
    ir = body.ir if isinstance(body, ClosedIR) else body
    carries, invariants, lo, hi = loop_operands(
        args, dict(start=start, stop=stop, num_carry=num_carry))
    for b in (lo, hi):
        if not isinstance(b, int):
            _require_index("tile_loop", b)
    if len(ir.invars) != 1 + len(carries) + len(invariants) or len(ir.outvars) != num_carry:
        raise ShapeError("tile_loop: body signature does not match its operands")
    for c, v, o in zip(carries, ir.invars[1:], ir.outvars):
        if c != v.type or c != o.type:
            raise ShapeError(f"tile_loop: carry {c} does not match the body ({v.type})")
    return list(carries)


def _loop(*args, start, stop, body, num_carry):
    ir = body.ir if isinstance(body, ClosedIR) else body
    carries, invariants, lo, hi = loop_operands(
        args, dict(start=start, stop=stop, num_carry=num_carry))
    for k in range(int(lo), int(hi)):
        outs = eval_ir(ir, [np.int32(k), *carries, *invariants])
        carries = [np.asarray(o) for o in outs]
    return carries


tile_loop_p = _prim("tile_loop", _loop_abstract, _loop, multiple_results=True)


# --- indices -------------------------------------------------------------------------------------
def _iota_abstract(start, *, shape, valid):
    if _is_tile(start) or start.shape != () or start.dtype != dtypes.int32:
        raise ShapeError(f"tile_iota: the start must be an int32 scalar, got {start}")
    if shape[0] != 1 and shape[1] != 1:
        raise ShapeError(f"tile_iota: fills a [1,C] or [R,1] tile, not {shape}")
    return tile_type(shape, dtypes.int32, "UB", valid)


def _iota(start, *, shape, valid):
    n = max(valid)
    return (np.arange(n, dtype=np.int32) + np.int32(start)).reshape(valid)


# start, start + 1, ... along the tile's valid elements (a row vector's through its row view)
tile_iota_p = _prim("tile_iota", _iota_abstract, _iota)


def _block_index_impl():
    raise AssertionError("tile_block_index is evaluated by the tile interpreter")


# the index of the core (block) running the body: per-block GM workspaces are indexed by it
tile_block_index_p = _prim("tile_block_index", lambda: TensorType((), dtypes.int32),
                           _block_index_impl)


# --- the kernel body's signature ----------------------------------------------------------
def kernel_signature(body: IR, num_inputs: int):
    """(input GM vars, output GM vars, workspace vars) of a kernel body."""
    gm = body.invars[2:]
    n_out = len(body.outvars)
    return gm[:num_inputs], gm[num_inputs:num_inputs + n_out], gm[num_inputs + n_out:]


# --- facts -----------------------------------------------------------------------------------
def _reduce_recipe(op):
    """A reduction into a row or column vector, through the op's scratch tile."""
    def recipe(eqn):
        return [pto.Instr(op, eqn.outputs[0], (eqn.inputs[0], pto.Scratch(eqn)))]
    return recipe


def _to_output(op, **attrs):
    def recipe(eqn):
        return [pto.Instr(op, eqn.outputs[0], tuple(eqn.inputs), dict(attrs))]
    return recipe


def _matmul_flops(eqn) -> int:
    (vm, vk), (_, vn) = (valid_shape(a.type) for a in eqn.inputs[-2:])
    return 2 * vm * vk * vn


tile_row_sum_p.define(pto=_reduce_recipe("TROWSUM"), cost=input_size)
tile_row_max_p.define(pto=_reduce_recipe("TROWMAX"), cost=input_size)
tile_row_min_p.define(pto=_reduce_recipe("TROWMIN"), cost=input_size)
tile_col_sum_p.define(pto=_reduce_recipe("TCOLSUM"), cost=input_size)
tile_fill_p.define(pto=lambda eqn: [pto.Instr("TEXPANDS", pto.vec(eqn.outputs[0]),
                                              (eqn.inputs[0],))], cost=no_flops)
tile_row_expand_p.define(pto=_to_output("TROWEXPAND"), cost=no_flops)
tile_col_expand_p.define(pto=_to_output("TCOLEXPAND"), cost=no_flops)
tile_move_p.define(pto=lambda eqn: [pto.Instr("TEXTRACT", eqn.outputs[0], tuple(eqn.inputs),
                                               {"index": tuple(eqn.params.get("index",
                                                                              (0, 0)))})],
                   cost=no_flops)
tile_matmul_p.define(pto=_to_output("TMATMUL"), cost=_matmul_flops)
tile_matmul_acc_p.define(pto=_to_output("TMATMUL_ACC"), cost=_matmul_flops)
# loads, stores and loops are placed by the kernel's schedule (lower/schedule.py)
for _prim in (tile_load_p, tile_store_p, tile_scalar_load_p):
    _prim.define(cost=no_flops)
tile_iota_p.define(pto=lambda eqn: [pto.Instr("TCI", pto.vec(eqn.outputs[0]),
                                              (eqn.inputs[0],))], cost=no_flops)
tile_block_index_p.define(cost=no_flops)


def _loop_cost(eqn, body_counts):
    """The body's flops times the trip count (a bound known only at run time: once)."""
    p = eqn.params
    trips = p["stop"] - p["start"] if isinstance(p["start"], int) and \
        isinstance(p["stop"], int) else 1
    return {name: n * trips for name, n in body_counts[0].items()}


tile_loop_p.define(cost=_loop_cost)

AFTER_TILING = ("tiling is the last transform before lowering; apply it last "
                "(pto.tile({}(f)))")
INSIDE_KERNELS = Unsupported("it only exists inside tile kernels")


def define_tile_op_facts(prim):
    """The facts every tile primitive shares: no transform applies to tile IR."""
    prim.define(jvp=Unsupported(AFTER_TILING.format("pto.grad")),
                batch=Unsupported(AFTER_TILING.format("pto.vmap")),
                tile=Unsupported("already a tile op"),
                reference=Unsupported("tile ops are checked against the numpy tile "
                                      "interpreter (ptojax/tile/interpreter.py)"))
    if "shard" not in prim.facts:
        prim.define(shard=INSIDE_KERNELS)


for _prim in TILE_PRIMS:
    define_tile_op_facts(_prim)
