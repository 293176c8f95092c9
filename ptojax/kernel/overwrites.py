"""Whether a block program stores twice into the same output elements (an overwrite).

Reverse mode (``kernel/autodiff.py``) gives every stored value the cotangent of the window it
was stored to; a value overwritten later in the same program has none. So before a kernel is
differentiated, the window starts of the stores of its unrolled bodies are evaluated for every
program (they are int32 arithmetic on the program ids) and two stores of one program whose
windows share elements of one output raise ``UnsupportedError`` at the later store's line —
never a silently wrong gradient. Accumulating stores (``add=True``) are sums, not overwrites.
"""
from __future__ import annotations

import numpy as np

from ptojax.errors import UnsupportedError
from ptojax.ir.core import Literal, Var
from ptojax.kernel.primitives import kernel_fori_p, kernel_load_p, kernel_store_p
from ptojax.kernel.spec import grid_points

KERNEL_PRIMS = (kernel_load_p, kernel_store_p, kernel_fori_p)


def _program_scalars(ir, k, point) -> dict:
    """The scalar values of ``ir`` computable from program ids ``point`` alone."""
    env = {v: np.int32(p) for v, p in zip(ir.invars[:k], point)}
    for e in ir.eqns:
        if e.prim in KERNEL_PRIMS or e.prim.multiple_results or e.outputs[0].type.shape != ():
            continue
        vals = [a.value if type(a) is Literal else env.get(a) for a in e.inputs]
        if any(v is None for v in vals):
            continue
        env[e.outputs[0]] = np.asarray(e.prim.impl(*vals, **e.params))
    return env


def _stores_by_output(ir) -> dict:
    """The overwriting stores of each output ref (the ref threaded through them)."""
    root, out = {}, {}
    for e in ir.eqns:
        if e.prim is not kernel_store_p:
            continue
        ref = e.inputs[0]
        r = root.get(ref, ref)
        root[e.outputs[0]] = r
        if not e.params.get("add"):
            out.setdefault(r, []).append(e)
    return {r: s for r, s in out.items() if len(s) > 1}


def _window(e, env):
    starts = []
    for a in e.inputs[2:]:
        value = a.value if type(a) is Literal else env.get(a) if type(a) is Var else a
        if value is None:
            return None
        starts.append(int(value))
    return starts, e.params["sizes"]


def _overlap(w1, w2) -> bool:
    (s1, z1), (s2, z2) = w1, w2
    return all(a < b + m and b < a + n for a, n, b, m in zip(s1, z1, s2, z2))


def _no_store_in_a_loop(name, ir, in_loop=None):
    """A loop left rolled (run-time bounds, or too long to unroll) may store into one window
    on several steps, which cannot be checked per program: its stores must accumulate."""
    for e in ir.eqns:
        if e.prim is kernel_fori_p:
            body = e.params["body"]
            _no_store_in_a_loop(name, getattr(body, "ir", body), e)
        elif e.prim is kernel_store_p and in_loop is not None and not e.params.get("add"):
            raise UnsupportedError(
                f"kernel {name}: a store inside a pto.kernel.fori loop with run-time bounds "
                f"(or more steps than automatic differentiation unrolls) may overwrite what "
                f"an earlier step stored, which reverse mode cannot check; store after the "
                f"loop (carry the value), or use pto.custom_vjp", e.source)


def check_no_overwrites(name, grid, regions, bodies):
    """Raise when some program of a kernel stores twice into one output element (module
    docstring); ``bodies`` are the unrolled region bodies."""
    for b in bodies:
        _no_store_in_a_loop(name, b.ir)
    stores = [_stores_by_output(b.ir) for b in bodies]
    if not any(stores):
        return
    k = len(grid)
    for point in grid_points(grid):
        r = next(i for i, reg in enumerate(regions) if reg.holds(point))
        if not stores[r]:
            continue
        env = _program_scalars(bodies[r].ir, k, point)
        for group in stores[r].values():
            windows = [_window(e, env) for e in group]
            for j, (e, w) in enumerate(zip(group, windows)):
                if any(v is None or w is None or _overlap(v, w) for v in windows[:j]):
                    raise UnsupportedError(
                        f"kernel {name}: program {point} stores into elements of one output "
                        f"that an earlier store of the same program wrote (or cannot be "
                        f"checked: a window start computed from loaded values); automatic "
                        f"differentiation gives every stored value the output's cotangent, "
                        f"so it cannot differentiate an overwrite. Store each element once "
                        f"(combine the values first), or use pto.custom_vjp", e.source)
