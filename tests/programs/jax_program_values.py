"""JAX's results for the programs of test_programs.py whose JAX run is slow (JAX compiles
every eager operation of a stax ``init_fun`` separately: 5-30 s a program on a busy machine;
the programs after JAX's examples/ take 3-5 s each),
stored in jax_program_values.json.gz. Each entry keeps a digest of the program's source and
its inputs, so an edited program or changed inputs fails loudly instead of comparing against
stale values.

Regenerate after changing one of PROGRAMS (needs JAX; JAX runs in its default 32-bit mode):
    cd tests/programs && PYTHONPATH=../.. python jax_program_values.py [name ...]
(only the named programs, keeping the others' stored values; all of them without names).
The ``ilqr_mpc`` and ``newton_bfgs`` programs are here because JAX runs them eagerly, one
compiled operation at a time (8-20 s on a busy machine). Every program but
``jaxpr_interpreter`` is here: JAX's compiles took 1-9 s a program (ptojax's run 0.01-0.4 s);
``jaxpr_interpreter`` stays compared with a live JAX run, so the live path stays exercised.
"""
import base64
import gzip
import hashlib
import json
import os
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
PATH = HERE / "jax_program_values.json.gz"
PROGRAMS = ["advi_funnel", "advi_stats", "dp_sgd", "dqn_cartpole", "fancy_indexing", "fluidsim",
            "forward_forward", "gmm_em", "gp_cholesky", "gp_vmap_kernel", "hmm_em", "ilqr_mpc",
            "kernel_lsq_precision", "logreg_elbo", "lstm_adam", "maml_sinusoid",
            "nbody_verlet", "neural_ode_rk4", "newton_bfgs", "pca_from_scratch",
            "physical_optimization", "sharp_bits", "stax_checkpoint", "stax_classifier",
            "stax_dp_conv", "stax_gan", "stax_resnet", "stax_vae", "typed_key_sgd", "vae_epoch"]
_store: dict = {}


def _leaves(inputs) -> list:
    """The arrays of nested lists/tuples of arrays (maml_sinusoid's layers), in order."""
    if isinstance(inputs, (list, tuple)):
        return [leaf for item in inputs for leaf in _leaves(item)]
    return [inputs]


def _digest(name, inputs) -> str:
    """A digest of the program's source and of its inputs' dtypes, shapes and values."""
    h = hashlib.sha256((HERE / f"{name}.py").read_bytes())
    for a in map(np.asarray, _leaves(inputs)):
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def _encode(a) -> dict:
    a = np.asarray(a)
    return {"dtype": a.dtype.str, "shape": list(a.shape),
            "data": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}


def _decode(d: dict) -> np.ndarray:
    return np.frombuffer(base64.b64decode(d["data"]), d["dtype"]).reshape(d["shape"])


def expected(name, inputs) -> list:
    """JAX's result leaves for program ``name`` run on ``inputs``."""
    if not _store:
        if not PATH.exists():
            raise AssertionError(f"{PATH.name} is missing: regenerate it (see {__file__})")
        with gzip.open(PATH, "rt") as f:
            _store.update(json.load(f))
    entry = _store.get(name)
    if entry is None or entry["digest"] != _digest(name, inputs):
        raise AssertionError(f"{PATH.name} holds no values for {name} with this source and "
                             f"these inputs: regenerate it (see {__file__})")
    return [_decode(a) for a in entry["leaves"]]


def _stored() -> dict:
    if not PATH.exists():
        return {}
    with gzip.open(PATH, "rt") as f:
        return json.load(f)


def main(names):
    import jax
    jax.config.update("jax_platforms", "cpu")
    sys.path[:0] = [str(HERE), str(HERE.parent)]
    from helpers import load_source
    from test_programs import INPUTS
    unknown = sorted(set(names) - set(PROGRAMS))
    if unknown:
        raise SystemExit(f"not in PROGRAMS: {unknown}")
    out = {name: entry for name, entry in _stored().items() if name in PROGRAMS}
    for name in names or PROGRAMS:
        with jax.enable_x64(False):
            result = load_source(os.fspath(HERE / f"{name}.py"), name, mapped=False).main(
                *INPUTS[name])
            leaves = [np.asarray(a) for a in jax.tree.leaves(result)]
        out[name] = {"digest": _digest(name, INPUTS[name]),
                     "leaves": [_encode(a) for a in leaves]}
        print(name, len(leaves), "leaves")
    with gzip.open(PATH, "wt") as f:
        json.dump(out, f, sort_keys=True)
    print(f"wrote {len(out)} programs to {PATH}")


if __name__ == "__main__":
    main(sys.argv[1:])
