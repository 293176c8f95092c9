"""PTO IR: types, variables, equations, builder, printer, verifier."""
from ptojax.ir.builder import IRBuilder
from ptojax.ir.core import IR, ClosedIR, Eqn, Literal, Params, Var, sub_irs
from ptojax.ir.core import print_ir
from ptojax.ir.types import SPACES, TensorType, TileType, type_of
from ptojax.ir.verify import verify

__all__ = ["IR", "ClosedIR", "Eqn", "Literal", "Params", "Var", "IRBuilder", "TensorType",
           "TileType", "SPACES", "print_ir", "verify", "sub_irs", "type_of"]
