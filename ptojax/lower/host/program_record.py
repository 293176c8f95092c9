"""What a program was tiled and emitted into, remembered in the cache for the next process.

After a ``HostExecutable`` has built its program, the worker records the tiled IR, the
equations left unfused and what was emitted (``program.emit``: the build, its kernel source
and entry points) under the program's fingerprint (``HostExecutable._fingerprint``)::

    host-kernels/programs/<fingerprint>.<code>.tiled

A later process with the same program loads that instead of tiling and emitting again — for
an MLP train step 77 ms of Python on the worker, which holds the GIL against the calling
thread's steps, so a warm run's kernels took over only after ~20 steps — and its library
(whose key is still computed from the recorded source, so a different compiler, flags or
header never loads a library built for another) from the cache. ``<code>`` is a digest of
ptojax's own module files (path, size, modification time): a record written by other code is
never used. Records are written atomically, private, and read only if trusted, through
``own_pickle``; a record that cannot be read counts as none.
"""
from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path
from typing import Optional

from ptojax.errors import CacheError
from ptojax.lower.host import own_pickle
from ptojax.lower.host.cache import private_dir, read_trusted, write_atomic

RECORD_VERSION = 1
PACKAGE_DIR = Path(__file__).resolve().parents[2]   # the ``ptojax`` package directory


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """A digest of ptojax's module files: their paths, sizes and modification times."""
    h = hashlib.sha256()
    for folder, dirs, files in sorted(os.walk(PACKAGE_DIR)):
        dirs.sort()
        for name in sorted(files):
            if name.endswith((".py", ".h")):
                st = os.stat(os.path.join(folder, name))
                h.update(f"{folder}/{name}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return h.hexdigest()[:16]


def record_path(root: Path, fingerprint: str) -> Path:
    folder = private_dir(private_dir(root / "host-kernels") / "programs")
    return folder / f"{fingerprint}.{code_digest()}.tiled"


def save(root: Path, fingerprint: str, tiled, unfused, emitted) -> bool:
    """Record a built program; False if it could not be (it does not pickle, holds more than
    ``own_pickle.MAX_CONST_BYTES`` of constants, or the cache is unusable): the next process
    then tiles it again."""
    try:
        data = own_pickle.dumps((RECORD_VERSION, tiled, unfused, emitted), closed=(tiled,))
        write_atomic(record_path(root, fingerprint), data)
    except (CacheError, OSError):
        return False
    except Exception:      # anything that does not pickle
        return False
    return True


def load(root: Path, fingerprint: str) -> Optional[tuple]:
    """(tiled IR, unfused equations, emitted) recorded for the program, or None."""
    try:
        data = read_trusted(record_path(root, fingerprint))
        record = own_pickle.loads(data) if data is not None else None
    except Exception:      # unreadable, or not ours: as if there were none
        return None
    if not isinstance(record, tuple) or len(record) != 4 or record[0] != RECORD_VERSION:
        return None
    return record[1:]
