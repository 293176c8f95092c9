"""``ptojax.profiler``: JAX's profiler API over ptojax's profile (``pto.profile``,
``ptojax/eval/profiler.py``), which records every ``jit`` call and host kernel run.

- ``trace(log_dir)`` / ``start_trace`` / ``stop_trace``: record a profile and write it as a
  gzipped Chrome trace (JSON; opens in https://ui.perfetto.dev, chrome://tracing and
  TensorBoard's trace viewer) at ``<log_dir>/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/
  <host>.trace.json.gz``, where JAX writes its ``.trace.json.gz`` (JAX also writes an XPlane
  protobuf, ``<host>.xplane.pb``, which ptojax does not); with ``create_perfetto_trace=True``
  also ``perfetto_trace.json.gz`` beside it, as JAX. Only one profile at a time (also with
  ``pto.profile()``): a second start raises ``RuntimeError``, as JAX.
- ``TraceAnnotation`` / ``StepTraceAnnotation`` / ``annotate_function``: named spans, with
  their keyword arguments, in the active profile (``kind`` "annotation" / "step").
- ``device_memory_profile`` / ``save_device_memory_profile``: a gzipped pprof protocol
  buffer of the live arrays (see ``device_memory_profile``).

Not here: ``start_server``/``stop_server``/``register_subprocess`` (JAX's TensorBoard profiler
server, a gRPC service ptojax does not run), ``ProfileOptions`` and ``ProfileData`` (options
and reader of JAX's XPlane profiles).
"""
from __future__ import annotations

import datetime
import functools
import gzip
import json
import os
import socket
import threading
import time

from ptojax.errors import UnsupportedError
from ptojax.eval import profiler as _profile
from ptojax.public import dir_function
from ptojax.runtime_info import live_arrays

_lock = threading.Lock()
_running = None     # (the Profile, log_dir, create_perfetto_trace) of start_trace


def start_trace(log_dir, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False, profiler_options=None) -> None:
    """Start recording a profile, written to ``log_dir`` by ``stop_trace`` (see the module
    docstring for the files). ``create_perfetto_link=True`` (JAX serves the trace to
    ui.perfetto.dev and waits) is refused: open the written file there instead.

    Example:
      >>> import os, tempfile
      >>> log_dir = tempfile.mkdtemp()
      >>> pto.profiler.start_trace(log_dir)
      >>> _ = pto.jit(lambda x: x * 2)(pnp.ones(3))
      >>> pto.profiler.stop_trace()
      >>> [f.endswith(".trace.json.gz") for _, _, fs in os.walk(log_dir) for f in fs]
      [True]
    """
    global _running
    if create_perfetto_link:
        raise UnsupportedError("start_trace: create_perfetto_link=True (serving the trace to "
                               "ui.perfetto.dev) is not supported; pass "
                               "create_perfetto_trace=True and open perfetto_trace.json.gz "
                               "at https://ui.perfetto.dev")
    del profiler_options   # JAX's collector options: ptojax's profile has none
    profile = _profile.Profile()
    with _lock:
        if _running is not None or _profile.active is not None:
            raise RuntimeError("Profile has already been started. Only one profile may be run "
                               "at a time.")
        profile.__enter__()
        _running = (profile, os.fspath(log_dir), create_perfetto_trace)


def stop_trace() -> None:
    """Stop the profile ``start_trace`` started and write it to its ``log_dir``
    (``RuntimeError`` if none was started, as JAX).

    Example:
      >>> try:
      ...     pto.profiler.stop_trace()
      ... except RuntimeError as e:
      ...     print(e)
      No profile started
    """
    global _running
    with _lock:
        if _running is None:
            raise RuntimeError("No profile started")
        profile, log_dir, perfetto = _running
        _running = None
        profile.__exit__(None, None, None)
    _write(profile, log_dir, perfetto)


def _write(profile, log_dir: str, perfetto: bool) -> str:
    run = datetime.datetime.now().strftime("%Y_%m_%d_%H_%M_%S")
    directory = os.path.join(log_dir, "plugins", "profile", run)
    os.makedirs(directory, exist_ok=True)
    data = json.dumps(profile.chrome_trace()).encode()
    names = [f"{socket.gethostname()}.trace.json.gz"] + (["perfetto_trace.json.gz"]
                                                        if perfetto else [])
    for name in names:
        with gzip.open(os.path.join(directory, name), "wb") as f:
            f.write(data)
    return directory


class trace:
    """A context manager recording a profile into ``log_dir`` (``start_trace`` on entry,
    ``stop_trace`` on exit), as ``jax.profiler.trace``.

    Example:
      >>> import tempfile
      >>> with pto.profiler.trace(tempfile.mkdtemp()):
      ...     with pto.profiler.TraceAnnotation("step", batch=8):
      ...         _ = pnp.ones(3) * 2
    """

    def __init__(self, log_dir, create_perfetto_link: bool = False,
                 create_perfetto_trace: bool = False, profiler_options=None):
        self._start = functools.partial(start_trace, log_dir, create_perfetto_link,
                                        create_perfetto_trace, profiler_options)

    def __enter__(self):
        self._start()
        return self

    def __exit__(self, *exc):
        stop_trace()
        return False


class TraceAnnotation:
    """A named span (with ``kwargs`` as its arguments) in the active profile, as
    ``jax.profiler.TraceAnnotation``; nothing is recorded when no profile is active.

    Example:
      >>> with pto.profile() as prof:
      ...     with pto.profiler.TraceAnnotation("my_label", size=3):
      ...         _ = pnp.ones(3).sum()
      >>> [(e.name, e.kind, e.args) for e in prof.events if e.kind == "annotation"]
      [('my_label', 'annotation', {'size': 3})]
    """
    _kind = "annotation"

    def __init__(self, name: str, **kwargs):
        self.name = name
        self.kwargs = kwargs
        self._start = None

    def __enter__(self):
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        _profile.record(self.name, self._kind, self._start, time.perf_counter() - self._start,
                        args=dict(self.kwargs))
        return False


class StepTraceAnnotation(TraceAnnotation):
    """A span marking one step (a training step, usually with ``step_num=``) in the active
    profile, as ``jax.profiler.StepTraceAnnotation`` (its events have kind "step").

    Example:
      >>> with pto.profile() as prof:
      ...     for step in range(2):
      ...         with pto.profiler.StepTraceAnnotation("train", step_num=step):
      ...             pass
      >>> [e.args["step_num"] for e in prof.events if e.kind == "step"]
      [0, 1]
    """
    _kind = "step"


def annotate_function(func, name=None, **decorator_kwargs):
    """``func`` with each call recorded as a span named ``name`` (default: the function's
    name) in the active profile, as ``jax.profiler.annotate_function``.

    Example:
      >>> @pto.profiler.annotate_function
      ... def double(x):
      ...     return x * 2
      >>> with pto.profile() as prof:
      ...     _ = double(pnp.ones(2))
      >>> [e.name for e in prof.events if e.kind == "annotation"]
      ['double']
    """
    name = name or getattr(func, "__qualname__", None) or getattr(func, "__name__", "function")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with TraceAnnotation(name, **decorator_kwargs):
            return func(*args, **kwargs)
    return wrapper


# device memory profiles: pprof's protocol buffer (github.com/google/pprof, profile.proto),
# encoded here (ptojax has no protobuf dependency)
def device_memory_profile(backend=None) -> bytes:
    """The live ptojax arrays as a gzipped pprof ``Profile`` protocol buffer, as JAX's: sample
    types ``allocations/count`` and ``space/bytes``, one sample per live array (values 1 and
    its bytes) labelled ``kind=buffer``, ``device`` (as JAX's) and ``shape`` (ptojax's).
    Unlike JAX's, samples have no locations: ptojax does not record the Python stack that
    made an array, so ``pprof`` shows totals per label, not per allocation site; and compiled
    programs are not listed.

    Example:
      >>> x = pnp.ones((256, 256))
      >>> pto.profiler.device_memory_profile()[:2]   # gzip's magic number
      b'\\x1f\\x8b'
    """
    if backend not in (None, "cpu"):
        raise RuntimeError(f"device_memory_profile: unknown backend {backend!r}; ptojax's "
                           f"platform is 'cpu'")
    strings = _Strings()
    out = bytearray()
    for kind, unit in (("allocations", "count"), ("space", "bytes")):
        out += _message(1, _int_field(1, strings[kind]) + _int_field(2, strings[unit]))
    for x in live_arrays():
        labels = [(strings["kind"], strings["buffer"]),
                  (strings["device"], strings[_devices_text(x)]),
                  (strings["shape"], strings[str(x.aval)])]
        sample = _message(2, _packed([1, int(x.nbytes)]))
        for key, value in labels:
            sample += _message(3, _int_field(1, key) + _int_field(2, value))
        out += _message(2, sample)
    for text in strings.table:
        out += _message(6, text.encode())
    out += _int_field(9, time.time_ns())
    return gzip.compress(bytes(out))


def save_device_memory_profile(filename, backend=None) -> None:
    """Write ``device_memory_profile(backend)`` to ``filename`` (read it with ``pprof``).

    Example:
      >>> import os, tempfile
      >>> path = os.path.join(tempfile.mkdtemp(), "memory.prof")
      >>> pto.profiler.save_device_memory_profile(path)
      >>> os.path.getsize(path) > 0
      True
    """
    data = device_memory_profile(backend)
    with open(filename, "wb") as f:
        f.write(data)


def _devices_text(x) -> str:
    return ",".join(f"cpu:{d.id}" for d in sorted(x.devices(), key=lambda d: d.id))


class _Strings:
    """pprof's string table: index 0 is the empty string."""

    def __init__(self):
        self.table = [""]
        self._index = {"": 0}

    def __getitem__(self, text: str) -> int:
        index = self._index.get(text)
        if index is None:
            index = self._index[text] = len(self.table)
            self.table.append(text)
        return index


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _int_field(number: int, value: int) -> bytes:     # wire type 0 (varint)
    return _varint(number << 3) + _varint(value)


def _message(number: int, payload: bytes) -> bytes:   # wire type 2 (length-delimited)
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _packed(values) -> bytes:
    return b"".join(_varint(v) for v in values)


__all__ = ["StepTraceAnnotation", "TraceAnnotation", "annotate_function",
           "device_memory_profile", "save_device_memory_profile", "start_trace",
           "stop_trace", "trace"]
__dir__ = dir_function(__all__)
