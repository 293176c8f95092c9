"""The primitives, one family per module, each defined with every fact about it (see
``ptojax.trace.FACTS``). Importing the package defines them all, in dependency order; then
``bucketing`` adds the ``bucket`` facts of the families it covers (its rules need most of
them)."""
from ptojax.ops import (arithmetic, broadcast, complex_parts, convert, cumulative,  # noqa: F401
                        decompositions, dimension_size, dynamic_slicing, eig, elementwise, fft,
                        gather_scatter, linalg, logic, random_bits, reductions, shape, slicing,
                        sorting, special, transcendental, windowed_indexing)
from ptojax.ops import bucketing  # noqa: F401,E402
