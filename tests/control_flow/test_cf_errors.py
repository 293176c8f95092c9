"""Errors of the control-flow API: type and structure mismatches of carries and branches are
``ControlFlowError``s raised while tracing, naming the leaf, both types and the user's line."""
import numpy as np
import pytest

import ptojax as pto
from ptojax.errors import ConcretizationError, ControlFlowError

lax = pto.lax
XS = np.ones((4, 3), np.float32)


def raises_at_call(call, match):
    """``call`` (a one-line lambda) raises a ControlFlowError matching ``match`` whose text
    points at the line of ``call``."""
    with pytest.raises(ControlFlowError, match=match) as info:
        call()
    assert f"test_cf_errors.py:{call.__code__.co_firstlineno}" in str(info.value)
    return str(info.value)


def test_scan_carry_shape_mismatch_names_the_leaf_and_both_types():
    message = raises_at_call(lambda: lax.scan(lambda c, x: ({"h": c["h"][None]}, None), {"h": np.zeros(3, np.float32)}, XS),
                             "scan: .* types differ")
    assert "carry['h']: f32[3] in init but f32[1,3]" in message


def test_scan_carry_dtype_mismatch():
    raises_at_call(lambda: lax.scan(lambda c, x: (c + x.sum(), None), np.int32(0), XS),
                   r"i32\[\] in init but f32\[\]")


def test_scan_carry_structure_mismatch():
    raises_at_call(lambda: lax.scan(lambda c, x: ((c, c), None), np.zeros(3, np.float32), XS),
                   "structure")


def test_scan_body_must_return_a_pair():
    raises_at_call(lambda: lax.scan(lambda c, x: c + x, np.zeros(3, np.float32), XS),
                   r"must return a pair \(carry, y\)")


def test_scan_xs_lengths_must_agree():
    message = raises_at_call(lambda: lax.scan(lambda c, x: (c, None), 0.0, (XS, np.ones(5))),
                             "leading axes of xs")
    assert "xs[0]: f32[4,3] (leading axis 4)" in message and "xs[1]" in message
    raises_at_call(lambda: lax.scan(lambda c, x: (c, None), 0.0, XS, length=7), "length=7")
    raises_at_call(lambda: lax.scan(lambda c, x: (c, None), 0.0, np.float32(1)), "a scalar")
    raises_at_call(lambda: lax.scan(lambda c, x: (c, None), 0.0, None), "give length=")


def test_cond_branch_types_must_match():
    message = raises_at_call(lambda: lax.cond(True, lambda x: x, lambda x: x[:2], XS[0]),
                             "branches return different types")
    assert "output: f32[2] in false_fun, f32[3] in true_fun" in message
    raises_at_call(lambda: lax.cond(True, lambda x: (x, x), lambda x: x, XS[0]), "structure")
    raises_at_call(lambda: lax.switch(1, [lambda: np.int32(0), lambda: np.float32(0)]),
                   r"i32\[\] in branches\[0\].*f32\[\] in branches\[1\]")
    raises_at_call(lambda: lax.cond(True, lambda x: x, lambda x: 1.0, np.float16(3)),
                   r"f32\[\] in false_fun, f16\[\] in true_fun")  # as JAX: no promotion


def test_cond_predicate_and_switch_index_must_be_scalars():
    raises_at_call(lambda: lax.cond(np.array([True, False]), lambda: 0.0, lambda: 1.0),
                   r"predicate must be a scalar.*bool\[2\].*pnp.where")
    raises_at_call(lambda: lax.switch(np.float32(1), [lambda: 0.0, lambda: 1.0]),
                   "index must be an integer scalar")
    raises_at_call(lambda: lax.switch(0, []), "non-empty")


def test_while_loop_errors():
    raises_at_call(lambda: lax.while_loop(lambda c: c, lambda c: c + 1.0, 0.0),
                   "cond_fun .* must return a scalar bool, got f32")
    raises_at_call(lambda: lax.while_loop(lambda c: c < 3, lambda c: (c, c), 0.0),
                   "structure")
    raises_at_call(lambda: lax.while_loop(lambda c: c < 3, lambda c: c + 1.0, 0, max_steps=-1),
                   "max_steps must be None or a non-negative int")


def test_fori_loop_errors():
    raises_at_call(lambda: lax.fori_loop(0.0, 3, lambda i, v: v, 1.0),
                   "lower must be an integer scalar")
    raises_at_call(lambda: lax.fori_loop(np.int32(0), np.int16(3), lambda i, v: v, 1.0),
                   "must have the same dtype")
    raises_at_call(lambda: lax.fori_loop(0, 3, lambda i, v: v * 1.5, np.int32(1)),
                   r"carry\[1\]: i32\[\] in \(lower, init_val\) but f32\[\]")


def test_a_traced_condition_as_python_bool_suggests_cond():
    def f(x):
        return lax.scan(lambda c, v: (c + (1.0 if v > 0 else 0.0), None), 0.0, x)[0]
    with pytest.raises(ConcretizationError, match="cond"):
        f(np.ones(3, np.float32))


def test_a_python_scalar_initial_carry_takes_the_dtype_the_body_gives_it():
    carry, _ = lax.scan(lambda c, x: (c + x.sum(), None), 0.0, XS)
    assert carry.dtype == np.float32
    out = lax.while_loop(lambda c: c < 3, lambda c: c + np.float16(1), 0.0)
    assert out.dtype == np.float16 and float(out) == 3.0
    assert float(lax.fori_loop(0, 3, lambda i, x: x + 0.5, 0)) == 1.5  # weak int -> float
