"""Value types of PTO IR: ``TensorType`` (a whole array in HBM/host memory) and ``TileType``
(a tile resident in one of the accelerator's on-chip buffers)."""
from __future__ import annotations

import math

import numpy as np

from ptojax import dtypes
from ptojax.public import add_examples as _add_examples

SPACES = ("GM", "UB", "L1", "L0A", "L0B", "L0C")


class TensorType:
    """Shape, dtype and weakness (a value born of a Python scalar) of an array."""
    __slots__ = ("shape", "dtype", "weak_type", "_hash")

    def __init__(self, shape, dtype, weak_type: bool = False):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.weak_type = weak_type
        self._hash = hash((self.shape, dtype, weak_type))

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    nbytes = property(lambda self: self.size * self.dtype.itemsize)

    def __eq__(self, other):
        return (type(other) is TensorType and self._hash == other._hash
                and self.shape == other.shape and self.dtype == other.dtype
                and self.weak_type == other.weak_type)

    def __hash__(self):
        return self._hash

    def strip_weak(self) -> "TensorType":
        return TensorType(self.shape, self.dtype) if self.weak_type else self

    def update(self, shape=None, dtype=None, weak_type=None) -> "TensorType":
        return TensorType(self.shape if shape is None else shape,
                          self.dtype if dtype is None else dtype,
                          self.weak_type if weak_type is None else weak_type)

    def same_shape_dtype(self, other) -> bool:
        return self.shape == other.shape and self.dtype == other.dtype

    def __str__(self):
        return f"{dtypes.short_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    __repr__ = __str__


class ShapedArray:
    """A ``TensorType`` seen as JAX's abstract value (``jax.core.ShapedArray``): the same
    shape, dtype and weak type, shown as JAX shows it (``ShapedArray(float32[3])``). What
    ``make_jaxpr(f)(x).in_avals``/``out_avals`` hold."""
    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape, dtype, weak_type: bool = False):
        self.shape, self.dtype, self.weak_type = tuple(shape), np.dtype(dtype), weak_type

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    @classmethod
    def of(cls, t: TensorType) -> "ShapedArray":
        """``t`` as the user's function sees it: a weak float64 scalar is how ``jit``
        carries a Python float, which the function sees as a weak default float."""
        if t.weak_type and t.shape == () and t.dtype == dtypes.float64:
            return cls((), dtypes.default_float(), True)
        return cls(t.shape, t.dtype, t.weak_type)

    def __eq__(self, other):
        return isinstance(other, ShapedArray) and (self.shape, self.dtype, self.weak_type) \
            == (other.shape, other.dtype, other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def str_short(self) -> str:
        return f"{self.dtype.name}[{','.join(map(str, self.shape))}]"

    def __str__(self):   # as JAX: a weak type is marked with "~"
        return ("~" if self.weak_type else "") + self.str_short()

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short()}{weak})"


class TileType:
    """A tile: ``shape`` (rows, cols) of ``dtype`` in on-chip buffer ``space``. ``valid`` is the
    part holding data at a ragged edge (PTO's valid rows/cols); None means all of it."""
    __slots__ = ("shape", "dtype", "space", "valid", "_hash")

    def __init__(self, shape, dtype, space: str, valid=None):
        if space not in SPACES:
            raise ValueError(f"unknown memory space {space!r}; expected one of {SPACES}")
        self.shape = tuple(shape)
        self.dtype = dtype
        self.space = space
        self.valid = None if valid is None else tuple(valid)
        self._hash = hash((self.shape, dtype, space, self.valid))

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    nbytes = property(lambda self: self.size * self.dtype.itemsize)
    weak_type = False

    def __eq__(self, other):
        return (type(other) is TileType and self._hash == other._hash
                and (self.shape, self.dtype, self.space, self.valid)
                == (other.shape, other.dtype, other.space, other.valid))

    def __hash__(self):
        return self._hash

    def __str__(self):
        valid = "" if self.valid is None else f" valid={'x'.join(map(str, self.valid))}"
        return (f"{dtypes.short_name(self.dtype)}<{self.space}>"
                f"[{','.join(map(str, self.shape))}{valid}]")

    __repr__ = __str__


def type_of(x) -> TensorType:
    """The TensorType of a concrete value (numpy array/scalar or anything with .aval)."""
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    x = np.asarray(x)
    return TensorType(x.shape, dtypes.canonical_dtype(x.dtype))


_add_examples(globals(), """
TensorType:
    >>> pto.make_ir(lambda x: x * 2.0)(pnp.ones((2, 3))).ir.invars[0].type
    f32[2,3]
TileType:
    >>> from ptojax.ir import TileType
    >>> TileType((8, 64), pnp.dtype('float32'), 'UB')
    f32<UB>[8,64]
""")
