"""A ``pto.kernel`` loop carry in two copies of a cube -> vector GM workspace (CANN
FlashAttentionScore's ping-pong): a matmul result carried to the next step and read there
only by the vector unit (``carries.c2v_carries``). The cube stores step j's value into copy
``(slot + j - start + 1) % 2`` right after its matmul; the vector unit loads step j-1's from
copy ``(slot + j - start) % 2`` at its first use, so the cube runs a step ahead. The
workspace's free flag holds a credit per copy for each program (``lower/cross_core.py``).
``C2vCarryLowering`` is part of ``kernel/lower.py``'s ``BodyLowering``."""
from __future__ import annotations

from dataclasses import dataclass

from ptojax.ir.core import Literal
from ptojax.kernel.values import Value, idx
from ptojax.ops import arithmetic as ar
from ptojax.tile import ops as T
from ptojax.tile.memory import align_up


@dataclass(frozen=True)
class C2vCarry:
    """Where a c2v carry lives: this core's part of its workspace starts at ``row``, each
    of its two copies ``rows`` rows; the value is in copy ``slot`` (a scalar atom)."""
    row: object
    rows: int
    view: tuple
    slot: object


class C2vCarryLowering:
    """The two-copy c2v carry methods of ``BodyLowering`` (which provides ``k``, ``scope``,
    ``emit``, ``scalar_op``, ``as_scalar``, ``workspace`` and ``_ws_loop``)."""
    _c2v: dict     # loop result atom -> the C2vCarry it is in

    def _c2v_init_ok(self, value, body, i, lo, hi) -> bool:
        """Whether a c2v carry's initial value can be in its workspace: a matmul result, a
        value a loop before carried so, or a value the loop never reads (literal bounds,
        at least one step, the body not reading the carry). Kernels with one region only
        (every region would have to agree on the workspace's two copies)."""
        if self.k.bodies != 1:
            return False
        if value.kind == "acc" or value.kind == "window" and value.ref in self._c2v:
            return True
        steps = [self.as_scalar(b) for b in (lo, hi)]
        return value.kind != "gm" and all(type(b) is Literal for b in steps) and \
            int(steps[1].value) > int(steps[0].value) and \
            not any(body.invars[1 + i] in e.inputs for e in body.eqns)

    def _carry_in_c2v(self, value, var):
        """(initial atom, form) of a c2v carry: copy 0 of a two-copy workspace holds the
        initial value (stored here by the cube), or the copy a loop before left it in."""
        if value.kind == "window" and value.ref in self._c2v:
            return value.ref, self._c2v[value.ref]
        m, n = var.type.shape
        ws, view, row = self.workspace(m, n, var.type.dtype, "c2v", depth=2)
        self._ws_loop.pop()          # no later loop reuses it for its own transfers
        form = C2vCarry(row, align_up(m, 16), view, idx(0))
        if value.kind != "acc":      # never read (``_c2v_init_ok``)
            return ws, form
        stored = self.emit(T.tile_store_p, [ws, value.atom, row, idx(0)], view=view,
                           atomic=False)
        return stored, form

    def _c2v_row(self, form, parity):
        """The first row of the copy ``parity % 2`` of a c2v carry's workspace part."""
        slot = self.scalar_op(ar.rem_p, parity, idx(2))
        return self.scalar_op(ar.add_p, form.row, self.scalar_op(ar.mul_p, slot, idx(form.rows)))

    def _c2v_value(self, var, carry, form, step, first, through):
        """The carry entering step ``step``: in copy ``(slot + step - first) % 2`` (a carry
        passed through stays in copy ``slot``)."""
        t = var.type
        parity = form.slot if through else \
            self.scalar_op(ar.add_p, form.slot, self.scalar_op(ar.sub_p, step, first))
        return Value("window", t.shape, t.dtype, self.scope, ref=carry,
                     starts=(self._c2v_row(form, parity), idx(0)), sizes=t.shape)

    def _c2v_out(self, value, carry, form, step, first):
        """Store the step's new value (a matmul result) into the other copy."""
        parity = self.scalar_op(ar.add_p, form.slot, self.scalar_op(ar.sub_p, step, first))
        row = self._c2v_row(form, self.scalar_op(ar.add_p, parity, idx(1)))
        return self.emit(T.tile_store_p, [carry, value.atom, row, idx(0)], view=form.view,
                         atomic=False)

    def _c2v_result(self, var, result, form, first, stop, through):
        """A loop's c2v carry result: in copy ``(slot + max(stop - first, 0)) % 2``."""
        steps = self.scalar_op(ar.max_p, self.scalar_op(ar.sub_p, stop, first), idx(0))
        slot = form.slot if through else \
            self.scalar_op(ar.rem_p, self.scalar_op(ar.add_p, form.slot, steps), idx(2))
        out = C2vCarry(form.row, form.rows, form.view, slot)
        self._c2v[result] = out
        t = var.type
        return Value("window", t.shape, t.dtype, self.scope, ref=result,
                     starts=(self._c2v_row(out, slot), idx(0)), sizes=t.shape)
