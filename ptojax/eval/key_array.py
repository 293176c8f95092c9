"""Typed PRNG keys (JAX's new-style keys): an array of dtype ``key<fry>`` over uint32 words.

``pto.random.key(seed)`` returns a ``PRNGKeyArray``: an array whose elements are whole keys, of
the extended dtype ``key<fry>`` (``issubdtype(k.dtype, pto.dtypes.prng_key)``). Its data is a
uint32 array (an ``Array`` or a ``Tracer``) of shape ``(*key_shape, 2)``, the words of
Threefry-2x32 keys (``random.key_data``). Raw keys (``random.PRNGKey``) stay uint32 arrays.

Transforms see a key array as a pytree node with one child, its words (``ptojax.pytree``):
``jit``, ``vmap``, ``scan``, loops and ``grad`` carry keys through unchanged, batched on their
leading axes. The tangent of a key is float0 of the key's shape, as in JAX. Users see a key as
a leaf (``pto.tree_util``, ``pto.tree``), as in JAX.

Keys support what JAX's do: indexing, iteration, reshaping, ``==``/``!=`` (whole keys); any
arithmetic is a TypeError, as in JAX.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import located
from ptojax.eval.leaves import ShapeDtypeStruct
from ptojax.source_info import user_frame
from ptojax.pytree import register_pytree_node, register_user_leaf


class KeyDtype:
    """The dtype of typed keys of one generator: ``key<fry>`` for Threefry-2x32."""
    __slots__ = ("impl", "tag")
    type = dtypes.prng_key
    itemsize = 8
    kind = "V"

    def __init__(self, impl: str, tag: str):
        self.impl, self.tag = impl, tag

    @property
    def name(self) -> str:
        return f"key<{self.tag}>"

    def __eq__(self, other):
        return type(other) is KeyDtype and other.impl == self.impl

    def __hash__(self):
        return hash(("key", self.impl))

    def __repr__(self):
        return self.name

    __str__ = __repr__


THREEFRY_KEY = KeyDtype("threefry2x32", "fry")
KEY_WORDS = 2   # uint32 words of one Threefry-2x32 key


def key_type_error(op: str) -> TypeError:
    return located(TypeError(
        f"{op} does not accept dtype key<fry>: keys are not numbers. Derive keys with "
        f"random.split/fold_in, or take their uint32 words with random.key_data(key)"),
        user_frame())


def _no_arithmetic(op):
    def method(self, *args):
        raise key_type_error(op)
    method.__name__ = f"__{op}__"
    return method


class PRNGKeyArray:
    """An array of typed PRNG keys (dtype ``key<fry>``), from ``pto.random.key``/``split``/
    ``fold_in``/``wrap_key_data``."""
    __slots__ = ("_data",)
    __array_priority__ = 200

    def __init__(self, data):
        self._data = data

    # the array's type ---------------------------------------------------------------------
    dtype = property(lambda self: THREEFRY_KEY)
    shape = property(lambda self: tuple(self._data.shape[:-1]))
    ndim = property(lambda self: len(self._data.shape) - 1)
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    itemsize = property(lambda self: THREEFRY_KEY.itemsize)
    weak_type = False

    @property
    def data(self):
        """The uint32 words, shape ``(*self.shape, 2)``."""
        return self._data

    # structure ------------------------------------------------------------------------------
    def __len__(self):
        if not self.shape:
            raise located(TypeError("len() of unsized object (a 0-d key array)"), user_frame())
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise located(TypeError("iteration over a 0-d key array"), user_frame())
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        if any(i is Ellipsis for i in index):
            index = (*index, slice(None))      # the word axis stays after the ellipsis
        return PRNGKeyArray(self._data[index])

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        return PRNGKeyArray(self._data.reshape(*shape, KEY_WORDS))

    def ravel(self, order="C"):
        return self.reshape(self.size, order=order)

    flatten = ravel

    def squeeze(self, axis=None):
        if axis is None:
            axis = tuple(i for i, d in enumerate(self.shape) if d == 1)
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        return PRNGKeyArray(self._data.squeeze(tuple(a % self.ndim for a in axes)))

    def transpose(self, *axes):
        if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
            axes = tuple(axes[0]) if axes[0] is not None else ()
        axes = tuple(a % self.ndim for a in axes) or tuple(reversed(range(self.ndim)))
        return PRNGKeyArray(self._data.transpose(*axes, self.ndim))

    T = property(lambda self: self.transpose())

    def swapaxes(self, axis1, axis2):
        axes = list(range(self.ndim))
        axis1, axis2 = axis1 % self.ndim, axis2 % self.ndim
        axes[axis1], axes[axis2] = axes[axis2], axes[axis1]
        return self.transpose(axes)

    def copy(self):
        return self

    def block_until_ready(self):
        self._data.block_until_ready()
        return self

    # comparisons: whole keys ----------------------------------------------------------------
    def __eq__(self, other):
        if not isinstance(other, PRNGKeyArray):
            raise key_type_error("equal")
        return (self._data == other._data).all(axis=-1)

    def __ne__(self, other):
        if not isinstance(other, PRNGKeyArray):
            raise key_type_error("not_equal")
        return (self._data != other._data).any(axis=-1)

    def __hash__(self):
        raise located(TypeError("unhashable type: a key array"), user_frame())

    def __array__(self, dtype=None, copy=None):
        raise key_type_error("numpy.asarray")

    def __bool__(self):
        raise key_type_error("bool")

    __float__ = __int__ = __index__ = __complex__ = _no_arithmetic("convert")
    __add__ = __radd__ = _no_arithmetic("add")
    __sub__ = __rsub__ = _no_arithmetic("sub")
    __mul__ = __rmul__ = _no_arithmetic("mul")
    __truediv__ = __rtruediv__ = _no_arithmetic("div")
    __floordiv__ = __rfloordiv__ = _no_arithmetic("floor_divide")
    __mod__ = __rmod__ = _no_arithmetic("rem")
    __pow__ = __rpow__ = _no_arithmetic("pow")
    __matmul__ = __rmatmul__ = _no_arithmetic("dot_general")
    __and__ = __rand__ = _no_arithmetic("and")
    __or__ = __ror__ = _no_arithmetic("or")
    __xor__ = __rxor__ = _no_arithmetic("xor")
    __lshift__ = __rlshift__ = _no_arithmetic("shift_left")
    __rshift__ = __rrshift__ = _no_arithmetic("shift_right")
    __lt__ = _no_arithmetic("lt")
    __le__ = _no_arithmetic("le")
    __gt__ = _no_arithmetic("gt")
    __ge__ = _no_arithmetic("ge")
    __neg__ = _no_arithmetic("neg")
    __pos__ = _no_arithmetic("pos")
    __abs__ = _no_arithmetic("abs")
    __invert__ = _no_arithmetic("not")

    # printing: JAX's form -------------------------------------------------------------------
    def __repr__(self):
        words = self._data
        if type(words) is ShapeDtypeStruct:   # an abstract key (eval_shape)
            return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype})"
        if hasattr(words, "_value"):
            return (f"Array({self.shape}, dtype={self.dtype}) overlaying:\n"
                    f"{np.asarray(words._value)}")
        return f"Traced<{self.dtype}{list(self.shape)}> overlaying:\n{words!r}"

    __str__ = __repr__

    def __format__(self, spec):
        return repr(self)


def _unflatten(_, children):
    """A key array from its (transformed) words; a float0 tangent of the words is the key's
    float0 tangent (the key's shape), as JAX's."""
    (words,) = children
    dtype = getattr(words, "dtype", None)
    if dtype == dtypes.float0 and len(getattr(words, "shape", ())) >= 1:
        return np.zeros(tuple(words.shape[:-1]), dtypes.float0)
    key = PRNGKeyArray.__new__(PRNGKeyArray)
    key._data = words
    return key


register_pytree_node(PRNGKeyArray, lambda k: ((k._data,), None), _unflatten)
register_user_leaf(PRNGKeyArray)
