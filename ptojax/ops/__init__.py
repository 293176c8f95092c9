"""The primitives, one family per module, each defined with every fact about it (see
``ptojax.trace.FACTS``). Importing the package defines them all, in dependency order."""
from ptojax.ops import (arithmetic, broadcast, convert, cumulative, decompositions,  # noqa: F401
                        dynamic_slicing, elementwise, gather_scatter, linalg, logic,
                        random_bits, reductions, shape, slicing, sorting, special,
                        transcendental)
