"""Dtypes: the supported set, short names for printing, and JAX's type promotion with weak types.

Promotion follows JAX's lattice: the result of combining dtypes is their least upper bound.
Python scalars are *weak*: they adopt the other operand's dtype (f16 array * 2.0 stays f16).
Values made only from Python floats/ints/complex numbers default to float32/int32/complex64.

**Canonical dtypes** (JAX's ``canonicalize_dtype``): without x64, 64-bit numpy inputs are
32-bit (``canonical_dtype``/``canonical_value``, silently) and 64-bit ``dtype=`` arguments are
narrowed with JAX's warning (``user_dtype``); a Python int outside the int32 range is JAX's
OverflowError. These are called at the boundaries (asarray, eager operands, jit/grad/vmap
arguments, device_put, dtype arguments); below them nothing is narrowed: a 64-bit operand (an
Array made in x64 mode, ptojax's own float64 evaluations) keeps a 64-bit result, and a 64-bit
join of narrower types is narrowed to 32 bits (JAX without x64: int32 + uint32 is int32).

**x64 mode** (``jax_enable_x64``, JAX's flag): the default dtypes become float64/int64/
complex128 and promotion is JAX's x64 lattice (no narrowing; a Python int is a weak int64).
The flag is read here only (``x64_enabled``): set globally by ``pto.config.update``, at import
from the ``JAX_ENABLE_X64`` environment variable (as JAX), or per thread by
``pto.enable_x64(...)`` as a context manager.
"""
from __future__ import annotations

import contextlib
import functools
import sys
import threading
import warnings

import ml_dtypes
import numpy as np

from ptojax.env import env_flag
from ptojax.errors import DtypeError, IntegerOverflowError, TypePromotionError
from ptojax.scoped_options import NUMPY_DTYPE_PROMOTION

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
bfloat16 = np.dtype(ml_dtypes.bfloat16)
# ml_dtypes' narrow floats and integers (JAX's small types), named as numpy names them
float8_e4m3fn, float8_e5m2, float8_e4m3, float8_e3m4 = (np.dtype(getattr(ml_dtypes, n)) for n in (
    "float8_e4m3fn", "float8_e5m2", "float8_e4m3", "float8_e3m4"))
float8_e4m3fnuz, float8_e5m2fnuz, float8_e4m3b11fnuz, float8_e8m0fnu = (
    np.dtype(getattr(ml_dtypes, n)) for n in (
        "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz", "float8_e8m0fnu"))
float4_e2m1fn, float6_e2m3fn, float6_e3m2fn = (np.dtype(getattr(ml_dtypes, n)) for n in (
    "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"))
int1, int2, int4 = (np.dtype(getattr(ml_dtypes, n)) for n in ("int1", "int2", "int4"))
uint1, uint2, uint4 = (np.dtype(getattr(ml_dtypes, n)) for n in ("uint1", "uint2", "uint4"))
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)
float0 = np.dtype([("float0", np.void, 0)])  # tangent type of integer/bool values, as in JAX

SHORT_NAMES = {
    bool_: "bool", int8: "i8", int16: "i16", int32: "i32", int64: "i64",
    uint8: "u8", uint16: "u16", uint32: "u32", uint64: "u64",
    float16: "f16", bfloat16: "bf16", float32: "f32", float64: "f64",
    float8_e4m3fn: "f8e4m3fn", float8_e5m2: "f8e5m2", float8_e4m3: "f8e4m3",
    float8_e3m4: "f8e3m4", float8_e4m3fnuz: "f8e4m3fnuz", float8_e5m2fnuz: "f8e5m2fnuz",
    float8_e4m3b11fnuz: "f8e4m3b11fnuz", float8_e8m0fnu: "f8e8m0fnu",
    float4_e2m1fn: "f4e2m1fn", float6_e2m3fn: "f6e2m3fn", float6_e3m2fn: "f6e3m2fn",
    int1: "i1", int2: "i2", int4: "i4", uint1: "u1", uint2: "u2", uint4: "u4",
    float0: "float0", complex64: "c64", complex128: "c128",
}
SUPPORTED = frozenset(SHORT_NAMES) - {float0}
FLOAT8 = frozenset({float8_e4m3fn, float8_e5m2, float8_e4m3, float8_e3m4, float8_e4m3fnuz,
                    float8_e5m2fnuz, float8_e4m3b11fnuz, float8_e8m0fnu})
# every float narrower than 16 bits (ml_dtypes'): as JAX, each one promotes only with itself
# and weak (Python) scalars
NARROW_FLOATS = FLOAT8 | {float4_e2m1fn, float6_e2m3fn, float6_e3m2fn}
# integers narrower than 8 bits (ml_dtypes'): as JAX, they promote only with themselves and
# weak scalars, and support only basic arithmetic, comparisons and casts
NARROW_INTS = frozenset({int1, int2, int4, uint1, uint2, uint4})
# dtypes whose values take fewer bits than their byte (numpy stores one per byte)
SUB_BYTE = NARROW_INTS | {float4_e2m1fn, float6_e2m3fn, float6_e3m2fn}
FLOATS = frozenset({float16, bfloat16, float32, float64}) | NARROW_FLOATS
SIGNED = frozenset({int8, int16, int32, int64, int1, int2, int4})
UNSIGNED = frozenset({uint8, uint16, uint32, uint64, uint1, uint2, uint4})
INTEGERS = SIGNED | UNSIGNED
COMPLEX = frozenset({complex64, complex128})

PYTHON_SCALARS = (bool, int, float, complex)   # weakly typed when they meet arrays (but bool)


def python_scalar_is_weak(x) -> bool:
    """Whether the Python scalar ``x`` is weakly typed: ints, floats and complexes are, a bool
    is not (as JAX: ``jnp.logical_not(True)`` is a strong bool, while a comparison of weak
    operands is a weak one)."""
    return type(x) is not bool


# ---------------------------------------------------------------------------------------------
# x64 mode: the one place its flag is kept and read.
class _X64Scopes(threading.local):
    """This thread's ``x64_scope`` values, innermost last (a class default, so that reading
    it is one attribute lookup on the hot path)."""
    stack: tuple = ()


_X64_GLOBAL = [env_flag("JAX_ENABLE_X64", False)]   # read at import, as JAX
_X64_SCOPES = _X64Scopes()
_OPEN_SCOPES = [0]              # x64_scope contexts open in any thread (0: skip the lookup)
_OPEN_SCOPES_LOCK = threading.Lock()


def x64_enabled() -> bool:
    """Whether x64 mode (``jax_enable_x64``) is on in this thread."""
    if not _OPEN_SCOPES[0]:     # the common case: one attribute-free read
        return _X64_GLOBAL[0]
    stack = _X64_SCOPES.stack
    return stack[-1] if stack else _X64_GLOBAL[0]


def set_x64_globally(value: bool) -> None:
    """Turn x64 mode on or off for the process (``pto.config.update("jax_enable_x64", ...)``);
    a thread inside an ``x64_scope`` keeps its context's value."""
    _X64_GLOBAL[0] = bool(value)


@contextlib.contextmanager
def x64_scope(value: bool):
    """x64 mode set to ``value`` in this thread for the duration of the context."""
    outer = _X64_SCOPES.stack
    _X64_SCOPES.stack = (*outer, bool(value))
    with _OPEN_SCOPES_LOCK:
        _OPEN_SCOPES[0] += 1
    try:
        yield
    finally:
        _X64_SCOPES.stack = outer
        with _OPEN_SCOPES_LOCK:
            _OPEN_SCOPES[0] -= 1


def default_float() -> np.dtype:
    """The dtype of Python floats and float defaults: float64 in x64 mode, else float32."""
    return float64 if x64_enabled() else float32


def default_int() -> np.dtype:
    """The dtype of Python ints, integer defaults and indices: int64 in x64 mode, else int32."""
    return int64 if x64_enabled() else int32


def default_uint() -> np.dtype:
    """The default unsigned integer dtype: uint64 in x64 mode, else uint32."""
    return uint64 if x64_enabled() else uint32


def default_complex() -> np.dtype:
    """The dtype of Python complex numbers: complex128 in x64 mode, else complex64."""
    return complex128 if x64_enabled() else complex64


def short_name(dtype) -> str:
    return SHORT_NAMES.get(dtype, str(dtype))


def is_float(dtype) -> bool:
    return dtype in FLOATS


def is_complex(dtype) -> bool:
    return dtype in COMPLEX


def is_inexact(dtype) -> bool:
    """Floating-point or complex: the dtypes that have derivatives."""
    return dtype in FLOATS or dtype in COMPLEX


def real_dtype(dtype) -> np.dtype:
    """The dtype of the real and imaginary parts of ``dtype`` (itself when real)."""
    return {complex64: float32, complex128: float64}.get(dtype, dtype)


def complex_dtype(dtype) -> np.dtype:
    """The complex dtype with parts of ``dtype`` (64-bit parts for float64 and 64-bit ints,
    else 32-bit ones)."""
    if dtype in COMPLEX:
        return dtype
    return complex128 if dtype in (float64, int64, uint64) else complex64


def is_integer(dtype) -> bool:
    return dtype in INTEGERS


def is_unsigned(dtype) -> bool:
    return dtype in UNSIGNED


def is_bool(dtype) -> bool:
    return dtype == bool_


def accumulates_in_f32(dtype) -> bool:
    """float16, bfloat16 and the narrow floats (float8/6/4): their sums and products
    accumulate in float32, as the hardware does."""
    return dtype in (float16, bfloat16) or dtype in NARROW_FLOATS


_ALIASES = {**{d.name: d for d in NARROW_FLOATS | NARROW_INTS | {bfloat16}},
            "bf16": bfloat16, "f16": float16, "f32": float32, "f64": float64,
            "c64": complex64, "c128": complex128}


_PYTHON_TYPES = {float: default_float, int: default_int, complex: default_complex}


@functools.lru_cache(maxsize=None)
def _canonicalize(dtype) -> np.dtype:
    if isinstance(dtype, str) and dtype in _ALIASES:
        return _ALIASES[dtype]
    if dtype is bool:
        return bool_
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt not in SUPPORTED:
        names = ", ".join(sorted(SHORT_NAMES[d] for d in SUPPORTED))
        raise DtypeError(f"dtype {dtype!r} is not supported by ptojax; supported dtypes: {names}")
    return dt


def canonicalize(dtype) -> np.dtype:
    """``dtype`` as a supported numpy dtype (Python float/int/complex map to the default
    dtypes: float32/int32/complex64, or their 64-bit forms in x64 mode)."""
    if type(dtype) is np.dtype and dtype in SUPPORTED:
        return dtype
    if isinstance(dtype, type) and dtype in _PYTHON_TYPES:
        return _PYTHON_TYPES[dtype]()
    try:
        return _canonicalize(dtype)
    except DtypeError:
        raise
    except TypeError:  # unhashable
        raise DtypeError(f"{dtype!r} is not a dtype") from None


# ---------------------------------------------------------------------------------------------
# Canonical dtypes (JAX's ``canonicalize_dtype``): without x64 a 64-bit dtype is its 32-bit form.
_TO_32_BITS = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}
WIDE = frozenset(_TO_32_BITS)   # the dtypes canonicalization narrows without x64


def canonical_dtype(dtype) -> np.dtype:
    """The dtype values of ``dtype`` take as ptojax inputs (a supported numpy dtype): without
    x64 a 64-bit dtype becomes its 32-bit form (float64 -> float32, int64 -> int32,
    uint64 -> uint32, complex128 -> complex64), as JAX's ``canonicalize_dtype``."""
    dt = canonicalize(dtype)
    if dt in _TO_32_BITS and not x64_enabled():
        return _TO_32_BITS[dt]
    return dt


def canonical_value(x) -> np.ndarray:
    """A numpy array or scalar given as an input (to an operation, ``jit``, ``asarray``,
    ``device_put``) as a numpy array of its ``canonical_dtype``, as JAX canonicalizes
    numpy inputs silently; the array itself when its dtype is already canonical."""
    x = np.asarray(x)
    dt = x.dtype
    if dt in _TO_32_BITS and not x64_enabled():
        return x.astype(_TO_32_BITS[dt])
    return x


def user_dtype(dtype, fun_name: str = "") -> np.dtype:
    """A ``dtype=`` argument of a user-facing function as the dtype the result gets (JAX's
    ``check_and_canonicalize_user_dtype``): Python ``float``/``int``/``complex`` are the
    default dtypes; without x64 a 64-bit dtype is narrowed to 32 bits with JAX's
    ``UserWarning`` naming ``fun_name``."""
    dt = canonicalize(dtype)
    if dt in _TO_32_BITS and not x64_enabled():
        narrow = _TO_32_BITS[dt]
        where = f" requested in {fun_name}" if fun_name else ""
        warnings.warn(f"Explicitly requested dtype {dt.name}{where} is not available, and "
                      f"will be truncated to dtype {narrow.name}. To enable more dtypes, set "
                      f"the jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell "
                      f"environment variable. See https://github.com/jax-ml/jax#current-gotchas "
                      f"for more.", UserWarning, stacklevel=_user_stacklevel())
        return narrow
    return dt


def _user_stacklevel() -> int:
    """The stack level of the first frame outside ptojax (the user's call), for warnings."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_globals.get("__name__", "").startswith("ptojax"):
        frame, level = frame.f_back, level + 1
    return level


def finfo(dtype):
    """Machine limits of a float dtype (of a complex dtype's parts): ``eps``, ``max``,
    ``tiny``, ``bits``, ...; bfloat16 and the float8/6/4 types included (ml_dtypes').

    Example:
        >>> pnp.finfo(pnp.bfloat16).bits, float(pnp.finfo(pnp.float32).eps)
        (16, 1.1920928955078125e-07)
    """
    dtype = real_dtype(canonicalize(dtype))   # a complex dtype's parts (as numpy)
    if dtype == bfloat16 or dtype in NARROW_FLOATS:
        return ml_dtypes.finfo(dtype)
    return np.finfo(dtype)


def iinfo(dtype):
    """Machine limits of an integer dtype: ``min``, ``max``, ``bits`` (int4 & co:
    ml_dtypes').

    Example:
        >>> pnp.iinfo(pnp.int8).min, pnp.iinfo(pnp.int8).max
        (-128, 127)
    """
    dtype = canonicalize(dtype)
    if dtype == bool_:
        raise DtypeError("iinfo of bool is undefined")
    return ml_dtypes.iinfo(dtype) if dtype in NARROW_INTS else np.iinfo(dtype)


def has_inf(dtype) -> bool:
    """Whether the float dtype ``dtype`` represents infinity (float8_e4m3fn, the fnuz types,
    float8_e8m0fnu and float6/float4 do not: infinity converts to NaN or saturates)."""
    return _has_inf(np.dtype(dtype))


@functools.lru_cache(maxsize=None)
def _has_inf(dtype) -> bool:
    with np.errstate(all="ignore"):
        return bool(np.isinf(np.array(np.inf).astype(dtype).astype(np.float64)))


def lowest(dtype):
    """The identity of ``max`` for ``dtype``: -inf where the float dtype has it, else its
    lowest finite value (float8_e4m3fn: -448); an integer dtype's minimum."""
    if dtype in COMPLEX or (is_float(dtype) and has_inf(dtype)):
        return -np.inf
    return float(finfo(dtype).min) if is_float(dtype) else int(iinfo(dtype).min)


def highest(dtype):
    """The identity of ``min`` for ``dtype``: inf where the float dtype has it, else its
    largest finite value; an integer dtype's maximum."""
    if dtype in COMPLEX or (is_float(dtype) and has_inf(dtype)):
        return np.inf
    return float(finfo(dtype).max) if is_float(dtype) else int(iinfo(dtype).max)


# ---------------------------------------------------------------------------------------------
# Promotion lattice (JAX's, non-strict). Nodes are dtypes plus the weak kinds "i*", "f*", "c*".
WEAK_INT, WEAK_FLOAT, WEAK_COMPLEX = "i*", "f*", "c*"
_LATTICE = {
    bool_: [WEAK_INT],
    WEAK_INT: [uint8, int8, *sorted(NARROW_INTS, key=str)],
    **{t: [] for t in NARROW_INTS},
    uint8: [int16, uint16], uint16: [int32, uint32], uint32: [int64, uint64], uint64: [WEAK_FLOAT],
    int8: [int16], int16: [int32], int32: [int64], int64: [WEAK_FLOAT],
    WEAK_FLOAT: [*sorted(NARROW_FLOATS, key=str), bfloat16, float16, WEAK_COMPLEX],
    **{t: [] for t in NARROW_FLOATS},
    bfloat16: [float32], float16: [float32], float32: [float64, complex64],
    float64: [complex128],
    WEAK_COMPLEX: [complex64], complex64: [complex128], complex128: [],
}


def _upper_bounds():
    bounds = {}

    def visit(node):
        if node not in bounds:
            ups = {node}
            for parent in _LATTICE[node]:
                ups |= visit(parent)
            bounds[node] = frozenset(ups)
        return bounds[node]

    for node in _LATTICE:
        visit(node)
    return bounds


_UPPER = _upper_bounds()
# jax_numpy_dtype_promotion='strict': a dtype joins only itself; a weak Python scalar joins
# any dtype of its kind or a wider kind (JAX's strict lattice)
_STRICT_UPPER = {
    **{d: frozenset({d}) for d in SUPPORTED},
    WEAK_INT: frozenset({WEAK_INT, WEAK_FLOAT, WEAK_COMPLEX}) | INTEGERS | FLOATS | COMPLEX,
    WEAK_FLOAT: frozenset({WEAK_FLOAT, WEAK_COMPLEX}) | FLOATS | COMPLEX,
    WEAK_COMPLEX: frozenset({WEAK_COMPLEX}) | COMPLEX,
}
_WEAK_NAMES = {WEAK_INT: "<class 'int'>", WEAK_FLOAT: "<class 'float'>",
               WEAK_COMPLEX: "<class 'complex'>"}


def _node(dtype, weak: bool):
    if not weak:
        return dtype
    if dtype == bool_:
        return bool_
    if dtype in COMPLEX:
        return WEAK_COMPLEX
    return WEAK_FLOAT if dtype in FLOATS else WEAK_INT


# JAX without x64 canonicalizes a 64-bit result to 32 bits; ptojax does so when no operand is
# 64-bit (an explicit 64-bit operand keeps the x64 result).
_NARROW = {int64: int32, uint64: uint32, float64: float32}


def _describe(types) -> str:
    return " and ".join(short_name(d) + (" (weak)" if w else "") for d, w in types)


def promote(types: tuple) -> tuple:
    """Least upper bound of ``((dtype, weak), ...)`` → ``(dtype, weak)`` (JAX's x64 lattice
    in x64 mode)."""
    if NUMPY_DTYPE_PROMOTION.changed and NUMPY_DTYPE_PROMOTION.get() == "strict":
        return _promote(types, x64_enabled(), True)
    return _promote(types, x64_enabled())


@functools.lru_cache(maxsize=4096)
def _promote(types: tuple, x64: bool, strict: bool = False) -> tuple:
    nodes = tuple(_node(d, w) for d, w in types)
    upper = _STRICT_UPPER if strict else _UPPER
    common = functools.reduce(frozenset.intersection, (upper[n] for n in nodes))
    least = [n for n in common if all(m in upper[n] for m in common)]
    if not least and strict:
        names = tuple(_WEAK_NAMES.get(n) or str(n) for n in nodes)
        raise TypePromotionError(
            f"Input dtypes {names} have no available implicit dtype promotion path when "
            f"jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired "
            f"output type, or set jax_numpy_dtype_promotion=standard.")
    if not least:
        raise TypePromotionError(
            f"no common dtype for {_describe(types)}: as JAX, float8/6/4 types promote only "
            f"with themselves and Python scalars, and 1/2/4-bit integers likewise. Convert "
            f"explicitly, e.g. x.astype(jnp.float32)")
    if not x64:
        _check_wide_python_ints(types)
    node = least[0]
    if node == WEAK_INT:
        return _weak_default(types, is_integer, int32, int64, x64), True
    if node == WEAK_FLOAT:
        return _weak_default(types, is_float, float32, float64, x64), True
    if node == WEAK_COMPLEX:
        # a weak float among the operands counts as the complex type with its parts
        widened = tuple((complex_dtype(d) if is_inexact(d) else d, w) for d, w in types)
        return _weak_default(widened, is_complex, complex64, complex128, x64), True
    if not x64 and node in _NARROW and not any(d.itemsize == 8 for d, _ in types):
        return _NARROW[node], False
    if node == bool_:   # no weak bool node: one weak bool keeps its type, a join is strong
        return bool_, len(types) == 1 and types[0][1]
    return node, False


def _is_wide_python_int(dtype, weak) -> bool:
    return weak and dtype == int64


def _check_wide_python_ints(types) -> None:
    """A weak int64 (a Python int outside the int32 range) needs a 64-bit operand beside it:
    JAX with x64 types it int64; without x64 it cannot be typed (OverflowError)."""
    if any(_is_wide_python_int(d, w) for d, w in types) and not any(
            d.itemsize == 8 and not _is_wide_python_int(d, w) for d, w in types):
        raise IntegerOverflowError(
            f"a Python int outside the int32 range (typed weak i64) can only be combined "
            f"with 64-bit operands, here {_describe(types)}. Make the other operand 64-bit "
            f"(e.g. .astype(numpy.int64)), pass the int as numpy.int64(...), or enable x64 "
            f"mode (pto.config.update('jax_enable_x64', True))")


def _weak_default(types, kind, default, wide, x64):
    # A weak result is 64-bit in x64 mode (JAX's canonical weak types). Otherwise 32-bit,
    # unless an operand is explicitly 64-bit (then 64-bit, as JAX with x64) or a weak operand
    # of that kind is wider (a weak f64 stays f64).
    if x64 or any(not w and d.itemsize == 8 for d, w in types):
        return wide
    same_kind = [d for d, w in types if w and kind(d)]
    return max(same_kind, key=lambda d: d.itemsize) if same_kind else default


def result_type(*dtypes_and_weak) -> tuple:
    return promote(tuple(dtypes_and_weak))


def python_scalar_dtype(x) -> np.dtype:
    """The (weak) dtype a Python scalar takes: bool, int32, float32, complex64; in x64 mode
    int64, float64, complex128. A Python int outside the default integer's range has none
    (OverflowError, JAX's text)."""
    if isinstance(x, bool):
        return bool_
    if isinstance(x, int):
        if -2**31 <= x < 2**31:
            return default_int()
        if not x64_enabled():   # JAX's text: the int cannot take the default int32
            raise IntegerOverflowError(f"Python int {x} too large to convert to int32")
        if -2**63 <= x < 2**63:
            return int64
        raise IntegerOverflowError(f"Python int {x} too large to convert to int64")
    if isinstance(x, float):
        return default_float()
    if isinstance(x, complex):
        return default_complex()
    raise DtypeError(f"{type(x).__name__} is not a Python scalar")


# extended dtypes ---------------------------------------------------------------------------
class extended(np.generic):
    """The scalar type above every extended (non-numeric) dtype, as JAX's
    ``jax.dtypes.extended``: ``issubdtype(key.dtype, extended)`` is True for typed keys."""


class prng_key(extended):
    """The scalar type of typed PRNG keys' dtypes (``key<fry>``), as JAX's
    ``jax.dtypes.prng_key``."""


def is_extended(dtype) -> bool:
    """Whether ``dtype`` is an extended dtype (its ``type`` is below ``extended``)."""
    kind = getattr(dtype, "type", None)
    return isinstance(kind, type) and issubclass(kind, extended)


def issubdtype(arg1, arg2) -> bool:
    """Whether ``arg1`` is ``arg2`` or below it in the type hierarchy (NumPy's, with JAX's
    extended dtypes: a key dtype is below ``prng_key`` and ``extended``)."""
    if is_extended(arg1):
        if is_extended(arg2):
            return arg1 == arg2
        return isinstance(arg2, type) and issubclass(arg1.type, arg2)
    if is_extended(arg2) or (isinstance(arg2, type) and issubclass(arg2, extended)):
        return isinstance(arg1, type) and issubclass(arg1, arg2)
    kinds = _ML_DTYPE_KINDS.get(arg2) if isinstance(arg2, type) else None
    if kinds is not None and _ml_dtype(arg1) is not None:   # bfloat16, float8, int4, ...
        return _ml_dtype(arg1) in kinds
    return np.issubdtype(arg1, arg2)


# numpy's abstract scalar classes -> the ml_dtypes types below them (numpy does not know
# ml_dtypes' types are floats or integers; JAX's issubdtype does)
_ML_DTYPES = NARROW_FLOATS | NARROW_INTS | {bfloat16}
_ML_DTYPE_KINDS = {
    np.generic: _ML_DTYPES, np.number: _ML_DTYPES, np.inexact: NARROW_FLOATS | {bfloat16},
    np.floating: NARROW_FLOATS | {bfloat16}, np.integer: NARROW_INTS,
    np.signedinteger: NARROW_INTS & SIGNED, np.unsignedinteger: NARROW_INTS & UNSIGNED,
}


def _ml_dtype(x):
    """``x`` (a dtype, a scalar type, a name) as an ml_dtypes dtype, or None if it is not
    one (or names no dtype)."""
    if isinstance(x, type) and issubclass(x, np.generic) and x.__module__ == "numpy":
        return None     # numpy's own (abstract or concrete) scalar classes
    try:
        dt = np.dtype(x)
    except (TypeError, ValueError):
        return None
    return dt if dt in _ML_DTYPES else None


# JAX's public dtype helpers ------------------------------------------------------------------
def canonicalize_dtype(dtype, allow_extended_dtype: bool = False):
    """``dtype`` as the dtype JAX values of it take (``jax.dtypes.canonicalize_dtype``):
    without x64 a 64-bit dtype becomes its 32-bit form; Python ``float``/``int``/``complex``
    are the default dtypes and None is the default float. An extended dtype (a key's
    ``key<fry>``) is returned as it is with ``allow_extended_dtype=True``, else a ValueError.

    Example:
        >>> pto.dtypes.canonicalize_dtype(np.float64), pto.dtypes.canonicalize_dtype(int)
        (dtype('float32'), dtype('int32'))
    """
    if is_extended(dtype):
        if allow_extended_dtype:
            return dtype
        raise ValueError(f"canonicalize_dtype: {dtype} is an extended dtype; pass "
                         f"allow_extended_dtype=True to accept it")
    if dtype is None:
        return default_float()
    if isinstance(dtype, np.dtype) and dtype == float0:
        raise ValueError(f"canonicalize_dtype: unexpected input: dtype={float0!r}")
    return canonical_dtype(dtype)


def itemsize_bits(dtype) -> int:
    """Bits per element of ``dtype`` (``jax.dtypes.itemsize_bits``): 4 for int4 and
    float4_e2m1fn, 16 for bfloat16, 64 for float64 (not canonicalized).

    Example:
        >>> pto.dtypes.itemsize_bits(pnp.int4), pto.dtypes.itemsize_bits(pnp.bfloat16)
        (4, 16)
    """
    if dtype is None:
        raise ValueError("itemsize_bits: dtype cannot be None")
    if is_extended(dtype):
        raise ValueError(f"itemsize_bits: {dtype} is an extended dtype, which has no "
                         f"element size in bits")
    if isinstance(dtype, type) and (dtype in _PYTHON_TYPES or dtype is bool):
        dt = np.dtype(dtype)
    else:
        dt = canonicalize(dtype)
    return _SUB_BYTE_BITS.get(dt, dt.itemsize * 8)


_SUB_BYTE_BITS = {int1: 1, uint1: 1, int2: 2, uint2: 2, int4: 4, uint4: 4, float4_e2m1fn: 4,
                  float6_e2m3fn: 6, float6_e3m2fn: 6}


def scalar_type_of(x) -> type:
    """The Python scalar type of ``x``'s elements (``jax.dtypes.scalar_type_of``): ``bool``,
    ``int``, ``float`` or ``complex``; ``x`` is a Python scalar or anything with a numeric
    ``dtype`` (arrays, numpy scalars).

    Example:
        >>> pto.dtypes.scalar_type_of(pnp.ones(2, pnp.bfloat16)), pto.dtypes.scalar_type_of(3)
        (<class 'float'>, <class 'int'>)
    """
    if isinstance(x, PYTHON_SCALARS):
        return type(x) if type(x) in PYTHON_SCALARS else \
            next(t for t in PYTHON_SCALARS if isinstance(x, t))
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        dtype = np.asarray(x).dtype
    if is_extended(dtype):
        raise TypeError(f"scalar_type_of: cannot interpret {dtype} as a data type: it is "
                        f"an extended dtype, with no Python scalar type")
    dt = np.dtype(dtype)
    if dt == bool_:
        return bool
    if dt in INTEGERS:
        return int
    if dt in FLOATS:
        return float
    if dt in COMPLEX:
        return complex
    raise TypeError(f"scalar_type_of: {dt} has no Python scalar type")
