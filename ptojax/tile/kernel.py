"""``tile_kernel``: a grid of tile-sized body runs, the equation ``pto.tile`` emits.

The kernel's params: ``grid`` (a ``TileGrid``), one body sub-IR per ragged-edge region
(``regions``/``bodies``), the buffer count, target, cube shape and accumulated outputs. A body
takes the tile's row/column indices, the kernel's GM tensors — inputs, outputs
(destination-passing), workspaces — and returns the updated outputs. A pto.kernel's
``row_split`` (``tile/row_split.py``) is the row count its two vector sub-blocks split, or 0.
Evaluating the equation runs the numpy tile interpreter; the host backend runs the compiled
kernel instead.
"""
from __future__ import annotations

from ptojax.errors import ShapeError
from ptojax.tile.interpreter import run_tile_kernel
from ptojax.tile.ops import TILE_PRIMS, define_tile_op_facts, kernel_signature
from ptojax.trace import Primitive, Unsupported


def _kernel_abstract(*in_types, name, kind, grid, regions, bodies, buffers, target, cube=None,
                     accumulate=(), row_split=0, workspace_depths=()):
    if len(bodies) != len(regions) or not bodies:
        raise ShapeError(f"tile_kernel {name}: one body per region expected")
    outs = None
    for body in bodies:
        ins, out_vars, _ = kernel_signature(body, len(in_types))
        if [(v.type.shape, v.type.dtype) for v in ins] != [(t.shape, t.dtype) for t in in_types]:
            raise ShapeError(f"tile_kernel {name}: operands {list(in_types)} do not match the "
                             f"body's inputs {[v.type for v in ins]}")
        types = [v.type for v in body.outvars]
        if outs is not None and [(t.shape, t.dtype) for t in types] != \
                [(t.shape, t.dtype) for t in outs]:
            raise ShapeError(f"tile_kernel {name}: bodies disagree on outputs")
        outs = types
        if [v.type for v in out_vars] != types:
            raise ShapeError(f"tile_kernel {name}: body outputs must update its output tensors")
    return outs


def _kernel_cost(eqn, body_counts):
    """The flops of its region bodies."""
    total: dict = {}
    for counts in body_counts:
        for name, n in counts.items():
            total[name] = total.get(name, 0) + n
    return total


tile_kernel_p = Primitive("tile_kernel", _kernel_abstract,
                          lambda *inputs, **params: run_tile_kernel(inputs, **params),
                          multiple_results=True)
TILE_PRIMS.append(tile_kernel_p)
tile_kernel_p.define(
    shard=Unsupported("tile kernels are per-device code: shard first, then tile the "
                      "per-device program"),
    # its bodies are planned: a loop's carry takes over its operand's buffer, so a tile CSE
    # merged with an earlier equal one that a loop consumed would read that loop's result
    cleanups=Unsupported("its bodies are planned target code (a loop carry updates its "
                         "operand's buffer in place); the IR clean-ups leave them as they are"),
    cost=_kernel_cost)
define_tile_op_facts(tile_kernel_p)
