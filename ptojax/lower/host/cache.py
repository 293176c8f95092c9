"""The on-disk cache of built kernel libraries, safe with concurrent processes.

Layout under ``cache_root()`` (``$PTOJAX_CACHE_DIR``, else ``$XDG_CACHE_HOME/ptojax``, else
``~/.cache/ptojax``)::

    host-kernels/<k[:2]>/<k>.<n>.so  the shared library (<n>: a fresh name per publication)
    host-kernels/<k[:2]>/<k>.json    its manifest: key, library file name, byte size, SHA-256
    host-kernels/<k[:2]>/<k>.cpp     the translation unit it was built from (for reading)
    host-kernels/<k[:2]>/<k>.lock    the per-key build lock

An entry counts only if its manifest names its key and matches the library byte for byte; a
missing, truncated or otherwise corrupt entry is simply rebuilt. Each publication writes a
library file of a new name, because a process that has loaded a library keeps that file
mapped under its path: a rebuilt library must not reuse the path of one that went stale. Builders take the key's file
lock (``fcntl.flock``; where that does not exist, duplicate builds are possible but harmless),
look again, build into a temporary file and publish with atomic renames — the library first,
the manifest last — so a reader never sees half an entry.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import tempfile
from pathlib import Path
from typing import Optional

try:
    import fcntl
except ImportError:          # not POSIX: no cross-process lock
    fcntl = None

MANIFEST_VERSION = 1


def cache_root() -> Path:
    env = os.environ.get("PTOJAX_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "ptojax"


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and an atomic rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class CacheEntry:
    """The files of one key."""

    def __init__(self, key: str, root: Optional[Path] = None):
        self.key = key
        self.dir = (root or cache_root()) / "host-kernels" / key[:2]
        self.manifest = self.dir / f"{key}.json"
        self.source = self.dir / f"{key}.cpp"
        self.lockfile = self.dir / f"{key}.lock"

    def _meta(self) -> dict:
        return json.loads(self.manifest.read_text())

    def published(self) -> Optional[Path]:
        """The library published under this key, if it is complete and uncorrupted."""
        try:
            meta = self._meta()
            library = self.dir / meta["library"]
            ok = (meta.get("version") == MANIFEST_VERSION and meta.get("key") == self.key
                  and library.stat().st_size == meta["size"]
                  and file_sha256(library) == meta["sha256"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        return library if ok else None

    def discard(self) -> None:
        """Remove a corrupt or stale entry (the manifest first: no reader trusts the rest)."""
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError, AttributeError):
            library = self.dir / self._meta()["library"]
            self.manifest.unlink()
            library.unlink()
        with contextlib.suppress(OSError):
            self.manifest.unlink()

    @contextlib.contextmanager
    def locked(self):
        """Hold the key's build lock (exclusive across processes)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        with open(self.lockfile, "a+b") as f:
            if fcntl is not None:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                if fcntl is not None:
                    fcntl.flock(f.fileno(), fcntl.LOCK_UN)

    def temporary_library(self) -> Path:
        """A fresh path next to the library for a build to write into."""
        self.dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=f".{self.key}.", suffix=".so.tmp")
        os.close(fd)
        return Path(tmp)

    def publish(self, built: Path, source: str, info: dict) -> Path:
        """Install a built library under a new name, then the manifest that validates it."""
        write_atomic(self.source, source.encode())
        size, sha = built.stat().st_size, file_sha256(built)
        library = self.dir / f"{self.key}.{secrets.token_hex(4)}.so"
        os.replace(built, library)
        manifest = {"version": MANIFEST_VERSION, "key": self.key, "library": library.name,
                    "size": size, "sha256": sha, **info}
        write_atomic(self.manifest, json.dumps(manifest, indent=1).encode())
        return library
