"""Element expressions of the fused host builds (``fused.py``, ``fused_kernel.py``): a value's
C++ compute type, literals, rounding back to a 16-bit float, and each primitive's element
expression from its ``host`` fact."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.lower.host.fused_plan import FusedUnsupported
from ptojax.lower.pto_cpp import SCALAR, cpp_literal, cpp_type

LOW_FLOATS = ("float16", "bfloat16")


# --- types, literals, element expressions ----------------------------------------------------
def compute_type(dtype) -> str:
    """The C++ type a fused kernel holds values of ``dtype`` in."""
    if dtypes.is_float(np.dtype(dtype)):
        return "float"
    return "bool" if np.dtype(dtype) == dtypes.bool_ else cpp_type(dtype)


def value_literal(value, dtype) -> str:
    """A literal of ``dtype``, typed as its compute type."""
    dtype = np.dtype(dtype)
    if dtype == dtypes.bool_:
        return "true" if bool(value) else "false"
    if dtypes.is_float(dtype):
        return cpp_literal(np.asarray(value).astype(dtype).astype(np.float32), np.float32)
    return f"static_cast<{cpp_type(dtype)}>({int(np.asarray(value).astype(dtype))})"


def loaded(ref: str, dtype) -> str:
    """The element ``ref`` (an lvalue of ``dtype``) read into its compute type. A bool is read
    as its byte (``load_bool``): GCC 12 does not vectorize a loop that loads a bool."""
    if np.dtype(dtype) == dtypes.bool_:
        return f"load_bool({ref})"
    return f"widen({ref})"


def rounded(expr: str, dtype) -> str:
    """``expr``, computed in the compute type, as a value of ``dtype``."""
    if np.dtype(dtype).name in LOW_FLOATS:
        return f"round_as<{cpp_type(dtype)}>({expr})"
    return f"static_cast<{compute_type(dtype)}>({expr})"


def host_expr(prim, operands, params) -> str:
    """One element of ``prim`` on C++ operand expressions: its ``host`` fact, a template
    string or a function of the operand texts and the equation's params."""
    fact = prim.rule("host", "fused host kernels")
    return fact(*operands, **params) if callable(fact) else fact.format(*operands)


def scalar_expr(eqn, operands) -> str:
    """A tile-level scalar equation: its host fact, else the PTO scalar unit's syntax (index
    arithmetic such as ``rem``)."""
    if eqn.prim.fact("host") is not None:
        return host_expr(eqn.prim, operands, eqn.params)
    if eqn.prim in SCALAR:
        return SCALAR[eqn.prim].format(*operands, T=cpp_type(eqn.outputs[0].type.dtype))
    raise FusedUnsupported(f"no host form for the scalar equation `{eqn.prim.name}`")
