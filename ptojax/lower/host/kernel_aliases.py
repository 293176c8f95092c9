"""Which outputs of a tile kernel may be written over which of its inputs (in place).

A host kernel allocates its outputs; when an input dies at the kernel and the caller owns its
buffer (an intermediate, or a loop carry donated to the body: ``lower/host/carries.py``), an
output of the same shape and dtype can take that buffer instead — a momentum update
``v = 0.9 v + g; p = p - lr v`` then updates ``v`` and ``p`` in place, as XLA does with a
loop's carries. Writing in place reads and writes fewer cache lines (no fresh output to
fetch) and keeps the working set smaller.

That is safe only when every element of the output is written after the input's same element
is read and no other element's computation reads it again. ``alias_pairs`` accepts a pair
(output, input) only for kernels where that holds by construction, checked in every region
body:

- a vector kernel (no cube part, no pto.kernel body, a fixed row count) whose body has only
  loads, stores, elementwise tile ops, fills, iotas, row/column broadcasts, scalar loads and
  scalar index arithmetic — no row or column reduction, matmul, loop or move, so the fused
  build runs it as one pass per row and every value is computed once per element;
- the input is read by one equation only, a tile load whose window (view, tile shape, valid extent, offset
  operands, not transposed) is the window the output's one, non-atomic store writes: each
  tile of the grid reads and writes the same elements of both, and tiles are disjoint;
- the stored value depends on that load, so its read comes first in both builds (the PTO
  build's TLOAD before the computation and TSTORE; the fused build's element read before
  its store), also where the compiler reorders independent statements;
- the output is not zero-initialised (``accumulate``) and has the input's shape and dtype.
"""
from __future__ import annotations

from ptojax.ir.core import Literal
from ptojax.tile import ops as T
from ptojax.tile.ops import TILE_PRIMS, valid_shape

_STRUCTURAL_OK = frozenset({"tile_load", "tile_store", "tile_scalar_load", "tile_fill",
                            "tile_iota", "tile_row_expand", "tile_col_expand",
                            "tile_block_index"})


def alias_pairs(eqn) -> tuple:
    """((output index, input index), ...) that kernel equation ``eqn`` may write in place."""
    p = eqn.params
    if p.get("kind") != "vector" or p.get("cube") is not None or p["grid"].dynamic:
        return ()
    pairs = None
    for body in p["bodies"]:
        found = set(_body_pairs(body, eqn))
        pairs = found if pairs is None else pairs & found
    zeroed = frozenset(p.get("accumulate", ()))
    return tuple(sorted((o, i) for o, i in pairs or () if o not in zeroed))


def _body_pairs(body, eqn):
    if not all(_simple(e) for e in body.eqns):
        return
    in_vars, out_vars, _ = T.kernel_signature(body, len(eqn.inputs))
    producer = {v: e for e in body.eqns for v in e.outputs}
    for o, gm_out in enumerate(out_vars):
        stores = [e for e in body.eqns if e.prim is T.tile_store_p and e.inputs[0] is gm_out]
        if len(stores) != 1 or stores[0].params.get("atomic"):
            continue
        store = stores[0]
        for i, gm_in in enumerate(in_vars):
            if (gm_in.type.shape, gm_in.type.dtype) != (gm_out.type.shape, gm_out.type.dtype):
                continue
            reads = [e for e in body.eqns if any(a is gm_in for a in e.inputs)]
            if len(reads) == 1 and reads[0].prim is T.tile_load_p \
                    and _same_window(reads[0], store) \
                    and _depends_on(store.inputs[1], reads[0], producer):
                yield o, i


def _simple(e) -> bool:
    """An equation a one-pass elementwise kernel may contain."""
    if e.prim not in TILE_PRIMS:
        return True                       # scalar index arithmetic
    return getattr(e.prim, "elementwise", False) or e.prim.name in _STRUCTURAL_OK


def _same_window(load, store) -> bool:
    lp = load.params
    if lp.get("transpose") or tuple(lp["view"]) != tuple(store.params["view"]):
        return False
    if tuple(lp["valid"]) != tuple(valid_shape(store.inputs[1].type)):
        return False
    return all(_same_atom(a, b) for a, b in zip(load.inputs[1:3], store.inputs[2:4]))


def _same_atom(a, b) -> bool:
    return a is b or (type(a) is Literal and type(b) is Literal and a == b)


def _depends_on(value, load, producer) -> bool:
    """Whether ``value`` is computed from the result of ``load``."""
    target, seen, stack = load.outputs[0], set(), [value]
    while stack:
        v = stack.pop()
        if v is target:
            return True
        e = producer.get(v)
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        stack.extend(a for a in e.inputs if a in producer or a is target)
    return False
