"""JAX's dot algorithms: ``lax.DotAlgorithm`` (a description of how a matmul multiplies and
accumulates) and ``lax.DotAlgorithmPreset`` (the named ones), accepted as the ``precision``
of ``dot_general`` and the functions built on it, as JAX accepts them.

On the host the presets JAX's CPU backend runs are accepted (the others, and any explicit
``DotAlgorithm``, raise JAX's CPU error): ``F16_F16_F16`` rounds the operands to float16 and
the product back, as XLA's CPU backend does; the others compute as the default precision
(``F64_F64_F64`` on float32 operands therefore accumulates in float32, which can differ from
JAX in the last bit).
"""
from __future__ import annotations

import dataclasses
import enum

import ml_dtypes
import numpy as np

from ptojax import dtypes
from ptojax.public import add_examples as _add_examples


@dataclasses.dataclass(frozen=True)
class DotAlgorithm:
    """The algorithm of a matmul: the types its operands are rounded to, the type it
    accumulates in, and how many components/operations it uses (JAX's ``lax.DotAlgorithm``;
    the host backend runs none of them explicitly, as JAX's CPU backend)."""
    lhs_precision_type: object
    rhs_precision_type: object
    accumulation_type: object
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


_F16, _BF16, _F32, _F64 = np.float16, ml_dtypes.bfloat16, np.float32, np.float64


class DotAlgorithmPreset(enum.Enum):
    """The named dot algorithms (JAX's ``lax.DotAlgorithmPreset``), usable as ``precision``."""
    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self):
        return f"{type(self).__name__}.{self.name}"

    def __str__(self):
        return self.name

    @property
    def supported_lhs_types(self):
        """The operand types the algorithm takes (None: any)."""
        return _SUPPORTED_TYPES.get(self.name)

    @property
    def supported_rhs_types(self):
        return _SUPPORTED_TYPES.get(self.name)

    @property
    def accumulation_type(self):
        """The type the products are summed in (None: the operands' own)."""
        return _ACCUMULATION.get(self.name)

    def supported_output_types(self, lhs_dtype, rhs_dtype):
        """The result types the algorithm can produce for these operand types (None: any)."""
        if self.name in ("ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM"):
            return (_F32, _F16, _BF16)
        if self.name in ("F16_F16_F32",):
            return (_F32, _F16)
        if self.name in ("BF16_BF16_F32",):
            return (_F32, _BF16)
        return None if self.accumulation_type is None else (self.accumulation_type,)


_SUPPORTED_TYPES = {
    "F16_F16_F16": (_F16,), "F16_F16_F32": (_F16,),
    "BF16_BF16_BF16": (_BF16, _F32), "BF16_BF16_F32": (_BF16, _F32),
    **{name: (_F32,) for name in ("BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9",
                                  "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32")},
    "F64_F64_F64": (_F64,)}
_ACCUMULATION = {
    "ANY_F8_ANY_F8_F32": _F32, "ANY_F8_ANY_F8_F32_FAST_ACCUM": _F32, "F16_F16_F16": _F16,
    "F16_F16_F32": _F32, "BF16_BF16_BF16": _BF16, "F64_F64_F64": _F64,
    **{name: _F32 for name in ("BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6",
                               "BF16_BF16_F32_X9", "TF32_TF32_F32", "TF32_TF32_F32_X3",
                               "F32_F32_F32")}}

# the presets XLA's CPU backend runs (JAX raises for the others on CPU)
HOST_PRESETS = frozenset({
    DotAlgorithmPreset.DEFAULT, DotAlgorithmPreset.F16_F16_F16,
    DotAlgorithmPreset.BF16_BF16_F32, DotAlgorithmPreset.BF16_BF16_F32_X3,
    DotAlgorithmPreset.BF16_BF16_F32_X6, DotAlgorithmPreset.F32_F32_F32,
    DotAlgorithmPreset.F64_F64_F64})


def host_preset(precision):
    """The preset ``precision`` names (a ``DotAlgorithmPreset``, its name, or a
    ``DotAlgorithm``), checked to run on the host; None when it names no algorithm."""
    if isinstance(precision, str):
        precision = DotAlgorithmPreset.__members__.get(precision)
    if isinstance(precision, DotAlgorithm) or (
            isinstance(precision, DotAlgorithmPreset) and precision not in HOST_PRESETS):
        raise ValueError(f"The precision '{precision}' is not supported by dot_general on "
                         f"CPU (the host backend runs the presets "
                         f"{sorted(p.name for p in HOST_PRESETS)}, as JAX's CPU backend)")
    return precision if isinstance(precision, DotAlgorithmPreset) else None


def rounds_operands_to(preset, dtype):
    """The narrower type a preset rounds ``dtype`` operands to on the host, or None."""
    if preset is DotAlgorithmPreset.F16_F16_F16 and dtypes.is_float(dtype) and \
            np.dtype(dtype).itemsize > 2:
        return np.dtype(np.float16)
    return None


_add_examples(globals(), """
DotAlgorithm:
    >>> alg = pto.lax.DotAlgorithm(pnp.float32, pnp.float32, pnp.float32)
    >>> alg.accumulation_type is pnp.float32
    True
DotAlgorithmPreset:
    >>> pto.lax.dot(pnp.ones((2, 2)), pnp.ones((2, 2)),
    ...             precision=pto.lax.DotAlgorithmPreset.F32_F32_F32)
    Array([[2., 2.],
           [2., 2.]], dtype=float32)
""")
