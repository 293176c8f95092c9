"""The block values of a ``pto.kernel`` body as ``kernel/lower.py`` lowers it, and the int32
index literal its scalar arithmetic uses."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ptojax import dtypes
from ptojax.ir.core import Literal
from ptojax.ir.types import TensorType

I32 = TensorType((), dtypes.int32)
FULL = "full"


def idx(value: int) -> Literal:
    return Literal(np.int32(value), I32)


def _is_lit(a, value=None) -> bool:
    return type(a) is Literal and (value is None or int(a.value) == value)


@dataclass(eq=False)
class Value:
    """A block value inside a kernel body. ``kind``:

    tile     ``atom`` is a UB tile of ``layout`` (full | row | col)
    scalar   ``atom`` is a scalar (Literal or Var)
    bcast    ``src`` (a row/col/scalar Value) broadcast to ``shape`` (``layout``: what src is)
    acc      ``atom`` is an L0C accumulator holding ``shape`` (``dtype``: the block dtype)
    window   a GM window not loaded yet: ``ref`` (GM atom), ``starts``, ``sizes``
    iota     indices along ``dim`` of ``shape``
    gm       ``atom`` is a GM array (a ref)
    trans    ``src`` transposed (only a matmul reads it)
    """
    kind: str
    shape: tuple
    dtype: object
    scope: object
    atom: object = None
    layout: str = FULL
    src: object = None
    ref: object = None
    starts: tuple = ()
    sizes: tuple = ()
    dim: int = 0
    made: dict = field(default_factory=dict)
