"""The primitives, one family per module, each defined with every fact about it (see
``ptojax.trace.FACTS``). Importing the package defines them all, in dependency order; then
``bucketing`` adds the ``bucket`` facts of the families it covers (its rules need most of
them).

The package is also JAX's ``jax.ops``: its public API (``__all__``, what ``dir`` shows) is the
segment reductions of ``segment.py``."""
from ptojax.ops import (arithmetic, broadcast, complex_parts, convert, cumulative,  # noqa: F401
                        decompositions, dimension_size, dot_accumulate, dynamic_slicing,
                        eig, elementwise, fft,
                        gather_scatter, householder_forms, io_callback, linalg, logic,
                        optimization_barrier, pure_callback,
                        random_bits, rank_updates, reductions, shape, slicing, sorting, special,
                        transcendental, tridiagonal_solve, windowed_indexing)
from ptojax.ops import bucketing  # noqa: F401,E402
from ptojax.ops.segment import segment_max, segment_min, segment_prod, segment_sum  # noqa: E402
from ptojax.public import dir_function as _dir_function  # noqa: E402

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]
__dir__ = _dir_function(__all__)
