"""How a tensor primitive sits in a tile kernel: its ``tile`` fact, read by ``ptojax/tile``.

``kind`` is the family of tile rule that splits the equation into tile operations:

    elementwise  one tile op per equation (``tile_<name>``), on full or row tiles
    expand       no tile op of its own: ``expand(*args, **params)`` rewrites it into
                 tileable primitives before tiling (a special function as a polynomial)
    reduce       a row reduction (or, for ``reduce_sum``, a column sum)
    broadcast    a row/column/scalar broadcast folded into its consumers
    reshape      a reshape that keeps the kernel's rows and columns
    matmul       a cube kernel (with a fused elementwise epilogue)

The flags say what the vector unit needs of an elementwise op.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Union


@dataclass(frozen=True)
class TileForm:
    kind: str
    arith: bool = False            # vector arithmetic: a dtype the unit lacks computes in f32
    scalar_operand: bool = False   # a scalar operand stays scalar (TADDS, TCMPS, ...)
    broadcast_operand: bool = False  # operand 2 may be a row or column tile (TROWEXPAND<op>)
    commutative: bool = False
    scalar_unit: bool = False      # with only scalar operands, computed on the scalar unit
    identity: bool = False         # no instruction: the result is the operand
    check: Optional[Callable] = None   # eqn -> why this equation has no tile form, or None
    inplace: Union[bool, Callable] = True  # may overwrite an operand dying here (or params ->)
    scratch: bool = False          # needs a temporary tile shaped like its operand
    column_sum: bool = False       # reduce: may also sum over all leading axes (columns)
    accumulate_f32: bool = False   # reduce: low-precision inputs accumulate in f32
    expand: Optional[Callable] = None  # expand: the tileable equivalent, (*args, **params)
    cube: bool = False             # expand: worth it only where the cube multiplies the dtype

    def may_overwrite(self, params) -> bool:
        return self.inplace(params) if callable(self.inplace) else self.inplace


ARITH = TileForm("elementwise", arith=True)
SCALAR_ARITH = TileForm("elementwise", arith=True, scalar_operand=True)
COMPARISON = TileForm("elementwise", arith=True, scalar_operand=True)
LOGIC = TileForm("elementwise")
BROADCAST = TileForm("broadcast")
RESHAPE = TileForm("reshape")
MATMUL = TileForm("matmul")


def binary_arith(commutative: bool) -> TileForm:
    """add/sub/mul/div/max/min: scalar and row/column operands, scalar-unit arithmetic."""
    return TileForm("elementwise", arith=True, scalar_operand=True, broadcast_operand=True,
                    commutative=commutative, scalar_unit=True)


def reduction(**flags) -> TileForm:
    return TileForm("reduce", **flags)


def expansion(fn, check=None, cube=False) -> TileForm:
    """Tiled as the equations ``fn`` builds from tileable primitives (when ``check`` finds
    no reason against it). ``cube``: the expansion exists to reach a cube matmul, so it is
    applied only for targets whose cube multiplies the operands' dtype (elsewhere the
    equation stays tensor-level, e.g. a float32 convolution in numpy's BLAS on the host)."""
    return TileForm("expand", expand=fn, check=check, cube=cube)


def convolution(fn) -> TileForm:
    """A convolution: one cube kernel with its im2col expanded on chip where the tiler's
    ``direct_conv_reason`` allows (``tile/rules.py``), else the ``fn`` expansion (an im2col
    in primitives feeding a matmul); both only where the target's cube convolves the dtype
    (``Target.cube_convolves``: host_jit keeps float convolutions in im2col + BLAS)."""
    return TileForm("conv", expand=fn, cube=True)
