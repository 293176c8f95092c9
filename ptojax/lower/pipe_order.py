"""Pipe synchronization of one core of a ``pto.kernel`` (``program_schedule``): a
vector-clock simulation of the core's instructions over the planned buffer bytes (two tiles,
each loop body twice at every nesting level, a loop that may run zero times) finds every
conflict between pipes not yet ordered, and orders it with a flag set right after the
earlier access (same step, or the step before for a loop-carried buffer) or an adjacent
``set_flag``/``wait_flag`` pair before the later one."""
from __future__ import annotations

from ptojax.lower.schedule import Flag
from ptojax.lower.schedule_items import (ADJACENT_EVENT, EARLY_EVENT, LoopItem, Op, flat_ops,
                                         slot_depth)

MAX_FIX_ROUNDS = 8

PIPES = ("MTE2", "MTE1", "M", "FIX", "V", "MTE3")


class _Clocks:
    """What each pipe of one core has issued, and what it knows is done."""

    def __init__(self):
        self.clock = {p: 0 for p in PIPES}
        self.known = {p: {q: 0 for q in PIPES} for p in PIPES}
        # [space, lo, hi, writer (pipe, seq) | None, {pipe: seq}, copies]: the accesses of
        # the paths merged so far (``copies``: how many paths hold this same record)
        self.records = []

    def copy(self):
        c = _Clocks()
        c.clock = dict(self.clock)
        c.known = {p: dict(k) for p, k in self.known.items()}
        c.records = [[s, lo, hi, w, dict(r), n] for s, lo, hi, w, r, n in self.records]
        return c

    def progress(self, q):
        k = dict(self.known[q])
        k[q] = self.clock[q]
        return k

    def order(self, q, p):
        """An adjacent set_flag(q, p)/wait_flag(q, p): p knows all q has issued is done."""
        for r, v in self.progress(q).items():
            self.known[p][r] = max(self.known[p][r], v)

    def meet(self, other):
        """Knowledge true on both paths (a loop that may not run)."""
        for p in PIPES:
            for q in PIPES:
                self.known[p][q] = min(self.known[p][q], other.known[p][q])
        # the accesses of both paths; a record both hold is counted, not repeated (a loop
        # leaves most records before it as they were: nested loops would double them per
        # level)
        index = {_record_key(r): r for r in self.records}
        for r in other.records:
            mine = index.get(_record_key(r))
            if mine is not None:
                mine[5] += r[5]
            else:
                self.records.append(r)


def _record_key(rec):
    space, lo, hi, writer, readers, _ = rec
    return space, lo, hi, writer, tuple(sorted(readers.items()))


class _Simulation:
    """Runs one core's ops over two tiles (regions ``first`` then ``second``), each loop body
    twice, and records the pairs that order unordered conflicting accesses. When the latest
    conflicting access is an op of the same statement list -- earlier in the same step, or
    later in the step before (a loop-carried buffer) -- its pipe sets the flag right after it
    and the later op waits for that set (``early``: it waits for that op, not for all its
    pipe was given since; a loop-carried one also sets before the loop and waits after it);
    else an adjacent pair before the later op orders it."""

    def __init__(self, core, pairs, buffers, early=None, entry=None):
        self.core = core
        self.pairs = pairs           # id(op) -> set of (src pipe, dst pipe)
        self.early = {} if early is None else early   # id(op) -> {(src, dst): earlier op}
        self.entry = {} if entry is None else entry   # id(op) -> pairs only a loop's entry asked
        self.buffers = buffers
        self.changed = False
        self.rings = {}              # ring event -> what its sets knew, oldest first

    def run(self, first, second):
        st = _Clocks()
        self.rings = {}
        self.by_seq = {}             # (pipe, seq) -> (op, its step context)
        self.fired = {}              # (id(earlier op), src, dst) -> what its set knew
        self.sets_after = {}         # id(earlier op) -> {(src, dst)} set right after it
        for later in self.early.values():
            for key, earlier in later.items():
                self.sets_after.setdefault(id(earlier), set()).add(key)
        self._items(first.items, st, [0], first)
        self._items(second.items, st, [1], second)

    def _items(self, items, st, copies, builder):
        ctx = (id(items), tuple(copies))
        for it in items:
            if isinstance(it, Op):
                self._ring_flags(it.before, st, copies)
                if it.core == self.core:
                    self._op(it, st, copies, builder, ctx)
                self._ring_flags(it.after, st, copies)
            elif isinstance(it, LoopItem):
                self._ring_flags(it.before, st, copies)
                self._loop_entry(it.items, st)
                before = st.copy()
                for i in range(2):
                    self._items(it.items, st, copies + [i], builder)
                st.meet(before)
                self._ring_flags(it.after, st, copies)

    def _loop_entry(self, items, st):
        """The sets before a loop of its loop-carried early pairs: what each pipe has done."""
        ops = [it for it in items if isinstance(it, Op)]
        pos = {id(o): i for i, o in enumerate(ops)}
        for o in ops:
            for (src, dst), earlier in self.early.get(id(o), {}).items():
                if pos.get(id(earlier), -1) > pos[id(o)]:
                    self.fired[(id(earlier), src, dst)] = st.progress(src)

    def _ring_flags(self, flags, st, copies):
        """The staging rings' flags (``Builder.rings``): a wait gives its pipe what the
        matching set's pipe had done when it fired, so the rings order what they cover."""
        for core, f in flags:
            if core != self.core or not isinstance(f, Flag):
                continue
            if isinstance(f.event, tuple):
                copy = copies[slot_depth(f.event[0])]
                event = copy % self.buffers + f.event[1]
            else:
                event = f.event
            key = (f.src, f.dst, event)
            if f.action == "set":
                self.rings.setdefault(key, []).append(st.progress(f.src))
            elif self.rings.get(key):
                for r, v in self.rings[key].pop(0).items():
                    st.known[f.dst][r] = max(st.known[f.dst][r], v)

    def _ranges(self, res, copies, builder):
        kind, x = res
        if kind == "gm":
            return [("GM:" + x, 0, 1)]
        plan = builder.plan
        slot = plan.scratch[x] if kind == "scratch" else plan.slots[x]
        if kind == "scratch":
            nbytes = x.inputs[0].type.size * x.inputs[0].type.dtype.itemsize
        else:
            nbytes = x.type.size * x.type.dtype.itemsize
        lvl = min(slot.level, len(copies) - 1)
        addr = slot.address(copies[lvl])
        return [(slot.space, addr, addr + nbytes)]

    def _op(self, op, st, copies, builder, ctx):
        p = op.pipe
        for (src, dst), earlier in self.early.get(id(op), {}).items():
            known = self.fired.get((id(earlier), src, dst))
            if known is None:            # its set has not run: order it all
                st.order(src, dst)
            else:
                for r, v in known.items():
                    st.known[dst][r] = max(st.known[dst][r], v)
        for src, dst in self.pairs.get(id(op), ()):
            st.order(src, dst)
        latest = {}                      # pipe -> the latest unordered conflicting seq on it
        for write, resources in ((False, op.reads), (True, op.writes)):
            for res in resources:
                for space, lo, hi in self._ranges(res, copies, builder):
                    for q, seq in self._hazards(st, p, space, lo, hi, write):
                        latest[q] = max(latest.get(q, 0), seq)
        for q, seq in latest.items():
            self._order(op, q, p, ctx, *self.by_seq.get((q, seq), (None, None)))
            st.order(q, p)
        st.clock[p] += 1
        seq = st.clock[p]
        self.by_seq[(p, seq)] = (op, ctx)
        for write, resources in ((False, op.reads), (True, op.writes)):
            for res in resources:
                for space, lo, hi in self._ranges(res, copies, builder):
                    self._record(st, p, seq, space, lo, hi, write)
        for (src, dst) in self.sets_after.get(id(op), ()):
            self.fired[(id(op), src, dst)] = st.progress(src)

    def _order(self, op, q, p, ctx, earlier, where):
        """Records how ``op`` (on ``p``) waits for ``earlier`` (on ``q``, in ``where``)."""
        same_list = where is not None and where[0] == ctx[0] and len(ctx[1]) > 1
        step = same_list and where[1] == ctx[1]
        carried = same_list and where[1][:-1] == ctx[1][:-1] and \
            where[1][-1] == ctx[1][-1] - 1
        early = self.early.setdefault(id(op), {})
        if step or carried:
            if early.get((q, p)) is not earlier:
                early[(q, p)] = earlier
                self.sets_after.setdefault(id(earlier), set()).add((q, p))
                self.changed = True
            if carried and (q, p) in self.entry.get(id(op), ()):
                self.entry[id(op)].discard((q, p))      # its set before the loop orders it
                self.pairs[id(op)].discard((q, p))
                self.changed = True
            return
        pairs = self.pairs.setdefault(id(op), set())
        if (q, p) not in pairs:
            pairs.add((q, p))
            self.changed = True
            if len(ctx[1]) > 1 and ctx[1][-1] == 0 and (q, p) not in early:
                self.entry.setdefault(id(op), set()).add((q, p))    # a loop's first step

    @staticmethod
    def _hazards(st, p, space, lo, hi, write):
        for rec in st.records:
            s, rlo, rhi, writer, readers, _ = rec
            if s != space or rhi <= lo or hi <= rlo:
                continue
            hazards = [writer] if writer is not None else []
            if write:
                hazards += list(readers.items())
            for q, seq in hazards:
                if q != p and st.known[p][q] < seq:
                    yield q, seq

    @staticmethod
    def _record(st, p, seq, space, lo, hi, write):
        for rec in st.records:
            if rec[0] == space and rec[1] == lo and rec[2] == hi:
                if rec[5] > 1:           # the other paths' copies keep the old access
                    st.records.append([*rec[:4], dict(rec[4]), rec[5] - 1])
                    rec[5] = 1
                if write:
                    rec[3], rec[4] = (p, seq), {}
                else:
                    rec[4][p] = seq
                return
        st.records.append([space, lo, hi, (p, seq) if write else None,
                           {} if write else {p: seq}, 1])


def order_pipes(builders):
    """Set/wait pairs for every unordered conflict on each core (to a fixpoint): set right
    after the earlier access when it is in the same step, else adjacent before the later."""
    pairs, early, entry = {}, {}, {}
    buffers = builders[0].buffers
    for core in ("cube", "vector"):
        for _ in range(MAX_FIX_ROUNDS):
            sim = _Simulation(core, pairs, buffers, early, entry)
            for a in builders:
                for b in builders:
                    sim.run(a, b)
            if not sim.changed:
                break
    free = _early_events(builders, buffers)
    for b in builders:
        _early_pairs(b.items, early, pairs, free)
        for op, _ in flat_ops(b.items):
            for src, dst in sorted(pairs.get(id(op), ())):
                op.before.append((op.core, Flag("set", src, dst, ADJACENT_EVENT)))
                op.before.append((op.core, Flag("wait", src, dst, ADJACENT_EVENT)))


def _early_events(builders, buffers) -> dict:
    """(core, src, dst) -> the event ids early pairs of that pipe pair may use, EARLY_EVENT
    first: the ids below ADJACENT_EVENT no staging ring of the kernel takes on that pair (a
    ring event ``(slot, offset)`` takes ``offset .. offset + buffers - 1``)."""
    taken = {}

    def note(flags):
        for core, f in flags:
            if isinstance(f, Flag):
                ids = range(f.event[1], f.event[1] + buffers) if isinstance(f.event, tuple) \
                    else (f.event,)
                taken.setdefault((core, f.src, f.dst), set()).update(ids)

    def walk(items):
        for it in items:
            if isinstance(it, (Op, LoopItem)):
                note(it.before)
                note(it.after)
            if isinstance(it, LoopItem):
                walk(it.items)
    for b in builders:
        walk(b.items)
    every = [EARLY_EVENT] + [e for e in range(EARLY_EVENT - 1, -1, -1)]

    class _Free(dict):
        def __missing__(self, key):
            return [e for e in every if e not in taken.get(key, ())]
    return _Free()


def _pending(start, end, n):
    """The stretch of a statement list of ``n`` ops an early pair's event is pending over:
    set after op ``start``, waited before op ``end``; a loop-carried one (start > end) from
    its set to the end of the body and from the start of the body to its wait (its sets
    before the loop and waits after it extend those)."""
    if start < end:
        return [(start + 0.5, end - 0.25)]
    return [(start + 0.5, n + 1.0), (-1.0, end - 0.25)]


def _overlap(a, b) -> bool:
    return any(lo1 <= hi2 and lo2 <= hi1 for lo1, hi1 in a for lo2, hi2 in b)


def _early_pairs(items, early, pairs, free, loop=None):
    """Emits the early pairs of one statement list (and of its loops' bodies): a set after
    the earlier op, a wait before the later; a loop-carried one (the earlier op later in the
    body) also sets before the loop and waits after it. An event holds one pending set at a
    time: each pair takes the first of its pipe pair's free events (``_early_events``) not
    pending where it is (nor used by a loop it spans); a pair left without one becomes an
    adjacent pair (stronger)."""
    ops = [it for it in items if isinstance(it, Op)]
    pos = {id(o): i for i, o in enumerate(ops)}
    links = {}
    for it in items:
        if isinstance(it, LoopItem):
            _early_pairs(it.items, early, pairs, free, it)
    for o in ops:
        for (src, dst), earlier in early.get(id(o), {}).items():
            if (src, dst) in pairs.get(id(o), ()):
                continue                 # an adjacent pair orders it already
            if id(earlier) not in pos or (pos[id(earlier)] > pos[id(o)] and loop is None):
                pairs.setdefault(id(o), set()).add((src, dst))
                continue
            links.setdefault((o.core, src, dst), []).append(
                (pos[id(earlier)], pos[id(o)], earlier, o))
    for (core, src, dst), group in links.items():
        held = {}                        # event -> the stretches pending on it
        for start, end, earlier, later in sorted(group, key=lambda g: (g[0] < g[1], g[0], g[1])):
            span = _pending(start, end, len(ops))
            event = next((e for e in free[(core, src, dst)]
                          if not _overlap(held.get(e, []), span)
                          and not _spans_a_loop_using(items, earlier, later, src, dst, e)),
                         None)
            if event is None:
                pairs.setdefault(id(later), set()).add((src, dst))
                continue
            held.setdefault(event, []).extend(span)
            earlier.after.append((earlier.core, Flag("set", src, dst, event)))
            later.before.append((later.core, Flag("wait", src, dst, event)))
            if start > end:
                loop.before.append((later.core, Flag("set", src, dst, event)))
                loop.after.append((later.core, Flag("wait", src, dst, event)))


def _spans_a_loop_using(items, earlier, later, src, dst, event) -> bool:
    """Whether an early (src, dst) pair would be pending across a loop of ``items`` that sets
    and waits the same event itself (one set pending per event: the loop's wait would take
    the outer set). A loop-carried pair is pending from its set to the end of the body and
    from the start of the body to its wait."""
    at = {id(it): i for i, it in enumerate(items)}
    s, e = at[id(earlier)], at[id(later)]
    for i, it in enumerate(items):
        between = s < i < e if s < e else (i > s or i < e)
        if isinstance(it, LoopItem) and between and _uses_event(it, src, dst, event):
            return True
    return False


def _uses_event(loop, src, dst, event) -> bool:
    def mine(flags):
        return any(isinstance(f, Flag) and f.event == event and (f.src, f.dst) ==
                   (src, dst) for _, f in flags)
    if mine(loop.before) or mine(loop.after):
        return True
    for it in loop.items:
        if isinstance(it, Op) and (mine(it.before) or mine(it.after)):
            return True
        if isinstance(it, LoopItem) and _uses_event(it, src, dst, event):
            return True
    return False
