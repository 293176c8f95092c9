"""The walk over a kernel schedule that the PTO-AS and PTO C++ printers share.

An ``Emitter`` writes indented lines and walks a ``KernelSchedule``: the kernel's sections,
each section's prologue flags, tile loop and epilogue flags; per tile the grid regions (one
branch each); per region its scalar lets, cross-core waits, tile declarations and statements;
per K step its lets, tile declarations and statements. Each statement kind of the schedule
goes to one method. A dialect subclasses ``Emitter`` and supplies the syntax:

kernel and sections   ``begin_kernel``, ``end_kernel``, ``begin_section``, ``tile_loop`` (the
                      loop over a block's tiles; calls ``regions``), ``end_section``
regions               ``branch(i, regions)`` (open region i's branch), ``end_branches``,
                      ``enter_region(i, reg)`` (its names and comment), ``subblock_guard`` /
                      ``end_subblock_guard`` (a vector sub-block skips the other's tiles)
tiles                 ``tile_type(decl, row_view)``, ``address(decl, slot)``,
                      ``place(name, type, address)``
operands              ``literal(lit)``; ``local(name)``: the dialect's name for a schedule
                      name (default: the same)
statements            ``flag``, ``barrier``, ``cross_sync``, ``let`` (a syntax table keyed by
                      the Let's Primitive), ``scalar_load``, ``window``, ``instruction`` (the
                      text of an Instr, after its windows), ``static_k``, ``k_loop`` and a
                      pto.kernel's ``loop`` (all call ``k_body``), ``core_block`` (one core's
                      statements of a pto.kernel body; ``decls`` places a region's tiles)
"""
from __future__ import annotations

from ptojax.ir.core import Literal
from ptojax.ir.pto import Instr, RowView, Scratch
from ptojax.lower.schedule import (Barrier, CoreBlock, CrossSync, Flag, KLoop, Let, Loop,
                                   ScalarLoad, StaticK, Window)

# the method for each statement kind of a schedule
STATEMENTS = {Flag: "flag", Barrier: "barrier", CrossSync: "cross_sync", Let: "let",
              ScalarLoad: "scalar_load", Instr: "instr", StaticK: "static_k",
              KLoop: "k_loop", CoreBlock: "core_block", Loop: "loop"}


class Emitter:
    indent = "    "
    slot = None          # the current tile's buffer slot, as the dialect writes it

    def __init__(self, sched, depth=0):
        self.sched = sched
        self.lines = []
        self.depth = depth
        self.reg = None     # the region being emitted

    # --- writing -----------------------------------------------------------------------------
    def w(self, text=""):
        self.lines.append(self.indent * self.depth + text if text else "")

    def open(self, text):
        self.w(f"{text} {{" if text else "{")
        self.depth += 1

    def close(self, text="}"):
        self.depth -= 1
        self.w(text)

    def reopen(self, text):
        """Close a block and open the next at the same depth (``} else {``)."""
        self.close(text)
        self.depth += 1

    # --- the walk ----------------------------------------------------------------------------
    def kernel(self):
        self.begin_kernel()
        for sec in self.sched.sections:
            self.section(sec)
        self.end_kernel()

    def section(self, sec):
        self.begin_section(sec)
        for x in sec.prologue:
            self.stmt(x)
        self.tile_loop(sec)
        for x in sec.epilogue:
            self.stmt(x)
        self.end_section(sec)

    def regions(self, sec):
        """One tile: each grid region in its branch."""
        for i, reg in enumerate(sec.regions):
            self.branch(i, sec.regions)
            self.region(sec, i, reg)
        self.end_branches(sec.regions)

    def region(self, sec, i, reg):
        self.reg = reg
        self.enter_region(i, reg)
        lets, waits, rest = region_order(reg.stmts)
        for x in lets + waits:
            self.stmt(x)
        if sec.split_subblocks:
            self.subblock_guard()
        self.decls(reg.decls, self.slot)
        for x in rest:
            self.stmt(x)
        if sec.split_subblocks:
            self.end_subblock_guard()

    def k_body(self, decls, stmts, kslot):
        """One K step: its scalars (lets, scalar loads), then its tiles (at buffer slot
        ``kslot``), then the rest."""
        for x in stmts:
            if isinstance(x, (Let, ScalarLoad)):
                self.stmt(x)
        self.decls(decls, kslot)
        for x in stmts:
            if not isinstance(x, (Let, ScalarLoad)):
                self.stmt(x)

    def decls(self, decls, slot):
        for d in decls:
            self.decl(d, slot)

    def stmt(self, x):
        getattr(self, STATEMENTS[type(x)])(x)

    # --- tiles, operands and instructions ----------------------------------------------------
    def decl(self, d, slot):
        """A tile at its address in buffer slot ``slot``, and its row view at the same one."""
        addr = self.address(d, slot)
        name = self.local(d.name)
        self.place(name, self.tile_type(d), addr)
        if d.row_view:
            self.place(name + "_r", self.tile_type(d, row_view=True), addr)

    def local(self, name):
        return name

    def atom(self, a):
        """The dialect's text for an operand: a literal, a variable, a view or a window."""
        if isinstance(a, Literal):
            return self.literal(a)
        if isinstance(a, RowView):
            return self.atom(a.var) + "_r"
        if isinstance(a, Window):
            return self.local(a.name)
        key = ("scratch", a.eqn) if isinstance(a, Scratch) else a
        return self.local(self.reg.names[key])

    def instr(self, x):
        for g in x.srcs:
            if isinstance(g, Window):
                self.window(g)
        self.w(self.instruction(x))


def subblock_runs(stmts):
    """A mixed pto.kernel's vector statements as runs ``(sub_block_0_only, statements)``.

    The vector side computes on sub-block 0, but an A2 mixed kernel launches both AIVs of
    each AIC (AIC:AIV 1:2; CANN's KERNEL_TYPE_MIX_AIC_1_1 is "reserved, not supported"), and
    a mode-2 cross-core flag (CANN CrossCoreSetFlag) counts for the cube only once both
    AIVs have set it, while a cube set adds to both AIVs' counters (at most 16 pending). So
    both sub-blocks run every cross-core set and wait, in the same order, and only the rest
    is sub-block 0's: without sub-block 1's sets the cube would wait forever."""
    runs = []
    for s in stmts:
        guarded = not isinstance(s, CrossSync)
        if runs and runs[-1][0] == guarded:
            runs[-1][1].append(s)
        else:
            runs.append((guarded, [s]))
    return runs


def region_order(stmts):
    """A region's statements as (scalars: lets and scalar operand loads, cross-core waits,
    the rest), each in schedule order (a let may use a loaded scalar: ``n - 1``)."""
    def is_wait(x):
        return isinstance(x, CrossSync) and x.action == "wait"
    lets = [x for x in stmts if isinstance(x, (Let, ScalarLoad))]
    waits = [x for x in stmts if is_wait(x)]
    rest = [x for x in stmts if not isinstance(x, (Let, ScalarLoad)) and not is_wait(x)]
    return lets, waits, rest


def grid_conditions(reg):
    """The conditions selecting a region's tiles (``tile_ops.Condition``: an expression of
    the tile index ti or tj, compared with lt or eq)."""
    return list(reg.conditions)
