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


class ShapeError(PtoError, ValueError):
    """Operand shapes that do not fit the operation (both shapes and the op are named)."""


class DtypeError(PtoError, TypeError):
    """An unsupported dtype, or dtypes an operation cannot combine."""


class AxisError(PtoError, ValueError):
    """An axis out of range for the array's rank, or repeated."""


class IndexingError(PtoError, IndexError):
    """An index that does not fit the array: out of bounds, too many indices, a mask of the
    wrong shape."""


class ConcretizationError(PtoError, TypeError):
    """A traced value was used where Python needs a concrete value (bool, int, index)."""


class LeakedTracerError(PtoError, RuntimeError):
    """A traced value escaped the function being traced and was used after its trace ended."""


class StaticArgumentError(PtoError, TypeError):
    """A static argument is unhashable or a static_argnums/argnames entry is invalid."""


class NonArrayLeafError(PtoError, TypeError):
    """A pytree leaf that is not an array or a scalar where arrays are expected."""


class IRVerificationError(PtoError):
    """An IR that breaks an invariant: types, single assignment, use before definition."""


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
    """An option or environment variable with a value ptojax cannot use: the message names
    the option, the value and what is accepted."""


class KernelCheckError(PtoError, RuntimeError):
    """A host-built kernel failed a runtime check the hardware would not forgive: pipes not
    ordered by set_flag/wait_flag, a tile outside its buffer, a window that does not fit."""
