"""The type aliases ``jax.lax`` exports for annotations: ``PrecisionLike``,
``DotDimensionNumbers`` and ``ConvGeneralDilatedDimensionNumbers`` (what the ``precision``
and ``dimension_numbers`` arguments accept)."""
from __future__ import annotations

from typing import Sequence, Tuple, Union

from ptojax.ops.convolution import ConvDimensionNumbers
from ptojax.ops.dot_algorithms import DotAlgorithm, DotAlgorithmPreset
from ptojax.ops.linalg import Precision

PrecisionLike = Union[None, str, Precision, Tuple[str, str], Tuple[Precision, Precision],
                      DotAlgorithm, DotAlgorithmPreset]
DotDimensionNumbers = Tuple[Tuple[Sequence[int], Sequence[int]],
                            Tuple[Sequence[int], Sequence[int]]]
ConvGeneralDilatedDimensionNumbers = Union[Tuple[str, str, str], ConvDimensionNumbers, None]
