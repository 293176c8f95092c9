"""Errors ptojax raises at users.

Every error says what was wrong, where in the user's code (file:line of the traced call) and
what to do. The location is attached by the machinery that knows it (tracing, bind), so the
code that detects a problem only has to describe it.
"""
from __future__ import annotations


class PtoError(Exception):
    """Base class of every ptojax error. ``source`` is the user's (file, line, function)."""

    def __init__(self, message: str, source=None):
        super().__init__(message)
        self.message = message
        self.source = source

    def with_source(self, source):
        if self.source is None and source is not None:
            self.source = source
        return self

    def __str__(self):
        if self.source is None:
            return self.message
        return f"{self.message}\n  --> {self.source}"


class JAXTypeError(PtoError, TypeError):
    """JAX's base class of its TypeErrors about tracing (``jax.errors.JAXTypeError``): a
    concrete value needed where a traced one was given, a tracer that escaped, a reused
    PRNG key."""


class JAXIndexError(PtoError, IndexError):
    """JAX's base class of its IndexErrors about tracing (``jax.errors.JAXIndexError``)."""


class JaxprTypeError(PtoError, TypeError):
    """A program (JAX: a jaxpr; here an IR) whose types do not check (``jax.errors.
    JaxprTypeError``, raised by JAX's checker under ``jax_enable_checks``)."""


class JaxRuntimeError(PtoError, RuntimeError):
    """A compiled program failed while running (``jax.errors.JaxRuntimeError``): a host
    callback raised, or the runtime could not complete the computation."""


class KeyReuseError(JAXTypeError):
    """A PRNG key consumed twice while ``jax_debug_key_reuse`` checks keys
    (``jax.errors.KeyReuseError``)."""


class ShapeError(PtoError, ValueError, TypeError):
    """Operand shapes that do not fit the operation (both shapes and the op are named). A
    ValueError (as NumPy's broadcasting errors) and a TypeError (as JAX's shape checks of
    lax operations, e.g. dot_general), so either ``except`` catches it."""


class DtypeError(PtoError, TypeError):
    """An unsupported dtype, or dtypes an operation cannot combine."""


class TypePromotionError(DtypeError, ValueError):
    """Dtypes with no implicit promotion path: float8 with another float, int4 with int8, or
    any mixed pair under ``jax_numpy_dtype_promotion='strict'``. A ValueError, as JAX's
    ``TypePromotionError``, and a DtypeError."""


class SamplerDtypeError(DtypeError, ValueError):
    """A random sampler's ``dtype=`` of the wrong kind (an integer dtype for a float
    sampler): a ValueError, as JAX's, and a DtypeError."""


class AxisError(PtoError, ValueError, TypeError):
    """An axis out of range for the array's rank, or repeated: a ValueError, as NumPy's and
    jax.numpy's, and a TypeError, as the shape rules of jax.lax raise (``lax.concatenate``,
    ``transpose``, ``rev``, ``dot_general`` given an axis beyond the rank), so either
    ``except`` catches it."""


class IndexingError(PtoError, IndexError):
    """An index that does not fit the array: out of bounds, too many indices, a mask of the
    wrong shape."""


class NonConcreteBooleanIndexError(IndexingError, JAXIndexError):
    """A traced boolean mask used as an index (its result's size would depend on values), as
    JAX's (an IndexError)."""


class ConcretizationError(JAXTypeError):
    """A traced value was used where Python needs a concrete value (bool, int, index)."""


ConcretizationTypeError = ConcretizationError   # JAX's name


class TracerBoolConversionError(ConcretizationError):
    """A traced value was used as a Python bool (``if``/``while``/``and``/``or``), as JAX's."""


class TracerIntegerConversionError(ConcretizationError):
    """A traced value was used as a Python int or index, as JAX's."""


class TracerArrayConversionError(ConcretizationError):
    """A traced value was converted to a numpy array, as JAX's."""


class InconclusiveDimensionOperation(PtoError, ValueError):
    """A question about symbolic dimensions (``seq < 8``, ``seq // 3``) whose answer depends
    on the size the dimension takes at run time (JAX's name)."""


class DimensionRangeError(ShapeError):
    """An argument's size on a dynamic dimension is outside the range declared for it, or
    two arguments give one dimension different sizes."""


class LeakedTracerError(JAXTypeError, RuntimeError):
    """A traced value escaped the function being traced and was used after its trace ended:
    a JAXTypeError, as JAX's ``UnexpectedTracerError``, and a RuntimeError, as ptojax
    raised it before."""


UnexpectedTracerError = LeakedTracerError   # JAX's name


class StaticArgumentError(PtoError, ValueError, TypeError):
    """A static argument is unhashable or a static_argnums/argnames entry is invalid (a
    ValueError, as JAX's)."""


class IntegerOverflowError(PtoError, OverflowError):
    """A Python int too large for the integer type it must take (int32, or int64 next to a
    64-bit operand), as JAX's OverflowError."""


class NonArrayLeafError(PtoError, TypeError):
    """A pytree leaf that is not an array or a scalar where arrays are expected; also a list
    or tuple given where an operation takes an array (as JAX's ``check_arraylike``)."""


class NoneValueError(NonArrayLeafError, ValueError):
    """None where ``jnp.array``/``asarray`` needs a value: a ValueError, as JAX's, and a
    NonArrayLeafError (a TypeError), as ptojax's other values that are not arrays."""


class MaskedArrayError(NonArrayLeafError, ValueError):
    """A numpy masked array given where ptojax takes an array: refused, as JAX refuses it
    (a ValueError), since its mask would be dropped silently. ``pnp.array`` takes its data."""


def is_masked_array(x) -> bool:
    """``x`` is a ``numpy.ma.MaskedArray`` (told by type, without importing numpy.ma here)."""
    return any(c.__name__ == "MaskedArray" and c.__module__.startswith("numpy.ma")
               for c in type(x).__mro__)


def masked_array_error(op: str, source=None) -> MaskedArrayError:
    return MaskedArrayError(f"{op}: numpy masked arrays are not supported as inputs (as in "
                            f"JAX): their mask would be dropped; pass arr.filled(value) or "
                            f"arr.data", source)


def non_array_error(x, op: str, source=None) -> NonArrayLeafError:
    """The error for ``x`` (a list, tuple or other non-array) given to ``op`` where it takes
    an array: JAX's wording, and the fix."""
    return NonArrayLeafError(
        f"{op} requires ndarray or scalar arguments, got {type(x).__name__} {x!r:.60}; pass "
        f"an array or a Python scalar (as in JAX, a list or tuple is not converted "
        f"implicitly: use pnp.asarray(...) of it)", source)


class IRVerificationError(JaxprTypeError):
    """An IR that breaks an invariant: types, single assignment, use before definition (a
    ``JaxprTypeError``, as JAX's checker raises for a jaxpr)."""


class UnsupportedError(PtoError, NotImplementedError):
    """A transform has no rule for a primitive, or a feature outside what ptojax supports."""


class GradError(PtoError, TypeError):
    """Bad use of grad/vjp/jvp: non-scalar output, integer input without allow_int, ..."""


class CustomRuleError(PtoError, TypeError):
    """A custom_vjp/custom_jvp rule returned the wrong structure, shapes or dtypes."""


class BatchingError(PtoError, ValueError):
    """Bad use of vmap: inconsistent axis sizes, bad in_axes/out_axes."""


class ControlFlowError(PtoError, TypeError):
    """Branch or carry types that disagree in cond/switch/while_loop/scan."""


class TileError(PtoError, ValueError):
    """A tile configuration that overflows a buffer or breaks an alignment rule."""


class ShardingError(PtoError, ValueError):
    """A sharding that does not fit the mesh or the value."""


class CollectiveError(PtoError, RuntimeError):
    """A collective that cannot complete: unknown axis, mismatched participants, a dead rank."""


class CompileError(PtoError, RuntimeError):
    """The host C++ compiler rejected generated kernel source."""


class CacheError(CompileError):
    """The kernel cache directory cannot be used: it cannot be created or written, or it is
    not private to this user (another user could plant libraries in it). The message names
    the path, why, and what to do."""


class ConfigError(PtoError, ValueError):
    """An unknown ``pto.config`` option, or an option or environment variable with a value
    ptojax cannot use: the message names the option, the value and what is accepted."""


class KernelCheckError(PtoError, RuntimeError):
    """A host-built kernel failed a runtime check the hardware would not forgive: pipes not
    ordered by set_flag/wait_flag, a tile outside its buffer, a window that does not fit."""


# Python/numpy exceptions raised on behalf of user code --------------------------------------
# An exception numpy or Python raises inside an operation (a MemoryError allocating a result, a
# ValueError of a numpy routine) is re-raised as a PtoError that is *also* an instance of a
# builtin class it was (``except MemoryError`` still catches it) and names the user's line.
_BUILTIN_BASES = (MemoryError, RecursionError, OverflowError, ZeroDivisionError,
                  FloatingPointError, ArithmeticError, KeyError, IndexError, LookupError,
                  NotImplementedError, RuntimeError, ValueError, TypeError)
_LOCATED: dict = {}


def _located_class(cls):
    """PtoError mixed with the most specific builtin exception class ``cls`` derives from."""
    located = _LOCATED.get(cls)
    if located is None:
        base = next(b for b in cls.__mro__ if b in _BUILTIN_BASES)
        located = _LOCATED.get(base)
        if located is None:
            located = type(base.__name__, (PtoError, base), {"__module__": __name__})
            _LOCATED[base] = located
        _LOCATED[cls] = located
    return located


def located(exc: BaseException, source, what: str = "") -> BaseException:
    """``exc`` with the user's ``source``: a PtoError is given the source it lacks; an exception
    of a builtin class becomes a PtoError of that class whose message says what failed
    (``what``, e.g. "running `f` (jit)"), caused by ``exc`` if it was raised; any other
    exception (a user's own class) is returned as it is."""
    if isinstance(exc, PtoError):
        return exc.with_source(source)
    if not any(b in _BUILTIN_BASES for b in type(exc).__mro__):
        return exc
    message = str(exc) or type(exc).__name__
    if what:
        message = f"{what}: {type(exc).__name__}: {message}"
    err = _located_class(type(exc))(message, source)
    if exc.__traceback__ is not None:
        err.__cause__ = exc
    return err


def callback_error(exc: BaseException) -> BaseException:
    """The error for ``exc``, raised by a user's host callback (``pure_callback``,
    ``io_callback``, ``debug.callback``) while a program ran: as JAX, a ``JaxRuntimeError``
    ("INTERNAL: CpuCallback error calling callback: ..."), which is here also of the builtin
    class ``exc`` was (``except ValueError`` still catches a callback's ValueError); an
    exception of another class (the user's own) is returned as it is."""
    base = next((b for b in type(exc).__mro__ if b in _BUILTIN_BASES), None)
    if base is None:
        return exc
    cls = _CALLBACK_ERRORS.get(base)
    if cls is None:
        cls = _CALLBACK_ERRORS[base] = type("JaxRuntimeError", (JaxRuntimeError, base),
                                            {"__module__": __name__})
    err = cls(f"INTERNAL: CpuCallback error calling callback: {type(exc).__name__}: {exc}")
    err.__cause__ = exc
    return err


_CALLBACK_ERRORS: dict = {}
