"""NumPy-style type promotion and broadcasting, made explicit before anything is bound."""
from __future__ import annotations

import math
import warnings

import numpy as np

from ptojax import dtypes, lax
from ptojax.errors import (DtypeError, IntegerOverflowError, NonArrayLeafError,
                           NoneValueError, ShapeError, is_masked_array, masked_array_error,
                           non_array_error)
from ptojax.eval.array import Array
from ptojax.eval.key_array import PRNGKeyArray, key_type_error
from ptojax.eval.ieee import quietly
from ptojax.ir.symbolic import DimExpr
from ptojax.ops.convert import convert_element_type as convert_exactly
from ptojax.ops.dimension_size import dimension_size
from ptojax.source_info import entry_function_name, user_frame
from ptojax.trace import Tracer, full_precision, tracing
from ptojax.eval import transfers
from ptojax.pytree import tree_leaves
from ptojax.scoped_options import NUMPY_RANK_PROMOTION

_PY_SCALARS = dtypes.PYTHON_SCALARS


def dtype_and_weak(x, op: str = "asarray") -> tuple:
    """The (dtype, weak) ``x`` takes part in type promotion with; ``op`` names the caller in
    errors."""
    t = type(x)
    if t is Array or t is Tracer:
        aval = x.aval
        return aval.dtype, aval.weak_type
    if t in _PY_SCALARS:
        return python_scalar_dtype(x, op), dtypes.python_scalar_is_weak(x)
    if t is DimExpr:   # a symbolic size used as a number: a weak int, as a Python int
        return dtypes.int32, True
    if isinstance(x, (np.ndarray, np.generic)):
        if t is not np.ndarray and is_masked_array(x):
            raise masked_array_error(op, user_frame())
        return value_dtype(x, op), False
    if isinstance(x, (list, tuple)):
        raise sequence_error(x, op)
    if isinstance(x, Array):  # a ShardedArray (runtime/spmd_array.py)
        return x.aval.dtype, x.aval.weak_type
    if isinstance(x, PRNGKeyArray):
        raise key_type_error(op)
    raise _not_an_array(x, op)


def supported_dtype(dtype, op: str) -> np.dtype:
    """A ``dtype=`` argument of ``op`` as the dtype its result gets (``dtypes.user_dtype``:
    without x64 a 64-bit dtype is narrowed, with JAX's warning), or a DtypeError naming
    ``op`` and listing what is supported."""
    try:
        return dtypes.user_dtype(dtype, op)
    except DtypeError:
        raise _unsupported(dtype, op, None) from None


def value_dtype(x, op: str) -> np.dtype:
    """The dtype a numpy array or scalar given to ``op`` takes (``dtypes.canonical_dtype``:
    32 bits without x64, silently, as JAX), or a DtypeError naming ``op``."""
    try:
        return dtypes.canonical_dtype(x.dtype)
    except DtypeError:
        raise _unsupported(x.dtype, op, x) from None


def _unsupported(dtype, op, value) -> DtypeError:
    what = f" ({_describe(value)})" if value is not None else ""
    names = ", ".join(sorted(dtypes.short_name(d) for d in dtypes.SUPPORTED))
    return DtypeError(f"{op}: dtype {getattr(dtype, 'name', dtype)!s}{what} is not "
                      f"supported by ptojax (supported: {names}); convert the value "
                      f"first, e.g. with .astype(numpy.float32)", user_frame())


def _describe(x) -> str:
    if isinstance(x, np.ndarray):
        return f"a numpy array of shape {x.shape}"
    return f"{type(x).__name__} {x!r:.40}"


def _not_an_array(x, op: str):
    return NonArrayLeafError(f"{op}: expected an array or a Python scalar, got "
                             f"{_describe(x)}; pass a ptojax/numpy array, a number, or a "
                             f"(nested) list of them", user_frame())


def sequence_error(x, op: str) -> NonArrayLeafError:
    """The error for a list or tuple given where ``op`` takes an array: as JAX's
    ``check_arraylike``, only functions made to take sequences (``asarray``, ``stack``, ...)
    convert them, so a list is never silently taken for an array."""
    return non_array_error(x, op if op != "asarray" else entry_function_name(), user_frame())


def asarray(x, dtype=None, op: str = "asarray", sequences: bool = False):
    """``x`` as an Array or Tracer. A list or tuple is refused (``sequence_error``), as JAX's
    ``check_arraylike``, unless ``sequences`` (``array_from``): then (nested) lists/tuples of
    scalars and arrays are stacked."""
    if dtype is not None:
        dtype = supported_dtype(dtype, op)
    t = type(x)
    if t is Array or t is Tracer:
        return x if dtype is None else lax.convert_element_type(x, dtype)
    if t in _PY_SCALARS:
        if transfers.guarded() and not tracing():   # jax_transfer_guard: a transfer
            transfers.implicit_host_value(x)
        if dtype is None:
            return _default_scalar(x, op)
        return _scalar_of_dtype(x, dtype, op)
    if t is DimExpr:
        return dimension_size(x, dtype or dtypes.int32, weak_type=dtype is None)
    if isinstance(x, (np.ndarray, np.generic)):
        if t is not np.ndarray and is_masked_array(x):
            raise masked_array_error(op if op != "asarray" else entry_function_name(),
                                     user_frame())
        value_dtype(x, op)
        if transfers.guarded() and not tracing():
            transfers.implicit_host_value(x)
        arr = dtypes.canonical_value(x)
        if dtype is None:
            return Array(arr.copy() if arr is x else arr)  # own the buffer
        return Array(arr.astype(dtype))
    if isinstance(x, (list, tuple)):
        if not sequences:
            raise sequence_error(x, op)
        return _from_sequence(x, dtype, op)
    if isinstance(x, PRNGKeyArray):
        raise key_type_error(op)
    if sequences and not isinstance(x, Array):
        converted = _array_like(x, op)
        if converted is not x:
            return asarray(converted, dtype, op)
    if hasattr(x, "__array__") and not isinstance(x, (str, bytes)):
        return asarray(np.asarray(x), dtype, op)
    raise _not_an_array(x, op)


def array_from(x, dtype=None, op: str = "asarray"):
    """``x`` as an Array or Tracer, (nested) lists/tuples of scalars and arrays stacked: the
    conversion of ``pnp.asarray``/``array`` and of the functions JAX lets take sequences."""
    return asarray(x, dtype, op, sequences=True)


def python_scalar_dtype(x, op: str) -> np.dtype:
    """The weak dtype of a Python scalar (``dtypes.python_scalar_dtype``), errors naming
    ``op`` and the user's line."""
    try:
        return dtypes.python_scalar_dtype(x)
    except (DtypeError, IntegerOverflowError) as e:
        raise type(e)(f"{op}: {e.message}", user_frame()) from None


@quietly   # floats beyond the dtype's range become inf without numpy's warning, as JAX
def scalar_array(x, dtype, weak, op="asarray"):
    """A Python scalar converted to a 0-d Array of ``dtype`` (the dtype promotion chose for
    it): integers wrap around, as JAX's convert_element_type."""
    try:
        value = np.asarray(x).astype(dtype)
    except OverflowError:
        raise IntegerOverflowError(f"{op}: the Python int {x} does not fit in 64 bits",
                                   user_frame()) from None
    return Array(value, weak_type=weak)


@quietly
def _scalar_of_dtype(x, dtype, op):
    """``asarray(x, dtype)`` of a Python scalar: as ``numpy.array(x, dtype)`` (and JAX), an
    int that does not fit ``dtype`` is an error."""
    try:
        return Array(np.asarray(x, dtype))
    except OverflowError:
        raise IntegerOverflowError(f"{op}: the Python int {x} does not fit "
                                   f"{dtypes.short_name(dtype)}", user_frame()) from None


@quietly
def _default_scalar(x, op):
    dtype = python_scalar_dtype(x, op)
    return Array(np.asarray(x, dtype), weak_type=dtypes.python_scalar_is_weak(x))


def _is_plain(v) -> bool:
    """An array or a scalar: a leaf jnp.array takes as it is."""
    t = type(v)
    return (t is Array or t is Tracer or t in _PY_SCALARS or t is np.ndarray
            or isinstance(v, (np.generic, Array, DimExpr, PRNGKeyArray))
            or isinstance(v, np.ndarray) and not is_masked_array(v))


def _array_like(x, op):
    """A value that is not an array, a scalar, a list or a tuple, converted as JAX's
    ``jnp.array`` converts it: by its ``__jax_array__``, else as NumPy converts it (the
    buffer protocol: ``array.array``, ``memoryview``; sequences: ``range``, ``deque``; an
    ``__array__``). ``x`` itself when NumPy can hold it only as an object (a dict, a
    generator), for the caller's error; None is refused, as JAX refuses it."""
    if x is None:
        raise _none_error(op)
    if _is_plain(x) or isinstance(x, (list, tuple, str, bytes)):
        return x
    if is_masked_array(x):   # a leaf of a list: its data, as JAX's jnp.array
        return np.asarray(x)
    to_array = getattr(x, "__jax_array__", None)
    if to_array is not None:
        return to_array()
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError):
        return x
    return x if arr.dtype == object else arr


def _none_error(op) -> NoneValueError:
    return NoneValueError(f"{op}: None is not a value an array can hold (as in JAX); give a "
                          f"number, or mark missing values with pnp.nan", user_frame())


def _with_leaves_converted(seq, op):
    """Nested lists/tuples ``seq`` with every leaf that is not plain converted (_array_like)."""
    if isinstance(seq, (list, tuple)):
        return [_with_leaves_converted(v, op) for v in seq]
    return _array_like(seq, op)


def _contains_none(seq) -> bool:
    if isinstance(seq, (list, tuple)):
        return any(_contains_none(v) for v in seq)
    return seq is None


def _from_sequence(seq, dtype, op):
    leaves = tree_leaves(list(seq))
    if not all(_is_plain(v) for v in leaves):
        seq = _with_leaves_converted(seq, op)
        leaves = tree_leaves(seq)
    if any(type(v) is Tracer or type(v) is Array for v in leaves):
        return _stack([array_from(v, dtype, op) for v in seq], op)
    try:
        arr = np.asarray(seq)
    except ValueError:
        raise ShapeError(f"{op}: cannot make an array from the ragged sequence "
                         f"{seq!r:.60}; every element at one depth must have one shape",
                         user_frame()) from None
    if arr.dtype == object:
        if _contains_none(seq):
            raise _none_error(op)
        raise NonArrayLeafError(f"{op}: cannot make an array from a ragged or mixed "
                                f"sequence {seq!r:.60}; every element at one depth must have "
                                f"one shape", user_frame())
    value_dtype(arr, op)
    if transfers.guarded() and not tracing():   # jax_transfer_guard: a transfer
        transfers.implicit_host_value(arr)
    if dtype is None:  # promote the leaves as JAX does: Python scalars are weak
        dtype = result_type(*leaves, op=op)[0] if leaves else dtypes.default_float()
    if arr.dtype != dtype and any(type(v) is int for v in leaves):
        try:  # as numpy.array(seq, dtype) (and JAX): an int that does not fit is an error
            return Array(np.asarray(seq, dtype))
        except OverflowError as e:
            raise IntegerOverflowError(f"{op}: {e}", user_frame()) from None
    return Array(arr.astype(dtype))


def _stack(arrays, op):
    """Equally shaped arrays stacked along a new leading axis, promoted to one dtype."""
    if any(tuple(a.shape) != tuple(arrays[0].shape) for a in arrays):
        raise ShapeError(f"stack: all arrays must have one shape, got "
                         f"{', '.join(str(tuple(a.shape)) for a in arrays)}", user_frame())
    dtype = result_type(*arrays, op=op)[0]
    return lax.concatenate([lax.expand_dims(convert(a, dtype), (0,)) for a in arrays], 0)


def result_type(*args, op: str = "result_type") -> tuple:
    """The promoted (dtype, weak) of ``args``, or a DtypeError (IntegerOverflowError for a
    Python int too large for its company) naming ``op``."""
    try:
        return dtypes.promote(tuple(dtype_and_weak(a, op) for a in args))
    except DtypeError as e:   # (a TypePromotionError stays one)
        raise type(e)(f"{op}: {e.message}", user_frame()) from None
    except IntegerOverflowError as e:
        if e.source is not None:  # already located (a Python int beyond 64 bits)
            raise
        ints = ", ".join(str(a) for a in args if type(a) is int and not -2**31 <= a < 2**31)
        value = f"the Python int {ints}: " if ints else ""
        raise IntegerOverflowError(f"{op}: {value}{e.message}", user_frame()) from None


def broadcast_shapes(name, *shapes) -> tuple:
    """NumPy's broadcast of ``shapes`` (computed on the shapes alone: any size works)."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for k in range(rank):
        sizes = {s[len(s) - rank + k] for s in shapes if len(s) - rank + k >= 0} - {1}
        if len(sizes) > 1:
            raise ShapeError(f"{name}: shapes {', '.join(map(str, shapes))} cannot be "
                             f"broadcast together", user_frame())
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


# An array of a standard float dtype meeting a Python float or int (not a bool, which joins
# strong; an int within int32, which needs no range check) keeps its dtype and weak type, as
# JAX's lattice joins them: promote_args takes that case straight to a 0-d operand of the
# array's type, kept for reuse (a step's Python constants recur).
_STANDARD_FLOATS = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64,
                                                    dtypes.bfloat16))
_SCALAR_OPERANDS: dict = {}
_MAX_SCALAR_OPERANDS = 512


def _small_scalar(x) -> bool:
    return type(x) is float or (type(x) is int and -2**31 <= x < 2**31)


def _float_scalar(x, dtype, weak):
    """The Python float or int ``x`` as a 0-d Array of the float ``dtype``, weak iff ``weak``."""
    if transfers.guarded() and not tracing():   # jax_transfer_guard: a transfer
        transfers.implicit_host_value(x)
    key = (x, type(x), math.copysign(1.0, x), dtype, weak)   # -0.0 == 0.0 == 0 as keys
    operand = _SCALAR_OPERANDS.get(key)
    if operand is None:
        operand = scalar_array(x, dtype, weak)
        if x == x and len(_SCALAR_OPERANDS) < _MAX_SCALAR_OPERANDS:   # NaN never hits
            operand._value.flags.writeable = False
            _SCALAR_OPERANDS[key] = operand
    return operand


def convert(x, dtype, weak=False):
    """``x`` as an array of ``dtype``; a converted value is weak iff ``weak`` (the promoted
    type of mixed operands is weak when JAX's lattice joins them at a weak node)."""
    if type(x) in _PY_SCALARS:
        if transfers.guarded() and not tracing():   # jax_transfer_guard: a transfer
            transfers.implicit_host_value(x)
        return scalar_array(x, dtype, weak)
    x = asarray(x)
    if x.dtype != dtype:  # a Python float argument of jit converts from its full value
        source = full_precision(x)
        return convert_exactly(x if source is None else source, dtype, weak_type=weak)
    if x.weak_type and not weak and dtype == dtypes.bool_:   # bools join strong, as JAX's
        return lax.convert_element_type(x, dtype)
    return x


def broadcast_to_shape(x, shape, op: str = "broadcast_to"):
    """``x`` broadcast NumPy-style to ``shape`` (one broadcast_in_dim)."""
    shape = tuple(shape)
    if tuple(x.shape) == shape:
        return x
    lead = len(shape) - x.ndim
    if lead < 0 or any(d not in (1, shape[lead + i]) for i, d in enumerate(x.shape)):
        raise ShapeError(f"{op}: cannot broadcast {x.aval} to shape {shape}; each dimension "
                         f"must be 1 or match (NumPy broadcasting)", user_frame())
    return lax.broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


def to_inexact(dtype):
    """The float dtype integer/bool values turn into (64-bit integers keep 64 bits); float
    and complex dtypes stay."""
    if dtypes.is_inexact(dtype):
        return dtype
    return dtypes.float64 if dtype in (dtypes.int64, dtypes.uint64) else dtypes.float32


def promote_inexact(op, *xs) -> list:
    """The operands as arrays of their common floating-point dtype (integers and bools become
    float32, 64-bit integers float64), shapes untouched (JAX's ``promote_dtypes_inexact``)."""
    xs = [asarray(x, op=op) for x in xs]
    dtype, weak = result_type(*xs, op=op)
    return [convert(x, to_inexact(dtype), weak) for x in xs]


def promote_args(name, *args, kind=None):
    """Promote to a common dtype and broadcast to a common shape (rank-0 operands stay
    scalars, which elementwise primitives broadcast for free)."""
    if len(args) == 2:
        a, b = args
        if type(a) is Array and type(b) is Array:
            ta, tb = a.aval, b.aval
            if (ta is tb or ta == tb) and (kind != "float" or dtypes.is_inexact(ta.dtype)) \
                    and not (ta.weak_type and ta.dtype == dtypes.bool_):  # weak bools: strong
                return args  # already one dtype and one shape: nothing to do
        elif type(a) is Array and _small_scalar(b) and a.dtype in _STANDARD_FLOATS:
            return a, _float_scalar(b, a.dtype, a.weak_type)
        elif type(b) is Array and _small_scalar(a) and b.dtype in _STANDARD_FLOATS:
            return _float_scalar(a, b.dtype, b.weak_type), b
    dtype, weak = result_type(*args, op=name)
    if kind == "float":
        dtype = to_inexact(dtype)
    out = [convert(a, dtype, weak) for a in args]
    shapes = [tuple(a.shape) for a in out]
    if all(s == shapes[0] for s in shapes):
        return out
    if NUMPY_RANK_PROMOTION.changed and NUMPY_RANK_PROMOTION.get() != "allow":
        check_rank_promotion(name, shapes)
    shape = broadcast_shapes(name, *shapes)
    return [a if a.ndim == 0 else broadcast_to_shape(a, shape) for a in out]


_RANK_PROMOTION_DOC = "https://docs.jax.dev/en/latest/rank_promotion_warning.html"


def check_rank_promotion(name, shapes) -> None:
    """``jax_numpy_rank_promotion``: operands of different nonzero ranks broadcast against
    each other warn (``'warn'``) or raise a ValueError (``'raise'``), as JAX."""
    mode = NUMPY_RANK_PROMOTION.get()
    if mode == "allow" or len({len(s) for s in shapes if s}) < 2:
        return
    listed = " ".join(str(tuple(s)) for s in shapes)
    if mode == "raise":
        raise ShapeError(f"Operands could not be broadcast together for {name} on shapes "
                         f"{listed} and with the config option "
                         f"jax_numpy_rank_promotion='raise'. For more information, see "
                         f"{_RANK_PROMOTION_DOC}.", user_frame())
    warnings.warn(f"Following NumPy automatic rank promotion for {name} on shapes {listed}. "
                  f"Set the jax_numpy_rank_promotion config option to 'allow' to disable "
                  f"this warning; for more information, see {_RANK_PROMOTION_DOC}.",
                  UserWarning, stacklevel=dtypes._user_stacklevel())


def promote_dtypes(name, *args, kind=None):
    """The arguments as arrays of their promoted dtype (inexact for ``kind="float"``), each
    keeping its shape."""
    dtype, weak = result_type(*args, op=name)
    if kind == "float":
        dtype = to_inexact(dtype)
    return [convert(a, dtype, weak) for a in args]


def check_dtype_kind(name, x, kind):
    dt = x.dtype
    if kind == "int_or_bool" and not (dtypes.is_integer(dt) or dtypes.is_bool(dt)):
        raise DtypeError(f"{name} requires integer or bool operands, got {x.aval}",
                         user_frame())


def numeric_args(name, *xs):
    """Promoted operands, with bools turned into int32 (arithmetic has no bool form)."""
    xs = promote_args(name, *xs)
    if xs[0].dtype == dtypes.bool_:
        xs = [lax.convert_element_type(x, dtypes.int32, weak_type=x.weak_type) for x in xs]
    return xs
