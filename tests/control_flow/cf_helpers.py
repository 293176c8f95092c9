"""Helpers of the control-flow tests: ptojax in the same namespace shape as the ``J``
fixture, and checks of values, gradients and IRs against JAX."""
import types

import numpy as np

import ptojax as pto
from ptojax import dtypes
import ptojax.numpy as pnp
from ptojax.ir.verify import verify
from ptojax.tree_util import tree_leaves

P = types.SimpleNamespace(lax=pto.lax, np=pnp, grad=pto.grad, jvp=pto.jvp, vmap=pto.vmap,
                          jit=pto.jit, value_and_grad=pto.value_and_grad)


def assert_trees_close(ours, theirs, rtol=1e-9, atol=1e-9):
    a, b = tree_leaves(ours), tree_leaves(theirs)
    assert len(a) == len(b), (len(a), len(b))
    for x, y in zip(a, b):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape, (x.shape, y.shape)
        if x.dtype == dtypes.float0 or y.dtype == dtypes.float0:  # integer tangents
            assert x.dtype == y.dtype
            continue
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)


def verified(transform, *args, **kwargs):
    """The IR of ``transform`` at ``args``, after checking it with the verifier."""
    ir = pto.make_ir(transform)(*args, **kwargs)
    verify(ir)
    return ir


def check_grad(J, fn, args, argnums=0, rtol=1e-9, atol=1e-9):
    """``fn(m, *args)``: value, gradient (eager and under jit) equal JAX's; the gradient IR
    verifies. Returns the gradient IR."""
    assert_trees_close(fn(P, *args), J.ref(lambda *a: fn(J, *a))(*args), rtol, atol)
    ours = pto.grad(lambda *a: fn(P, *a), argnums)
    theirs = J.grad(lambda *a: fn(J, *a), argnums)(*args)
    assert_trees_close(ours(*args), theirs, rtol, atol)
    assert_trees_close(pto.jit(ours)(*args), theirs, rtol, atol)
    return verified(ours, *args)


def check_jvp(J, fn, primals, tangents, rtol=1e-9, atol=1e-9):
    """Forward mode of ``fn(m, *args)`` equals JAX's; the JVP IR verifies."""
    ours = pto.jvp(lambda *a: fn(P, *a), primals, tangents)
    theirs = J.jvp(lambda *a: fn(J, *a), primals, tangents)
    assert_trees_close(ours, theirs, rtol, atol)
    verified(lambda *p: [t for t in tree_leaves(pto.jvp(lambda *a: fn(P, *a), p, tangents))
                         if np.result_type(t) != dtypes.float0], *primals)


def count_prims(ir, name) -> int:
    """Equations of primitive ``name`` in ``ir`` and its sub-IRs."""
    from ptojax.ir.core import as_ir, sub_irs
    ir = as_ir(ir)
    return sum((e.prim.name == name) + sum(count_prims(s, name) for s in sub_irs(e.params))
               for e in ir.eqns)


def eqns_of(ir, name) -> list:
    from ptojax.ir.core import as_ir
    return [e for e in as_ir(ir).eqns if e.prim.name == name]
