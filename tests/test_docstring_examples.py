"""The examples in the docstrings of the public API run and print what they show."""
import doctest
import functools
import importlib
import re

import numpy as np

import pytest

import ptojax as pto
import ptojax.numpy as pnp
import ptojax.scipy  # noqa: F401  (pto.scipy in the examples)

from test_public_api import PUBLIC

MODULES = ["ptojax", "ptojax.sharding", "ptojax.shard.explicit", "ptojax.config", "ptojax.test_util", "ptojax.shard.runtime.arrays", "ptojax.debug",
           "ptojax.nn.activations", "ptojax.nn.softmax_family", "ptojax.nn.normalization",
           "ptojax.nn.encoding", "ptojax.nn.attention", "ptojax.nn.initializers",
           "ptojax.scipy.special.normal", "ptojax.scipy.special.gamma_family",
           "ptojax.scipy.special.zeta", "ptojax.scipy.special.entropy",
           "ptojax.scipy.special.logistic", "ptojax.scipy.special.bernoulli",
           "ptojax.scipy.special.faddeeva", "ptojax.scipy.special.sici",
           "ptojax.scipy.special.fresnel", "ptojax.scipy.special.bessel_jn",
           "ptojax.scipy.special.hyp1f1", "ptojax.scipy.special.hyp2f1",
           "ptojax.scipy.special.sph_harm", "ptojax.scipy.stats.ranks", "ptojax.scipy.stats.kde",
           *(f"ptojax.scipy.stats.{name}" for name in (
               "norm", "bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet",
               "expon", "gamma", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace",
               "logistic", "multinomial", "multivariate_normal", "nbinom", "pareto", "poisson",
               "t", "truncnorm", "uniform", "vonmises", "wrapcauchy", "summary"))]


GLOBALS = {"pto": pto, "pnp": pnp, "np": np, "functools": functools}

# public callables without an example, per module (a budget that only goes down): NumPy's own
# abstract scalar classes (pnp.floating, pnp.integer, ...; their docstrings are NumPy's) and
# pto.tools.draw, whose output needs the optional graphviz package; pto.stages.CompilerOptions,
# a type alias (``dict[str, str | bool]``, as JAX's), which cannot carry a docstring; and
# checkify.ErrorCategory (JAX's alias type[JaxException], which has type's docstring)
WITHOUT_EXAMPLE = {"ptojax.numpy": 7, "ptojax.tools": 1, "ptojax.stages": 1,
                   "ptojax.experimental.checkify": 1}


NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


class FloatTolerantChecker(doctest.OutputChecker):
    """Output matches when it differs from what the example shows only in the last bits of
    its floats: numpy's float32 ``log1p``/``expm1``... round a last bit differently on CPUs
    with and without AVX-512 (``-0.4586751`` vs ``-0.45867512``), and an example shows the
    value, not the machine's rounding. The text between the numbers must match exactly."""

    def check_output(self, want, got, optionflags):
        if super().check_output(want, got, optionflags):
            return True
        want_numbers, got_numbers = NUMBER.findall(want), NUMBER.findall(got)
        if len(want_numbers) != len(got_numbers) or " ".join(NUMBER.split(want)).split() != \
                " ".join(NUMBER.split(got)).split():
            return False
        return all(np.isclose(float(w), float(g), rtol=4e-7, atol=0)
                   for w, g in zip(want_numbers, got_numbers))


def _runner():
    return doctest.DocTestRunner(checker=FloatTolerantChecker(),
                                 optionflags=doctest.NORMALIZE_WHITESPACE)


def test_the_checker_forgives_only_last_bits():
    check = FloatTolerantChecker().check_output
    assert check("Array([-0.4586751], dtype=float32)\n", "Array([-0.45867512], dtype=float32)\n", 0)
    assert not check("Array([-0.4586751], dtype=float32)\n", "Array([-0.4586761], dtype=float32)\n", 0)
    assert not check("Array([1.], dtype=float32)\n", "Array([1.], dtype=float64)\n", 0)
    assert not check("Array([1, 2], dtype=int32)\n", "Array([1, 3], dtype=int32)\n", 0)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    runner = _runner()
    for test in doctest.DocTestFinder().find(module, name, extraglobs=GLOBALS):
        runner.run(test, out=lambda text: None)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0 and result.failed == 0, \
        f"{result.failed} of {result.attempted} examples in {name} failed (run doctest -v)"


def public_callables(name):
    module = importlib.import_module(name)
    return {n: getattr(module, n) for n in module.__all__
            if callable(getattr(module, n)) and not isinstance(getattr(module, n), type(np))}


@pytest.mark.parametrize("name", PUBLIC)
def test_public_examples_run(name):
    """The examples of every public function, wherever it is defined (a ``pto.lax`` function
    lives in ``ptojax/ops/``), print what they show."""
    finder, runner = doctest.DocTestFinder(recurse=False), _runner()
    for fname, fn in public_callables(name).items():
        if ">>>" in (fn.__doc__ or ""):
            for test in finder.find(fn, f"{name}.{fname}", globs=dict(GLOBALS)):
                runner.run(test, out=lambda text: None)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed"


@pytest.mark.parametrize("name", PUBLIC)
def test_public_functions_are_documented(name):
    """Every public function has a docstring, and one with an example except for the counted
    remainder (WITHOUT_EXAMPLE, which only shrinks)."""
    functions = public_callables(name)
    undocumented = sorted(n for n, fn in functions.items() if not (fn.__doc__ or "").strip())
    assert not undocumented, f"{name}: no docstring for {undocumented}"
    without = sorted(n for n, fn in functions.items() if ">>>" not in (fn.__doc__ or ""))
    assert len(without) <= WITHOUT_EXAMPLE.get(name, 0), f"{name}: no example for {without}"
