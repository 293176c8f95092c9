"""Records of jax-ml/jax tests/lax_vmap_op_test.py (LaxVmapOpTest.testOp): every op of
lax_test_util.lax_ops() (lax_ops.OPS here) vmapped over a batch of 10 along each combination
of argument axes (``all_bdims``: None or any position per argument, not all None), shapes of
at most 2 dimensions (the test skips larger ones), compared with ``jax.vmap``.
"""
import itertools

from .cases import ndim
from .lax_ops import OPS, _lax_shapes, op_name
from .spec import lax_record

RECORDS = [lax_record(op, name=op_name(op, dtypes), nargs=nargs, dtypes=dtypes, rng=rng,
                      tol=tol, modes=("vmap", "jit"),
                      shapes=[s for s in _lax_shapes(nargs)
                              if all(ndim(x) <= 2 for x in (s if nargs > 1 else (s,)))])
           for op, nargs, dtypes, rng, tol in OPS]


def in_axes(shapes):
    """lax_test_util.all_bdims: every per-argument batch axis (or None), not all None."""
    options = [[None] + list(range(ndim(s) + 1)) for s in shapes]
    return [t for t in itertools.product(*options) if any(a is not None for a in t)]
