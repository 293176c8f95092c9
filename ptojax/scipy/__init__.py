"""``pto.scipy``: SciPy's API over ptojax arrays, as ``jax.scipy``."""
from ptojax.scipy import linalg  # noqa: F401
