"""Fused host form of a ``pto.kernel`` (a ``tile_kernel`` of kind ``kernel``).

The PTO-faithful build runs a kernel's emitted instruction stream: every tile goes through
TLOAD copies into its buffer, matmul operands through L1 and a TMOV into L0A/L0B (transposed
by copies), every matmul result through a GM workspace and a TLOAD back. That is what the NPU
needs, not a CPU. Here each body runs as plain C++ over the same tile IR, with the same
per-operation semantics (the tile interpreter's: every value is its tile's valid region):

- a tile is a strided window ``(pointer, row stride, column stride)``: a load is a window of
  GM (no copy) when nothing stores into that tensor while the loaded value is alive, else a
  copy; an L1 load and its ``tile_move`` are the GM window the GEMM worker reads (it packs what
  is not row-major); a row/column expand is the vector's window with stride 0; fills and iotas
  are expressions, never stored;
- an elementwise operation is one loop over the valid region into a per-thread arena slot
  (each value has its own slot, so a loop body's values are recomputed in place every step);
  row reductions keep ``kReduceLanes`` partial results like TROWSUM/TROWMAX;
- a matmul is ``matmul_worker`` into its accumulator slot (``tile_matmul_acc`` in place);
- a ``tile_loop`` is a C++ ``for`` whose tile carries live in slots of their own, copied in
  before the loop and from the body's results after each step (via a temporary when one
  result is another carry's buffer); GM carries are the same pointers.

The program loop (blocks, programs, region branches) is ``fused.py``'s.
"""
from __future__ import annotations

from typing import NamedTuple

from ptojax.ir.core import ClosedIR, Literal
from ptojax.ir.types import TileType
from ptojax.lower.host import fused_exprs
from ptojax.lower.host.fused_plan import FusedUnsupported
from ptojax.lower.pto_cpp import cpp_type
from ptojax.tile import ops as T
from ptojax.tile.img2col import tile_img2col_p

MATMULS = (T.tile_matmul_p, T.tile_matmul_acc_p)
REDUCE = {T.tile_row_sum_p: ("Add", "{t}(0)"), T.tile_row_max_p: ("Max", "lowest<{t}>()"),
          T.tile_row_min_p: ("Min", "highest<{t}>()")}
SLOT_ALIGN = 16          # elements: every arena slot starts on a 64-byte boundary (float)


class Tile(NamedTuple):
    """A tile value in C++: element (i, j) of its valid region ``shape`` is
    ``ptr[i * rs + j * cs]`` (``expr``: an expression of ``i`` and ``j`` instead)."""
    shape: tuple
    dtype: object
    ptr: str = None
    rs: object = 0
    cs: object = 0
    expr: str = None

    def at(self, i: str, j: str) -> str:
        """Element (i, j) in the compute type (a dimension of 1 broadcasts)."""
        i = "0" if self.shape[0] == 1 else i
        j = "0" if self.shape[1] == 1 else j
        if self.expr is not None:
            return self.expr.replace("@I", i).replace("@J", j)
        return fused_exprs.loaded(f"{self.ptr}[{_offset(i, self.rs)} + {_offset(j, self.cs)}]",
                                  self.dtype)


def _offset(index, stride) -> str:
    if stride == 0 or index == "0":
        return "0"
    return index if stride == 1 else f"({index}) * {stride}"


def _body(p):
    return p["body"].ir if isinstance(p["body"], ClosedIR) else p["body"]


def _is_tile(v) -> bool:
    return isinstance(v.type, TileType)


def _stores(ir) -> bool:
    """Whether a loop body stores into GM (anywhere, nested loops too)."""
    return any(e.prim is T.tile_store_p or (e.prim is T.tile_loop_p and _stores(_body(e.params)))
               for e in ir.eqns)


class KernelBodyPrinter:
    """The C++ of one kernel body, inside the program loop (``ti``, ``tj``, ``block`` and the
    GM parameters in scope). ``arena`` collects each compute type's slot sizes."""

    def __init__(self, body, gm_names: dict, depth: int, arena: dict):
        self.fused = fused_exprs
        self.lines, self.depth = [], depth
        self.names = {body.invars[0]: "ti", body.invars[1]: "tj", **gm_names}
        self.tiles: dict = {}
        self.arena = arena                         # C++ type -> [next free offset]
        self.count = 0
        self.body = body
        self.inlined: set = set()              # ids of equations computed where used

    # --- text --------------------------------------------------------------------------------
    def w(self, text):
        self.lines.append("  " * self.depth + text)

    def open(self, text):
        self.w(f"{text} {{")
        self.depth += 1

    def close(self):
        self.depth -= 1
        self.w("}")

    def fresh(self, prefix):
        self.count += 1
        return f"{prefix}{self.count}"

    def atom(self, a) -> str:
        if isinstance(a, Literal):
            return self.fused.value_literal(a.value, a.type.dtype)
        return self.names[a]

    def operand(self, a, i="i", j="j") -> str:
        if isinstance(a, Literal) or not _is_tile(a):
            return self.atom(a)
        return self.tiles[a].at(i, j)

    def slot(self, dtype, n) -> str:
        """A fresh arena slot of ``n`` elements of ``dtype``: its pointer's name."""
        t = cpp_type(dtype)
        used = self.arena.setdefault(t, [0])
        offset = used[0]
        used[0] += -(-n // SLOT_ALIGN) * SLOT_ALIGN
        name = self.fresh("t")
        self.w(f"{t}* const {name} = arena_{_ident(t)} + {offset};")
        return name

    def stored_tile(self, var, shape=None) -> Tile:
        """A new row-major slot for tile ``var`` (its valid region)."""
        shape = shape or T.valid_shape(var.type)
        ptr = self.slot(var.type.dtype, shape[0] * shape[1])
        return Tile(shape, var.type.dtype, ptr, shape[1], 1)

    def fill(self, dst: Tile, value_at, dtype):
        """dst[i, j] = value_at(i, j) over dst's region, one loop."""
        r, c = dst.shape
        t = cpp_type(dtype)
        self.open(f"for (int i = 0; i < {r}; ++i)")
        self.w("PTO_HOST_IVDEP")
        self.w(f"for (int j = 0; j < {c}; ++j) {dst.ptr}[{_offset('i', dst.rs)} + "
               f"{_offset('j', dst.cs)}] = narrow<{t}>({value_at('i', 'j')});")
        self.close()

    # --- statements --------------------------------------------------------------------------
    def print_block(self, ir):
        self.inlined |= _inlinable(ir)
        for k, e in enumerate(ir.eqns):
            self.stmt(e, ir, k)
        return self.lines

    def stmt(self, e, ir, k):
        prim, out = e.prim, e.outputs[0]
        if prim is T.tile_load_p:
            self.load(e, ir, k)
        elif prim is T.tile_move_p:
            self.tiles[out] = self.moved(e)
        elif prim in (T.tile_row_expand_p, T.tile_col_expand_p):
            self.expand(e)
        elif prim in MATMULS:
            self.matmul(e, ir, k)
        elif prim is T.tile_loop_p:
            self.loop(e)
        elif prim is T.tile_store_p:
            self.store(e)
        elif prim in REDUCE:
            self.row_reduce(e)
        elif prim is T.tile_col_sum_p:
            self.col_sum(e)
        elif prim is T.tile_fill_p:
            self.tiles[out] = Tile(T.valid_shape(out.type), out.type.dtype,
                                   expr=f"({self.atom(e.inputs[0])})")
        elif prim is T.tile_iota_p:
            r, _ = T.valid_shape(out.type)
            self.tiles[out] = Tile(T.valid_shape(out.type), out.type.dtype,
                                   expr=f"({self.atom(e.inputs[0])} + {'@I' if r > 1 else '@J'})")
        elif prim is tile_img2col_p:
            raise FusedUnsupported("an im2col block in a pto.kernel")
        elif prim is T.tile_block_index_p:
            self.names[out] = "block"
        elif _is_tile(out):
            self.elementwise(e)
        elif prim is T.tile_scalar_load_p:
            loaded = fused_exprs.loaded(f"{self.atom(e.inputs[0])}[0]", out.type.dtype)
            self.scalar(out, self.fused.rounded(loaded, out.type.dtype))
        else:
            self.scalar(out, self.fused.rounded(
                self.fused.scalar_expr(e, [self.atom(a) for a in e.inputs]), out.type.dtype))

    def scalar(self, out, expr):
        self.names[out] = self.fresh("s")
        self.w(f"const {self.fused.compute_type(out.type.dtype)} {self.names[out]} = {expr};")

    def load(self, e, ir, k):
        gm, r0, c0 = e.inputs
        out, p = e.outputs[0], e.params
        cols = p["view"][1]
        base = f"{self.atom(gm)} + (std::ptrdiff_t({self.atom(r0)}) * {cols} + {self.atom(c0)})"
        if p.get("transpose"):   # tile(i, j) = view(c0 + j, r0 + i)... offsets swap roles
            base = f"{self.atom(gm)} + (std::ptrdiff_t({self.atom(c0)}) * {cols} + " \
                   f"{self.atom(r0)})"
            window = Tile(T.valid_shape(out.type), out.type.dtype, None, 1, cols)
        else:
            window = Tile(T.valid_shape(out.type), out.type.dtype, None, cols, 1)
        name = self.fresh("g")
        self.w(f"const {cpp_type(gm.type.dtype)}* const {name} = {base};")
        window = window._replace(ptr=name)
        if self._view_safe(ir, k):
            self.tiles[out] = window
            return
        copy = self.stored_tile(out)
        self.fill(copy, window.at, out.type.dtype)
        self.tiles[out] = copy

    def moved(self, e) -> Tile:
        """A TEXTRACT's L0 tile: the L1 tile, or its block at ``index`` (one K step)."""
        src = self.tiles[e.inputs[0]]
        (r, c), out = e.params.get("index", (0, 0)), e.outputs[0]
        if (r, c) == (0, 0) and T.valid_shape(out.type) == src.shape:
            return src
        if src.expr is not None:
            raise FusedUnsupported("a matmul operand that is not loaded")
        name = self.fresh("g")
        self.w(f"const {cpp_type(src.dtype)}* const {name} = {src.ptr} + "
               f"(std::ptrdiff_t({r}) * {src.rs} + std::ptrdiff_t({c}) * {src.cs});")
        return src._replace(shape=T.valid_shape(out.type), ptr=name)

    def _view_safe(self, ir, k) -> bool:
        """Whether nothing stores into the loaded tensor while the value loaded by
        ``ir.eqns[k]`` (or a move/expand of it) is alive in this block."""
        gm = ir.eqns[k].inputs[0]
        if self.atom(gm).startswith("in"):           # kernel inputs are never written
            return True
        alive = {ir.eqns[k].outputs[0]}
        last = k
        for m, e in enumerate(ir.eqns[k + 1:], k + 1):
            if any(a in alive for a in e.inputs if not isinstance(a, Literal)):
                last = m
                if e.prim in (T.tile_move_p, T.tile_row_expand_p, T.tile_col_expand_p):
                    alive.add(e.outputs[0])
        if any(v in alive for v in ir.outvars if not isinstance(v, Literal)):
            last = len(ir.eqns)
        for m in range(k + 1, min(last + 1, len(ir.eqns))):
            e = ir.eqns[m]
            if e.prim is T.tile_store_p and m < last:
                return False
            if e.prim is T.tile_loop_p and _stores(_body(e.params)):
                return False
        return True

    def expand(self, e):
        out, src = e.outputs[0], self.tiles[e.inputs[0]]
        shape = T.valid_shape(out.type)
        if src.expr is not None:
            self.tiles[out] = src._replace(shape=shape)
        elif e.prim is T.tile_row_expand_p:
            self.tiles[out] = src._replace(shape=shape, cs=0)
        else:
            self.tiles[out] = src._replace(shape=shape, rs=0)

    def elementwise(self, e):
        out = e.outputs[0]

        def value(i, j):
            return self.fused.rounded(self.fused.host_expr(
                e.prim.tensor_prim, [self.operand(a, i, j) for a in e.inputs], e.params),
                out.type.dtype)
        if id(e) in self.inlined:               # computed inside its one user's loop
            self.tiles[out] = Tile(T.valid_shape(out.type), out.type.dtype,
                                   expr=value("@I", "@J"))
            return
        dst = self.stored_tile(out)
        self.fill(dst, value, out.type.dtype)
        self.tiles[out] = dst

    def row_reduce(self, e):
        src, out = self.tiles[e.inputs[0]], e.outputs[0]
        (r, c), t = src.shape, self.fused.compute_type(out.type.dtype)
        op, init = REDUCE[e.prim][0], REDUCE[e.prim][1].format(t=t)
        dst = self.stored_tile(out, (r, 1))
        self.open(f"for (int i = 0; i < {r}; ++i)")
        self.w(f"{t} part[kReduceLanes];")
        self.w(f"for (int l = 0; l < kReduceLanes; ++l) part[l] = {init};")
        self.open(f"for (int j0 = 0; j0 + kReduceLanes <= {c}; j0 += kReduceLanes)")
        self.w("PTO_HOST_IVDEP")
        self.w(f"for (int l = 0; l < kReduceLanes; ++l) part[l] = {op}()(part[l], "
               f"{src.at('i', 'j0 + l')});")
        self.close()
        self.w(f"for (int l = 0, j0 = {c - c % 16}; j0 + l < {c}; ++l) part[l] = "
               f"{op}()(part[l], {src.at('i', 'j0 + l')});")
        self.w(f"{dst.ptr}[i] = narrow<{cpp_type(out.type.dtype)}>(fold_lanes(part, {op}()));")
        self.close()
        self.tiles[out] = dst._replace(rs=1, cs=0)

    def col_sum(self, e):
        src, out = self.tiles[e.inputs[0]], e.outputs[0]
        (r, c), t = src.shape, self.fused.compute_type(out.type.dtype)
        acc = self.fresh("cs")
        self.w(f"{t} {acc}[{c}] = {{}};")
        self.open(f"for (int i = 0; i < {r}; ++i)")
        self.w("PTO_HOST_IVDEP")
        self.w(f"for (int j = 0; j < {c}; ++j) {acc}[j] = op_add({acc}[j], {src.at('i', 'j')});")
        self.close()
        dst = self.stored_tile(out, (1, c))
        self.w(f"for (int j = 0; j < {c}; ++j) {dst.ptr}[j] = "
               f"narrow<{cpp_type(out.type.dtype)}>({acc}[j]);")
        self.tiles[out] = dst._replace(rs=0, cs=1)

    def matmul(self, e, ir, k):
        out = e.outputs[0]
        acc_t = cpp_type(out.type.dtype)
        m, n = T.valid_shape(out.type)
        a, b = (self.tiles[v] for v in e.inputs[-2:])
        kk = a.shape[1]
        if e.prim is T.tile_matmul_p:
            dst, c_in = self.stored_tile(out), "nullptr"
        else:
            old = self.tiles[e.inputs[0]]
            later = any(e.inputs[0] in x.inputs for x in ir.eqns[k + 1:]) or \
                e.inputs[0] in ir.outvars or e.inputs[0] in ir.invars
            if later or old.expr is not None or old.rs != n or old.cs != 1:
                dst = self.stored_tile(out)
                if old.expr is not None or old.rs != n or old.cs != 1:
                    self.fill(dst, old.at, out.type.dtype)
                    c_in = dst.ptr
                else:
                    c_in = old.ptr
            else:
                dst, c_in = old, old.ptr
        for x in (a, b):
            if x.expr is not None:
                raise FusedUnsupported("a matmul operand that is not loaded")
        self.w(f"matmul_worker<{acc_t}, {cpp_type(a.dtype)}, {cpp_type(b.dtype)}>("
               f"View<{acc_t}>{{{dst.ptr}, {n}, 1}}, {c_in}, "
               f"View<const {cpp_type(a.dtype)}>{{{a.ptr}, {a.rs}, {a.cs}}}, "
               f"View<const {cpp_type(b.dtype)}>{{{b.ptr}, {b.rs}, {b.cs}}}, {m}, {kk}, {n});")
        self.tiles[out] = dst

    def store(self, e):
        gm, tile, r0, c0 = e.inputs
        self.names[e.outputs[0]] = self.names[gm]
        src, g = self.tiles[tile], cpp_type(gm.type.dtype)
        cols = e.params["view"][1]
        r, c = src.shape
        row = self.fresh("row")
        convert = "convert" if tile.type.space == "L0C" else "narrow"
        self.open(f"for (int i = 0; i < {r}; ++i)")
        self.w(f"{g}* const {row} = {self.atom(gm)} + (std::ptrdiff_t({self.atom(r0)}) + i) * "
               f"{cols} + {self.atom(c0)};")
        value = f"{convert}<{g}>({src.at('i', 'j')})"
        if e.params.get("atomic"):
            self.open("if (blocks_concurrent())")
            self.w(f"for (int j = 0; j < {c}; ++j) atomic_add({row} + j, {value});")
            self.close()
            self.open("else")
            self.w(f"for (int j = 0; j < {c}; ++j) plain_add({row} + j, {value});")
            self.close()
        else:
            self.w("PTO_HOST_IVDEP")
            self.w(f"for (int j = 0; j < {c}; ++j) {row}[j] = {value};")
        self.close()

    # --- loops -------------------------------------------------------------------------------
    def loop(self, e):
        p = e.params
        body = _body(p)
        carries, invariants, start, stop = T.loop_operands(list(e.inputs), p)
        inner_carries = body.invars[1:1 + len(carries)]
        held = []                                     # (inner var, its slot) per tile carry
        for inner, init in zip(inner_carries, carries):
            if isinstance(init, Literal) or not _is_tile(inner):
                if _is_gm(inner):
                    self.names[inner] = self.atom(init)
                    continue
                name = self.fresh("c")
                self.w(f"{self.fused.compute_type(inner.type.dtype)} {name} = "
                       f"{self.atom(init)};")
                self.names[inner] = name
                held.append((inner, None))
                continue
            slot = self.stored_tile(inner)
            self.fill(slot, self.tiles[init].at, inner.type.dtype)
            self.tiles[inner] = slot
            held.append((inner, slot))
        for inner, outer in zip(body.invars[1 + len(carries):], invariants):
            if isinstance(outer, Literal) or not _is_tile(outer):
                self.names[inner] = self.atom(outer)
            else:
                self.tiles[inner] = self.tiles[outer]
        k = self.names[body.invars[0]] = self.fresh("k")
        lo = start if isinstance(start, int) else self.atom(start)
        hi = stop if isinstance(stop, int) else self.atom(stop)
        self.open(f"for (int32_t {k} = {lo}; {k} < {hi}; ++{k})")
        self.print_block(body)
        self._next_carries(body, inner_carries, dict(held))
        self.close()
        for res, inner in zip(e.outputs, inner_carries):
            if _is_tile(inner):
                self.tiles[res] = self.tiles[inner]
            else:
                self.names[res] = self.names[inner]

    def _next_carries(self, body, inner_carries, held):
        """Each tile carry's slot takes the body's result (a result that is another carry's
        slot is first copied aside); scalar carries are assigned."""
        pending = []
        slots = {v: s for v, s in held.items() if s is not None}
        for inner, res in zip(inner_carries, body.outvars):
            if inner not in held:
                continue                                # a GM carry: the same pointer
            if slots.get(inner) is None:
                pending.append((inner, None, self.operand(res)))
                continue
            if res is inner:
                continue
            src = self.tiles[res] if not isinstance(res, Literal) else Tile(
                slots[inner].shape, inner.type.dtype, expr=f"({self.atom(res)})")
            if src.ptr is not None and src.ptr in {s.ptr for s in slots.values()}:
                tmp = self.stored_tile(inner)
                self.fill(tmp, src.at, inner.type.dtype)
                src = tmp
            pending.append((inner, src, None))
        scalar_values = []
        for inner, src, scalar in pending:
            if src is None:
                tmp = self.fresh("n")
                self.w(f"const auto {tmp} = {scalar};")
                scalar_values.append((inner, tmp))
            else:
                self.fill(slots[inner], src.at, inner.type.dtype)
        for inner, tmp in scalar_values:
            self.w(f"{self.names[inner]} = {tmp};")


def condition_text(c) -> str:
    """A region condition (``tile_ops.Condition``) on the program's tile indices."""
    index = c.index if c.div == 1 else f"({c.index} / {c.div})"
    index = f"({index} % {c.mod})" if c.mod else index
    return f"{index} {'<' if c.op == 'lt' else '=='} {c.k}"


def _elementwise(e) -> bool:
    return getattr(e.prim, "elementwise", False) and _is_tile(e.outputs[0])


def _inlinable(ir) -> set:
    """Ids of elementwise equations whose value is used once, later in the same block, by an
    elementwise op of the same shape, a reduction or a store, with no store, loop or matmul
    between (nothing can change what the expression reads before it is computed)."""
    uses: dict = {}
    for k, e in enumerate(ir.eqns):
        for a in e.inputs:
            if type(a) is not Literal:
                uses.setdefault(a, []).append(k)
    outs = {v for v in ir.outvars if type(v) is not Literal}
    barriers = [k for k, e in enumerate(ir.eqns)
                if e.prim in (T.tile_store_p, T.tile_loop_p, *MATMULS)]
    chosen = set()
    for k, e in enumerate(ir.eqns):
        out = e.outputs[0]
        if not _elementwise(e) or out in outs or len(uses.get(out, ())) != 1:
            continue
        u = uses[out][0]
        user = ir.eqns[u]
        if sum(a is out for a in user.inputs) != 1:
            continue
        if _elementwise(user):
            ok = T.valid_shape(user.outputs[0].type) == T.valid_shape(out.type)
        else:
            ok = user.prim in REDUCE or user.prim in (T.tile_col_sum_p, T.tile_store_p)
        if ok and not any(k < b < u for b in barriers):
            chosen.add(id(e))
    return chosen


def _is_gm(v) -> bool:
    return not isinstance(v.type, TileType) and v.type.shape != ()


def _ident(t: str) -> str:
    return t.replace("::", "_").replace(" ", "_")


def body_lines(body, names: list, depth: int, arena: dict) -> list:
    """One region body of a kernel as C++ lines (``names``: its GM parameters)."""
    printer = KernelBodyPrinter(body, dict(zip(body.invars[2:], names)), depth, arena)
    return printer.print_block(body)


def arena_lines(arena: dict) -> list:
    """The per-thread arena of each C++ type the bodies' slots live in."""
    return [f"{t}* const arena_{_ident(t)} = fused_buffer<{t}>(7, {max(used[0], 1)});"
            for t, used in sorted(arena.items())]

