"""Structured control flow: ``cond``/``switch``, ``while_loop``, ``fori_loop``, ``scan`` and
``map``, exported by ``pto.lax``. Each primitive's module defines it with every fact."""
from ptojax.control_flow.cond import cond, cond_p, switch
from ptojax.control_flow.loops import fori_loop, map, scan, while_loop
from ptojax.control_flow.scan import scan_p
from ptojax.control_flow.while_loop import while_p
from ptojax.control_flow import bucketing  # noqa: F401,E402  (their bucket facts)

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map", "cond_p", "scan_p",
           "while_p"]
