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
from ptojax.kernel.primitives import kernel_fori_p, loop_body
from ptojax.kernel.values import Value, idx
from ptojax.ops import arithmetic as ar
from ptojax.ops.linalg import dot_general_p
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
    ``emit``, ``scalar_op``, ``as_scalar``, ``workspace``, ``_ws_loop`` and ``_uses``)."""
    _c2v: dict     # loop result atom -> the C2vCarry it is in

    def _c2v_ok(self, eqn, value, body, i, lo, hi) -> bool:
        """Whether loop ``eqn``'s c2v carry ``i`` can live in two copies. The flag counts pair
        the n-th store with the n-th group of the vector unit's loads (and a program's
        credits come back only when they balance), so every value stored there must be
        loaded once: the initial value is a matmul result (stored before the loop), a value
        a loop before carried so, or -- in a loop of one step that does not read the carry --
        a value never stored; each step reads the carry (loading the value stored the step
        before); a loop passing it through stores nothing; and the loop's result is loaded
        once after it (``_loaded_once_after``). Kernels with one region only (every region
        would have to agree on the copies)."""
        if self.k.bodies != 1:
            return False
        var, out, result = body.invars[1 + i], body.outvars[i], eqn.outputs[i]
        read = any(var in e.inputs for e in body.eqns)
        stored = value.kind == "acc" or value.kind == "window" and value.ref in self._c2v
        if out is var:
            return stored and (not self._uses.get(result) if read else
                               self._loaded_once_after(result))
        if not self._loaded_once_after(result):
            return False
        if read:
            return stored
        steps = [self.as_scalar(b) for b in (lo, hi)]
        return not stored and value.kind != "gm" and \
            all(type(b) is Literal for b in steps) and \
            int(steps[1].value) == int(steps[0].value) + 1

    def _loaded_once_after(self, var) -> bool:
        """Whether the running body's one use of loop result ``var`` loads it once on the
        vector unit: a vector operation, or a loop whose body reads the carry with vector
        operations only (or passes it through unread to a result loaded so)."""
        uses = self._uses.get(var, [])
        if len(uses) != 1 or uses[0].inputs.count(var) != 1 or uses[0].prim is dot_general_p:
            return False
        e = uses[0]
        if e.prim is not kernel_fori_p:
            return True
        n, k = e.params["num_carry"], e.inputs.index(var) - 2
        if not 0 <= k < n:
            return False                # a loop invariant: the cube may read it
        body = loop_body(e.params)
        carry = body.invars[1 + k]
        readers = [x for x in body.eqns if carry in x.inputs]
        if readers:
            return not any(x.prim in (dot_general_p, kernel_fori_p) for x in readers)
        return body.outvars[k] is carry and self._loaded_once_after(e.outputs[k])

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
