"""Arrays in ``.npy``/``.npz`` files: ``save``/``savez`` are NumPy's (arrays are written as
their host values), ``load`` reads with NumPy and returns a ptojax array for a ``.npy`` file
(bfloat16, which NumPy stores as raw 2-byte values, restored), as in JAX."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import DtypeError
from ptojax.numpy._promote import asarray
from ptojax.public import add_examples as _add_examples


def save(file, arr, allow_pickle=True):
    """Write ``arr`` to a ``.npy`` file (NumPy's ``save`` of its values)."""
    return np.save(file, np.asarray(arr), allow_pickle=allow_pickle)


def savez(file, *args, **kwds):
    """Write several arrays to an uncompressed ``.npz`` file (NumPy's ``savez``)."""
    return np.savez(file, *[np.asarray(a) for a in args],
                    **{k: np.asarray(v) for k, v in kwds.items()})


def load(file, *args, **kwargs):
    """Read a ``.npy`` file as a ptojax array (a dtype ptojax lacks stays a NumPy array);
    a ``.npz`` file gives NumPy's lazy mapping of NumPy arrays, as in JAX."""
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        if out.dtype == np.dtype("V2"):   # how NumPy stores bfloat16
            out = out.view(dtypes.bfloat16)
        try:
            out = asarray(out, op="load")
        except DtypeError:
            pass
    return out


__all__ = ["load", "save", "savez"]


_add_examples(globals(), """
save:
    >>> import io
    >>> buffer = io.BytesIO()
    >>> pnp.save(buffer, pnp.arange(3))
    >>> _ = buffer.seek(0)
    >>> pnp.load(buffer)
    Array([0, 1, 2], dtype=int32)
savez:
    >>> import io
    >>> buffer = io.BytesIO()
    >>> pnp.savez(buffer, x=pnp.arange(2))
    >>> _ = buffer.seek(0)
    >>> pnp.load(buffer)["x"]
    array([0, 1], dtype=int32)
load:
    >>> import io
    >>> buffer = io.BytesIO()
    >>> pnp.save(buffer, pnp.ones(2, dtype=pnp.bfloat16))
    >>> _ = buffer.seek(0)
    >>> pnp.load(buffer)
    Array([1, 1], dtype=bfloat16)
""")
