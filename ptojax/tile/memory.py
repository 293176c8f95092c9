"""On-chip buffer planning for one tile-kernel body: an address for every tile.

Rules (one plan is shared by the planner's capacity check, the tile interpreter, which places
every tile at its planned address in a simulated buffer, and the PTO emitters' TASSIGN/addr):

- *Staging* tiles are multi-buffered (``buffers`` copies, one per pipeline slot) and reserved
  for the whole kernel: tiles written by ``tile_load``/``tile_move`` (the DMA pipes fill the
  next slot while the vector/cube unit works on this one) and UB tiles read by ``tile_store``
  (the store of slot k drains while slot k+1 is computed). A staging tile defined inside a
  ``tile_loop`` (and not sharing a ``stage`` buffer with one outside) is reserved for that
  loop only: after it, other tiles may use its buffer. A matmul's accumulator started
  inside a ``tile_loop`` is staged too: the next step's matmul fills the other copy while
  this step's result drains to GM.
- The tiles of one matmul operand (``stage`` param) share one staging buffer across all K
  steps; the copy used alternates with the step. A matmul split along K alternates its K
  steps instead (``tile_move``'s ``k_copy``, the K step's parity): each parity is a
  single-copy staging buffer of its own (``Slot.k_copy``), the schedule's ring over it
  selecting the copy by that parity, not the loop step. When all of them are defined inside one
  ``tile_loop``, the buffer is reserved for that loop only (sequential loops, such as the
  unmasked and masked key loops of causal attention, reuse each other's L0 buffers).
- Every other tile lives from its definition to its last use (a use inside a ``tile_loop``
  keeps it alive to the end of the loop). Loop carries share one buffer with the loop's
  operands and results (the accumulator is updated in place).
- An elementwise result may take over the buffer of an operand that dies at it (PTO ops accept
  ``dst == src``), except for an output-staging buffer, and only if its elements are no wider
  than the operand's (a widening conversion in place would overwrite elements not yet read).
- Ops that need a temporary (``prim.tile_scratch``) get one for the duration of the op.
- Buffers are placed first-fit in order of first use, at addresses aligned to the target's
  per-space alignment.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ptojax.errors import TileError
from ptojax.ir.core import IR, ClosedIR, Var
from ptojax.ir.types import TileType
from ptojax.tile import ops as T
from ptojax.tile.row_split import half_type


def tile_nbytes(t: TileType) -> int:
    return t.size * t.dtype.itemsize


def align_up(n: int, a: int) -> int:
    return -(-n // a) * a


@dataclass(eq=False)
class Slot:
    """A buffer region: ``copies`` consecutive ``stride``-byte copies starting at ``offset``."""
    space: str
    nbytes: int
    copies: int = 1
    start: int = 0             # first position (in body order) at which it is live
    end: int = 0               # last position at which it is live
    offset: int = -1
    stride: int = 0
    level: int = 0             # loop depth whose iteration count selects the copy
    staging: str = ""          # "in" (loaded/moved), "out" (stored) or ""
    last_use: int = 0          # last position any tile held here is read
    owner: object = None       # the equation that first defines it (for error messages)
    name: str = ""
    k_copy: object = None      # 0/1: one K-step parity's copy of a matmul operand's buffer

    @property
    def extent(self) -> int:
        return self.offset + self.copies * self.stride

    def address(self, copy: int = 0) -> int:
        return self.offset + (copy % self.copies) * self.stride


@dataclass
class MemoryPlan:
    slots: dict = field(default_factory=dict)       # Var -> Slot
    scratch: dict = field(default_factory=dict)     # Eqn -> Slot
    ordered: list = field(default_factory=list)     # distinct slots, in placement order
    peak: dict = field(default_factory=dict)        # space -> bytes

    def overflow(self, target):
        """(slot, space, needed, capacity) of the first buffer past capacity, or None."""
        for slot in self.ordered:
            cap = target.capacity(slot.space)
            if slot.extent > cap:
                return slot, slot.space, self.peak[slot.space], cap
        return None


def _as_ir(x) -> IR:
    return x.ir if isinstance(x, ClosedIR) else x


class _Walker:
    """Numbers equations (nested loop bodies inline) and records defs, uses and staging."""

    def __init__(self):
        self.pos = 0
        self.loops = [[0, None]]   # spans [first, last position] of the enclosing loops
        self.span = {}          # Var -> the span of the innermost loop defining it
        self.defs = {}          # Var -> (position, eqn, loop level)
        self.last = {}          # Var -> last position
        self.events = []        # (position, eqn, level)
        self.alias = {}         # Var -> Var it shares a buffer with (carries)
        self.stored = {}        # UB tiles read by tile_store -> the last such store
        self.staged_in = set()  # tiles written by tile_load / tile_move
        self.last_loop = None   # position of the body's last top-level loop
        self.carried = set()    # values entering a loop as its carries' initial values
        self.loop_eqns = []     # every tile_loop equation, nested ones too

    def walk(self, ir: IR, level: int):
        for eqn in ir.eqns:
            p = self.pos
            self.pos += 1
            self.events.append((p, eqn, level))
            for a in eqn.inputs:
                if type(a) is Var:
                    self.last[a] = max(self.last.get(a, p), p)
            if eqn.prim is T.tile_loop_p:
                self._walk_loop(eqn, level)
            end = self.pos - 1
            for a in eqn.inputs:
                if type(a) is Var:
                    self.last[a] = max(self.last[a], end)
            for v in eqn.outputs:
                self.defs[v] = (p, eqn, level)
                self.span[v] = self.loops[-1]
                self.last.setdefault(v, p)
            if eqn.prim in (T.tile_load_p, T.tile_move_p) or \
                    getattr(eqn.prim, "tile_staged", False) or \
                    (eqn.prim is T.tile_matmul_p and level > 0):
                self.staged_in.add(eqn.outputs[0])
            if eqn.prim is T.tile_store_p and eqn.inputs[1].type.space == "UB":
                self.stored[eqn.inputs[1]] = p
            if eqn.prim is T.tile_matmul_acc_p:      # accumulates into its first operand
                self.alias[eqn.outputs[0]] = eqn.inputs[0]

    def _walk_loop(self, eqn, level):
        body = _as_ir(eqn.params["body"])
        n = eqn.params["num_carry"]
        start = self.pos
        self.loop_eqns.append(eqn)
        if len(self.loops) == 1:
            self.last_loop = start
        for outer, inner in zip(eqn.inputs, body.invars[1:]):     # carries, invariants
            self.alias[inner] = outer
        self.carried.update(v for v in eqn.inputs[:eqn.params["num_carry"]] if type(v) is Var)
        span = [start, None]
        self.loops.append(span)
        self.walk(body, level + 1)
        self.loops.pop()
        span[1] = self.pos - 1
        for inner_in, inner_out, result in zip(body.invars[1:1 + n], body.outvars,
                                               eqn.outputs):
            if type(inner_out) is Var and inner_out is not inner_in:   # not passed through
                self.alias[inner_out] = inner_in
                self.last[inner_out] = max(self.last.get(inner_out, start), self.pos - 1)
            self.alias[result] = inner_in
        for v in body.invars[1 + n:]:
            self.last[v] = self.pos - 1


def plan_memory(body, buffers: int, target, single_fallback=False, split_rows=0,
                shorten=True) -> MemoryPlan:
    """See ``_plan_memory``. A pto.kernel (``single_fallback``) whose plan still overflows
    with every staging tile single-buffered is planned again with its top-level staging tiles
    live only from their first definition to their last use instead of the whole kernel
    (straight-line code, such as the unrolled derivative of a static loop, loads many matmul
    operands one after another), then with its loop bodies' staging tiles so too, within the
    step (a reverse loop of a derivative holds a recompute loop and both their operands); its
    pipe flags, derived from the planned bytes over two programs and two steps of every loop,
    order the reuse. ``shorten=False``: the first plan only."""
    plan = _plan_memory(body, buffers, target, single_fallback, split_rows)
    if not (single_fallback and shorten) or plan.overflow(target) is None:
        return plan
    for spans in ("top", "all"):
        shorter = _plan_memory(body, buffers, target, single_fallback, split_rows, spans)
        if shorter.overflow(target) is None:
            return shorter
    return plan            # overflows however planned: its error names the first plan's buffer


def _plan_memory(body, buffers: int, target, single_fallback=False, split_rows=0,
                 spans="") -> MemoryPlan:
    """Assign every tile of ``body`` (a kernel body IR) a buffer address on ``target``.
    Staging tiles (loaded, moved or stored in a loop) get ``buffers`` copies; with
    ``single_fallback`` (a pto.kernel, whose pipe flags are derived from the planned bytes),
    while a buffer overflows its largest staging tile keeps one copy: its load then waits
    for the previous step's last read instead of overlapping it. With ``split_rows`` R (a
    mixed kernel whose vector sub-blocks each take half the rows, ``tile/row_split.py``) it is
    one sub-block's plan: a vector tile of R rows takes the bytes of its R/2-row half."""
    def nbytes(t):
        return tile_nbytes(half_type(t, split_rows))
    w = _Walker()
    w.walk(_as_ir(body), 0)
    end = w.pos
    plan = MemoryPlan()
    slot_of = plan.slots
    stages = {}
    stage_span = _stage_spans(w)

    def root(v):
        while v in w.alias:
            v = w.alias[v]
        return v

    for p, eqn, level in w.events:
        for v in eqn.outputs:
            if not isinstance(v.type, TileType):
                continue
            last = w.last.get(v, p)
            r = root(v)
            slot = slot_of.get(r) if r is not v else None       # accumulator / loop carry
            if slot is None:
                slot = _reuse(eqn, v, p, slot_of, w, nbytes)
            stage = eqn.params.get("stage")
            if slot is None and stage is not None:              # shared K-step buffer
                slot = stages.get((v.type.space, stage))
            if slot is None:
                staging = "out" if v in w.stored else "in" if v in w.staged_in else ""
                if staging == "out" and level == 0 and w.last_loop is not None and \
                        w.stored[v] < w.last_loop:
                    staging = ""     # a loop follows its store: done long before the next tile
                span = w.span[v] if stage is None else stage_span[(v.type.space, stage)]
                first, final = (p, last) if _own_span(spans, level) else \
                    (0, end) if level == 0 or span is None else (span[0], span[1])
                k_copy = eqn.params.get("k_copy")
                slot = Slot(v.type.space, nbytes(v.type),
                            copies=buffers if staging and k_copy is None else 1,
                            start=first if staging else p,
                            end=final if staging else last, level=level, staging=staging,
                            owner=eqn, k_copy=k_copy)
            if stage is not None:
                stages[(v.type.space, stage)] = slot
            slot.last_use = max(slot.last_use, last)
            if not slot.staging or _own_span(spans, slot.level):
                slot.end = max(slot.end, last)
            slot_of[v] = slot
        if getattr(eqn.prim, "tile_scratch", None):
            src = eqn.inputs[0].type
            plan.scratch[eqn] = Slot(src.space, nbytes(src), start=p, end=p,
                                     level=level, owner=eqn)
    for v in w.alias:                     # loop-body carry parameters
        if v not in slot_of and root(v) in slot_of and isinstance(v.type, TileType):
            slot_of[v] = slot_of[root(v)]
    _check_carries_in_place(w, slot_of)
    _place(plan, target)
    if single_fallback:
        _single_buffer_to_fit(plan, target)
    return plan


def _check_carries_in_place(w, slot_of):
    """Every tile loop carry, its initial value, its new value in the body and the loop's
    result share one buffer: the emitted loop updates the carry in place and copies nothing.
    A body whose new value lives elsewhere (a value from outside the step, another carry, a
    nested loop's result in its own carry's buffer) would leave the carry stale: an error
    in whatever built the body, raised here rather than a wrong answer."""
    for eqn in w.loop_eqns:
        body = _as_ir(eqn.params["body"])
        n = eqn.params["num_carry"]
        for i, (init, inner, new, result) in enumerate(zip(
                eqn.inputs[:n], body.invars[1:1 + n], body.outvars, eqn.outputs)):
            if not isinstance(inner.type, TileType):
                continue
            held = [slot_of.get(v) for v in (init, inner, new, result) if type(v) is Var]
            if any(s is not held[0] for s in held):
                raise TileError(
                    f"tile memory plan: carry {i} of a tile_loop is not updated in one "
                    f"buffer (its new value or result lives apart from the carry): the loop "
                    f"body must compute each carry's new value into a tile of its own "
                    f"(copy a value from outside the step, another carry or a nested loop's "
                    f"result); this is a bug in the lowering that built the loop")


def _own_span(spans, level) -> bool:
    """Whether a staging tile at loop ``level`` lives only from its definition to its last use
    (``spans`` "top": top-level tiles; "all": loop bodies' too, within the step)."""
    return spans == "all" or spans == "top" and level == 0


def _single_buffer_to_fit(plan, target):
    """While a buffer overflows, its largest double-buffered staging tile keeps one copy."""
    while (over := plan.overflow(target)) is not None:
        space = over[1]
        staged = [s for s in plan.ordered if s.space == space and s.copies > 1]
        if not staged:
            return
        max(staged, key=lambda s: s.nbytes).copies = 1
        plan.ordered, plan.peak = [], {}
        _place(plan, target)


def _stage_spans(w) -> dict:
    """(space, stage) -> the span of the one loop defining every tile of that matmul operand
    buffer, or None (some defined at the top level or in different loops)."""
    spans = {}
    for p, eqn, level in w.events:
        stage = eqn.params.get("stage")
        if stage is None:
            continue
        for v in eqn.outputs:
            if isinstance(v.type, TileType):
                key, span = (v.type.space, stage), w.span[v] if level else None
                spans[key] = span if spans.get(key, span) is span else None
    return spans


def _reuse(eqn, out, p, slot_of, w, nbytes):
    """The slot of an operand that dies at ``eqn`` and may hold its result, if any. A value
    entering a loop as a carry never takes a staging slot: its copies are picked by the
    enclosing level's slot, the loop body's updates of the carry by the loop's."""
    if out in w.stored or out in w.staged_in or not T.inplace_ok(eqn.prim, eqn.params):
        return None
    carried = out in w.carried
    for a in eqn.inputs:
        if type(a) is not Var or a not in slot_of:
            continue
        slot = slot_of[a]
        if carried and slot.copies > 1:
            continue
        # a wider result written over its operand would overwrite elements not yet read
        if (slot.staging != "out" and slot.space == out.type.space
                and slot.nbytes >= nbytes(out.type) and slot.last_use <= p
                and out.type.dtype.itemsize <= a.type.dtype.itemsize):
            return slot
    return None


def _place(plan: MemoryPlan, target):
    distinct, seen = [], set()
    for s in list(plan.slots.values()) + list(plan.scratch.values()):
        if id(s) not in seen:
            seen.add(id(s))
            distinct.append(s)
    # staging buffers first (they live throughout), then by first use
    distinct.sort(key=lambda s: (0 if s.staging else 1, s.start))
    for s in distinct:
        align = target.alignment[s.space]
        s.stride = align_up(s.nbytes, align)
        s.offset = _first_fit(s, plan.ordered, align)
        plan.ordered.append(s)
        plan.peak[s.space] = max(plan.peak.get(s.space, 0), s.extent)


def _first_fit(s, placed, align):
    busy = sorted((o.offset, o.extent) for o in placed
                  if o.space == s.space and o.start <= s.end and s.start <= o.end)
    need = s.copies * s.stride
    offset = 0
    for lo, hi in busy:
        if offset + need <= lo:
            break
        offset = max(offset, align_up(hi, align))
    return offset
