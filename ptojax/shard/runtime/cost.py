"""How many bytes a collective sends, under the usual ring/direct algorithms — one model
shared by the static count over an IR and the runtime's count of what actually ran.

Per member of a group of ``n`` devices, with an operand of ``b`` bytes:

    psum / pmax / pmin   2 (n-1)/n b    (ring all-reduce: reduce-scatter + all-gather)
    all_gather           (n-1) b        (it receives every other member's operand)
    psum_scatter         (n-1)/n b
    all_to_all           (n-1)/n b      (it keeps its own block)
    ppermute             b if it sends to another member, else 0
    axis_index           0
"""
from __future__ import annotations

from ptojax.ir.core import ClosedIR, IR, sub_irs


def bytes_sent(kind: str, nbytes: int, n: int, params, member: int) -> int:
    if n <= 1 or kind == "axis_index":
        return 0
    if kind in ("psum", "pmax", "pmin"):
        return 2 * (n - 1) * nbytes // n
    if kind == "all_gather":
        return (n - 1) * nbytes
    if kind in ("psum_scatter", "all_to_all"):
        return (n - 1) * nbytes // n
    if kind == "ppermute":
        return nbytes if any(s == member and d != s for s, d in params["perm"]) else 0
    raise ValueError(f"unknown collective {kind!r}")


def _groups(mesh, axes) -> int:
    return mesh.size // mesh.axis_size(axes)


def eqn_bytes(eqn, mesh) -> int:
    """Bytes all devices of ``mesh`` send to run one collective equation."""
    kind = eqn.prim.name
    axes = eqn.params["axes"]
    n = mesh.axis_size(axes)
    nbytes = eqn.inputs[0].type.nbytes if eqn.inputs else 0
    per_group = sum(bytes_sent(kind, nbytes, n, eqn.params, m) for m in range(n))
    return per_group * _groups(mesh, axes)


def ir_bytes(ir, mesh) -> dict:
    """Bytes sent per collective kind by one run of a per-device IR on ``mesh`` (straight-line
    code; sub-IRs are counted once)."""
    ir = ir.ir if isinstance(ir, ClosedIR) else ir
    totals: dict = {}
    for eqn in ir.eqns:
        if getattr(eqn.prim, "collective", False):
            totals[eqn.prim.name] = totals.get(eqn.prim.name, 0) + eqn_bytes(eqn, mesh)
        for sub in sub_irs(eqn.params):
            for kind, b in ir_bytes(sub if isinstance(sub, IR) else sub.ir, mesh).items():
                totals[kind] = totals.get(kind, 0) + b
    return totals
