"""Cost facts (floating-point operations of one equation, read by ``tools/flops.py``).

One flop is one scalar arithmetic operation; data movement is free.
"""
from __future__ import annotations


def output_size(eqn) -> int:
    """One operation per output element (elementwise ops)."""
    return sum(v.type.size for v in eqn.outputs)


def input_size(eqn) -> int:
    """One operation per element of operand 0 (reductions, scans)."""
    return eqn.inputs[0].type.size


def no_flops(eqn) -> int:
    """Data movement: reshapes, slices, gathers, broadcasts."""
    return 0
