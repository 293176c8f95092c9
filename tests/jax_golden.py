"""JAX's values for the larger reference tables (pto.scipy, nn attention and initializers),
stored in jax_values.json.gz because compiling hundreds of JAX programs takes minutes on a busy
machine. Each entry keeps a digest of the inputs it was computed from, so a changed table
fails loudly instead of comparing against stale values.

The tables are the ``jax_reference_tables(jax)`` generators of the MODULES below. Regenerate
after changing one (needs JAX):
    cd tests && PYTHONPATH=..:reference python jax_golden.py [module ...]
(only the tables of the named MODULES, keeping the other stored entries; all of them, and
nothing else, without names).
"""
import base64
import gzip
import hashlib
import importlib.util
import json
import pathlib
import sys

import numpy as np

PATH = pathlib.Path(__file__).with_name("jax_values.json.gz")
MODULES = ["scipy/test_special.py", "scipy/test_stats.py", "test_nn_attention.py",
           "test_nn_initializers.py", "scipy/test_special_hyp2f1.py",
           "scipy/test_spatial_transform.py", "scipy/test_special_more.py",
           "reference/test_lax_conv.py", "reference/test_numpy_indexing.py",
           "test_image.py", "test_jax_example_libraries.py", "scipy/test_stats_more.py",
           "scipy/test_special_sph_harm.py", "scipy/test_signal_spectral.py",
           "scipy/test_fft.py", "scipy/test_linalg_special_matrices.py",
           "scipy/test_linalg_polar.py", "scipy/test_linalg_eigh_tridiagonal.py",
           "scipy/test_interpolate.py", "test_experimental_ode.py",
           "test_random_gamma.py", "example_libraries/test_stax.py",
           "ops/test_special_functions.py", "numpy/test_setops.py",
           "reference/test_numpy_linalg.py", "reference/test_lax_api.py",
           "reference/test_scipy_linalg.py", "reference/test_numpy_searching.py",
           "reference/test_numpy_sequences.py", "reference/test_numpy_statistics.py"]
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


def _load_module(relative: str):
    path = pathlib.Path(__file__).parent / relative
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(names):
    import jax
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    unknown = sorted(set(names) - set(MODULES))
    if unknown:
        raise SystemExit(f"not in MODULES: {unknown}")
    out: dict = {}
    if names and PATH.exists():
        with gzip.open(PATH, "rt") as f:
            out.update(json.load(f))
    for relative in names or MODULES:
        for key, inputs, fn in _load_module(relative).jax_reference_tables(jax):
            _record(out, key, inputs, fn(*inputs))
            print(key)
    with gzip.open(PATH, "wt") as f:
        json.dump(out, f, sort_keys=True)
    print(f"wrote {len(out)} entries to {PATH}")


if __name__ == "__main__":
    main(sys.argv[1:])
