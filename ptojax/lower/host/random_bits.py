"""``threefry2x32`` equations of a host program run by the kernel library's compiled loop.

The primitive has no tile form (two results per element), so it stays a tensor-level
equation between kernels, where its numpy impl makes about 110 ufunc calls — 20 rounds of
five — on small blocks: 0.1-0.15 ms for the 32x10 normal draw of a VAE step, every step.
Every kernel library also exports ``ptojax_threefry2x32`` (``include/pto_host_random.h``, the
same algorithm bit for bit), which a host program calls instead for the common case: scalar
keys, each counter word a scalar or an array of the result's shape. Anything else (batched
keys) runs the numpy impl.
"""
from __future__ import annotations

import numpy as np

from ptojax.eval.pointers import data_pointers
from ptojax.ops.random_bits import threefry2x32_p


def threefry_runner(library, eqn):
    """The function running ``threefry2x32`` equation ``eqn`` with ``library``'s compiled
    loop, or None when the library has none."""
    compiled = library.threefry2x32
    if compiled is None:
        return None
    shape = eqn.outputs[0].type.shape
    size = eqn.outputs[0].type.size
    numpy_impl = threefry2x32_p.impl
    u32 = np.uint32

    def run(k1, k2, x1, x2):
        x1, x2 = np.asarray(x1, u32), np.asarray(x2, u32)
        if np.ndim(k1) or np.ndim(k2) or x1.size not in (1, size) or x2.size not in (1, size):
            return numpy_impl(k1, k2, x1, x2)
        x1, x2 = np.ascontiguousarray(x1), np.ascontiguousarray(x2)
        y1, y2 = np.empty(shape, u32), np.empty(shape, u32)
        p = data_pointers((x1, x2, y1, y2))
        compiled(int(k1), int(k2), p[0], 1 if x1.size > 1 else 0, p[1],
                 1 if x2.size > 1 else 0, p[2], p[3], size)
        return [y1, y2]
    return run


def threefry_runners(library, eqns) -> dict:
    """{threefry2x32 equation among ``eqns``: its compiled runner}."""
    runners = {}
    for eqn in eqns:
        if eqn.prim is threefry2x32_p:
            run = threefry_runner(library, eqn)
            if run is not None:
                runners[eqn] = run
    return runners
