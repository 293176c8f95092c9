"""Building IR without tracing: passes create new IRs through an ``IRBuilder``."""
from __future__ import annotations

from ptojax.ir.core import IR, ClosedIR, Eqn, Params, Var


class IRBuilder:
    """Accumulates equations; output types come from each primitive's abstract eval."""

    def __init__(self):
        self.eqns: list[Eqn] = []

    @staticmethod
    def var(type) -> Var:
        return Var(type)

    def emit(self, prim, inputs, params=None, source=None):
        """Append ``prim[params](*inputs)``; returns its output Var (a list if multi-result)."""
        params = params if isinstance(params, Params) else Params(params)
        out_types = prim.out_types([a.type for a in inputs], params)
        outputs = [Var(t) for t in out_types]
        self.eqns.append(Eqn(prim, inputs, outputs, params, source))
        return outputs if prim.multiple_results else outputs[0]

    def add(self, eqn: Eqn) -> None:
        self.eqns.append(eqn)

    def build(self, invars, outvars, constvars=()) -> IR:
        return IR(constvars, invars, self.eqns, outvars)

    def build_closed(self, invars, outvars, constvars=(), consts=()) -> ClosedIR:
        return ClosedIR(self.build(invars, outvars, constvars), consts)
