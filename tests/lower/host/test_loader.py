"""Launching kernels: the data pointers passed to a kernel library."""
import numpy as np

from ptojax.eval.pointers import data_pointers


def test_kernel_launches_read_the_arrays_data_pointers():
    """``pointers.data_pointers`` (the fast read of numpy's data pointer) agrees with
    ``a.ctypes.data`` on arrays, views, and empty and 0-d arrays."""
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    arrays = [base, base[1:], base[:, 3:], base.T, np.empty((0, 5)), np.array(3.0), base[::2]]
    assert data_pointers(arrays) == [a.ctypes.data for a in arrays]
