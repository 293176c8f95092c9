"""pnp.einsum_path against jnp.einsum_path (opt_einsum's searches): the path and the whole printed
report (FLOP counts, scaling, largest intermediate, steps) for JAX's einsum test subscripts and
longer chains, under every strategy; pnp.einsum following each path (and the interleaved form,
size-1 broadcasting) against jnp.einsum; bad paths and strategies rejected clearly."""
import itertools
import random

import numpy as np
import pytest

import ptojax.numpy as pnp
from helpers import assert_close

# JAX's tests/lax_numpy_einsum_test.py subscripts (its from-dask list and named cases), plus
# chains and rings long enough for the branch and greedy searches to matter
SUBSCRIPTS = [
    "abc,bad->abcd", "abcdef,bcdfg->abcdeg", "ea,fb,abcd,gc,hd->efgh", "ab,b", "aa", "a,a->",
    "a,a->a", "a,a", "a,b", "a,b,c", "a", "ba,b", "ba,b->", "defab,fedbc->defac",
    "ab...,bc...->ac...", "a...a", "abc...->cba...", "...ab->...a", "a...a->a...",
    "...abc,...abcd->...d", "ab...,b->ab...", "aa->a", "ab,ab,c->c", "aab,bc->ac",
    "aab,bcc->ac", "fdf,cdd,ccd,afe->ae", "fff,fae,bef,def->abd", "i,j,k->ijk", "ij,ij,jk->ik",
    "ntk,kd,dc->nc", "ij,jkl,klm", "ij,jk,kl->il",
    "abcd,bcde,cdef,defg,efgh,fghi,ghij->aj", "ij,jk,kl,lm,mi->", "abc,bcd,cde,def,efa->",
    "ab,bc,cd,de,ef,fg,gh,hi,ij,jk->ak",
    "ab,bc,cd,de,ef,fg,gh,hi,ij,jk,kl,lm,mn,no,op,pq->aq",
]
STRATEGIES = ["auto", "greedy", "eager", "optimal", "branch-all", "branch-2", "branch-1", True,
              False]


def _shapes(spec, sizes):
    return [tuple(sizes[c] for c in s.replace("...", "01"))
            for s in spec.split("->")[0].split(",")]


def _size_draws(spec, n_random):
    """JAX's size cycle (2, 3, 4), then random sizes (1 included: broadcast-free ones)."""
    labels = sorted(set(spec.replace("...", "01")) - set(",->"))
    cycle = itertools.cycle([2, 3, 4])
    yield {c: next(cycle) for c in labels}
    rng = random.Random(spec)
    for _ in range(n_random):
        yield {c: rng.choice([1, 2, 3, 5, 8, 13]) for c in labels}


def _searchable(spec, optimize):
    n = spec.count(",") + 1     # exhaustive searches grow factorially
    return not (optimize in ("optimal", True) and n > 7 or optimize == "branch-all" and n > 8
                or optimize == "branch-2" and n > 10)


@pytest.mark.parametrize("spec", SUBSCRIPTS)
def test_path_and_report_match_jax(jnp, spec):
    for sizes in _size_draws(spec, 2):
        operands = [np.zeros(s, np.float32) for s in _shapes(spec, sizes)]
        for optimize in filter(lambda o: _searchable(spec, o), STRATEGIES):
            path, info = pnp.einsum_path(spec, *operands, optimize=optimize)
            jpath, jinfo = jnp.einsum_path(spec, *operands, optimize=optimize)
            where = f"{spec} {sizes} optimize={optimize!r}"
            assert path == [tuple(p) for p in jpath], where
            assert (info.naive_cost, info.opt_cost, info.largest_intermediate,
                    info.scale_list) == (jinfo.naive_cost, jinfo.opt_cost,
                                         jinfo.largest_intermediate, jinfo.scale_list), where
            assert str(info) == str(jinfo), where


def test_shapes_with_size_one_broadcasting_match_jax(jnp):
    for spec, shapes in [("cij,cjk->cik", [(3, 4, 5), (3, 1, 6)]),
                         ("cij,cjk->cik", [(1, 4, 5), (3, 5, 6)]),
                         ("...ij,...j", [(2, 1, 3, 3), (2, 4, 3)]),
                         ("ab,bc,cd->ad", [(2, 1), (5, 3), (3, 4)])]:
        operands = [np.ones(s, np.float32) for s in shapes]
        path, info = pnp.einsum_path(spec, *operands)
        jpath, jinfo = jnp.einsum_path(spec, *operands)
        assert (path, str(info)) == ([tuple(p) for p in jpath], str(jinfo)), spec
        assert_close(pnp.einsum(spec, *operands), jnp.einsum(spec, *operands))


# JAX's test_einsum_optimization_modes / test_einsum_path_optimization_modes
MODE_CASES = [("i->", [(3,)]), ("ii->i", [(4, 4)]), ("ij,jk", [(3, 4), (4, 3)]),
              ("ij,jkl,klm", [(2, 2), (2, 3, 4), (3, 4, 2)]),
              ("ea,fb,abcd,gc,hd->efgh", [(2, 3), (2, 2), (3, 2, 4, 3), (2, 4), (2, 3)])]


@pytest.mark.parametrize("spec,shapes", MODE_CASES, ids=[c[0] for c in MODE_CASES])
def test_einsum_follows_every_strategy_and_its_path(jnp, spec, shapes):
    rng = np.random.default_rng(0)
    operands = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    want = jnp.einsum(spec, *operands)
    for optimize in STRATEGIES:
        assert_close(pnp.einsum(spec, *operands, optimize=optimize), want, rtol=1e-5)
        path, _ = pnp.einsum_path(spec, *operands, optimize=optimize)
        assert_close(pnp.einsum(spec, *operands, optimize=path), want, rtol=1e-5)


def test_interleaved_form_matches_jax(jnp):
    rng = np.random.default_rng(1)
    x, y = (rng.standard_normal(s).astype(np.float32) for s in [(2, 3, 4), (3, 5, 4)])
    for args in [(x, (0, 1, 2), y, (1, 3, 2), (0, 3)), (x, (0, 1, 2), y, (1, 3, 2)),
                 (x, [Ellipsis, 2], y, [1, 3, 2], [Ellipsis, 1, 3])]:
        assert_close(pnp.einsum(*args), jnp.einsum(*args))
        path, info = pnp.einsum_path(*args)
        jpath, jinfo = jnp.einsum_path(*args)
        assert (path, str(info)) == ([tuple(p) for p in jpath], str(jinfo))


def test_bad_paths_and_strategies_are_rejected():
    a, b, c = (np.ones((2, n), np.float32) for n in (3, 4, 5))
    with pytest.raises(NotImplementedError, match="3 or more operands"):
        pnp.einsum("ij,ik,il->jkl", a, b, c, optimize=[(0, 1, 2)])
    for path, why in [([(0, 3), (0, 1)], "distinct positions"), ([(0, 1)], "leaves 2"),
                      ("fastest", "unsupported optimize"), ([0, 1], "path")]:
        with pytest.raises(ValueError, match=why):
            pnp.einsum_path("ij,ik,il->jkl", a, b, c, optimize=path)


def test_a_symbolic_dimension_counts_as_eight_in_the_search(jnp):
    """jit(dynamic=...): the path is searched with the symbolic size as 8 (as JAX's einsum
    does for shape-polymorphic operands); one program serves every size."""
    import ptojax as pto

    def f(x, y, z):
        return pnp.einsum("ni,ij,jk->nk", x, y, z)
    dynamic = pto.jit(f, dynamic={"x": {0: pto.Dim("n", 1, 64)}})
    rng = np.random.default_rng(2)
    y, z = (rng.standard_normal(s).astype(np.float32) for s in [(3, 40), (40, 2)])
    for n in (1, 5, 64):
        x = rng.standard_normal((n, 3)).astype(np.float32)
        assert_close(dynamic(x, y, z), jnp.einsum("ni,ij,jk->nk", x, y, z), rtol=1e-5)
    assert dynamic.cache_size() == 1
    # y @ z first (the path for n = 8), before the dot with the symbolic x
    ir = str(dynamic.lower(np.zeros((8, 3), np.float32), y, z).ir)
    assert ir.index("f32[2,3] = dot_general") < ir.index("f32[n,2] = dot_general")
    assert pnp.einsum_path("ni,ij,jk->nk", np.zeros((8, 3)), y, z)[0] == [(1, 2), (0, 1)]


def test_multi_dot_contracts_in_jaxs_order(jnp, jax):
    """linalg.multi_dot is one einsum (JAX's form), so it multiplies in the same order."""
    import re

    import ptojax as pto
    rng = np.random.default_rng(3)
    for shapes in [[(10, 30), (30, 5), (5, 60)], [(3,), (3, 8), (8, 2), (2,)],
                   [(9, 2), (2, 9), (9, 2), (2, 9), (9, 3)]]:
        xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        assert_close(pnp.linalg.multi_dot(xs), jnp.linalg.multi_dot(xs), rtol=1e-5)
        order = [re.findall(r"f32\[([\d,]*)\] = dot_general", str(make(fn)(xs)))
                 for make, fn in [(pto.make_jaxpr, pnp.linalg.multi_dot),
                                  (jax.make_jaxpr, jnp.linalg.multi_dot)]]
        assert order[0] == order[1], shapes
