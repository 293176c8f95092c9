"""The grid a ``tile_kernel`` runs its body over: ``TileGrid`` (pto.tile's 2-D grid of tiles,
with ragged edges and run-time extents) and ``ProgramGrid`` (a ``pto.kernel``'s programs over
its cores, with the ``Condition``s selecting each ragged-edge region's body)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from ptojax.errors import UnsupportedError
from ptojax.ir.symbolic import Dim, bounds, evaluate, is_symbolic


@dataclass(frozen=True)
class TileGrid:
    """Which tiles a kernel has and which block (core) owns which.

    The kernel's iteration space is a 2-D view ``space = (M, N)`` cut into tiles of
    ``tile = (R, C)``: ``ceil(M/R) x ceil(N/C)`` tiles numbered row-major. ``blocks`` cores
    split that sequence into contiguous, balanced runs (the first ``T % blocks`` blocks get one
    extra tile). Tiles at the bottom/right edge have a smaller valid region.
    """
    space: tuple
    tile: tuple
    blocks: int

    @property
    def counts(self) -> tuple:
        if self.dynamic_rows:
            raise UnsupportedError(f"{self}: the number of tile rows is known only when the "
                                   f"kernel runs (ceil({self.space[0]} / {self.tile[0]}))")
        return -(-self.space[0] // self.tile[0]), self.grid_cols

    # --- a runtime row count (``space[0]`` a symbolic dimension, ``ir/symbolic.py``) -------
    @property
    def dynamic_rows(self) -> bool:
        return is_symbolic(self.space[0])

    @property
    def grid_cols(self) -> int:
        if self.dynamic_cols:
            return 1
        return -(-self.space[1] // self.tile[1])

    # --- a runtime column count (``space[1]`` symbolic): one tile spans every column -------
    @property
    def dynamic_cols(self) -> bool:
        """Whether the row length is known only when the kernel runs: its tiles then span the
        whole row (the planner makes ``tile[1]`` cover the dimension's upper bound) and have
        ``runtime_valid_cols`` valid columns."""
        return is_symbolic(self.space[1])

    @property
    def dynamic(self) -> bool:
        """Whether some extent of the space is known only when the kernel runs."""
        return self.dynamic_rows or self.dynamic_cols

    def rows_at(self, sizes) -> int:
        """The row count of the space for the symbol sizes ``sizes`` (name -> int)."""
        return evaluate(self.space[0], sizes)

    def num_tiles_at(self, rows: int) -> int:
        """The number of tiles when the space has ``rows`` rows."""
        return -(-rows // self.tile[0]) * self.grid_cols

    def max_num_tiles(self) -> int:
        return self.num_tiles_at(bounds(self.space[0])[1]) if self.dynamic_rows \
            else self.num_tiles

    @property
    def num_tiles(self) -> int:
        return math.prod(self.counts)

    def block_range(self, block: int) -> range:
        base, extra = divmod(self.num_tiles, self.blocks)
        start = block * base + min(block, extra)
        return range(start, start + base + (1 if block < extra else 0))

    def coords(self, t: int) -> tuple:
        return divmod(t, self.counts[1])

    def valid(self, ti: int, tj: int) -> tuple:
        (m, n), (r, c) = self.space, self.tile
        vc = runtime_valid_cols(c) if self.dynamic_cols else min(c, n - tj * c)
        return min(r, m - ti * r), vc

    def regions(self) -> tuple:
        """The distinct valid shapes, full tiles first: (full, col edge, row edge, corner).
        With a runtime row count the row edge has ``runtime_valid_rows`` rows (every grid row
        but the last is full)."""
        (m, n), (r, c) = self.space, self.tile
        if self.dynamic_rows:
            rows = ([r] if bounds(m)[1] > r else []) + [runtime_valid_rows(r)]
        else:
            rows = [min(r, m)] + ([m % r] if m % r and m > r else [])
        if self.dynamic_cols:
            cols = [runtime_valid_cols(c)]
        else:
            cols = [min(c, n)] + ([n % c] if n % c and n > c else [])
        return tuple((vr, vc) for vr in rows for vc in cols)

    def region_of(self, ti: int, tj: int) -> int:
        """The index (in ``regions()``) of tile (ti, tj)'s body."""
        return self.regions().index(self.valid(ti, tj))

    def region_conditions(self, region: int) -> tuple:
        """``Condition``s on the tile indices selecting region ``region``'s tiles (in an
        if/else chain over the regions in order; the last needs none)."""
        (m, n), (r, c) = self.space, self.tile
        vr, vc = self.regions()[region]
        out = []
        if self.dynamic_rows:
            if len({v[0] for v in self.regions()}) > 1 and vr == r:
                out.append(Condition("ti", 1, 0, "lt", LAST_GRID_ROW))
            nr, nc = None, self.grid_cols
        else:
            nr, nc = self.counts
        if nr is not None and nr > 1 and m % r:
            out.append(Condition("ti", 1, 0, "lt" if vr == r else "eq", nr - 1))
        if nc > 1 and not self.dynamic_cols and n % c:
            out.append(Condition("tj", 1, 0, "lt" if vc == c else "eq", nc - 1))
        return tuple(out)

    def __str__(self):
        tiles = f"<={self.max_num_tiles()}" if self.dynamic_rows else self.num_tiles
        return (f"grid(space={self.space[0]}x{self.space[1]} tile={self.tile[0]}x{self.tile[1]} "
                f"tiles={tiles} blocks={self.blocks})")

    __repr__ = __str__


# ``Condition.k`` of a grid with a runtime row count: the index of its last grid row, known
# only when the kernel runs (``num_tiles / grid_cols - 1``)
LAST_GRID_ROW = "last_grid_row"


def runtime_valid_rows(tile_rows: int):
    """The valid rows of a grid's last row of tiles when the row count is known only at run
    time: a symbolic dimension in 1..tile_rows (printed ``valid_rows``; PTO's dynamic valid
    row, ``v_row=?`` / ``Tile<..., DYNAMIC, ...>``), set per tile to ``rows - ti * tile_rows``."""
    return Dim(VALID_ROWS, 1, tile_rows)


VALID_ROWS = "valid_rows"


def runtime_valid_cols(tile_cols: int):
    """The valid columns of every tile of a grid whose row length is known only at run time
    (``TileGrid.dynamic_cols``): a symbolic dimension in 1..tile_cols (printed ``valid_cols``;
    PTO's dynamic valid column, ``v_col=?`` / ``Tile<..., VR, DYNAMIC>``), the row length."""
    return Dim(VALID_COLS, 1, tile_cols)


VALID_COLS = "valid_cols"


def is_runtime_extent(d) -> bool:
    """Whether a tile extent (a valid row or column count) is set at run time."""
    return is_symbolic(d)


class Condition(NamedTuple):
    """``((index / div) % mod) <op> k`` on a tile index (``mod`` 0: no modulo; op lt | eq;
    ``k`` an int or ``LAST_GRID_ROW``)."""
    index: str
    div: int
    mod: int
    op: str
    k: int


@dataclass(frozen=True)
class ProgramGrid:
    """The grid of a ``pto.kernel``: one tile per program of the N-d grid ``shape``, laid out
    as a 2-D grid of 1x1 tiles (rows: every axis but the last, row-major; columns: the last
    axis), in balanced contiguous runs over ``blocks`` cores. ``regions[i]`` lists the
    conditions ``(axis, "lt" | "eq", k)`` on the program ids selecting body i (the first
    region whose conditions hold)."""
    shape: tuple
    blocks: int
    regions: tuple

    tile = (1, 1)
    dynamic_rows = dynamic_cols = dynamic = False   # a pto.kernel grid is static
    counts = property(lambda self: (math.prod(self.shape[:-1]), self.shape[-1]))
    space = counts
    num_tiles = property(lambda self: math.prod(self.shape))
    block_range = TileGrid.block_range
    coords = TileGrid.coords

    def program(self, ti: int, tj: int) -> tuple:
        """The program ids of tile (ti, tj)."""
        ids = [tj]
        for g in reversed(self.shape[:-1]):
            ti, i = divmod(ti, g)
            ids.append(i)
        return tuple(reversed(ids))

    def index_of_axis(self, axis: int) -> tuple:
        """(tile index, divisor, modulus) giving program id ``axis`` (modulus 0: none)."""
        if axis == len(self.shape) - 1:
            return "tj", 1, 0
        div = math.prod(self.shape[axis + 1:-1])
        return "ti", div, 0 if axis == 0 else self.shape[axis]

    def region_of(self, ti: int, tj: int) -> int:
        point = self.program(ti, tj)
        for i, conds in enumerate(self.regions):
            if all((point[a] < k) if op == "lt" else (point[a] == k) for a, op, k in conds):
                return i
        raise AssertionError(f"program {point} is in no region")

    def region_conditions(self, region: int) -> tuple:
        return tuple(Condition(*self.index_of_axis(a), op, k)
                     for a, op, k in self.regions[region])

    def __str__(self):
        return (f"programs(grid={'x'.join(map(str, self.shape))} tiles={self.num_tiles} "
                f"blocks={self.blocks})")

    __repr__ = __str__
