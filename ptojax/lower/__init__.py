"""Lowering of tiled PTO IR to PTO kernels: targets, PTO-AS text, PTO C++ and a cost model.

Nothing emitted here has been compiled or run on Ascend hardware (none is available to this
project): PTO-AS and PTO C++ output is checked structurally, and the kernels' semantics are
executed by the numpy tile interpreter (``ptojax.tile.interpreter``).
"""
