"""Developer tools: the profiler, numerical checks, IR visualization and a progress bar."""
from ptojax.tools.draw import draw, to_dot
from ptojax.tools.numerics import check_nonfinite, check_numerics
from ptojax.eval.profiler import profile
from ptojax.tools.progress import progress

__all__ = ["check_nonfinite", "check_numerics", "draw", "profile", "progress", "to_dot"]
