"""Control flow in the IR: nested printing, const-free sub-IRs, the optimizer inside bodies
(DCE of unused loop carries and outputs, CSE), the structure hook for passes that recurse
into bodies, the verifier catching a broken body, and pto.shard of a loop."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from cf_helpers import assert_trees_close, count_prims, eqns_of, verified
from ptojax.errors import IRVerificationError
from ptojax.ir.core import ClosedIR, IR
from ptojax.ir.verify import verify

X = np.arange(1.0, 4.0)


def optimized(fn, *args):
    ir = pto.jit(fn).lower(*args).optimized_ir
    verify(ir)
    return ir


def test_loop_bodies_print_nested_and_indented():
    def f(w, xs):
        return pto.lax.scan(lambda c, x: (pto.lax.cond(x > 0, lambda: c * w, lambda: c), c),
                            np.float64(1.0), xs)

    text = str(verified(f, np.float64(2.0), X))
    lines = text.splitlines()
    scan_line = next(i for i, line in enumerate(lines) if "= scan[" in line)
    cond_line = next(i for i, line in enumerate(lines) if "= cond[" in line)

    def indent(i):
        return len(lines[i]) - len(lines[i].lstrip())

    assert "length=3" in lines[scan_line] and "num_carry=1" in lines[scan_line]
    assert lines[scan_line + 1].lstrip().startswith("{ lambda")
    assert indent(scan_line + 1) > indent(scan_line)
    assert cond_line > scan_line and indent(cond_line) > indent(scan_line + 1)


def test_sub_irs_are_const_free_with_captured_values_as_leading_operands():
    w = np.full(3, 2.0)

    def f(s, xs):
        return pto.lax.scan(lambda c, x: (c * w + x * s, c), np.zeros(3), xs)

    ir = verified(f, np.float64(0.5), np.ones((4, 3)))
    (eqn,) = eqns_of(ir, "scan")
    body = eqn.params["body"]
    assert not body.consts and not body.ir.constvars
    assert eqn.params["num_consts"] == 2  # w (a constant) and s (a traced value)
    assert ir.ir.invars[0] in eqn.inputs[:2]


def test_dce_removes_unused_scan_outputs_and_carries():
    def f(xs):
        def step(carry, x):
            total, unused, counter = carry
            return (total + x * counter, unused * pnp.sin(x), counter + 1.0), pnp.exp(x)
        (total, _, _), _ = pto.lax.scan(step, (0.0, 1.0, 1.0), xs)
        return total

    (eqn,) = eqns_of(optimized(f, X), "scan")
    assert eqn.params["num_carry"] == 2  # `unused` goes; `counter` stays: `total` reads it
    assert len(eqn.outputs) == 2  # no ys
    assert count_prims(eqn.params["body"], "sin") == 0
    assert count_prims(eqn.params["body"], "exp") == 0
    assert_trees_close(pto.jit(f)(X), np.sum(X * np.arange(1.0, 4.0)))


def test_dce_of_the_backward_scan_drops_unneeded_cotangents():
    def loss(w, xs):
        return pto.lax.scan(lambda c, x: (pnp.tanh(c * w + x), None), 0.0, xs)[0]

    full = eqns_of(optimized(pto.grad(loss, (0, 1)), np.float64(0.5), X), "scan")[1]
    only_w = eqns_of(optimized(pto.grad(loss), np.float64(0.5), X), "scan")[1]
    assert len(full.outputs) == len(only_w.outputs) + 1  # no cotangent of xs stacked


def test_dce_removes_unused_cond_outputs_and_operands():
    def f(x, y):
        a, _ = pto.lax.cond(x > 0, lambda x, y: (x * 2.0, pnp.sin(y)),
                            lambda x, y: (x - 1.0, pnp.cos(y)), x, y)
        return a

    (eqn,) = eqns_of(optimized(f, np.float64(1.0), np.float64(2.0)), "cond")
    assert len(eqn.outputs) == 1 and len(eqn.inputs) == 2  # the index and x
    assert_trees_close(pto.jit(f)(np.float64(1.0), np.float64(2.0)), 2.0)


def test_dce_keeps_while_carries_the_predicate_reads():
    def f(x):
        i, y, unused = pto.lax.while_loop(lambda c: c[0] < 3,
                                          lambda c: (c[0] + 1, c[1] * x, pnp.sin(c[2])),
                                          (0, x, x))
        return y

    (eqn,) = eqns_of(optimized(f, np.float64(2.0)), "while")
    assert len(eqn.outputs) == 2  # the counter (read by the predicate) and y
    assert_trees_close(pto.jit(f)(np.float64(2.0)), 16.0)


def test_cse_inside_a_body():
    def f(xs):
        return pto.lax.scan(lambda c, x: (c + pnp.sin(x) * pnp.sin(x), None), 0.0, xs)[0]

    (eqn,) = eqns_of(optimized(f, X), "scan")
    assert count_prims(eqn.params["body"], "sin") == 1


def test_verifier_rejects_a_body_whose_carry_changes_type():
    ir = verified(lambda xs: pto.lax.scan(lambda c, x: (c + x, x.sum()), np.zeros(2), xs),
                  np.ones((3, 2)))
    (eqn,) = eqns_of(ir, "scan")
    body = eqn.params["body"].ir
    wrong = ClosedIR(IR((), body.invars, body.eqns, [body.outvars[1], body.outvars[1]]))
    eqns = [e.replace(params=e.params.replace(body=wrong)) if e is eqn else e
            for e in ir.eqns]
    broken = IR(ir.ir.constvars, ir.ir.invars, eqns, ir.ir.outvars)
    with pytest.raises(IRVerificationError, match="scan: the body returns the carry"):
        verify(broken)


def test_shard_partitions_a_loop_body():
    """xs split along its feature dim: the carry takes that split, the body runs on halves
    (more in tests/shard/test_shard_control_flow.py)."""
    mesh = pto.make_mesh((2,), ("x",))

    def f(xs):
        return pto.lax.scan(lambda c, x: (c * 0.5 + x, c), np.zeros(4), xs)

    xs = np.arange(12.0).reshape(3, 4)
    sharded = pto.shard(f, mesh=mesh, in_specs=pto.P(None, "x"), out_specs=(pto.P(), pto.P()))
    assert_trees_close(sharded(xs), f(xs))
    (shard_map,) = eqns_of(verified(sharded, xs), "shard_map")
    (scan,) = eqns_of(shard_map.params["body"], "scan")
    assert [v.type.shape for v in scan.outputs] == [(2,), (3, 2)]


def test_fission_leaves_elementwise_only_bodies_alone():
    def loss(w, xs):
        return pto.lax.scan(lambda c, x: (c * w + pnp.sin(x), None), 0.0, xs)[0]

    forward = eqns_of(verified(pto.grad(loss), np.float64(0.5), X), "scan")[0]
    assert count_prims(forward.params["body"], "sin") == 1  # not hoisted: no matmul to batch
