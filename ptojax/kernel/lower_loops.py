"""Loops in a ``pto.kernel`` body: ``LoopLowering``, the part of ``kernel/lower.py``'s
``BodyLowering`` that lowers a ``kernel_fori`` to a ``tile_loop``. Each carry takes a
form: an L0C accumulator (matmuls accumulated from zeros; the first step runs before the
loop), a v2c workspace (a carry only matmuls read), two c2v workspace copies
(``kernel/c2v_lowering.py``), a GM ref, or a UB tile of a layout that the loop updates in
place (new values computed elsewhere are copied into the carry's buffer). Values defined
outside the loop are imported into its body as invariants (``Scope.atom``); a top-level
loop reuses the workspaces of the loop before it."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import ShapeError, UnsupportedError
from ptojax.ir.core import IR, Literal, Var
from ptojax.ir.types import TensorType, TileType
from ptojax.kernel.c2v_lowering import C2vCarry
from ptojax.kernel.carries import (accumulated_carries, c2v_carries, handed_on,
                                   workspace_carries)
from ptojax.kernel.primitives import loop_body
from ptojax.kernel.values import COL, FULL, I32, ROW, Scope, Value, idx, layout_of
from ptojax.ops import arithmetic as ar
from ptojax.ops.broadcast import broadcast_in_dim_p
from ptojax.ops.shape import expand_dims_p, reshape_p
from ptojax.tile import ops as T


class LoopLowering:
    """The loop methods of ``BodyLowering`` (which provides ``top``, ``scope``,
    ``acc_into``, ``acc_adds``, ``source``, ``_ws_loop``, ``_ws_reuse``, ``_uses``,
    ``_carried``, ``_early_c2v``, ``_early_store``, ``_ub_carry_outs``, ``emit``, ``error``,
    ``run``, ``_literal``, ``as_scalar``, ``ub``, ``_materialize``, ``workspace`` and the
    c2v carry methods of ``C2vCarryLowering``)."""

    # --- loops -------------------------------------------------------------------------------
    def fori(self, eqn, vals):
        n = eqn.params["num_carry"]
        body = loop_body(eqn.params)
        lo, hi, *args = vals
        carries, consts = args[:n], args[n:]
        accs = accumulated_carries(body, n, carries)
        steps = [self.as_scalar(b) for b in (lo, hi)]
        if accs and all(type(b) is Literal for b in steps) and \
                int(steps[1].value) > int(steps[0].value):
            return self._fori_in_l0c(eqn, body, n, int(steps[0].value), int(steps[1].value),
                                     carries, consts, accs)
        return self._fori(eqn, body, n, lo, hi, carries, consts, {})

    def _fori_in_l0c(self, eqn, body, n, lo, hi, carries, consts, accs):
        """A loop whose carries accumulate matmuls (``acc + K.dot(a, b)``, from zeros) keeps
        them in L0C: the first step runs before the loop with TMATMUL, the others
        accumulate with TMATMUL_ACC into the carried L0C tile."""
        env = {body.invars[0]: self._literal(idx(lo))}
        env.update(zip(body.invars[1:1 + n], carries))
        env.update(zip(body.invars[1 + n:], consts))
        self.acc_adds.update((add, d) for _, add, d in accs.values())
        self.run(body.eqns, env)
        self.source = eqn.source
        first = [env[o] if type(o) is Var else self._literal(o) for o in body.outvars]
        if hi == lo + 1:
            return first
        return self._fori(eqn, body, n, self._literal(idx(lo + 1)), self._literal(idx(hi)),
                          first, consts, accs)

    def _fori(self, eqn, body, n, lo, hi, carries, consts, accs):
        in_ws = {i for i in workspace_carries(body, n, carries) - set(accs)
                 if handed_on(body, i, eqn.outputs[i], self._uses)}
        in_c2v = {i for i in c2v_carries(body, n) - set(accs) - in_ws
                  if self._c2v_ok(eqn, carries[i], body, i, lo, hi)}
        top_level = self.scope is self.top
        if top_level:       # (a carry's workspace may be one the loop before used)
            self._ws_reuse, self._ws_loop = _distinct_workspaces(self._ws_loop), []
        inits = [(c.atom, "acc") if i in accs else
                 self._carry_in_workspace(c) if i in in_ws else
                 self._carry_in_c2v(c, body.invars[1 + i]) if i in in_c2v else
                 self._carry_init(c, v, body)
                 for i, (c, v) in enumerate(zip(carries, body.invars[1:1 + n]))]
        first = self.as_scalar(lo)
        through = {body.invars[1 + i] for i in in_c2v if body.outvars[i] is body.invars[1 + i]}
        outer = self.scope
        inner = Scope(outer)
        self.scope = inner
        mark = len(self._ws_loop)
        ub_outs = set()
        try:
            kvar = Var(I32)
            inner.defined.add(kvar)
            env = {body.invars[0]: Value("scalar", (), dtypes.int32, inner, atom=kvar)}
            carry_vars = []
            for v, (atom, form) in zip(body.invars[1:1 + n], inits):
                cv_ = Var(atom.type)
                inner.defined.add(cv_)
                carry_vars.append(cv_)
                env[v] = self._c2v_value(v, cv_, form, kvar, first, v in through) if \
                    isinstance(form, C2vCarry) else self._carry_value(v, cv_, form, inner)
            env.update(zip(body.invars[1 + n:], consts))
            for i, (dot, _, _) in accs.items():
                self.acc_into[dot] = env[body.invars[1 + i]]
            for i in in_ws:
                self._early_store[body.outvars[i]] = (carry_vars[i], inits[i][1])
            for i in in_c2v:      # stored as soon as the cube computes it
                if body.outvars[i] is not body.invars[1 + i]:
                    self._early_c2v[body.outvars[i]] = (carry_vars[i], inits[i][1], kvar, first)
            ub_outs = {o for o, (_, form) in zip(body.outvars, inits) if type(o) is Var
                       and isinstance(form, str) and form not in ("acc", "gm")}
            self._ub_carry_outs |= ub_outs
            self.run(body.eqns, env)
            self.source = eqn.source
            outs = [c if o in through else self.scope.atom(env[o].made[("c2v carry", c)])
                    if isinstance(form, C2vCarry)
                    else self._carry_out(env[o] if type(o) is Var else self._literal(o), atom,
                                         form, c)
                    for o, (atom, form), c in zip(body.outvars, inits, carry_vars)]
            outs = [self._copy_if_read_late(o, c, inner) for o, c in zip(outs, carry_vars)]
            outs = self._in_own_buffers(outs, carry_vars, [f for _, f in inits], inner)
            if not top_level:
                # a nested loop's own transfers (of values of its body) are done when it
                # ends: the rest of the enclosing step reuses their workspaces
                self._ws_reuse = [w for w in self._ws_loop[mark:] if w[2] is inner] + \
                    self._ws_reuse
        finally:
            self.scope = outer
            for i in in_ws:
                self._early_store.pop(body.outvars[i], None)
            for i in in_c2v:
                self._early_c2v.pop(body.outvars[i], None)
            self._ub_carry_outs -= ub_outs
            if top_level:
                self._ws_reuse = []
        imported = list(inner.imported.items())
        body_ir = inner.b.build([kvar, *carry_vars, *(v for _, v in imported)], outs)
        bounds, params = [], {}
        for name, b in (("start", lo), ("stop", hi)):
            a = self.as_scalar(b)
            if type(a) is Literal:
                params[name] = int(a.value)
            else:
                params[name] = None
                bounds.append(a)
        results = self.emit(T.tile_loop_p, [*(a for a, _ in inits),
                                            *(o for o, _ in imported), *bounds],
                            body=body_ir, num_carry=n, **params)
        return [self._c2v_result(v, r, form, first, self.as_scalar(hi), v in through)
                if isinstance(form, C2vCarry) else self._carry_value(v, r, form, self.scope)
                for v, r, (_, form) in zip(body.invars[1:1 + n], results, inits)]

    def _copy_if_read_late(self, out, carry, scope):
        """A carry's new value takes the carry's buffer; if the old value is read after the
        new one is computed (``alpha = exp(m - m_new)``), the new value is computed elsewhere
        and copied into the carry's buffer at the end of the step."""
        if out is carry or not isinstance(out.type, TileType):
            return out
        eqns = scope.b.eqns
        at = next((i for i, e in enumerate(eqns) if out in e.outputs), None)
        if at is None or not any(carry in e.inputs for e in eqns[at + 1:]):
            return out
        return self._copy(out)

    def _in_own_buffers(self, outs, carries, forms, scope):
        """The new values of a step's UB carries, each copied into a tile of its own where it
        cannot take its carry's buffer as it is (``_takes_carry_buffer``): the loop updates
        every carry in place, its buffer holding the next step's value."""
        taken = set()
        for i, (out, carry, form) in enumerate(zip(outs, carries, forms)):
            if not isinstance(form, str) or form in ("acc", "gm") or \
                    not isinstance(out.type, TileType):
                continue
            if not _takes_carry_buffer(out, carry, scope, taken):
                out = outs[i] = self._copy(out)
            taken.add(out)
        return outs

    def _carry_init(self, value, var, body):
        """(initial atom, form) of a loop carry: a GM ref, or a UB tile of a layout (a 1-d
        carry is a row vector unless the body uses it as a column)."""
        t = var.type
        if value.kind == "gm":
            return value.atom, "gm"
        if t.shape == ():
            raise self.error(UnsupportedError, (
                "a scalar loop carry: kernel loops carry tiles (and refs); compute scalars "
                "from the loop index instead"))
        if value.kind == "tile":
            layout = value.layout
        elif len(t.shape) == 2:
            layout = layout_of(t.shape)
        else:
            layout = _vector_use(body, var)
        return self._fresh_tile(value, layout), layout

    def _fresh_tile(self, value, layout):
        """A UB tile of ``value`` that nothing else reads: the loop updates a carry's buffer in
        place, so two carries (``(zeros, zeros)``) or a value used after the loop must not
        share it."""
        if value.kind == "bcast" and value.layout == "scalar":
            return self._materialize(value, layout)              # a fill of its own
        return self._copy(self.ub(value, layout))

    def _copy(self, tile):
        """A copy of a UB tile (times one: the vector unit has no plain move)."""
        dtype = tile.type.dtype
        return self.emit(T.ELEMENTWISE_TILE_PRIMS[ar.mul_p],
                         [tile, Literal(np.asarray(1, dtype), TensorType((), dtype))])

    def _carry_in_workspace(self, value):
        """(initial atom, form) of a carry only matmuls read: it lives in a v2c workspace
        (stored where the body computes it, loaded by the cube at its first use in the next
        step), so the cube need not wait for the vector unit to finish the step. A value
        carried so by the loop before keeps its workspace."""
        if value.kind == "window" and value.ref in self._carried:
            return value.ref, self._carried[value.ref]
        m, n = value.shape
        ws, view, row = self.workspace(m, n, value.dtype, "v2c")
        self._ws_loop.pop()          # no later loop reuses it for its own transfers
        form = ("ws", row, view)
        stored = self.emit(T.tile_store_p, [ws, self.ub(value, FULL), row, idx(0)], view=view,
                           atomic=False)
        self._carried[stored] = form
        return stored, form

    def _store_carry(self, value, carry, form):
        """Store a loop body's new value of a workspace carry into the carry's workspace."""
        if value.kind == "window" and value.ref is carry:
            return
        if ("ws", carry) not in value.made:
            _, row, view = form
            value.made[("ws", carry)] = self.emit(
                T.tile_store_p, [carry, self.ub(value, FULL), row, idx(0)], view=view,
                atomic=False)

    def _carry_value(self, var, atom, form, scope):
        t = var.type
        if isinstance(form, tuple):
            self._carried[atom] = form
            return Value("window", t.shape, t.dtype, scope, ref=atom, starts=(form[1], idx(0)),
                         sizes=t.shape)
        if form == "acc":
            return Value("acc", t.shape, t.dtype, scope, atom=atom)
        if form == "gm":
            return Value("gm", t.shape, t.dtype, scope, atom=atom)
        return Value("tile", t.shape, t.dtype, scope, atom=atom, layout=form)

    def _carry_out(self, value, init_atom, form, carry):
        if isinstance(form, tuple):
            if value.kind == "window" and value.ref is carry:
                return carry
            self._store_carry(value, carry, form)
            return self.scope.atom(value.made[("ws", carry)])
        if form == "acc":
            return self.scope.atom(value.atom)
        if form == "gm":
            return self.scope.atom(value.atom)
        atom = self.scope.atom(self.ub(value, form))
        if atom.type != init_atom.type:
            raise self.error(ShapeError, (
                f"a loop carry changes from {init_atom.type} to {atom.type} in the body"))
        return atom


def _takes_carry_buffer(out, carry, scope, taken) -> bool:
    """Whether a loop body's new value ``out`` of a UB carry can live in the carry's buffer
    as it is: the carry passed through, a tile the step computes (not the new value of
    another carry), or the result of a nested loop (or accumulation) updating the carry's own
    buffer. A value from outside the step or another carry has a buffer of its own, and a
    nested loop's result lives in its own carry's buffer: a copy takes the carry's."""
    if out is carry:
        return True
    if out in taken:
        return False
    defs = {o: e for e in scope.b.eqns for o in e.outputs}
    a = out
    while a in defs and defs[a].prim in (T.tile_loop_p, T.tile_matmul_acc_p):
        e = defs[a]
        a = e.inputs[e.outputs.index(a)] if e.prim is T.tile_loop_p else e.inputs[0]
    return a is carry or (a is out and out in defs)


def _vector_use(body: IR, var) -> str:
    """How a loop body uses a 1-d carry: as a column vector if it broadcasts or reshapes it
    to [1, C], else as a row vector (the statistics of online softmax)."""
    for e in body.eqns:
        if var not in e.inputs or not e.outputs:
            continue
        shape = e.outputs[0].type.shape
        if e.prim in (reshape_p, expand_dims_p) and len(shape) == 2 and shape[0] == 1:
            return COL
        if e.prim is broadcast_in_dim_p and tuple(e.params["broadcast_dimensions"]) == (1,):
            return COL
    return ROW


def _distinct_workspaces(used) -> list:
    """The workspaces a loop used, each once, in order of first use."""
    seen = set()
    return [w for w in used if not (w[0] in seen or seen.add(w[0]))]
