"""Developer tools: the profiler, numerical checks and IR visualization."""
from ptojax.tools.draw import draw, to_dot
from ptojax.tools.profiler import profile

__all__ = ["draw", "profile", "to_dot"]
