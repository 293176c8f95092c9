"""Structured control flow: ``cond``/``switch``, ``while_loop``, ``fori_loop``, ``scan`` and
``map``, exported by ``pto.lax``. Each primitive's module defines it (abstract eval + numpy
impl) and registers its rows in every transform's table; importing this package registers
them all."""
from ptojax.control_flow.cond import cond, cond_p, switch
from ptojax.control_flow.loops import fori_loop, map, scan, while_loop
from ptojax.control_flow.scan import scan_p
from ptojax.control_flow.while_loop import while_p
from ptojax.control_flow.structure import Binding, Port, sub_ir_bindings
from ptojax.control_flow import partition as sharding  # noqa: F401  (registers the pto.shard rows)

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map", "cond_p", "scan_p",
           "while_p", "Binding", "Port", "sub_ir_bindings"]
