"""Every JVP and transpose rule on float64 inputs of shapes drawn by hypothesis: against
central finite differences, for consistency (``<ct, J t> == <J^T ct, t>``), with a verified
gradient IR, and against ``jax.jvp``/``jax.vjp`` on the same function.

JAX compiles every new shape (~0.1 s per example on this machine), so the JAX comparison draws
fewer examples than the finite-difference one, and computes them in one ``jax.jit`` per rule.
Both draw fewer than the suite's default (each run draws new ones): there are 113 rules, and at
the default the file took over two minutes of the suite.
Conventions at special points (ties, zeros) are compared with JAX in test_ad_conventions.py.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ptojax as pto
from ptojax.ir.verify import verify
from ptojax.autodiff import calls
from ptojax.ops import (arithmetic, broadcast, complex_parts, convert, cumulative,
                        decompositions, dynamic_slicing, eig, fft, gather_scatter, linalg, logic,
                        random_bits, reductions, shape, slicing, sorting, special,
                        transcendental)
from ptojax.trace import Primitive
from ptojax.tree_util import tree_leaves, tree_map
from ad_cases import CASES
from helpers import jax_cheaply

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

CASE_MODULES = (arithmetic, broadcast, complex_parts, convert, cumulative, decompositions,
                dynamic_slicing, eig, fft,
                gather_scatter, linalg, logic, random_bits, reductions, shape, slicing, sorting,
                special, transcendental)
JAX_EXAMPLES = 3
FD_EXAMPLES = 12


def _primitives(module):
    return {v.name for v in vars(module).values() if isinstance(v, Primitive)}


def test_every_primitive_has_a_case():
    """Call primitives (checkpoint, custom_jvp/vjp, custom_lin) are in test_ad_custom.py."""
    defined = set().union(*map(_primitives, CASE_MODULES))
    covered = {p.name for c in CASES.values() for p in c.prims}
    assert defined - covered == set(), "primitives without a differentiation case"
    assert not covered & _primitives(calls)


def _dot(xs, ys):
    return sum(float(np.sum(np.asarray(x, np.float64) * np.asarray(y, np.float64)))
               for x, y in zip(tree_leaves(xs), tree_leaves(ys)))


def _central_difference(fn, args, tangents, eps):
    plus = fn(*[a + eps * t for a, t in zip(args, tangents)])
    minus = fn(*[a - eps * t for a, t in zip(args, tangents)])
    return tree_map(lambda p, m: (np.asarray(p) - np.asarray(m)) / (2 * eps), plus, minus)


def _assert_trees_close(actual, expected, rtol, atol):
    a_leaves, e_leaves = tree_leaves(actual), tree_leaves(expected)
    assert len(a_leaves) == len(e_leaves)
    for a, e in zip(a_leaves, e_leaves):
        a, e = np.asarray(a), np.asarray(e)
        assert a.shape == e.shape and a.dtype == e.dtype, (a.shape, a.dtype, e.shape, e.dtype)
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)


def _scale(*trees):
    return 1.0 + max((float(np.max(np.abs(x))) for t in trees for x in tree_leaves(t)
                      if np.size(x)), default=0.0)


def _directions(data, args, out_shapes):
    """Random tangents for the inputs and a random cotangent for the output."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    return [rng.standard_normal(a.shape) for a in args], \
        tree_map(lambda o: rng.standard_normal(np.shape(o)), out_shapes)


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=FD_EXAMPLES)
@given(data=st.data())
def test_rule_matches_finite_differences(name, data, J):
    case = CASES[name]
    pto_fn, _, args = case.build(data, J)
    out, vjp_fn = pto.vjp(pto_fn, *args)
    tangents, ct = _directions(data, args, out)
    out_j, tout = pto.jvp(pto_fn, args, tangents)
    cts = vjp_fn(ct)
    scale = _scale(out, tout)
    _assert_trees_close(out_j, out, 0, 0)
    if case.finite_differences:
        fd = _central_difference(pto_fn, args, tangents, case.fd_eps)
        _assert_trees_close(tout, fd, case.fd_rtol, case.fd_rtol * scale)
    np.testing.assert_allclose(_dot(ct, tout), _dot(cts, tangents), rtol=case.rtol,
                               atol=case.rtol * scale * _scale(ct, tangents))
    verify(pto.make_ir(lambda *a: pto.vjp(pto_fn, *a)[1](ct))(*args))


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.jax_reference))
def test_rule_matches_jax(name, J):
    """Hypothesis draws the examples and ptojax differentiates each; JAX then computes all of
    them in one ``jax.jit`` (one XLA compile per rule instead of one per example: a third of the
    CPU time). Hypothesis does not shrink a failing example here, so the failure names it."""
    case, examples = CASES[name], []

    @settings(max_examples=JAX_EXAMPLES)
    @given(data=st.data())
    def draw(data):
        pto_fn, jax_fn, args = case.build(data, J)
        out, vjp_fn = pto.vjp(pto_fn, *args)
        tangents, ct = _directions(data, args, out)
        _, tout = pto.jvp(pto_fn, args, tangents)
        examples.append((jax_fn, args, tangents, ct, (out, tout, vjp_fn(ct))))

    draw()
    assert examples

    def reference(inputs):
        results = []
        for (jax_fn, *_), (args, tangents, ct) in zip(examples, inputs):
            out, tout = J.jax.jvp(jax_fn, tuple(args), tuple(tangents))
            results.append((out, tout, J.jax.vjp(jax_fn, *args)[1](ct)))
        return results

    inputs = [(args, tangents, ct) for _, args, tangents, ct, _ in examples]
    expected = jax_cheaply(J.jax, reference, inputs)
    for (_, args, tangents, ct, (out, tout, cts)), (jout, jtout, jcts) in zip(examples, expected):
        try:
            scale = _scale(out, tout)
            _assert_trees_close(out, jout, case.rtol, case.rtol * scale)
            _assert_trees_close(tout, jtout, case.rtol, case.rtol * scale)
            _assert_trees_close(cts, jcts, case.rtol, case.rtol * scale * _scale(ct))
        except AssertionError as e:
            raise AssertionError(f"{name} at args={args!r} tangents={tangents!r} "
                                 f"ct={ct!r}: {e}") from None
