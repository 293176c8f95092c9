"""Running functions on compiled host kernels and on the numpy interpreter, and comparing;
which loops of a C++ file GCC vectorizes."""
import re
import subprocess

import ml_dtypes
import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ptojax as pto
from helpers import assert_close
from ptojax.lower.host.backend import CpuBackend
from ptojax.lower.host.compiler import INCLUDE_DIR

F32, F16, BF16, I32 = (np.dtype(np.float32), np.dtype(np.float16),
                       np.dtype(ml_dtypes.bfloat16), np.dtype(np.int32))
# host vs interpreter: the same per-op rounding, but exp/log/tanh/logistic are the header's own
# polynomials (a few f32 ulp apart from numpy's), sums are reassociated, and in the PTO build
# tanh/logistic are instruction sequences (absolute error ~1e-7 near 0): twice the dtype's
# tolerance
HOST_SCALE = 2.0


def host_jit(fn, check_sync=False, tile_config=None, target=pto.targets.host_jit,
             kernels=None):
    """``fn`` jitted on the cpu backend, compiled before its first call (``kernels``: the
    host build, fused or pto; None: the default)."""
    return pto.jit(fn, backend=CpuBackend(tiered=False, min_elements=0, check_sync=check_sync,
                                          tile_config=tile_config, target=target,
                                          kernels=kernels))


def executable_of(jitted, *args):
    """The HostExecutable ``jitted`` runs ``args`` with (after a call with them): for a
    program with symbolic dimensions, the one program's."""
    signature, _ = jitted._signature(args, {})
    executable = jitted._cache[signature].executable
    return getattr(executable, "executable", executable)


def kernels_of(jitted, *args):
    """The tile_kernel equations the compiled program for ``args`` runs."""
    from ptojax.lower.host.program import kernel_eqns
    return kernel_eqns(executable_of(jitted, *args).program.executable.closed)


def interpret(fn, *args):
    return pto.jit(fn, backend="interpreter")(*args)


def assert_matches(actual, expected, rtol_scale=1.0):
    """Host kernels against the interpreter."""
    assert_close(actual, expected, scale=HOST_SCALE * rtol_scale)


def arrays(dtype, shape, lo=-4.0, hi=4.0, specials=False):
    """Values of ``dtype`` in [lo, hi]; ``specials`` adds inf, nan and a negative zero."""
    if dtype.kind in "iu":
        return hnp.arrays(dtype, shape, elements=st.integers(int(lo), int(hi)))
    elements = st.floats(lo, hi, width=16 if dtype in (F16, BF16) else 32)
    if specials:
        elements = st.one_of(elements, st.sampled_from([np.inf, -np.inf, np.nan, -0.0]))
    return hnp.arrays(np.float32, shape, elements=elements).map(lambda a: a.astype(dtype))


def has_ragged_regions(jitted, *args):
    """Whether some kernel has tiles of more than one valid shape (edges are exercised)."""
    return any(len(k.params["regions"]) > 1 for k in kernels_of(jitted, *args))


def vectorized_lines(compiler, source, in_file=None, without=()):
    """The lines of ``in_file`` (``source``'s name unless a ``#line`` directive renames it) at
    which GCC reports a loop vectorized, compiling ``source`` to an object with the kernel
    flags less the shared-library ones and ``without``; skips for a compiler without GCC's
    ``-fopt-info-vec-optimized``."""
    flags = [f for f in compiler.flags if f not in ("-shared", "-fPIC", "-w", *without)]
    result = subprocess.run([*compiler.command, *flags, f"-I{INCLUDE_DIR}", "-c", str(source),
                             "-o", str(source.with_suffix(".o")), "-fopt-info-vec-optimized"],
                            capture_output=True, text=True, timeout=600)
    if result.returncode != 0 and "fopt-info" in result.stderr:
        pytest.skip(f"{compiler.command[-1]} has no -fopt-info-vec-optimized")
    assert result.returncode == 0, result.stderr
    name = re.escape(in_file or source.name)
    return {int(m) for m in re.findall(rf"{name}:(\d+):\d+: optimized: loop vectorized",
                                       result.stderr)}
