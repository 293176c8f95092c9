"""Cube <-> vector synchronization of a ``pto.kernel`` (``program_schedule``): ready/free
cross-core flags for every GM workspace one core stores and the other loads, at any loop
nesting.

Flag ids are scarce: CANN's ``CrossCoreSetFlag``/``CrossCoreWaitFlag`` take ids 0-15 (A2 docs
of later CANN releases say 0-10), each a counter. A workspace takes a pair: ``ready`` (set by
its producer after a store) and ``free`` (set by its consumer after its loads, with one initial
credit). While ids last, every workspace has a pair of its own. Past that (a static loop's
derivative is unrolled into straight-line transfers, one workspace each):

1. two workspaces of one direction whose lifetimes (from the first to the last top-level
   statement storing or loading them, in every region) do not overlap share a pair: its one
   credit passes from the first to the second, in the same order on both cores (the second's
   store waits for the first's loads to be done);
2. if that is not enough, a workspace stored once per program, outside loops, drops its
   free flag. Its ready id is busy only from its store to its first load (its later loads
   follow in program order), so such ids are reused whenever those spans do not overlap;
   one handshake per direction per program stands in for the free flags: the consumer sets
   it after its last load of such a workspace, the producer waits for it before its first
   store of one in the next program (with one initial credit).

(On the A2 each core counts its own copy of an id, so a cube -> vector and a vector -> cube
workspace could share a pair at any time; the host build's checker, which may run a kernel's
vector and cube code as one core, does not model that, so pairs stay one direction's.)"""
from __future__ import annotations

from typing import NamedTuple

from ptojax.errors import TileError
from ptojax.lower.schedule import CrossSync
from ptojax.lower.schedule_items import flat_ops, scoped_ops
from ptojax.tile import ops as T

MAX_CROSS_FLAGS = 16         # cross-core flag ids per kernel (FFTS, CrossCoreSetFlag 0-15)


def cross_core(builders, prologue, epilogue, name="kernel", source=None, depths=()):
    """Ready/free notifications for every workspace one core stores and the other loads.
    Each store waits for a free copy and signals ready; each group of the consumer's loads
    between two stores in one scope waits for ready before its first load and frees the
    workspace after its last. A group may precede its store in a loop body (a value carried
    in its workspace across a step: stored in step j, loaded in step j + 1) or follow it in
    another scope (stored before a loop, loaded in it; stored in a loop, loaded after it).
    A workspace has one credit for the kernel -- or, with ``depths[i]`` copies (``ws{i}``: a
    matmul result carried to the next loop step, its copies alternating by step within a
    program), that many credits for each program: set by the consumer as the program starts,
    taken back by the producer as it ends, so every program starts with every copy free and
    its copy parity from 0; such a workspace keeps a pair of its own.
    When the pairs do not fit the flags, workspaces stored once per program take a ready
    flag only, and one free handshake per direction per program (module docstring)."""
    copies = {f"ws{i}": d for i, d in enumerate(depths) if d > 1}
    transfers = [_transfers(b) for b in builders]
    try:
        flags, once = _assign_pairs(transfers, [], name, source, copies=copies), {}
    except TileError:
        once = {ws: _producer(transfers, ws) for t in transfers for ws in t
                if _stored_once(transfers, ws)}
        if not once:
            raise
        directions = sorted(set(once.values()))
        handshake = dict(zip(directions, range(len(directions))))
        reserved = list(range(len(directions)))
        flags = _assign_pairs(transfers, reserved, name, source, skip=once, copies=copies)
        flags.update(_assign_ready(transfers, once, reserved + sorted(
            {f for pair in flags.values() for f in pair}), name, source))
        for b, t in zip(builders, transfers):
            _handshakes(b, t, once, handshake, prologue, epilogue)
    credited = set()
    for b, per_builder in zip(builders, transfers):
        for ws, (producer, consumer, sts, groups, _, _) in per_builder.items():
            if ws in once:
                _notify_once(flags[ws], producer, consumer, sts, groups)
                continue
            ready, free = flags[ws]
            if ws in copies:
                b.entry += [(consumer, CrossSync("set", free, "MTE2"))] * copies[ws]
                b.exit += [(producer, CrossSync("wait", free))] * copies[ws]
            elif (free, producer) not in credited:
                # one credit per pair, also when sequential loops or workspaces share it
                credited.add((free, producer))
                prologue.append((consumer, CrossSync("set", free, "MTE2")))
                epilogue.append((producer, CrossSync("wait", free)))
            stored_in = {id(sc) for _, sc in sts}
            for st, _ in sts:
                st.before.append((producer, CrossSync("wait", free)))
                st.after.append((producer, CrossSync("set", ready, st.pipe)))
            for lds, scope in groups:
                first, last = _group_ends(lds, scope, stored_in)
                first.before.append((consumer, CrossSync("wait", ready)))
                last.after.append((consumer, CrossSync("set", free, "MTE2")))


def _group_ends(lds, scope, stored_in):
    """Where a group of loads waits and frees: a loop that only reads the value (a carry it
    passes through) waits for it once, before the loop, and frees it after."""
    if scope is not None and id(scope) not in stored_in:
        return scope, scope
    return lds[0], lds[-1]


def _notify_once(ready, producer, consumer, sts, groups):
    """A workspace stored once per program: its store signals ready, its first group of loads
    waits for it (the later groups come after in program order); no per-workspace free."""
    (st, _), = sts
    st.after.append((producer, CrossSync("set", ready, st.pipe)))
    lds, scope = groups[0]
    first, _ = _group_ends(lds, scope, set())
    first.before.append((consumer, CrossSync("wait", ready)))


def _handshakes(builder, transfers, once, handshake, prologue, epilogue):
    """Per direction, the producer waits before its first store of a once-stored workspace in
    a program until the consumer has done its last load of one in the program before."""
    for producer, flag in handshake.items():
        mine = [ws for ws in transfers if once.get(ws) == producer]
        if not mine:
            continue
        consumer = transfers[mine[0]].consumer
        first = min(transfers[ws].ready_span[0] for ws in mine)
        last = max(transfers[ws].span[1] for ws in mine)
        builder.items[first].before.append((producer, CrossSync("wait", flag)))
        builder.items[last].after.append((consumer, CrossSync("set", flag, "MTE2")))
        prologue.append((consumer, CrossSync("set", flag, "MTE2")))
        epilogue.append((producer, CrossSync("wait", flag)))


def _stored_once(transfers, ws) -> bool:
    """Whether every region stores ``ws`` once, outside loops."""
    return all(len(t[ws].stores) == 1 and t[ws].stores[0][1] is None
               for t in transfers if ws in t)


class Transfer(NamedTuple):
    """One region's use of a workspace the other core loads."""
    producer: str
    consumer: str
    stores: list               # [(store op, its loop or None)]
    groups: list               # [([load ops], their loop or None)]
    span: tuple                # (first, last) top-level item storing or loading it
    ready_span: tuple          # (first store, first load by the consumer) top-level items


def _transfers(builder) -> dict:
    """{workspace: Transfer} of one region's workspaces the other core loads."""
    events = {}
    index = {id(it): i for i, it in enumerate(builder.items)}
    top = {id(op): index[id(it)] for op, it in flat_ops(builder.items)}
    for op, scope in scoped_ops(builder.items):
        if op.eqn.prim is T.tile_store_p and op.writes[0][0] == "gm":
            ws, kind = op.writes[0][1], "store"
        elif op.eqn.prim is T.tile_load_p:
            ws, kind = op.reads[0][1], "load"
        else:
            continue
        events.setdefault(ws, []).append((kind, op, scope))
    out = {}
    for ws, evs in events.items():
        sts = [(op, sc) for kind, op, sc in evs if kind == "store"]
        if not sts:
            continue
        producer = sts[0][0].core
        groups = _load_groups(evs, producer)
        if groups:
            at = [top[id(op)] for _, op, _ in evs]
            out[ws] = Transfer(producer, groups[0][0][0].core, sts, groups, (min(at), max(at)),
                               (top[id(sts[0][0])], top[id(groups[0][0][0])]))
    return out


def _assign_pairs(transfers, reserved, name, source, skip=(), copies=()) -> dict:
    """{workspace: (ready id, free id)} for the workspaces not in ``skip``: a fresh pair of
    the ids not ``reserved`` while they last, then one whose same-direction workspaces'
    lifetimes do not overlap this one's in any region (module docstring), the one freed
    longest ago. A workspace of several ``copies`` (credits per program) shares no pair."""
    order = [ws for ws in dict.fromkeys(ws for t in transfers for ws in t) if ws not in skip]
    ids = [f for f in range(MAX_CROSS_FLAGS) if f not in reserved]
    pairs = []                       # [(ids, [workspaces of one direction])]
    flags = {}
    for ws in order:
        producer = _producer(transfers, ws)
        if 2 * (len(pairs) + 1) <= len(ids):
            pairs.append(((ids[2 * len(pairs)], ids[2 * len(pairs) + 1]), []))
            choice = len(pairs) - 1
        else:
            free = [k for k, (_, members) in enumerate(pairs)
                    if ws not in copies and
                    all(m not in copies and _producer(transfers, m) == producer and
                        not _overlap(transfers, ws, m) for m in members)]
            if not free:
                raise _too_many(name, source)
            choice = min(free, key=lambda k: _last_end(transfers, pairs[k][1]))
        pairs[choice][1].append(ws)
        flags[ws] = pairs[choice][0]
    return flags


def _assign_ready(transfers, once, taken, name, source) -> dict:
    """{workspace: ready id} of the workspaces stored once per program: an id is busy from
    the store to the first load, so workspaces whose such spans do not overlap in any region
    share one."""
    ids = [f for f in range(MAX_CROSS_FLAGS) if f not in taken]
    members = {f: [] for f in ids}
    flags = {}
    for ws in (w for w in dict.fromkeys(w for t in transfers for w in t) if w in once):
        free = [f for f in ids if not any(_overlap(transfers, ws, m, _ready_span)
                                          for m in members[f])]
        if not free:
            raise _too_many(name, source)
        f = free[0]
        members[f].append(ws)
        flags[ws] = f
    return flags


def _ready_span(entry) -> tuple:
    return entry.ready_span


def _too_many(name, source):
    return TileError(
        f"kernel {name}: more than {MAX_CROSS_FLAGS // 2} cube <-> vector transfers in "
        f"flight at once (GM workspaces, each with a ready and a free flag of the "
        f"{MAX_CROSS_FLAGS} cross-core flags, shared only by workspaces whose lifetimes do not "
        f"overlap); fuse some of the kernel's steps, or keep a loop rolled", source)


def _producer(transfers, ws) -> str:
    producers = {t[ws].producer for t in transfers if ws in t}
    assert len(producers) == 1, f"workspace {ws} changed direction"
    return producers.pop()


def _overlap(transfers, a, b, span=lambda entry: entry.span) -> bool:
    """Whether workspaces ``a`` and ``b`` are live at once (``span``) in some region."""
    for t in transfers:
        if a in t and b in t:
            (lo_a, hi_a), (lo_b, hi_b) = span(t[a]), span(t[b])
            if lo_a <= hi_b and lo_b <= hi_a:
                return True
    return False


def _last_end(transfers, members) -> int:
    """When the last of ``members`` is done (the pair freed earliest: the store that reuses
    it waits least)."""
    return max(t[m].span[1] for t in transfers for m in members if m in t)


def _load_groups(events, producer) -> list:
    """The other core's loads of one workspace, grouped, each with its loop (or None): a
    group ends at a store or where the loads leave their scope."""
    groups, scope = [], False
    for kind, op, sc in events:
        if kind == "store":
            scope = False
        elif op.core != producer:
            if groups and scope is sc:
                groups[-1][0].append(op)
            else:
                groups.append(([op], sc))
                scope = sc
    return groups
