"""Developer tools: the profiler, numerical checks and IR visualization."""
from ptojax.tools.profiler import profile

__all__ = ["profile"]
