"""Every primitive's batching rule against a Python loop: for operands and params drawn by
tests/ops/prim_cases.py, a random subset of the operands gets a batch of examples stacked at a
random axis (negative axes included) and the outputs are asked for at random out_axes. The
vmapped primitive must equal the primitive applied example by example, stacked, and its
batched IR must verify."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ptojax as pto
from ptojax import dtypes
from ptojax.ir import verify
from ptojax.ir.types import TensorType
from ptojax.ops import random_bits
from helpers import assert_close, tol
from prim_cases import all_cases, random_values

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

CASES = {name: case for name, case in all_cases().items() if name != "iota"}  # no operands
EXAMPLES = max(10, settings.default.max_examples // 2)  # per primitive: ~90 primitives


def _type_of(x) -> TensorType:
    x = np.asarray(x)
    return TensorType(x.shape, dtypes.canonicalize(x.dtype))


def _rtol(dtype) -> float:
    """A reduction over a batched layout may round differently: allow a couple of ulps."""
    dtype = np.dtype(dtype)
    if dtypes.is_inexact(dtype):
        return max(tol(dtype), 2 * float(dtypes.finfo(dtype).eps))
    return 0


def _draw_batch(data, rng, args):
    """(per-example operand lists, in_axes, stacked operands): at least one operand mapped."""
    n = data.draw(st.integers(1, 3), label="batch size")
    mapped = data.draw(st.lists(st.booleans(), min_size=len(args), max_size=len(args)))
    if not any(mapped):
        mapped[data.draw(st.integers(0, len(args) - 1))] = True
    examples = [[random_values(rng, np.shape(a), np.asarray(a).dtype) if m and k else a
                 for a, m in zip(args, mapped)] for k in range(n)]
    in_axes, stacked = [], []
    for i, (a, m) in enumerate(zip(args, mapped)):
        if not m:
            in_axes.append(None)
            stacked.append(a)
            continue
        ndim = np.ndim(a)
        axis = data.draw(st.integers(-(ndim + 1), ndim), label=f"in_axes[{i}]")
        in_axes.append(axis)
        stacked.append(np.stack([np.asarray(ex[i]) for ex in examples], axis=axis))
    return examples, tuple(in_axes), stacked


def _check_vmap_against_loop(data, prim, args, params):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="seed"))
    examples, in_axes, stacked = _draw_batch(data, rng, args)
    out_types = prim.out_types([_type_of(a) for a in args], params)
    out_axes = [data.draw(st.integers(-(t.ndim + 1), t.ndim), label="out_axis")
                for t in out_types]

    def fn(*ops):
        out = prim.bind(*ops, **params)
        return tuple(out) if prim.multiple_results else out

    vmapped = pto.vmap(fn, in_axes=in_axes,
                       out_axes=tuple(out_axes) if prim.multiple_results else out_axes[0])
    got = vmapped(*stacked)
    got = list(got) if prim.multiple_results else [got]
    with np.errstate(all="ignore"):      # the impls run bare here, outside ptojax's guard
        loop = [prim.impl(*ex, **params) for ex in examples]
    loop = [out if prim.multiple_results else [out] for out in loop]
    for k, (t, axis) in enumerate(zip(out_types, out_axes)):
        expected = np.stack([np.asarray(outs[k], t.dtype) for outs in loop], axis=axis)
        r = _rtol(t.dtype)
        assert_close(got[k], expected, rtol=r, atol=r)
    verify(pto.make_ir(vmapped)(*stacked))


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_batched_primitive_matches_a_loop(name, data):
    case = CASES[name]
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="case seed"))
    args, params = case.draw(data, rng)
    _check_vmap_against_loop(data, case.prim, args, params)


@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_threefry2x32_matches_a_loop(data):
    shape = data.draw(st.lists(st.integers(0, 3), max_size=2).map(tuple))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    args = [rng.integers(0, 2 ** 32, size=shape if data.draw(st.booleans()) else (),
                         dtype=np.uint32) for _ in range(4)]
    _check_vmap_against_loop(data, random_bits.threefry2x32_p, args, {})

