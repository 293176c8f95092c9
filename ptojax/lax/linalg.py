"""``pto.lax.linalg``: the matrix decompositions and the triangular solve, with JAX's
``jax.lax.linalg`` names and signatures (defined beside their primitives in
``ops/decompositions.py``)."""
from ptojax.ops.decompositions import (cholesky, cholesky_p, eigh, eigh_p, lu, lu_p,
                                       lu_pivots_to_permutation, lu_pivots_to_permutation_p,
                                       qr, qr_p, svd, svd_p, triangular_solve,
                                       triangular_solve_p)

__all__ = ["cholesky", "cholesky_p", "eigh", "eigh_p", "lu", "lu_p", "lu_pivots_to_permutation",
           "lu_pivots_to_permutation_p", "qr", "qr_p", "svd", "svd_p", "triangular_solve",
           "triangular_solve_p"]
