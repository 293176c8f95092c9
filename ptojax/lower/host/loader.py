"""Loading a built kernel library with ctypes and launching its kernels on numpy arrays.

``KernelLibrary(path, entries)`` opens the library, checks its ABI version and binds one
launcher per entry point. ``launch(i, arrays, blocks)`` passes the arrays' data pointers (they
must be C-contiguous and of the kernel's parameter types; outputs are written in place) and
runs the kernel's blocks. ctypes releases the GIL for the call. The data pointers are read
straight from the arrays (``eval/pointers.data_pointers``): ``a.ctypes.data`` builds a helper object per
array, which made the launch of a small kernel cost 20-30x its ctypes call. Where numpy's layout
was verified, ``launcher`` passes the arrays' objects instead (one ``struct.pack`` of their
ids) to each entry's twin, which reads the data pointers in C (``pto_host_launch.h``): a
small kernel's argument vector 3.2 -> 0.7 us. A runtime check
that fails inside the kernel (a set/wait pairing error in a PTO_HOST_CHECK_SYNC build, a tile
outside its buffer, a GM window that does not match its tile) raises ``KernelCheckError``.
"""
from __future__ import annotations

import ctypes
import struct
from pathlib import Path

from ptojax.errors import CompileError, KernelCheckError
from ptojax.lower.host.build import ABI_VERSION, OBJECTS_SUFFIX, build_library
from ptojax.lower.host.cache import CacheEntry
from ptojax.eval.blas import decide_team, team_routines
from ptojax.lower.host.compiler import openmp_wait_policy
from ptojax.eval.pointers import data_pointer_offset, data_pointers


MAX_LAUNCH_ARRAYS = 256   # pto_host_launch.h: kMaxLaunchArrays


class StaleLibraryError(OSError):
    """A library file that cannot be loaded or was built for another ABI."""


class KernelLibrary:
    def __init__(self, path: Path, entries):
        openmp_wait_policy()
        try:
            self._dll = ctypes.CDLL(str(path))
            abi = self._dll.ptojax_host_abi
            self._error = self._dll.ptojax_host_error
        except (OSError, AttributeError) as e:
            raise StaleLibraryError(f"cannot load kernel library {path}: {e}") from None
        abi.restype = ctypes.c_int
        if abi() != ABI_VERSION:
            raise StaleLibraryError(f"kernel library {path} has ABI {abi()}, "
                                    f"expected {ABI_VERSION}")
        self.path = Path(path)
        self._error.restype = ctypes.c_char_p
        self.threefry2x32 = _bound(self._dll, "ptojax_threefry2x32", None,
                                   (ctypes.c_uint32, ctypes.c_uint32, ctypes.c_void_p,
                                    ctypes.c_longlong, ctypes.c_void_p, ctypes.c_longlong,
                                    ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong))
        size, pointer = ctypes.c_longlong, ctypes.c_void_p
        self.gemm_few_rows_f32 = _bound(self._dll, "ptojax_gemm_few_rows_f32", None,
                                        (size, size, size, pointer, size, pointer, size,
                                         ctypes.c_float, pointer, size, ctypes.c_int))
        self.team_gemm = _team_gemm(self._dll)
        decide_team(self.team_gemm, _team_threads(self._dll))
        self._launchers = []
        self._object_launchers = []     # the twins taking the arrays' objects, or None
        self._names = []
        for e in entries:
            try:
                fn = getattr(self._dll, e.symbol)
            except AttributeError:
                raise StaleLibraryError(f"kernel library {path} has no launcher {e.symbol}") \
                    from None
            fn.argtypes = (ctypes.c_void_p, ctypes.c_longlong, ctypes.c_int)
            fn.restype = ctypes.c_int
            self._launchers.append(fn)
            self._object_launchers.append(_bound(
                self._dll, e.symbol + OBJECTS_SUFFIX, ctypes.c_int,
                (ctypes.c_void_p, ctypes.c_longlong, ctypes.c_longlong, ctypes.c_longlong,
                 ctypes.c_int)))
            self._names.append(e.kernel)

    def launch(self, index: int, arrays, blocks: int, parallel: bool = True) -> None:
        """Run kernel ``index`` with ``arrays`` as its GM parameters, ``blocks`` blocks (on
        the OpenMP threads when ``parallel``, else one after another on this thread)."""
        argv = (ctypes.c_void_p * len(arrays))(*data_pointers(arrays))
        if self._launchers[index](argv, blocks, int(parallel)) != 0:
            self.raise_check_error(index)

    def launcher(self, index: int, count: int):
        """``launch`` of kernel ``index`` with ``count`` arrays, bound once: ``go(arrays,
        blocks, parallel)`` builds its argument vector from the arrays' data pointers read
        inline (a small kernel's launch is mostly this Python)."""
        fn, argv_type = self._launchers[index], ctypes.c_void_p * count
        offset = data_pointer_offset()
        if offset is None:
            def go(arrays, blocks, parallel):
                self.launch(index, arrays, blocks, parallel)
            return go
        twin = self._object_launchers[index]
        if twin is not None and count <= MAX_LAUNCH_ARRAYS:
            pack = struct.Struct(f"{count}P").pack

            def go(arrays, blocks, parallel):   # numpy arrays: their ids are their objects
                if twin(pack(*map(id, arrays)), count, offset, blocks, parallel) != 0:
                    self.raise_check_error(index)
            return go
        at = ctypes.c_void_p.from_address

        def go(arrays, blocks, parallel):
            if fn(argv_type(*[at(id(a) + offset).value for a in arrays]), blocks,
                  parallel) != 0:
                self.raise_check_error(index)
        return go

    def raise_check_error(self, index: int):
        raise KernelCheckError(f"host kernel `{self._names[index]}` failed a runtime "
                               f"check: {self._error().decode(errors='replace')}")


def _team_gemm(dll):
    """The library's ``ptojax_team_gemm`` bound to numpy's BLAS (``team_gemm.py``; the first
    library's is installed for all products with ``$PTOJAX_ONE_THREAD_POOL`` on,
    ``eval/blas.decide_team``); None when the library has none (built by an older ptojax) or
    there is no OpenBLAS to bind."""
    size, pointer = ctypes.c_longlong, ctypes.c_void_p
    gemm = _bound(dll, "ptojax_team_gemm", ctypes.c_int,
                  (ctypes.c_int, ctypes.c_int, size, size, size, size, pointer, size, size,
                   pointer, size, size, ctypes.c_float, pointer, size, size, ctypes.c_int))
    routines = team_routines() if gemm is not None else None
    if routines is None:
        return None
    sgemm, index64, set_local = routines
    _bound(dll, "ptojax_team_gemm_bind", None, (pointer, ctypes.c_int, pointer))(
        sgemm, int(index64), set_local)
    return gemm


MAX_TEAM = 1024


def _team_threads(dll):
    """``() -> [tid]``: the Linux thread ids of the calling thread's OpenMP team, the
    caller's first (empty where they cannot be known); None when the library has no
    ``ptojax_team_threads``."""
    fn = _bound(dll, "ptojax_team_threads", ctypes.c_int,
                (ctypes.POINTER(ctypes.c_longlong), ctypes.c_int))
    if fn is None:
        return None

    def team_threads():
        tids = (ctypes.c_longlong * MAX_TEAM)()
        return list(tids[:fn(tids, MAX_TEAM)])
    return team_threads


def _bound(dll, symbol, restype, argtypes):
    """The library's function ``symbol`` with its C signature, or None if it has none."""
    fn = getattr(dll, symbol, None)
    if fn is not None:
        fn.restype, fn.argtypes = restype, argtypes
    return fn


def build_and_load(kernel_source: str, entries, target, **options):
    """(KernelLibrary, BuildResult): the library built (or found cached) and loaded. A cached
    library that cannot be loaded (stale, or not what its entry claims) is discarded and
    rebuilt; a freshly built one that cannot be loaded is a ``CompileError``."""
    while True:
        built = build_library(kernel_source, entries, target, **options)
        try:
            return KernelLibrary(built.path, entries), built
        except StaleLibraryError as e:
            CacheEntry(built.key).discard()
            if not built.cached:
                raise CompileError(f"the host C++ compiler built a kernel library that cannot "
                                   f"be used: {e}") from None
