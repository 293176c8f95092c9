"""Every primitive's numpy impl returns exactly the shapes and dtypes its abstract eval promises
(the jit executor runs the impls and trusts those types), and never writes into its inputs."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from ptojax.ir.types import TensorType
from ptojax.ops import (arithmetic, broadcast, complex_parts, convert, convolution,
                        cumulative, decompositions, dynamic_slicing, eig, fft, gather_scatter,
                        linalg, logic, random_bits, reductions, shape, slicing, sorting,
                        special, transcendental)
from ptojax.trace import Primitive
from prim_cases import all_cases

CASES = all_cases()
# The primitives of ptojax/ops (plain numpy impls); collectives, calls and tile ops need a
# runtime context (devices, sub-IRs, tiles) and are tested with their transforms.
MODULES = (arithmetic, broadcast, complex_parts, convert, convolution, cumulative,
           decompositions, dynamic_slicing, eig, fft, gather_scatter, linalg, logic, random_bits,
           reductions, shape, slicing, sorting, special, transcendental)


def _primitives_of(module):
    return {v.name for v in vars(module).values() if isinstance(v, Primitive)}


def test_every_primitive_has_a_case():
    defined = set().union(*(_primitives_of(m) for m in MODULES))
    assert defined - set(CASES) == set(), "primitives without an impl/abstract-eval case"
    assert set(CASES) - defined == set(), "cases for primitives that no longer exist"


def _type_of(x) -> TensorType:
    x = np.asarray(x)
    return TensorType(x.shape, x.dtype)


@pytest.mark.parametrize("name", sorted(CASES))
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_impl_matches_abstract_eval(name, data, seed):
    case = CASES[name]
    args, params = case.draw(data, np.random.default_rng(seed))
    before = [np.array(a, copy=True) for a in args]
    expected = case.prim.out_types([_type_of(a) for a in args], params)
    with np.errstate(all="ignore"):
        out = case.prim.impl(*args, **params)
    outs = list(out) if case.prim.multiple_results else [out]
    assert len(outs) == len(expected)
    for got, want in zip(outs, expected):
        got = np.asarray(got)
        assert (got.shape, got.dtype) == (want.shape, want.dtype), \
            f"{name}{params}: impl gives {got.dtype}{list(got.shape)}, abstract eval {want}"
    for a, b in zip(args, before):
        np.testing.assert_array_equal(np.asarray(a), b, err_msg=f"{name} changed an input")
