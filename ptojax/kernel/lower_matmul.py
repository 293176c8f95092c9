"""Matmuls in a ``pto.kernel`` body: ``MatmulLowering``, the part of ``kernel/lower.py``'s
``BodyLowering`` that lowers a 2-d ``dot_general`` to TLOAD into L1, TEXTRACT into
L0A/L0B and TMATMUL (TMATMUL_ACC for the further K steps, or into a loop's L0C
accumulator carry) into L0C, split along K into steps whose double-buffered operands fit
L0. An operand computed by the vector unit reaches the cube through a v2c workspace, a
matmul result through a c2c one; a result a vector instruction reads is stored to its c2v
workspace right after the matmul."""
from __future__ import annotations

from ptojax import dtypes
from ptojax.errors import DtypeError, TileError, UnsupportedError
from ptojax.kernel.primitives import kernel_fori_p, kernel_store_p
from ptojax.kernel.values import cube_shape, idx, layout_of
from ptojax.ops import arithmetic as ar
from ptojax.ops import convert as cv
from ptojax.ops.linalg import dot_general_p
from ptojax.tile import ops as T
from ptojax.tile.memory import align_up
from ptojax.tile.rules import CUBE_DTYPES


class MatmulLowering:
    """The matmul methods of ``BodyLowering`` (which provides ``target``, ``scope``,
    ``matmuls``, ``acc_into``, ``acc_adds``, ``_carried``, ``_uses``, ``_ub_carry_outs``,
    ``emit``, ``error``, ``in_scope_of``, ``new_value``, ``scalar_op``, ``geometry``, ``ub``,
    ``workspace`` and ``_acc_to_ws``)."""

    # --- matmuls -----------------------------------------------------------------------------
    def matmul(self, eqn, vals):
        (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
        a, b = vals
        at, bt = eqn.inputs[0].type, eqn.inputs[1].type
        if lb or rb or at.ndim != 2 or bt.ndim != 2:
            raise self.error(UnsupportedError, (
                f"dot_general of {at.shape} and {bt.shape} with dimension numbers "
                f"{eqn.params['dimension_numbers']}: kernels multiply 2-d tiles"))
        dt = at.dtype
        if dt != bt.dtype or dt.name not in CUBE_DTYPES or \
                dt.name not in self.target.cube_macs_per_cycle:
            raise self.error(DtypeError, (
                f"matmul of {dtypes.short_name(at.dtype)} and {dtypes.short_name(bt.dtype)} "
                f"tiles: the {self.target.name} cube multiplies "
                f"{', '.join(sorted(self.target.cube_macs_per_cycle))} tiles of one dtype. "
                f"Fix: convert both with .astype(float16) (or float32)"))
        a_t = lc[0] == 0          # the lhs is stored [K, M]
        b_t = rc[0] == 1          # the rhs is stored [N, K]
        if a.kind == "trans":
            a, a_t = a.src, not a_t
        if b.kind == "trans":
            b, b_t = b.src, not b_t
        m = at.shape[1] if lc[0] == 0 else at.shape[0]
        kk = at.shape[lc[0]]
        n = bt.shape[0] if rc[0] == 1 else bt.shape[1]
        a_src = self.cube_source(a, a_t)
        b_src = self.cube_source(b, b_t)
        into = self.acc_into.get(eqn.outputs[0])     # a loop's L0C accumulator carry
        acc = None if into is None else into.atom
        self.matmuls += 1          # each operand's K steps share its buffers
        # an operand the other core wrote (through a workspace) is loaded last: the cube
        # loads the other while it waits for that one
        a_last = self._from_other_core(a) and not self._from_other_core(b)
        steps = self._k_steps(m, kk, n, dt)
        keep = len(steps) == 1     # later K steps overwrite a step's L0 copy: not reusable
        for i, (k0, kc) in enumerate(steps):
            # a matmul split along K alternates its K steps between the two copies of each
            # operand's buffer, so K step i + 1's TEXTRACT overlaps K step i's TMATMUL
            copy = None if keep else i % 2
            stage_a, stage_b = (f"mm{self.matmuls}{x}" + ("" if keep else f"k{copy}")
                                for x in "ab")
            if a_last:
                b0 = self._operand_l0(b, b_src, (k0, 0), (kc, n), "L0B", stage_b, keep, copy)
            a0 = self._operand_l0(a, a_src, (0, k0), (m, kc), "L0A", stage_a, keep, copy)
            if not a_last:
                b0 = self._operand_l0(b, b_src, (k0, 0), (kc, n), "L0B", stage_b, keep, copy)
            acc = self.emit(T.tile_matmul_p, [a0, b0]) if acc is None else \
                self.emit(T.tile_matmul_acc_p, [acc, a0, b0])
        out = eqn.outputs[0].type
        value = self.new_value("acc", out.shape, out.dtype, atom=acc)
        if self._read_by_vector(eqn.outputs[0]):
            self._acc_to_ws(value)
        return value

    def _from_other_core(self, v) -> bool:
        """Whether a matmul operand reaches the cube from the vector unit (a UB value, or one
        carried in its workspace) rather than from an input."""
        return v.kind != "window" or v.ref in self._carried

    def _read_by_vector(self, var) -> bool:
        """Whether a vector instruction of this body reads the matmul result ``var`` (not
        only a matmul, a store to an output, a conversion or a loop's L0C accumulation), or
        it is the new value of a loop carry held in UB (loaded by the vector unit at the end
        of the step: stored at once, the cube does not hold it back behind later work)."""
        return var in self._ub_carry_outs or any(e.prim not in (dot_general_p, kernel_store_p, cv.convert_element_type_p,
                                  kernel_fori_p) and e not in self.acc_adds
                   for e in self._uses.get(var, ()))

    def _k_steps(self, m, k, n, dtype):
        """K steps whose double-buffered L0A/L0B operands each take at most a quarter of L0."""
        item = dtype.itemsize
        budget = min(self.target.capacity("L0A"), self.target.capacity("L0B")) // 4
        mp, np_ = align_up(m, 16), align_up(n, 16)
        if mp * 16 * item > budget or np_ * 16 * item > budget:
            raise self.error(TileError, (
                f"a matmul with {m} x {n} outputs does not fit {self.target.name}'s L0A/L0B "
                f"even 16 columns of K at a time; use blocks of at most "
                f"{budget // (16 * item)} rows/columns"))
        kc = 16
        while kc * 2 <= align_up(k, 16) and mp * kc * 2 * item <= budget and \
                kc * 2 * np_ * item <= budget:
            kc *= 2
        return [(k0, min(kc, k - k0)) for k0 in range(0, k, kc)]

    def cube_source(self, v, transposed):
        """Where the cube reads operand ``v`` (logical (rows, cols) as the matmul uses it):
        a GM window (ref or workspace) as (gm atom, view, r0, c0, transposed, rows, cols)."""
        key = ("cube", transposed)
        if key in v.made:
            return v.made[key]
        with self.in_scope_of(v):
            if v.kind == "window":
                view, r0, c0, rows, cols = self.geometry(v.ref.type, v.starts, v.sizes)
                if len(v.shape) != 2 or (rows, cols) != v.shape:
                    raise self.error(UnsupportedError, (
                        f"a {v.shape} window as a matmul operand: the cube reads 2-d windows"))
                src = (v.ref, view, r0, c0, transposed, rows, cols)
            else:
                if v.kind == "acc":
                    t, rows, cols = v.atom, *v.shape
                else:
                    if len(v.shape) != 2:
                        raise self.error(UnsupportedError, "matmul operands are 2-d tiles")
                    t = self.ub(v, layout_of(v.shape))
                    rows, cols = v.shape
                ws, view, row = self.workspace(rows, cols, v.dtype,
                                               "c2c" if v.kind == "acc" else "v2c")
                stored = self.emit(T.tile_store_p, [ws, t, row, idx(0)], view=view,
                                   atomic=False)
                src = (stored, view, row, idx(0), transposed, rows, cols)
        v.made[key] = src
        return src

    def _operand_l0(self, v, src, offset, extent, space, stage, keep=True, k_copy=None):
        """The operand's L0 tile for one K step, loaded where ``v`` was defined: a loop
        reuses an operand it did not compute (the query block of attention) every step. The
        K steps of one matmul share its L0 buffers (``stage``), so a tile of a matmul split
        into several steps is overwritten by a later step: it is extracted where it is used
        and not kept for reuse (``keep`` False), from the whole operand, which is loaded into
        L1 once where ``v`` was defined (L1 holds what L0 cannot: a loop-invariant query block
        split along K stays in L1 across the loop, as CANN's FlashAttentionScore keeps Q).
        Such K steps alternate between two single-copy buffers (``k_copy``, the K step's
        parity: ``stage`` names one), as CANN's L0A/L0B ping-pong: the next K step's
        TEXTRACT fills one while the TMATMUL reads the other."""
        key = ("l0", src[4], offset, extent, space)
        if key in v.made:
            return v.made[key]
        if not keep:
            return self._extract(self._whole_l1(v, src), offset, extent, space, stage, k_copy)
        with self.in_scope_of(v):
            v.made[key] = self._to_l0(src, offset, extent, space, stage)
        return v.made[key]

    def _whole_l1(self, v, src):
        """All of operand ``v`` in L1, loaded once where ``v`` was defined."""
        key = ("l1", src[4])
        if key not in v.made:
            gm, view, r0, c0, transposed, rows, cols = src
            if transposed:      # logical (rows, cols) = stored (cols, rows) window, transposed
                r0, c0, rows, cols = c0, r0, cols, rows
            phys, valid = cube_shape(rows, cols)
            with self.in_scope_of(v):
                v.made[key] = self.emit(T.tile_load_p, [gm, r0, c0], space="L1", shape=phys,
                                        valid=valid, view=view, transpose=transposed)
        return v.made[key]

    def _extract(self, l1, offset, extent, space, stage, k_copy):
        """TEXTRACT the (rows, cols) block at ``offset`` of an L1 tile to L0A/L0B."""
        phys, valid = cube_shape(*extent)
        return self.emit(T.tile_move_p, [l1], space=space, stage=stage, index=tuple(offset),
                         shape=phys, valid=valid, k_copy=k_copy)

    def _to_l0(self, src, offset, extent, space, stage):
        """TLOAD the (rows, cols) block at ``offset`` of the operand into L1, TEXTRACT it to
        L0A/L0B."""
        gm, view, r0, c0, transposed, _, _ = src
        dr, dc = offset
        rows, cols = extent
        if transposed:          # logical (rows, cols) = stored (cols, rows) window, transposed
            lr = self.scalar_op(ar.add_p, c0, idx(dr))
            lc_ = self.scalar_op(ar.add_p, r0, idx(dc))
        else:
            lr = self.scalar_op(ar.add_p, r0, idx(dr))
            lc_ = self.scalar_op(ar.add_p, c0, idx(dc))
        phys, valid = cube_shape(rows, cols)
        l1 = self.emit(T.tile_load_p, [gm, lr, lc_], space="L1", shape=phys, valid=valid,
                       view=view, transpose=transposed, stage=stage)
        return self.emit(T.tile_move_p, [l1], space=space, stage=stage)
