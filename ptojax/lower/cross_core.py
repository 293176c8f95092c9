"""Cube <-> vector synchronization of a ``pto.kernel`` (``program_schedule``): ready/free
cross-core flags for every GM workspace one core stores and the other loads, at any loop
nesting."""
from __future__ import annotations

from ptojax.errors import TileError
from ptojax.lower.schedule import CrossSync
from ptojax.lower.schedule_items import scoped_ops
from ptojax.tile import ops as T

MAX_CROSS_FLAGS = 16         # cross-core flag ids per kernel (FFTS)


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
    its copy parity from 0."""
    copies = {f"ws{i}": d for i, d in enumerate(depths)}
    flags = {}
    for b in builders:
        events = {}
        for op, scope in scoped_ops(b.items):
            if op.eqn.prim is T.tile_store_p and op.writes[0][0] == "gm":
                events.setdefault(op.writes[0][1], []).append(("store", op, scope))
            elif op.eqn.prim is T.tile_load_p:
                events.setdefault(op.reads[0][1], []).append(("load", op, scope))
        for name, evs in events.items():
            sts = [op for kind, op, _ in evs if kind == "store"]
            if not sts:
                continue
            producer = sts[0].core
            groups = _load_groups(evs, producer)
            if not groups:
                continue
            consumer = groups[0][0][0].core
            if name not in flags:
                flags[name] = (2 * len(flags), 2 * len(flags) + 1, producer)
                if 2 * len(flags) > MAX_CROSS_FLAGS:
                    raise TileError(
                        f"kernel {name}: more than {MAX_CROSS_FLAGS // 2} cube <-> vector "
                        f"transfers (GM workspaces, each with a ready and a free flag of the "
                        f"{MAX_CROSS_FLAGS} cross-core flags); fuse some of the kernel's "
                        f"steps, or keep a loop rolled (a static loop's derivative is "
                        f"unrolled into straight-line transfers)", source)
                if copies.get(name, 1) == 1:
                    # one credit per workspace, also when sequential loops share it
                    prologue.append((consumer, CrossSync("set", flags[name][1], "MTE2")))
                    epilogue.append((producer, CrossSync("wait", flags[name][1])))
            ready, free, first_producer = flags[name]
            if copies.get(name, 1) > 1:
                b.entry += [(consumer, CrossSync("set", free, "MTE2"))] * copies[name]
                b.exit += [(producer, CrossSync("wait", free))] * copies[name]
            assert producer == first_producer, f"workspace {name} changed direction"
            for st in sts:
                st.before.append((producer, CrossSync("wait", free)))
                st.after.append((producer, CrossSync("set", ready, st.pipe)))
            stored_in = {id(sc) for kind, _, sc in evs if kind == "store"}
            for lds, scope in groups:
                # a loop that only reads the value (a carry it passes through) waits for it
                # once, before the loop, and frees it after
                first, last = (scope, scope) if scope is not None and \
                    id(scope) not in stored_in else (lds[0], lds[-1])
                first.before.append((consumer, CrossSync("wait", ready)))
                last.after.append((consumer, CrossSync("set", free, "MTE2")))


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

