"""``pto.shard`` computes what the unsharded function computes — values and gradients, on 1-D
and 2-D meshes, for the cases of ``shard_cases.py`` and for random specs (hypothesis)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close
from ptojax.ir.verify import verify
from shard_cases import CASES, GRAD_CASES, mesh_for

P = pto.P


def _params(table):
    return [(name, specs) for name, (_, _, specs_list) in table.items() for specs in specs_list]


@pytest.mark.parametrize("name,specs", _params(CASES))
def test_shard_matches_unsharded(name, specs):
    fn, args, _ = CASES[name]
    sharded = pto.shard(fn, mesh=mesh_for(specs), in_specs=specs, out_specs=P())
    assert_close(sharded(*args), fn(*args), rtol=2e-5, atol=2e-5, check_dtype=False)
    closed = pto.make_ir(sharded)(*args)
    verify(closed)
    verify(closed.eqns[-1].params["body"])


@pytest.mark.parametrize("name,specs", _params(GRAD_CASES))
def test_shard_of_grad(name, specs):
    loss, args, _ = GRAD_CASES[name]
    grads = pto.grad(loss, argnums=tuple(range(len(args))))
    sharded = pto.shard(grads, mesh=mesh_for(specs), in_specs=specs, out_specs=specs)
    for got, want in zip(sharded(*args), grads(*args)):
        assert_close(got, want, rtol=2e-5, atol=2e-5, check_dtype=False)


@pytest.mark.parametrize("name,specs", _params(GRAD_CASES))
def test_grad_of_shard(name, specs):
    loss, args, _ = GRAD_CASES[name]
    sharded = pto.shard(loss, mesh=mesh_for(specs), in_specs=specs, out_specs=P())
    argnums = tuple(range(len(args)))
    for got, want in zip(pto.grad(sharded, argnums=argnums)(*args),
                         pto.grad(loss, argnums=argnums)(*args)):
        assert_close(got, want, rtol=2e-5, atol=2e-5, check_dtype=False)


def test_outputs_split_as_out_specs():
    mesh = pto.make_mesh((4, 2), ("x", "y"))
    a, b = CASES["matmul"][1]
    out = pto.shard(lambda a, b: a @ b, mesh=mesh, in_specs=(P("x", "y"), P("y")),
                    out_specs=P(None, "x"))(a, b)
    assert out.sharding == pto.NamedSharding(mesh, P(None, "x"))
    assert {s.data.shape for s in out.addressable_shards} == {(8, 2)}
    assert_close(out, a @ b, rtol=2e-5, atol=2e-5, check_dtype=False)


# random specs --------------------------------------------------------------------------------
_MESH = pto.make_mesh((4, 2), ("x", "y"))
_CHOICES = [None, "x", "y", ("x", "y"), ("y", "x")]


def _valid(spec, shape):
    used = [a for e in spec if e for a in ((e,) if isinstance(e, str) else e)]
    return len(used) == len(set(used)) and all(
        e is None or n % (_MESH.axis_size((e,) if isinstance(e, str) else e)) == 0
        for e, n in zip(spec, shape))


def _spec(shape):
    return st.tuples(*[st.sampled_from(_CHOICES) for _ in shape]).filter(
        lambda s: _valid(s, shape)).map(lambda s: P(*s))


def _program(a, b, c):
    h = pnp.tanh(a @ b + c)
    return pnp.sum(h * h, axis=1) - pnp.max(h, axis=1), (h.T @ a).reshape(-1)


_A, _B, _C = (np.random.default_rng(1).normal(size=s).astype(np.float32)
              for s in ((8, 4), (4, 8), (8,)))


@given(_spec((8, 4)), _spec((4, 8)), _spec((8,)), _spec((8,)))
def test_random_specs_match_unsharded(sa, sb, sc, s_out):
    sharded = pto.shard(_program, mesh=_MESH, in_specs=(sa, sb, sc),
                        out_specs=(s_out, P()))
    for got, want in zip(sharded(_A, _B, _C), _program(_A, _B, _C)):
        assert_close(got, want, rtol=1e-5, atol=1e-5)


@given(_spec((8, 4)), _spec((4, 8)), _spec((8,)))
def test_random_specs_gradients(sa, sb, sc):
    loss = lambda a, b, c: pnp.sum(_program(a, b, c)[0] ** 2)  # noqa: E731
    grads = pto.grad(loss, argnums=(0, 1, 2))
    sharded = pto.shard(grads, mesh=_MESH, in_specs=(sa, sb, sc), out_specs=(sa, sb, sc))
    for got, want in zip(sharded(_A, _B, _C), grads(_A, _B, _C)):
        assert_close(got, want, rtol=1e-4, atol=1e-4)
