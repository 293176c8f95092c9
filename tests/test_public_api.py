"""Every public module lists its API in ``__all__`` and ``dir()`` shows only that: no imported
helper module, no re-imported function that belongs elsewhere (issue 15, part 4)."""
import importlib
import types

import pytest

# public module -> its public submodules
PUBLIC = {
    "ptojax": {"core", "custom_batching", "custom_derivatives", "debug", "distributed", "experimental", "dtypes", "errors", "image", "lax", "mixed_precision", "nn",
               "numpy", "ops", "quant", "profiler", "random", "scipy", "sharding", "stages", "targets", "test_util", "tools",
               "tree", "tree_util", "typing"},
    "ptojax.numpy": {"fft", "linalg"}, "ptojax.numpy.linalg": set(), "ptojax.numpy.fft": set(),
    "ptojax.ops": set(), "ptojax.custom_derivatives": set(),
    "ptojax.lax": {"linalg"}, "ptojax.lax.linalg": set(), "ptojax.random": set(),
    "ptojax.nn": {"initializers"}, "ptojax.nn.initializers": set(), "ptojax.image": set(),
    "ptojax.scipy": {"cluster", "fft", "integrate", "interpolate", "linalg", "ndimage",
                     "signal", "special", "stats"},
    "ptojax.scipy.linalg": set(), "ptojax.scipy.fft": set(), "ptojax.scipy.integrate": set(),
    "ptojax.scipy.interpolate": set(), "ptojax.scipy.ndimage": set(),
    "ptojax.scipy.cluster": {"vq"}, "ptojax.scipy.cluster.vq": set(),
    # (not the package ptojax.scipy.spatial: JAX's lists nothing until transform is imported)
    "ptojax.scipy.spatial.transform": set(),
    "ptojax.scipy.special": set(),
    "ptojax.scipy.stats": {"bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2",
                           "dirichlet", "expon", "gamma", "gennorm", "geom", "gumbel_l",
                           "gumbel_r", "laplace", "logistic", "multinomial",
                           "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "t",
                           "truncnorm", "uniform", "vonmises", "wrapcauchy"},
    "ptojax.tree_util": set(), "ptojax.tree": set(), "ptojax.debug": set(),
    "ptojax.typing": set(),
    "ptojax.sharding": set(), "ptojax.tools": set(), "ptojax.quant": set(),
    "ptojax.mixed_precision": set(), "ptojax.flatten_util": set(),
    "ptojax.experimental": {"checkify", "ode"}, "ptojax.experimental.ode": set(),
    "ptojax.experimental.checkify": set(),
    "ptojax.scipy.optimize": set(), "ptojax.ad_checkpoint": set(), "ptojax.scipy.signal": set(),
    "ptojax.stages": set(), "ptojax.profiler": set(), "ptojax.custom_batching": set(), "ptojax.extend": {"core"}, "ptojax.extend.core": set(), "ptojax.core": set(),
    # (not the package ptojax.example_libraries: JAX's lists stax and optimizers only once
    # they are imported)
    "ptojax.example_libraries.stax": set(), "ptojax.example_libraries.optimizers": set(),
}

# ptojax's own modules, without a JAX counterpart
OWN = {"ptojax.quant", "ptojax.mixed_precision", "ptojax.tools"}

# names a module exports that its JAX counterpart does not have: ptojax's own API
EXTRAS = {
    "ptojax": {"AxisType", "ClosedIR", "Dim", "IR", "Mesh", "PartitionSpec", "SingleDeviceSharding",
               "TensorType", "TileConfig", "TileType", "get_mesh", "make_ir", "profile", "shard",
               "targets", "test_util", "tile", "tools", "with_sharding_constraint", "bfloat16",
               "quant", "mixed_precision", "kernel", "BlockSpec",
               "float8_e4m3fn", "float8_e5m2", "float16", "float32", "float64", "int8", "int16",
               "int32", "int64", "uint8", "uint16", "uint32"},
    "ptojax.numpy": {"fix"},
    "ptojax.nn": {"layer_norm", "rms_norm",
                  "conv", "max_pool", "avg_pool", "sum_pool"},  # flax-style layers
    "ptojax.sharding": {"P", "use_mesh"},
}


@pytest.mark.parametrize("name", PUBLIC)
def test_dir_shows_only_the_api(name):
    module = importlib.import_module(name)
    assert isinstance(module.__all__, list) and module.__all__, name
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what it lacks: {missing}"
    shown = dir(module)
    assert sorted(shown) == sorted(module.__all__), set(shown) ^ set(module.__all__)
    modules = {n for n in shown if isinstance(getattr(module, n), types.ModuleType)}
    assert modules == PUBLIC[name], f"{name} shows modules {modules ^ PUBLIC[name]}"


@pytest.mark.parametrize("name", PUBLIC)
def test_api_is_jax_api(name, jax):
    """A name JAX's counterpart lacks is ptojax's own API, listed in EXTRAS (not a helper)."""
    if name in OWN:
        theirs = set(importlib.import_module(name).__all__)
    else:
        jax_name = name.replace("ptojax", "jax", 1)
        # JAX's package lists a submodule once it is imported (not ptojax's own ones)
        for sub in PUBLIC[name] - EXTRAS.get(name, set()):
            try:
                importlib.import_module(f"{jax_name}.{sub}")
            except ImportError:
                pass
        theirs = set(dir(importlib.import_module(jax_name)))
    module = importlib.import_module(name)
    ours = set(module.__all__)
    assert ours - theirs == EXTRAS.get(name, set())
    # a JAX name the module defines but leaves out of __all__ would be hidden from dir()
    hidden = {n for n, v in vars(module).items() if n in theirs and n not in ours
              and not n.startswith("_") and not isinstance(v, types.ModuleType)}
    assert not hidden, f"{name} defines {sorted(hidden)} (JAX API) but does not list them"
