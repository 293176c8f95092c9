"""The IR verifier: re-infers every equation's types and checks single assignment and that
every variable is defined before it is used. Every transform's tests run it on their output."""
from __future__ import annotations

from ptojax.errors import IRVerificationError, PtoError
from ptojax.ir.core import IR, ClosedIR, Literal, sub_irs
from ptojax.ir.core import print_eqn


def verify(ir) -> None:
    """Raise ``IRVerificationError`` describing the first broken invariant, else return."""
    if isinstance(ir, ClosedIR):
        ir = ir.ir
    _verify(ir)


def _verify(ir: IR) -> None:
    defined = set()

    def define(v, what):
        if v in defined:
            raise IRVerificationError(f"{what} {v} is assigned twice (single assignment)")
        defined.add(v)

    for v in (*ir.constvars, *ir.invars):
        define(v, "input")
    for eqn in ir.eqns:
        for a in eqn.inputs:
            if not isinstance(a, Literal) and a not in defined:
                raise IRVerificationError(f"in `{print_eqn(eqn)}`: an input is used before "
                                          f"it is defined", eqn.source)
        try:
            expected = eqn.prim.out_types([a.type for a in eqn.inputs], eqn.params)
        except PtoError as e:
            raise IRVerificationError(f"in `{print_eqn(eqn)}`: type inference fails: "
                                      f"{e.message}", eqn.source) from None
        got = [v.type for v in eqn.outputs]
        if len(expected) != len(got) or any(
                (e.shape, e.dtype) != (g.shape, g.dtype) for e, g in zip(expected, got)):
            raise IRVerificationError(
                f"in `{print_eqn(eqn)}`: outputs are typed {', '.join(map(str, got))} but "
                f"{eqn.prim.name} infers {', '.join(map(str, expected))}", eqn.source)
        for v in eqn.outputs:
            define(v, "variable")
        for sub in sub_irs(eqn.params):
            _verify(sub.ir if isinstance(sub, ClosedIR) else sub)
    for v in ir.outvars:
        if not isinstance(v, Literal) and v not in defined:
            raise IRVerificationError("an output variable is never defined")
