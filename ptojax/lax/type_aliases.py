"""The type aliases ``jax.lax`` exports for annotations: ``PrecisionLike``,
``DotDimensionNumbers`` and ``ConvGeneralDilatedDimensionNumbers`` (what the ``precision``
and ``dimension_numbers`` arguments accept)."""
from __future__ import annotations

from typing import Sequence, Tuple, Union

from ptojax.ops.convolution import ConvDimensionNumbers
from ptojax.ops.dot_algorithms import DotAlgorithm, DotAlgorithmPreset
from ptojax.ops.linalg import Precision
from ptojax.public import add_examples as _add_examples

PrecisionLike = Union[None, str, Precision, Tuple[str, str], Tuple[Precision, Precision],
                      DotAlgorithm, DotAlgorithmPreset]
DotDimensionNumbers = Tuple[Tuple[Sequence[int], Sequence[int]],
                            Tuple[Sequence[int], Sequence[int]]]
ConvGeneralDilatedDimensionNumbers = Union[Tuple[str, str, str], ConvDimensionNumbers, None]

_add_examples(globals(), """
PrecisionLike: What ``precision=`` accepts: None, a ``Precision`` or its name, a pair of them,
    a ``DotAlgorithm`` or a ``DotAlgorithmPreset``.
    >>> pto.lax.dot(pnp.ones(2), pnp.ones(2), precision="highest")
    Array(2., dtype=float32)
DotDimensionNumbers: ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``, the
    ``dimension_numbers`` of ``dot_general``.
    >>> pto.lax.dot_general(pnp.ones((2, 3)), pnp.ones((3, 4)), (((1,), (0,)), ((), ()))).shape
    (2, 4)
ConvGeneralDilatedDimensionNumbers: The ``dimension_numbers`` of ``conv_general_dilated``:
    None, three layout strings, or a ``ConvDimensionNumbers``.
    >>> x, w = pnp.ones((1, 4, 4, 2)), pnp.ones((3, 3, 2, 5))
    >>> pto.lax.conv_general_dilated(x, w, (1, 1), "SAME",
    ...                              dimension_numbers=("NHWC", "HWIO", "NHWC")).shape
    (1, 4, 4, 5)
""")
