"""JAX's outputs for every record case, stored (jax_outputs.xz) because compiling a thousand
JAX programs is most of the records' run time. The suite reads them instead of running JAX
when they were written by the installed JAX version; a case missing from the store, or any
case under another JAX version, runs JAX live as before. Each entry keeps a digest of the
inputs (arguments, tangents, cotangent) it was computed from, so a changed record or input
generator runs JAX live instead of comparing against stale values.

Regenerate after changing a record or JAX (needs JAX, a few minutes):
    cd tests/reference && python -m jax_records.golden
"""
import json
import lzma
import math
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
if __package__ in (None, ""):                    # run as a script
    sys.path.insert(0, str(HERE.parent))
    __package__ = "jax_records"
if str(HERE.parents[1]) not in sys.path:         # tests/, for its jax_golden store's digest
    sys.path.insert(0, str(HERE.parents[1]))

import jax_golden  # noqa: E402
from .rngs import np_dtype  # noqa: E402

PATH = HERE / "jax_outputs.xz"
_store: dict = {}       # task key -> its entry in the index
_blob: list = []        # the arrays' bytes, once loaded


class JaxRaised(Exception):
    """JAX rejected the case when the store was written (its exception's type and text)."""


def digest(data) -> str:
    """A digest of a task's inputs: its arguments, and the tangents and cotangent of grads."""
    return jax_golden._digest([*data["args"], *data.get("ts", ()), *_leaves(data.get("ct"))])


def _leaves(ct):
    if ct is None:
        return []
    return list(ct) if isinstance(ct, (list, tuple)) else [ct]


def _jax_version():
    from importlib.metadata import version
    return version("jax")


def _load():
    if not _store and PATH.exists():
        data = lzma.decompress(PATH.read_bytes())
        size = int.from_bytes(data[:8], "little")
        index = json.loads(data[8:8 + size])
        if index["jax"] == _jax_version():
            _store.update(index["tasks"])
            _blob.append(memoryview(data)[8 + size:])
    return _store


def stored(task_key, data):
    """JAX's stored output for the task (a list of arrays, or the exception), or None."""
    entry = _load().get(task_key)
    if entry is None or entry["digest"] != digest(data):
        return None
    if "raised" in entry:
        from .check import Missing
        cls = Missing if entry["raised"] == "Missing" else JaxRaised
        return cls(entry["message"])
    return [np.frombuffer(_blob[0], np_dtype(dtype), math.prod(shape), offset)
            .reshape(shape) for dtype, shape, offset in entry["outputs"]]


def write(path=PATH):
    """Runs JAX on every case and stores its outputs: a JSON index, then the arrays' bytes."""
    from .check import dtype_name, reference, task_key
    from .suites import all_cases
    index, blob = {"jax": _jax_version(), "tasks": {}}, bytearray()
    for item in all_cases():
        data = reference(item.case, item.mode, item.kind, item.group, live=True)
        entry = {"digest": digest(data)}
        out = data["out"]
        if isinstance(out, Exception):
            entry.update(raised=type(out).__name__, message=str(out))
        else:
            entry["outputs"] = []
            for a in out:
                entry["outputs"].append([dtype_name(a.dtype), list(a.shape), len(blob)])
                blob += np.ascontiguousarray(a).tobytes()
        index["tasks"][task_key(item.case, item.mode, item.kind)] = entry
    header = json.dumps(index, sort_keys=True).encode()
    path.write_bytes(lzma.compress(len(header).to_bytes(8, "little") + header + blob))
    print(f"wrote {len(index['tasks'])} tasks, {len(blob)} bytes of arrays to {path}")


if __name__ == "__main__":
    write()
