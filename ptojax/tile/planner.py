"""Choosing tile shapes: ``TileConfig`` (explicit) or the automatic planner.

Rules the planner follows (and an explicit ``TileConfig`` is checked against, before any code
is generated):

1. Alignment. A row-major tile row must span a multiple of the target's row alignment (32
   bytes): tile columns are multiples of ``32 / itemsize`` for every full/column tile dtype.
   Row-vector tiles ([R,1], column-major) pad their rows to a multiple of 32, which meets the
   rule for every dtype. Cube tiles (m, k, n) are multiples of the cube fractal (16).
2. Capacity. Every buffer of the kernel's memory plan — including the extra copies for
   double buffering (``buffers``) and op temporaries — fits its space (UB, L1, L0A/B/C).
3. Whole rows. A kernel with row reductions (or row outputs) keeps whole rows in a tile.
4. Busy cores. Tiles are made small enough that there are at least ``cores x buffers`` of
   them (every core gets work and can overlap loads with compute), but not below the target's
   ``min_dma_bytes`` per tile; within that, tiles are as large as capacity allows.
5. Cube shapes prefer at least one output tile per cube core, then the largest m x n
   (arithmetic intensity), then the largest k.

A kernel over a symbolic leading dimension (``jit(f, dynamic=...)``) is planned at the
dimension's upper bound and keeps a runtime row count (``TileGrid.dynamic_rows``). One over a
symbolic last dimension (static rows: softmax over a growing KV cache's keys) keeps a runtime
column count (``TileGrid.dynamic_cols``): its tiles span the row at the dimension's upper
bound, with runtime valid columns. Every other dimension must be static
(``static_space_reason`` says which is not).

A violated rule under an explicit config raises ``TileError`` naming the kernel, the op, the
buffer, the bytes needed and available, and a fix. Under automatic planning a kernel that
cannot be tiled at all (e.g. a row longer than UB) is left as tensor-level equations, with the
reason shown by ``lowered.unfused()``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

import math

from ptojax.errors import (ConcretizationError, InconclusiveDimensionOperation, TileError,
                           UnsupportedError)
from ptojax.ir.core import Literal
from ptojax.ir.symbolic import (bounds, has_symbols, is_symbolic, linear_symbol,
                                 symbols_of)
from ptojax.tile import ops as T
from ptojax.tile.build import BodyBuilder
from ptojax.optimize import cse, dce
from ptojax.tile.memory import align_up, plan_memory
from ptojax.tile.rules import COLSUM, ROW
from ptojax.tile.rules import conv_matmul_shape, matmul_shape
from ptojax.public import add_examples as _add_examples


@dataclass(frozen=True)
class TileConfig:
    """Explicit tile shapes: ``vec=(rows, cols)`` for vector kernels, ``cube=(m, k, n)`` for
    matmul kernels, ``buffers`` copies of each staging tile (2 = double buffering). A field
    left None is chosen by the planner. Shapes larger than a kernel's data are clamped to it.
    ``attention=False`` keeps attention unfused (by default it runs as flash attention
    kernels where recognized: ``tile/attention.py``), and so does a recognized attention's
    gradient, which by default runs as the flash backward kernels; ``attention_gradient=False``
    keeps the gradient unfused (910B cost model, H8 S2048 D64 causal training step: 1901 us
    fused vs 2158 us unfused).
    """
    vec: Optional[tuple] = None
    cube: Optional[tuple] = None
    buffers: int = 2
    attention: bool = True
    attention_gradient: bool = True

    def __post_init__(self):
        object.__setattr__(self, "vec", _positive_ints("vec", "(rows, cols)", self.vec))
        object.__setattr__(self, "cube", _positive_ints("cube", "(m, k, n)", self.cube))
        if not _is_int(self.buffers) or not 1 <= self.buffers <= 4:
            raise TileError(f"TileConfig.buffers must be an integer 1..4, got "
                            f"{self.buffers!r}")
        object.__setattr__(self, "buffers", int(self.buffers))
        for name in ("attention", "attention_gradient"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TileError(f"TileConfig.{name} must be True or False, got "
                                f"{getattr(self, name)!r}")


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _positive_ints(field: str, form: str, value):
    """``value`` as a tuple of positive ints of the arity of ``form``, or a TileError."""
    if value is None:
        return None
    arity = form.count(",") + 1
    if not isinstance(value, (tuple, list)) or len(value) != arity or \
            not all(_is_int(v) and v >= 1 for v in value):
        raise TileError(f"TileConfig.{field} must be {form}: a tuple of {arity} positive "
                        f"integers, got {value!r}")
    return tuple(int(v) for v in value)


@dataclass
class KernelPlan:
    name: str
    tile: tuple
    cube: Optional[tuple]
    grid: T.TileGrid
    regions: tuple
    bodies: tuple
    inputs: list
    buffers: int


def build_kernel(group, tile, cube, target, buffers, name) -> KernelPlan:
    """The bodies (one per region) of ``group`` with tiles of ``tile``."""
    cores = target.cube_cores if group.kind == "cube" else target.vector_cores
    probe = T.TileGrid(group.space, tuple(tile), 1)
    grid = T.TileGrid(group.space, tuple(tile), max(1, min(probe.max_num_tiles(), cores)))
    regions = grid.regions()
    bodies, inputs = [], None
    for valid in regions:
        builder = BodyBuilder(group, tile, valid, target, cube)
        if inputs is not None:
            for v in inputs:
                builder.gm(v)
        body, order = builder.finish()
        body = dce(cse(body))
        if inputs is not None and order != inputs:
            raise TileError(f"kernel {name}: regions disagree on inputs (internal error)")
        inputs = order
        bodies.append(body)
    return KernelPlan(name, tuple(tile), cube, grid, regions, tuple(bodies), inputs, buffers)


def _kernel_error(name, group, message):
    return TileError(f"kernel {name}: {message}", group.eqns[0].source)


# --- vector kernels --------------------------------------------------------------------------
def _tiles(ir):
    for eqn in ir.eqns:
        for v in eqn.outputs:
            if isinstance(v.type, T.TileType):
                yield v.type
        for sub in eqn.params.values():
            if hasattr(sub, "eqns"):
                yield from _tiles(sub)


def _planned_rows(group):
    """The row count the tile shapes are chosen for: the space's rows, or for a runtime row
    count (a symbolic dimension) its upper bound."""
    m = group.space[0]
    return bounds(m)[1] if is_symbolic(m) else m


def _planned_cols(group):
    """The row length the tile shapes are chosen for: the space's columns, or for a runtime
    column count its upper bound."""
    n = group.space[1]
    return bounds(n)[1] if is_symbolic(n) else n


def _probe(group, target):
    """(column alignment in elements, largest UB element size) from a probe body's tiles.

    A row-major UB tile's row spans a multiple of ``target.row_alignment`` bytes, so tile
    columns are a multiple of ``row_alignment / itemsize`` for each dtype of a full or column
    tile. Row-vector tiles pad their own rows (``ROW_VECTOR_ALIGN``), so tile rows are free.
    """
    m, n = _planned_rows(group), _planned_cols(group)
    vc = T.runtime_valid_cols(align_up(n, 32)) if is_symbolic(group.space[1]) else n
    body, _ = BodyBuilder(group, (32, align_up(n, 32)), (min(32, m), vc), target).finish()
    col_align, itemsize = 1, 1
    for tile in _tiles(body):
        if tile.space != "UB":
            continue
        itemsize = max(itemsize, tile.dtype.itemsize)
        if not (tile.shape[1] == 1 and tile.shape[0] > 1):
            col_align = max(col_align, target.row_alignment // tile.dtype.itemsize)
    return col_align, itemsize


def _is_reduction(eqn) -> bool:
    form = eqn.prim.fact("tile")
    return form is not None and form.kind == "reduce"


def _needs_whole_rows(group) -> bool:
    """Row reductions (and row outputs) need every column of a row in one tile."""
    return any(group.layout[v] == ROW for e in group.eqns for v in e.outputs
               if _is_reduction(e)) or \
        any(group.layout[v] == ROW for v in group.outputs)


def _needs_whole_columns(group) -> bool:
    """A column sum read inside the kernel (softmax over axis 0) must be the sum of every row:
    the kernel's tile then holds all rows (one tile row). A column sum that is only stored is
    completed across tiles by atomic adds instead."""
    return any(group.layout.get(a) == COLSUM for e in group.eqns for a in e.inputs)


def _overflow(group, tile, cube, target, buffers):
    body, _ = BodyBuilder(group, tile, _full_valid(group.space, tile), target, cube).finish()
    plan = plan_memory(body, buffers, target)
    return plan.overflow(target)


def _full_valid(space, tile):
    vr = tile[0] if is_symbolic(space[0]) else min(space[0], tile[0])
    vc = T.runtime_valid_cols(tile[1]) if is_symbolic(space[1]) else min(space[1], tile[1])
    return vr, vc


def _max_rows(group, cols, target, buffers, limit):
    """The most rows (<= limit) whose tiles of ``cols`` columns fit, or 0."""
    lo, hi = 0, max(1, limit)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _overflow(group, (mid, cols), None, target, buffers) is None:
            lo = mid
        else:
            hi = mid - 1
    return lo


def plan_vector(group, config, target, name):
    m, n = _planned_rows(group), _planned_cols(group)
    buffers = config.buffers
    col_align, itemsize = _probe(group, target)
    whole = _needs_whole_rows(group) or is_symbolic(group.space[1])   # runtime cols: 1 tile
    if config.vec is not None:
        return _explicit_vector(group, config, target, name, col_align, whole)
    cols = align_up(n, col_align)
    r_max = _max_rows(group, cols, target, buffers, m)
    while r_max == 0 and not whole and cols > col_align:
        cols = align_up(cols // 2, col_align)
        r_max = _max_rows(group, cols, target, buffers, m)
    if r_max == 0:
        return (f"a tile of 1 row x {cols} columns does not fit {target.name}'s UB "
                f"({target.capacity('UB'):,} bytes)")
    if _needs_whole_columns(group):
        if r_max < m:
            return (f"a column sum is used inside the kernel, so all {m} rows must be in one "
                    f"tile, but at most {r_max} rows of {cols} columns fit {target.name}'s UB")
        return build_kernel(group, (m, cols), None, target, buffers, name)
    want_tiles = target.vector_cores * buffers
    min_rows = -(-target.min_dma_bytes // (cols * itemsize))
    rows = min(r_max, m, max(-(-m // want_tiles), min_rows, 1))
    nr = -(-m // rows)
    if not whole and nr * -(-n // cols) < target.vector_cores and n > col_align:
        split = -(-target.vector_cores // nr)
        narrow = align_up(-(-n // split), col_align)
        min_cols = align_up(-(-target.min_dma_bytes // (rows * itemsize)), col_align)
        cols = min(cols, max(narrow, min_cols, col_align))
    return build_kernel(group, (rows, cols), None, target, buffers, name)


def _explicit_vector(group, config, target, name, col_align, whole):
    m, n = _planned_rows(group), _planned_cols(group)
    rows, cols = config.vec
    op = group.eqns[0].prim.name
    if cols % col_align:
        raise _kernel_error(name, group, (
            f"op `{op}`: TileConfig(vec=({rows}, {cols})) breaks alignment: UB tile rows "
            f"must be {target.row_alignment}-byte multiples, i.e. cols a multiple of "
            f"{col_align} elements for this kernel's dtypes. "
            f"Fix: cols={align_up(cols, col_align)}."))
    if is_symbolic(group.space[1]) and cols < n:
        raise _kernel_error(name, group, (
            f"its row length `{group.space[1]}` is known only when it runs, so one tile spans "
            f"the whole row (up to {n} elements), but TileConfig(vec=({rows}, {cols})) cuts "
            f"rows into {cols}-column tiles. Fix: cols >= {align_up(n, col_align)}."))
    if whole and cols < n:
        red = next((e.prim.name for e in group.eqns if _is_reduction(e)), op)
        raise _kernel_error(name, group, (
            f"op `{red}` reduces whole rows of {n} elements, but TileConfig(vec=({rows}, "
            f"{cols})) cuts rows into {cols}-column tiles. Fix: cols >= "
            f"{align_up(n, col_align)}."))
    if _needs_whole_columns(group) and rows < m:
        raise _kernel_error(name, group, (
            f"a column sum is used inside the kernel, so it needs all {m} rows in one tile, "
            f"but TileConfig(vec=({rows}, {cols})) cuts them into {rows}-row tiles. Fix: "
            f"rows >= {m}."))
    tile = (min(rows, m), min(cols, align_up(n, col_align)))
    over = _overflow(group, tile, None, target, config.buffers)
    if over is not None:
        fit = _max_rows(group, tile[1], target, config.buffers, tile[0])
        fix = (f"TileConfig(vec=({fit}, {tile[1]}))" if fit else
               "fewer columns per tile" if not whole else
               "buffers=1 or leave config=None so the kernel stays unfused")
        raise _overflow_error(name, group, over, config, fix)
    return build_kernel(group, tile, None, target, config.buffers, name)


def _overflow_error(name, group, over, config, fix):
    slot, space, needed, cap = over
    op = slot.owner.prim.name if slot.owner is not None else "?"
    return _kernel_error(name, group, (
        f"op `{op}`: buffer {space} needs {needed:,} bytes but holds {cap:,} bytes "
        f"(tiles of {config} with {config.buffers}x staging buffers). Fix: {fix}."))


# --- cube kernels ----------------------------------------------------------------------------
CUBE_SIZES = (256, 128, 64, 32, 16)


def _cube_dims(group):
    if group.dot.prim.fact("tile").kind == "conv":
        return conv_matmul_shape(group.dot)
    return matmul_shape(group.dot)


def _tile_rows(shape, m):
    """Grid tile rows for a cube tile of m rows.

    Unbatched: m. Batched (the rows of all batch elements stacked): a tile must stay in one
    batch element, so its rows are the largest divisor of M that is <= m — m itself when m
    divides M, M for a whole element when m >= M, else fewer valid rows than m (e.g. M = 40,
    m = 32: tiles of 20 rows; how an M off the fractal or too long for one tile is tiled).
    """
    if shape.batch == 1:
        return m
    return next(d for d in range(min(m, shape.m), 0, -1) if shape.m % d == 0)


def _batched_m_fix(M, m, f):
    """For an explicit m that straddles batch elements: the largest m' <= m on the fractal
    that divides M, else the smallest fractal multiple covering M (a whole element)."""
    for d in range(m - m % f, 0, -f):
        if M % d == 0:
            return d
    return align_up(M, f)


def _cube_fits_l0(mkn, itemsize, target, buffers):
    m, k, n = mkn
    return (m * k * itemsize * buffers <= target.capacity("L0A")
            and k * n * itemsize * buffers <= target.capacity("L0B")
            and m * n * 4 <= target.capacity("L0C")
            and (m * k + k * n) * itemsize * buffers <= target.capacity("L1"))


def _build_cube(group, cube, target, buffers, name):
    rows = _tile_rows(_cube_dims(group), cube[0])
    return build_kernel(group, (rows, cube[2]), cube, target, buffers, name)


def plan_cube(group, config, target, name):
    shape = _cube_dims(group)
    M, K, N = shape.m, shape.k, shape.n
    f = target.cube_fractal[0]
    itemsize = group.dot.inputs[0].type.dtype.itemsize
    buffers = config.buffers
    op, conv = group.dot.prim.name, group.dot.prim.fact("tile").kind == "conv"
    if config.cube is not None:
        m, k, n = config.cube
        if m % f or k % f or n % f:
            raise _kernel_error(name, group, (
                f"op `{op}`: TileConfig(cube={config.cube}) breaks the {f}x{f}x{f} "
                f"cube fractal. Fix: cube=({align_up(m, f)}, {align_up(k, f)}, "
                f"{align_up(n, f)})."))
        cube = (min(m, align_up(M, f)), min(k, align_up(K, f)), min(n, align_up(N, f)))
        if shape.batch > 1 and cube[0] < shape.m and shape.m % cube[0]:
            what = ("convolution", "output positions of an image", "images") if conv else \
                ("batched matmul", "rows of a batch element", "batch elements")
            raise _kernel_error(name, group, (
                f"op `{op}`: {what[0]} of {shape.batch} x ({M}x{K} @ {K}x{N}): "
                f"TileConfig(cube={config.cube}) has m={m}, which does not divide the "
                f"{M} {what[1]}, so a tile would straddle two {what[2]}. "
                f"Fix: m={_batched_m_fix(M, m, f)} (m must divide M, or be >= M)."))
        over = _overflow(group, (_tile_rows(shape, cube[0]), cube[2]), cube, target,
                         buffers)
        if over is not None:
            auto = _auto_cube(group, shape, itemsize, target, buffers)
            fix = f"TileConfig(cube={auto})" if auto else "smaller m, k or n"
            raise _overflow_error(name, group, over, config, fix)
        return _build_cube(group, cube, target, buffers, name)
    cube = _auto_cube(group, shape, itemsize, target, buffers)
    if cube is None:
        return f"no (m, k, n) cube tile fits {target.name}'s buffers"
    return _build_cube(group, cube, target, buffers, name)


def _m_candidates(shape, f):
    """Cube m candidates; batched: each fitted to the tile rows it gets (see _tile_rows)."""
    sizes = [s for s in CUBE_SIZES if s <= align_up(shape.m, f)] or [f]
    if shape.batch == 1:
        return sizes
    sizes.append(align_up(shape.m, f))
    return sorted({align_up(_tile_rows(shape, s), f) for s in sizes}, reverse=True)


def _auto_cube(group, shape, itemsize, target, buffers):
    f = target.cube_fractal[0]
    M, K, N = shape.m, shape.k, shape.n
    cap = lambda d: [s for s in CUBE_SIZES if s <= align_up(d, f)] or [f]
    candidates = []
    for m in _m_candidates(shape, f):
        rows = _tile_rows(shape, m)
        for n in cap(N):
            for k in cap(K) + ([512] if K > 256 else []):
                if not _cube_fits_l0((m, k, n), itemsize, target, buffers):
                    continue
                tiles = -(-shape.batch * M // rows) * -(-N // n)
                candidates.append((tiles >= target.cube_cores, rows * n, k, n, (m, k, n)))
    for *_, mkn in sorted(candidates, reverse=True):
        rows = _tile_rows(shape, mkn[0])
        if _overflow(group, (rows, mkn[2]), mkn, target, buffers) is None:
            return mkn
    return None


def _has_zero_size_tensor(group) -> bool:
    return any(getattr(a, "type", None) is not None and a.type.size == 0
               for e in group.eqns for a in (*e.inputs, *e.outputs))


def plan_group(group, config, target, name):
    """A KernelPlan for ``group``, or a string saying why it cannot be tiled (auto mode)."""
    if _has_zero_size_tensor(group):
        # nothing to tile: numpy computes an empty result, or fills one from no elements
        # (a sum over an empty axis), without a kernel
        return "it has a zero-size tensor (no elements to tile)"
    static = static_space_reason(group)
    if static is not None:
        if config.vec is not None or config.cube is not None:
            raise UnsupportedError(f"kernel {name}: {static}")
        return static
    try:
        if group.kind == "cube":
            return plan_cube(group, config, target, name)
        return plan_vector(group, config, target, name)
    except (InconclusiveDimensionOperation, ConcretizationError) as e:
        if not has_symbols(group.space):
            raise
        return f"{SYMBOLIC}a tile rule needs a static size: {e}"


SYMBOLIC = "symbolic dimension: "   # starts the reason a kernel needs a static size


def static_space_reason(group):
    """Why ``group`` cannot be tiled with its symbolic dimensions (``ir/symbolic.py``), or
    None. Tile kernels take a runtime row count (the leading dimensions of the kernel's 2-D
    view, with an upper bound) and static everything else."""
    m, n = group.space
    if is_symbolic(n):
        return _runtime_cols_reason(group)
    if not is_symbolic(m):
        if any(has_symbols(a.type.shape) for e in group.eqns for a in (*e.inputs, *e.outputs)
               if hasattr(a, "type")):
            return (f"{SYMBOLIC}it has a symbolic dimension outside the rows of its "
                    f"{m}x{n} view; tile kernels need every dimension but the leading "
                    f"(row) one static")
        return None
    if group.kind == "cube":
        return (f"{SYMBOLIC}it is a matmul over `{m}` rows; cube kernels need static "
                f"shapes (make that dimension static)")
    unread = _unread_sizes(group)
    if unread:
        return (f"{SYMBOLIC}the sizes {unread} of its {m}x{n} view cannot be read from its "
                f"inputs' shapes (a kernel's launch reads them there)")
    if bounds(m)[1] == math.inf:
        return (f"{SYMBOLIC}its row count `{m}` has no upper bound; give the dimension one "
                f"(pto.Dim(name, lo, hi)) so that its tiles can be planned")
    return None


def _runtime_cols_reason(group):
    """Why ``group``, whose row length is symbolic, cannot be a kernel with a runtime column
    count, or None: its rows must be static and every symbolic dimension of its tensors a
    last dimension equal to the row length (a row of the view)."""
    m, n = group.space
    if is_symbolic(m):
        return (f"{SYMBOLIC}both its row count `{m}` and its row length `{n}` are symbolic; "
                f"tile kernels take one runtime extent (make one static)")
    if group.kind == "cube":
        return (f"{SYMBOLIC}it is a matmul over a symbolic dimension `{n}`; cube kernels need "
                f"static shapes")
    for e in group.eqns:
        for a in (*e.inputs, *e.outputs):
            shape = getattr(getattr(a, "type", None), "shape", ())
            if any(is_symbolic(d) for d in shape[:-1]) or \
                    (shape and is_symbolic(shape[-1]) and shape[-1] != n):
                return (f"{SYMBOLIC}`{e.prim.name}` has the shape {list(shape)}; over a "
                        f"symbolic row length `{n}` a kernel needs every symbolic dimension "
                        f"to be a last dimension equal to it")
    unread = _unread_sizes(group)
    if unread:
        return (f"{SYMBOLIC}the sizes {unread} of its {m}x{n} view cannot be read from its "
                f"inputs' shapes (a kernel's launch reads them there)")
    if bounds(n)[1] == math.inf:
        return (f"{SYMBOLIC}its row length `{n}` has no upper bound; give the dimension one "
                f"(pto.Dim(name, lo, hi)) so that its tiles can be planned")
    return None


def _unread_sizes(group) -> list:
    """The symbols of ``group``'s sizes that no dimension of its inputs is linear in."""
    eqns = [*group.eqns, *(p[0] for p in group.pulled.values())]
    made = {v for e in eqns for v in e.outputs}
    inputs = {a for e in eqns for a in e.inputs if not isinstance(a, Literal) and a not in made}
    readable = {linear_symbol(d) for a in inputs for d in a.type.shape}
    needed = symbols_of(list(group.space) + [v.type.shape for v in made])
    return sorted(set(needed) - readable)


_add_examples(globals(), """
TileConfig:
    >>> pto.TileConfig(vec=(8, 64))
    TileConfig(vec=(8, 64), cube=None, buffers=2, attention=True, attention_gradient=True)
""")
