"""The on-disk cache of built kernel libraries: private to its user, safe with concurrent
processes, and trusting nothing it reads.

Layout under ``cache_root()`` (``$PTOJAX_CACHE_DIR``, else ``$XDG_CACHE_HOME/ptojax``, else
``~/.cache/ptojax``)::

    host-kernels/<k[:2]>/<k>.<n>.so  the shared library (<n>: 8 hex digits, fresh per publication)
    host-kernels/<k[:2]>/<k>.json    its manifest: key, library file name, byte size, SHA-256
    host-kernels/<k[:2]>/<k>.cpp     the translation unit it was built from (for reading)
    host-kernels/<k[:2]>/<k>.lock    the per-key build lock
    host-kernels/<k[:2]>/.<k>.*      temporaries of a build of <k> (only while holding its lock)
    host-kernels/<k[:2]>/<k>.prelude/ a precompiled prelude (``prelude.py``: its header, .gch)
    host-kernels/failed/<k>.cpp      translation units the compiler rejected
    host-kernels/handoff/<r>.pickle  programs left waiting at exit, until built (``exit_handoff.py``)
    compilers/<id>.json              compiler probe records (``compiler.py``)

Trust. Loading a library runs its code in this process, so the cache is trusted exactly as far
as nobody else can write to it, and trust comes from the key, never from what a file says:

- The cache directory, every directory under it and every file read from it must be owned by
  this user (effective uid) and writable by nobody else. Directories are created 0700, files
  0600 (libraries 0700). A directory that fails this is refused with a ``CacheError`` naming
  the path and why; so is an ancestor that others can write without the sticky bit (they
  could swap the whole cache). A file that fails it counts as corrupt.
- An entry counts only if its manifest names its key and its library is ``<key>.<8 hex>.so``
  in the key's own directory — a name derived from the key, never a path taken from the
  manifest — and matches the manifest's byte size and SHA-256 (which catch truncated and
  half-written files; whoever could rewrite the library could rewrite the manifest too, which
  the ownership rule prevents).
- A missing, truncated, foreign or otherwise malformed entry is discarded and rebuilt.

Concurrency. Builders take the key's file lock (``fcntl.flock``; where that does not exist,
duplicate builds are possible but harmless), look again, build into temporary files and
publish with atomic renames — the library first, the manifest last — so a reader never sees
half an entry. Each publication writes a library file of a new name, because a process that
has loaded a library keeps that file mapped under its path. Temporaries left by a killed build
are removed by the next build of that key, and by a sweep when a process first builds
(``sweep_temporaries``): a key's temporaries are removed only while holding its lock, so a live
build is never disturbed.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import stat
import tempfile
import time
from pathlib import Path
from typing import Optional

from ptojax.env import env_path
from ptojax.errors import CacheError

try:
    import fcntl
except ImportError:          # not POSIX: no cross-process lock
    fcntl = None

MANIFEST_VERSION = 1
KEY = re.compile(r"[0-9a-f]{64}")
STALE_RECORD_S = 3600         # a temporary outside any lock older than this is stale
FIX = ("set PTOJAX_CACHE_DIR to a directory of your own (it is created mode 0700), or fix "
       "its owner and permissions (chown $USER, chmod go-w)")


def cache_root() -> Path:
    env = env_path("PTOJAX_CACHE_DIR")
    if env is not None:
        return env
    xdg = env_path("XDG_CACHE_HOME")
    return (xdg if xdg is not None else Path.home() / ".cache") / "ptojax"


# --- trust: ownership and permissions ---------------------------------------------------------
def current_uid() -> int:
    """The uid that must own the cache (tests substitute another to simulate a foreign one)."""
    return os.geteuid() if hasattr(os, "geteuid") else -1


def _untrusted(st: os.stat_result) -> Optional[str]:
    """Why a file or directory with status ``st`` could have been written by someone else,
    or None."""
    uid = current_uid()
    if uid >= 0 and st.st_uid != uid:
        return f"it is owned by uid {st.st_uid}, not by this user (uid {uid})"
    writable = [who for who, bit in (("group", stat.S_IWGRP), ("others", stat.S_IWOTH))
                if st.st_mode & bit]
    if writable:
        return (f"it is writable by {' and '.join(writable)} "
                f"(mode {stat.S_IMODE(st.st_mode):04o})")
    return None


def private_dir(path: Path) -> Path:
    """``path``, created mode 0700 if missing, checked to be a directory only this user can
    write; otherwise a ``CacheError`` naming it."""
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError as e:
        raise CacheError(f"cannot create the kernel cache directory {path}: "
                         f"{e.strerror or e}; {FIX}") from None
    try:
        st = path.stat()              # follows a symlink: what it names must be private
    except OSError as e:
        raise CacheError(f"cannot use the kernel cache directory {path}: {e.strerror or e}; "
                         f"{FIX}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise CacheError(f"the kernel cache directory {path} is not a directory; {FIX}")
    why = _untrusted(st)
    if why is not None:
        raise CacheError(f"refusing to use the kernel cache directory {path}: {why}, so "
                         f"another user could plant code that ptojax would load; {FIX}")
    if not os.access(path, os.W_OK | os.X_OK):
        raise CacheError(f"the kernel cache directory {path} is not writable; {FIX}")
    return path


def checked_root() -> Path:
    """The cache root, created if missing and checked (see the module docstring)."""
    root = cache_root()
    for ancestor in reversed(root.parents):
        with contextlib.suppress(OSError):
            st = ancestor.stat()
            if st.st_mode & stat.S_IWOTH and not st.st_mode & stat.S_ISVTX:
                raise CacheError(f"refusing to use the kernel cache directory {root}: its "
                                 f"ancestor {ancestor} is writable by others without the "
                                 f"sticky bit, so anyone could replace the cache; {FIX}")
    with contextlib.suppress(OSError):
        root.parent.mkdir(parents=True, exist_ok=True)
    return private_dir(root)


def trusted_file(path: Path) -> bool:
    """Whether ``path`` is a regular file (not a symlink) only this user can have written."""
    try:
        st = path.lstat()
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and _untrusted(st) is None


def read_trusted(path: Path) -> Optional[bytes]:
    """The contents of ``path`` if it is a trusted file, else None."""
    if not trusted_file(path):
        return None
    try:
        return path.read_bytes()
    except OSError:
        return None


# --- files -------------------------------------------------------------------------------------
def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` (mode 0600) through a temporary file and an atomic rename;
    the directory must exist and be private (``private_dir``)."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise CacheError(f"cannot write in the kernel cache directory {path.parent}: "
                         f"{e.strerror or e}; {FIX}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise CacheError(f"cannot write the kernel cache file {path}: "
                             f"{e.strerror or e}; {FIX}") from None
        raise


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@contextlib.contextmanager
def file_lock(path: Path, wait: bool = True):
    """Hold the lock of ``path`` (created 0600; exclusive across processes, released when the
    holder closes it or exits); yields False instead when ``wait`` is False and another
    process holds it. Its directory must exist and be private."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as e:
        raise CacheError(f"cannot open the kernel cache lock {path}: "
                         f"{e.strerror or e}; {FIX}") from None
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
        yield True
    finally:
        os.close(fd)             # closing releases the lock


# --- one key's entry ---------------------------------------------------------------------------
class CacheEntry:
    """The files of one key."""

    def __init__(self, key: str, root: Optional[Path] = None):
        if not KEY.fullmatch(key):
            raise ValueError(f"a kernel cache key is 64 hex digits, got {key!r}")
        self.key = key
        self.root = root or cache_root()
        self.dir = self.root / "host-kernels" / key[:2]
        self.manifest = self.dir / f"{key}.json"
        self.source = self.dir / f"{key}.cpp"
        self.lockfile = self.dir / f"{key}.lock"
        self._library_name = re.compile(re.escape(key) + r"\.[0-9a-f]{8}\.so")

    def _library_named(self, meta) -> Optional[Path]:
        """The library a manifest names, if the name is one this key's publications use."""
        name = meta.get("library") if isinstance(meta, dict) else None
        if isinstance(name, str) and self._library_name.fullmatch(name):
            return self.dir / name
        return None

    def _meta(self) -> Optional[dict]:
        data = read_trusted(self.manifest)
        try:
            meta = json.loads(data) if data is not None else None
        except ValueError:
            return None
        return meta if isinstance(meta, dict) else None

    def published(self) -> Optional[Path]:
        """The library published under this key, if it is complete, uncorrupted and
        trusted."""
        meta = self._meta()
        library = self._library_named(meta) if meta is not None else None
        if library is None or meta.get("version") != MANIFEST_VERSION \
                or meta.get("key") != self.key or not trusted_file(library):
            return None
        size, sha = meta.get("size"), meta.get("sha256")
        if type(size) is not int or not isinstance(sha, str):
            return None
        try:
            ok = library.stat().st_size == size and file_sha256(library) == sha
        except OSError:
            return None
        return library if ok else None

    def discard(self) -> None:
        """Remove a corrupt or stale entry (the manifest first: no reader trusts the rest).
        Only files of this key's own names are removed, whatever the manifest says."""
        library = self._library_named(self._meta())
        with contextlib.suppress(OSError):
            self.manifest.unlink()
        if library is not None:
            with contextlib.suppress(OSError):
                library.unlink()

    def make_dirs(self) -> None:
        """Create the entry's directories (0700), checking that each is private."""
        private_dir(private_dir(private_dir(self.root) / "host-kernels") / self.key[:2])

    def locked(self, wait: bool = True):
        """Hold the key's build lock (exclusive across processes); yields False instead when
        ``wait`` is False and another process holds it."""
        self.make_dirs()
        return file_lock(self.lockfile, wait)

    def temporary(self, suffix: str) -> Path:
        """A fresh path for a build of this key to write into (hold the lock)."""
        self.make_dirs()
        try:
            fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=f".{self.key}.", suffix=suffix)
        except OSError as e:
            raise CacheError(f"cannot write in the kernel cache directory {self.dir}: "
                             f"{e.strerror or e}; {FIX}") from None
        os.close(fd)
        return Path(tmp)

    def temporaries(self) -> list:
        try:
            return [p for p in self.dir.iterdir() if p.name.startswith(f".{self.key}.")]
        except OSError:
            return []

    def remove_temporaries(self) -> None:
        """Remove what killed builds of this key left behind (hold the lock)."""
        for path in self.temporaries():
            with contextlib.suppress(OSError):
                path.unlink()

    def publish(self, built: Path, source: str, info: dict) -> Path:
        """Install a built library under a new name, then the manifest that validates it."""
        write_atomic(self.source, source.encode())
        library = self.dir / f"{self.key}.{secrets.token_hex(4)}.so"
        try:
            os.chmod(built, 0o700)
            size, sha = built.stat().st_size, file_sha256(built)
            os.replace(built, library)
        except OSError as e:
            raise CacheError(f"cannot publish the kernel library {library}: "
                             f"{e.strerror or e}; {FIX}") from None
        manifest = {"version": MANIFEST_VERSION, "key": self.key, "library": library.name,
                    "size": size, "sha256": sha, **info}
        write_atomic(self.manifest, json.dumps(manifest, indent=1).encode())
        return library


# --- which library a program was built into ------------------------------------------------------
def program_hint(root: Path, fingerprint: str) -> Path:
    """Where the key of the library last built for the program ``fingerprint`` (64 hex
    digits) is remembered: a hint that lets a later process load it at its first call; the
    library's own key, computed from its source, still decides what is loaded."""
    return private_dir(private_dir(root / "host-kernels") / "programs") / f"{fingerprint}.key"


def read_program_hint(root: Path, fingerprint: str) -> Optional[str]:
    data = read_trusted(program_hint(root, fingerprint))
    key = data.decode(errors="replace").strip() if data is not None else ""
    return key if KEY.fullmatch(key) else None


# --- temporaries of killed builds ---------------------------------------------------------------
_swept: set = set()


def sweep_temporaries(root: Path) -> None:
    """Once per process and cache: remove the temporaries of builds that were killed — a
    key's only while holding its lock (so never a live build's), other stray temporary files
    and handed-off requests (``exit_handoff.py``) once they are an hour old."""
    if root in _swept:
        return
    _swept.add(root)
    kernels = root / "host-kernels"
    keys = set()
    for shard in _listing(kernels) if fcntl is not None else ():
        for path in _listing(shard):
            if path.name.startswith(".") and KEY.fullmatch(path.name[1:65]):
                keys.add(path.name[1:65])
    for key in sorted(keys):
        entry = CacheEntry(key, root)
        with entry.locked(wait=False) as held:
            if held:
                entry.remove_temporaries()
    cutoff = time.time() - STALE_RECORD_S
    for folder in (root / "compilers", kernels / "failed", kernels / "handoff"):
        for path in _listing(folder):
            with contextlib.suppress(OSError):
                stray = path.name.startswith(".") and path.name.endswith(".tmp")
                unfinished = folder.name == "handoff"     # a request whose builder died
                if (stray or unfinished) and path.lstat().st_mtime < cutoff:
                    path.unlink()


def _listing(folder: Path) -> list:
    try:
        return list(folder.iterdir())
    except OSError:
        return []
