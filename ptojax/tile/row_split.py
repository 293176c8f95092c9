"""Splitting a mixed ``pto.kernel``'s vector work over the two vector sub-blocks of a cube core.

An A2 (910B) AI core pairs one cube core with two vector sub-blocks (AIC:AIV = 1:2), each
with its own UB. A mixed kernel whose vector work is row-independent gives each sub-block
half of the rows of every vector tile: sub-block ``sub`` computes rows
``[sub * R/2, (sub + 1) * R/2)`` of each ``[R, C]`` tile, loads and stores the same rows of
its GM windows (operands, outputs and cube <-> vector workspaces), starts a row iota at
``sub * R/2``, and computes ``[1, C]`` tiles whole (they are the same on both). The tile IR
keeps whole tiles -- the tile interpreter (which holds both UBs as one) and the fused host
build run them as before -- while the kernel's memory plan, schedule, emitted code and cost
use the halves (``half_type``).

``split_rows`` decides, per kernel: the row count R it splits, or 0 (the vector work then
runs on sub-block 0, sub-block 1 only running the cross-core flags, as before). It splits
only when every vector tile of more than one row has the same even row count R with every
row valid, no vector primitive mixes rows (``tile_mixes_rows``, stated beside the
primitive: a column reduction), no vector load is transposed, and every vector store writes
R rows (a one-row store from both sub-blocks would write twice -- an atomic add would
double)."""
from __future__ import annotations

import dataclasses
import functools
from types import MappingProxyType

from ptojax.ir.core import ClosedIR
from ptojax.ir.types import TileType
from ptojax.tile import ops as T

VECTOR_SPACE = "UB"
CUBE_PRIMS = (T.tile_matmul_p, T.tile_matmul_acc_p)


def split_rows(bodies, target) -> int:
    """R, the row count each vector tile of R rows is split in two halves of, or 0."""
    if getattr(target, "vector_cores_per_cube", 1) != 2:
        return 0
    rows, cube = set(), False
    for body in bodies:
        for e in _all_eqns(body):
            if e.prim in CUBE_PRIMS:
                cube = True
            vector = _vector_tiles(e)
            if not vector:
                continue
            if getattr(e.prim, "tile_mixes_rows", False):
                return 0
            if e.prim is T.tile_load_p and e.params.get("transpose", False):
                return 0
            if e.prim is T.tile_store_p and e.inputs[1].type.shape[0] == 1:
                return 0
            for t in vector:
                if t.shape[0] == 1:
                    continue
                if T.valid_shape(t)[0] != t.shape[0]:
                    return 0
                rows.add(t.shape[0])
    if not cube or len(rows) != 1:
        return 0
    (r,) = rows
    return r if r % 2 == 0 else 0


def half_type(t, rows: int):
    """A vector tile of ``rows`` rows as one sub-block holds it (other tiles unchanged)."""
    if not rows or not isinstance(t, TileType) or t.space != VECTOR_SPACE or \
            t.shape[0] != rows:
        return t
    h = rows // 2
    valid = None if t.valid is None else (h, t.valid[1])
    return TileType((h, t.shape[1]), t.dtype, t.space, valid)


def is_split(t, rows: int) -> bool:
    """Whether a tile type is one whose rows the sub-blocks split."""
    return bool(rows) and isinstance(t, TileType) and t.space == VECTOR_SPACE and \
        t.shape[0] == rows


def _vector_tiles(e) -> list:
    return [v.type for v in (*e.inputs, *e.outputs)
            if isinstance(v.type, TileType) and v.type.space == VECTOR_SPACE]


def _all_eqns(ir):
    ir = ir.ir if isinstance(ir, ClosedIR) else ir
    for e in ir.eqns:
        yield e
        if e.prim is T.tile_loop_p:
            yield from _all_eqns(e.params["body"])


@functools.lru_cache(maxsize=None)
def both_vector_buffers(target):
    """``target`` with its UB as large as both sub-blocks' together: the tile interpreter runs
    a split kernel's whole tiles in it."""
    buffers = dict(target.buffers)
    buffers[VECTOR_SPACE] = buffers[VECTOR_SPACE] * target.vector_cores_per_cube
    return dataclasses.replace(target, buffers=MappingProxyType(buffers))
