"""transforms.optimize's algebraic simplification: each rewrite fires on its pattern, leaves
look-alikes that are not identities alone, and never changes a value."""
import numpy as np
import pytest

import ptojax as pto
from ptojax import lax
from ptojax.ir.verify import verify
from ptojax.eval.interpreter import eval_ir
from ptojax.optimize import optimize

RNG = np.random.default_rng(5)
SQUARE = RNG.standard_normal((3, 3)).astype(np.float32)


def _ones_like(x):
    return lax.broadcast_in_dim(np.float32(1.0), x.shape, ())


# name -> (function of one f32[3,3] argument, primitive names left after optimizing)
PATTERNS = {
    "mul_by_literal_one": (lambda x: lax.mul(lax.sin(x), 1.0), ["sin"]),
    "mul_by_broadcast_one": (lambda x: lax.mul(_ones_like(x), lax.sin(x)), ["sin"]),
    "broadcast_scalar_operand": (
        lambda x: lax.add(x, lax.broadcast_in_dim(np.float32(2.0), x.shape, ())), ["add"]),
    "integer_pow_one": (lambda x: lax.integer_pow(lax.sin(x), 1), ["sin"]),
    "integer_pow_two_shares_mul": (
        lambda x: lax.add(lax.integer_pow(x, 2), lax.mul(x, x)), ["mul", "add"]),
    "double_negation": (lambda x: lax.neg(lax.neg(lax.sin(x))), ["sin"]),
    "transpose_of_transpose": (
        lambda x: lax.transpose(lax.transpose(lax.sin(x), (1, 0)), (1, 0)), ["sin"]),
    "reshape_chain": (lambda x: lax.reshape(lax.reshape(lax.sin(x), (9,)), (3, 3)), ["sin"]),
    "same_type_convert": (
        lambda x: lax.convert_element_type(lax.convert_element_type(x, np.float16),
                                           np.float32), ["convert_element_type",
                                                         "convert_element_type"]),
    "square_transpose_is_kept": (lambda x: lax.transpose(x, (1, 0)), ["transpose"]),
    "broadcasting_mul_by_one_is_kept": (
        lambda x: lax.mul(lax.reduce_sum(x, (0, 1)), _ones_like(x)),
        ["reduce_sum", "broadcast_in_dim", "mul"]),
}


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_simplification(name):
    fn, expected = PATTERNS[name]
    closed = pto.make_ir(fn)(SQUARE)
    optimized = optimize(closed)
    verify(optimized)
    assert [e.prim.name for e in optimized.eqns] == expected
    np.testing.assert_array_equal(np.asarray(eval_ir(optimized, [SQUARE])[0]),
                                  np.asarray(eval_ir(closed, [SQUARE])[0]))
