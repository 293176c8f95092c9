"""Where each program of a ``pto.kernel`` reads and writes: ``BlockSpec``s, windows and the
program grid with its ragged-edge regions.

A kernel runs its body once per point of ``grid`` (a tuple of ints: the program ids). Each
operand has a ``BlockSpec(block_shape, index_map)``: ``index_map(*program_ids)`` gives one
block index per array dimension, and the program's *window* starts at ``index * block`` in
each dimension. A ``None`` entry of ``block_shape`` is a squeezed dimension of size 1 (its
index is an element index). Windows at the end of an array may hold fewer elements than the
block (a ragged edge): the program's region says how many, so every region has its own body,
traced with the window shapes it really has. ``BlockSpec()`` (or ``None`` in ``in_specs``) is
the whole array as one window.

Everything here is static: index maps are evaluated with Python ints for every grid point,
which is how an index map that leaves the array is caught before any code is generated.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Callable, Optional

from ptojax.errors import IndexingError, ShapeError, TileError
from ptojax.source_info import SourceInfo


@dataclass(frozen=True)
class BlockSpec:
    """``block_shape`` (one entry per array dimension: an int, or None for a squeezed size-1
    dimension) and ``index_map(*program_ids) -> block indices``. Both None: the whole array
    is one window."""
    block_shape: Optional[tuple] = None
    index_map: Optional[Callable] = None


def _map_source(fn) -> Optional[SourceInfo]:
    code = getattr(fn, "__code__", None)
    return None if code is None else SourceInfo(code.co_filename, code.co_firstlineno,
                                                code.co_name)


@dataclass(frozen=True)
class Window:
    """One operand's windows: the array shape, the block (squeezed dims as 1) and which
    dimensions are squeezed. ``starts(point)`` are a program's element offsets."""
    name: str
    shape: tuple
    block: tuple
    squeezed: tuple
    index_map: Optional[Callable]

    @property
    def window_shape(self) -> tuple:
        """The shape the body sees (squeezed dimensions dropped)."""
        return tuple(b for b, s in zip(self.block, self.squeezed) if not s)

    def block_index(self, point) -> tuple:
        if self.index_map is None:
            return (0,) * len(self.shape)
        idx = self.index_map(*point)
        idx = tuple(idx) if isinstance(idx, (tuple, list)) else (idx,)
        if len(idx) != len(self.shape):
            raise ShapeError(
                f"the index_map of {self.name} returns {len(idx)} block indices for a "
                f"{len(self.shape)}-d array; return one per dimension",
                _map_source(self.index_map))
        return tuple(int(i) for i in idx)

    def starts(self, point) -> tuple:
        return tuple(i * b for i, b in zip(self.block_index(point), self.block))

    def valid(self, point) -> tuple:
        """The window's element counts at ``point`` (the body's shapes, squeezed dims
        dropped), checking that it lies in the array."""
        idx = self.block_index(point)
        out = []
        for d, (i, b, n, sq) in enumerate(zip(idx, self.block, self.shape, self.squeezed)):
            start = i * b
            if i < 0 or start >= n:
                raise IndexingError(
                    f"the index_map of {self.name} sends program {tuple(point)} out of bounds: "
                    f"block index {i} in dimension {d} starts at element {start}, but the "
                    f"array has {n} there (array shape {self.shape}, block "
                    f"{self.block}). Fix: return block indices in [0, {-(-n // b)}) for "
                    f"that dimension.", _map_source(self.index_map))
            if not sq:
                out.append(min(b, n - start))
        return tuple(out)


def make_window(name, spec, shape) -> Window:
    """The Window of an operand of ``shape`` under ``spec`` (a BlockSpec or None)."""
    shape = tuple(shape)
    if spec is None or spec.block_shape is None:
        if spec is not None and spec.index_map is not None:
            raise ShapeError(f"{name}: a BlockSpec with an index_map needs a block_shape")
        return Window(name, shape, shape, (False,) * len(shape), None)
    if not isinstance(spec, BlockSpec):
        raise TypeError(f"{name}: expected a pto.BlockSpec or None, got {spec!r}")
    block = tuple(spec.block_shape)
    if len(block) != len(shape):
        raise ShapeError(f"{name}: block_shape {block} has {len(block)} entries for an array "
                         f"of shape {shape}; give one per dimension (None squeezes one)")
    if spec.index_map is None:
        raise ShapeError(f"{name}: a BlockSpec with a block_shape needs an index_map")
    squeezed = tuple(b is None for b in block)
    sizes = tuple(1 if b is None else int(b) for b in block)
    if any(s < 1 for s in sizes):
        raise ShapeError(f"{name}: block sizes must be positive, got {block}")
    return Window(name, shape, sizes, squeezed, spec.index_map)


# --- the grid and its regions -----------------------------------------------------------------
@dataclass(frozen=True)
class Region:
    """The programs sharing one set of window shapes: ``shapes`` per operand, and the
    ``conditions`` selecting them — ``(axis, "lt" | "eq", k)`` on the program ids."""
    shapes: tuple
    conditions: tuple

    def holds(self, point) -> bool:
        return all((point[a] < k) if op == "lt" else (point[a] == k)
                   for a, op, k in self.conditions)


def grid_points(grid):
    return itertools.product(*(range(g) for g in grid))


def find_regions(grid, windows) -> tuple:
    """The regions of ``grid`` (interior first): programs grouped by the shapes of all their
    windows, each group described by conditions on the program ids."""
    groups: dict = {}
    for point in grid_points(grid):
        key = tuple(w.valid(point) for w in windows)
        groups.setdefault(key, []).append(point)
    if len(groups) == 1:
        (key,) = groups
        return (Region(key, ()),)
    regions = [Region(key, _conditions(grid, points, key, windows))
               for key, points in groups.items()]
    return tuple(sorted(regions, key=lambda r: sum(op == "eq" for _, op, _ in
                                                    r.conditions)))


def _conditions(grid, points, key, windows) -> tuple:
    """Conditions true exactly on ``points``: per axis, all values, the last, or the others."""
    conditions = []
    for a, g in enumerate(grid):
        values = {p[a] for p in points}
        if len(values) == g:
            continue
        if values == {g - 1}:
            conditions.append((a, "eq", g - 1))
        elif values == set(range(g - 1)):
            conditions.append((a, "lt", g - 1))
        else:
            raise _ragged_error(windows, key)
    expected = math.prod(1 if c[1] == "eq" else (c[2] if c[1] == "lt" else 0)
                         for c in conditions) * math.prod(
        g for a, g in enumerate(grid) if a not in {c[0] for c in conditions})
    if expected != len(points):
        raise _ragged_error(windows, key)
    return tuple(conditions)


def _ragged_error(windows, key):
    ragged = [w.name for w, shape in zip(windows, key) if shape != w.window_shape]
    return TileError(
        f"ragged windows of {', '.join(ragged) or 'the operands'} do not sit at the end of a "
        f"grid axis: a kernel's programs with partial windows must be those with the last "
        f"id along some grid axis (index maps like lambda i, j: (i, j)). Fix: use block "
        f"shapes that divide the arrays, or index maps that put the partial blocks last.")


def region_of(regions, point) -> int:
    for i, r in enumerate(regions):
        if r.holds(point):
            return i
    raise AssertionError(f"program {point} is in no region")
