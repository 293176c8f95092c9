"""JAX's values for the pto.scipy tables, stored (jax_values.json.gz) because compiling ~300 JAX
programs takes minutes on a busy machine. Each entry keeps the inputs it was computed from,
so a changed table fails loudly instead of comparing against stale values.

Regenerate after changing a table (needs JAX):
    cd tests/scipy && PYTHONPATH=../..:.. python jax_golden.py
"""
import base64
import gzip
import hashlib
import json
import pathlib

import numpy as np

PATH = pathlib.Path(__file__).with_name("jax_values.json.gz")
_store: dict = {}


def _flat(inputs) -> list:
    return [np.asarray(a) for a in inputs]


def _digest(inputs) -> str:
    """A digest of the inputs' dtypes, shapes and values."""
    h = hashlib.sha256()
    for a in _flat(inputs):
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def expected(key: str, inputs) -> list:
    """JAX's outputs (a list of arrays) stored under ``key``, after checking they were
    computed from ``inputs`` (a list of arrays)."""
    if not _store:
        if not PATH.exists():
            raise AssertionError(f"{PATH.name} is missing: regenerate it (see {__file__})")
        with gzip.open(PATH, "rt") as f:
            _store.update(json.load(f))
    entry = _store.get(key)
    if entry is None or entry["inputs"] != _digest(inputs):
        raise AssertionError(f"{PATH.name} holds no values for {key} on these inputs: "
                             f"regenerate it (see {__file__})")
    return [_decode(a) for a in entry["outputs"]]


def _encode(a: np.ndarray) -> dict:
    return {"dtype": a.dtype.str, "shape": list(a.shape),
            "data": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}


def _decode(d: dict) -> np.ndarray:
    return np.frombuffer(base64.b64decode(d["data"]), d["dtype"]).reshape(d["shape"])


def _record(out: dict, key, inputs, outputs):
    out[key] = {"inputs": _digest(inputs), "outputs": [_encode(a) for a in _flat(outputs)]}


def main():
    import jax
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    import test_special
    import test_stats
    out: dict = {}
    for module in (test_special, test_stats):
        for key, inputs, fn in module.jax_reference_tables(jax):
            _record(out, key, inputs, fn(*inputs))
            print(key)
    with gzip.open(PATH, "wt") as f:
        json.dump(out, f, sort_keys=True)
    print(f"wrote {len(out)} entries to {PATH}")


if __name__ == "__main__":
    main()
