"""What ``pto.jit(f).lower(*args, target=...)`` exposes about tiling and PTO lowering.

``jit.Lowered`` delegates here: ``tile_ir`` (the tiled IR: ``f``'s own kernels if it is a
``pto.tile``-d function, else the automatic tiling of its IR), ``as_text("pto" | "pto-cpp" |
"fused-cpp")`` (the last: the host's fused kernels, for a host target),
``cost()`` and ``unfused()``. The Ascend output is untested on hardware (none is available);
see ``ptojax.lower``.
"""
from __future__ import annotations

from ptojax.errors import TileError, UnsupportedError
from ptojax.ir.core import ClosedIR
from ptojax.targets import ascend910b, get_target
from ptojax.tile.kernel import tile_kernel_p
from ptojax.shard.map import per_device_program
from ptojax.optimize import optimize
from ptojax.tile.api import tile_ir
from ptojax.lower.pto_as import program_pto_as
from ptojax.lower.pto_cpp import program_cpp
from ptojax.lower.host import fused
from ptojax.lower.text import ProgramText
from ptojax.lower.cost import program_cost
from ptojax.tile.api import UnfusedOp
from ptojax.tile.planner import SYMBOLIC
from ptojax.tile.rules import unsupported_reason


class UnfusedList(list):
    """``lowered.unfused()``: the tensor-level equations between kernels, with reasons."""

    def __str__(self):
        if not self:
            return "every equation is in a tile kernel"
        return "\n".join(str(u) for u in self)

    __repr__ = __str__


class TileLowering:
    """The tiled form of one traced function, for one target."""

    def __init__(self, closed: ClosedIR, target=None):
        closed = per_device_program(closed)  # a sharded program lowers its per-device IR
        kernels = [e for e in closed.ir.eqns if e.prim is tile_kernel_p]
        if kernels:
            planned = {e.params["target"] for e in kernels}
            wanted = get_target(target).name if target is not None else None
            if wanted is not None and planned != {wanted}:
                raise TileError(f"this function was tiled for {', '.join(sorted(planned))} "
                                f"but is lowered for {wanted}; pass the same target to "
                                f"pto.tile and .lower")
            self.target = get_target(planned.pop())
            self.ir = optimize(closed)
            self._unfused = None
        else:
            self.target = get_target(target or ascend910b)
            result = tile_ir(closed, None, self.target)
            self.ir = result.ir
            self._unfused = result.unfused
        self._symbolic_unfused = [u for u in self._unfused or () if SYMBOLIC in u.reason]

    def as_text(self, dialect: str):
        if self._symbolic_unfused:
            raise UnsupportedError(
                "these operations cannot become tile kernels with symbolic dimensions (tile "
                "kernels take a runtime number of rows only; the other dimensions must be "
                "static):\n" + "\n".join(map(str, self._symbolic_unfused)))
        if dialect == "pto":
            return ProgramText(program_pto_as(self.ir, self.target.name), "pto")
        if dialect == "pto-cpp":
            return ProgramText(program_cpp(self.ir, self.target.name), "pto-cpp")
        if dialect == "fused-cpp":       # the host's fused kernels (lower/host/fused.py)
            kernels = [e for e in self.ir.ir.eqns if e.prim is tile_kernel_p]
            return ProgramText(fused.program_source(kernels), "pto-cpp")
        raise ValueError(f"unknown dialect {dialect!r}")

    def cost(self, values=None, trip_count=None):
        """``values``: the call's argument leaves (None where abstract), which give the
        scalar operands of pto.kernel loops with run-time bounds; ``trip_count``: the steps
        assumed where they do not."""
        return program_cost(self.ir, self.target, values, trip_count)

    def unfused(self) -> UnfusedList:
        if self._unfused is not None:
            return UnfusedList(self._unfused)
        out = UnfusedList()
        for eqn in self.ir.ir.eqns:
            if eqn.prim is not tile_kernel_p:
                reason = unsupported_reason(eqn, self.target) or \
                    "left as a tensor op by pto.tile (it could not join a kernel)"
                out.append(UnfusedOp(eqn, reason))
        return out
