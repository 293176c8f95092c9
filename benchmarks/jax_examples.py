"""Run one of JAX's example programs (its ``examples/*.py``, from a JAX checkout) unchanged on
JAX or on ptojax, on synthetic data:

    python benchmarks/jax_examples.py {jax,pto} path/to/examples/mnist_vae.py [program args]

Only names change: ``jax.*`` -> ``ptojax.*`` (for ``pto``); the examples' older homes of the
example libraries (``jax.experimental.stax`` / ``.optimizers``) -> ``example_libraries``;
``from jax.config import config`` -> the library's ``config``. ``examples.datasets`` (and
``datasets``) is replaced by synthetic MNIST-shaped data (no network; ``N_TRAIN`` images,
default 96) and ``privacy.*`` (tensorflow_privacy) by a stub that raises. numpy's global RNG
is seeded, so both runs draw the same data. The last value of ``trained_params``,
``opt_state`` or ``params`` left in the program's globals is saved to ``OUT`` (an .npz) to
compare the two runs. Measured results are in README.md ("Running JAX programs").
"""
import builtins
import importlib
import os
import sys
import time
import types

import numpy as np

OLD_HOMES = {"jax.experimental.stax": "jax.example_libraries.stax",
             "jax.experimental.optimizers": "jax.example_libraries.optimizers"}


def synthetic_mnist(permute_train=False, n_test=32):
    """(train images, train labels, test images, test labels): noisy binary prototypes of 10
    classes in [0.05, 0.95], flattened to 784, labels one-hot, as ``datasets.mnist``."""
    n_train = int(os.environ.get("N_TRAIN", 96))
    rng = np.random.RandomState(0)
    prototypes = rng.rand(10, 784) < 0.3

    def make(n):
        labels = rng.randint(0, 10, n)
        flips = rng.rand(n, 784) < 0.1
        images = (prototypes[labels] ^ flips).astype(np.float32) * np.float32(0.9) + \
            np.float32(0.05)
        return images, np.array(labels[:, None] == np.arange(10), np.float32)

    train, train_labels = make(n_train)
    test, test_labels = make(n_test)
    if permute_train:
        perm = np.random.RandomState(0).permutation(n_train)
        train, train_labels = train[perm], train_labels[perm]
    return train, train_labels, test, test_labels


def _stand_ins():
    datasets = types.ModuleType("datasets")
    datasets.mnist = synthetic_mnist
    examples = types.ModuleType("examples")
    examples.datasets = datasets
    privacy = types.ModuleType("privacy")

    def unavailable(*args, **kwargs):
        raise RuntimeError("tensorflow_privacy is not installed")
    privacy.compute_rdp = privacy.get_privacy_spent = unavailable
    return {"examples": examples, "datasets": datasets, "privacy": privacy}


def mapped_import(root):
    """An ``__import__`` for the example's module: the name mapping above onto ``root``."""
    stand_ins = _stand_ins()

    def do_import(name, globals=None, locals=None, fromlist=(), level=0):
        top = name.split(".")[0]
        if top in stand_ins:
            if name == "examples.datasets" and fromlist:
                return stand_ins["datasets"]
            return stand_ins[top]
        if name == "jax.config" and fromlist:
            return types.SimpleNamespace(config=importlib.import_module(root).config)
        if name == "jax" or name.startswith("jax."):
            target = root + OLD_HOMES.get(name, name)[len("jax"):]
            module = importlib.import_module(target)
            if target == root + ".experimental" and set(fromlist or ()) & {"stax", "optimizers"}:
                libraries = importlib.import_module(root + ".example_libraries")
                module = types.SimpleNamespace(**{
                    n: getattr(libraries if n in ("stax", "optimizers") else module, n)
                    for n in fromlist})
            return module if fromlist else importlib.import_module(root)
        return builtins.__import__(name, globals, locals, fromlist, level)
    return do_import


def main():
    lib, path, *args = sys.argv[1:]
    root = {"jax": "jax", "pto": "ptojax"}[lib]
    for name in ("example_libraries.stax", "example_libraries.optimizers", "tree_util"):
        importlib.import_module(f"{root}.{name}")
    module = types.ModuleType("__main__")
    module.__dict__.update(__file__=path,
                           __builtins__=dict(vars(builtins), __import__=mapped_import(root)))
    sys.argv = [path, *args]
    np.random.seed(0)
    start, cpu = time.time(), time.process_time()
    try:
        with open(path) as f:
            exec(compile(f.read(), path, "exec"), module.__dict__)
    finally:
        print(f"[{lib}] {os.path.basename(path)}: wall {time.time() - start:.1f} s, "
              f"cpu {time.process_time() - cpu:.1f} s", file=sys.stderr)
    for name in ("trained_params", "opt_state", "params"):
        if name in module.__dict__ and os.environ.get("OUT"):
            tree_util = importlib.import_module(f"{root}.tree_util")
            leaves = [np.asarray(x) for x in tree_util.tree_leaves(module.__dict__[name])]
            np.savez(os.environ["OUT"], *leaves)
            print(f"[{lib}] saved {name} ({len(leaves)} leaves) to {os.environ['OUT']}",
                  file=sys.stderr)
            break


if __name__ == "__main__":
    main()
