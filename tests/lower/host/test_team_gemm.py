"""Products of a compiled program on the kernels' OpenMP team (lower/host/team_gemm.py,
include/pto_host_team_gemm.h): which products it runs; values against JAX within the float
bound of the sum for every transpose form, batched, float64 and non-contiguous operands, on
the calling thread and split over the team; ``dot_accumulate`` in place and fresh; OpenBLAS's
thread setting of the calling thread left as it was."""
import ctypes
import threading
from unittest import mock

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ptojax as pto
from host_cases import executable_of, host_jit
from ptojax.eval import blas, foreign_threads
from ptojax.eval.blas import team_routines
from ptojax.eval.machine_load import THREADED_MIN_FLOPS, openblas_libraries
from ptojax.lower.host.team_gemm import Layout, team_layout
from ptojax.ops.dot_accumulate import dot_accumulate_p
from ptojax.ops.linalg import dot_general_p

pytestmark = pytest.mark.skipif(team_routines() is None,
                                reason="numpy's BLAS is no OpenBLAS with per-thread settings")


@pytest.fixture(scope="module", autouse=True)
def one_pool():
    """The team's GEMM installed, as ``$PTOJAX_ONE_THREAD_POOL`` does at the first library's
    load (any library's: the first compiled program's), for this module's tests."""
    fn = host_jit(lambda x: pto.numpy.tanh(x))
    x = np.ones(4, np.float32)
    fn(x)
    gemm = executable_of(fn, x).program.library.team_gemm
    assert gemm is not None
    saved = blas._Team.gemm
    blas._Team.gemm = gemm
    yield
    blas._Team.gemm = saved
RNG = np.random.default_rng(0)
PLAIN, TN, NT, TT = (((1,), (0,)), ((), ())), (((0,), (0,)), ((), ())), \
    (((1,), (1,)), ((), ())), (((0,), (1,)), ((), ()))
BATCHED_NN, BATCHED_NT = (((2,), (1,)), ((0,), (0,))), (((2,), (2,)), ((0,), (0,)))
# (lhs shape, rhs shape, dimension numbers): each of at least THREADED_MIN_FLOPS multiply-adds,
# split over columns (few rows), rows or batches (batched)
CASES = {"nn": ((32, 256), (256, 160), PLAIN), "tn": ((256, 32), (256, 160), TN),
         "nt": ((32, 256), (160, 256), NT), "tt": ((256, 32), (160, 256), TT),
         "batched": ((4, 64, 64), (4, 64, 80), BATCHED_NN),
         "batched nt": ((3, 64, 96), (3, 80, 96), BATCHED_NT),
         "nt, many rows": ((256, 64), (160, 64), NT), "rows": ((1200, 128), (128, 8), PLAIN),
         "tn, many rows": ((32, 512), (32, 784), TN)}


def _operands(lhs_shape, rhs_shape):
    return (RNG.standard_normal(lhs_shape).astype(np.float32),
            RNG.standard_normal(rhs_shape).astype(np.float32))


def _product_and_kernel(dn):
    """A program with the product and a kernel after it (so that it compiles)."""
    def fn(a, b):
        product = pto.lax.dot_general(a, b, dn)
        return product, pto.numpy.tanh(product)
    return fn


def _bound(a, b, dn):
    """The float error bound of each product element: depth * eps * (|a| . |b|)."""
    (lc, _), _ = dn
    depth = a.shape[lc[0]]
    with jax.enable_x64(True):
        magnitude = jax.lax.dot_general(jnp.abs(jnp.asarray(a, jnp.float64)),
                                        jnp.abs(jnp.asarray(b, jnp.float64)), dn)
    return depth * np.finfo(a.dtype).eps * np.asarray(magnitude) + np.finfo(a.dtype).tiny


def _team_runner(fn, *args):
    program = executable_of(fn, *args).program
    [(eqn, runner)] = [(e, r) for e, r in program.tensor_runners.items()
                       if e.prim is dot_general_p]
    assert team_layout(eqn) is not None
    return runner


SPREADS = {"split": blas._TEAM, "one thread": blas._CALLING_THREAD,
           "openblas threads": blas._OPENBLAS_THREADS}


@pytest.mark.parametrize("spread", sorted(SPREADS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_products_match_jax_within_the_bound_of_the_sum(case, spread):
    lhs_shape, rhs_shape, dn = CASES[case]
    a, b = _operands(lhs_shape, rhs_shape)
    fn = host_jit(_product_and_kernel(dn))
    fn(a, b)
    runner = _team_runner(fn, a, b)
    expected = np.asarray(jax.lax.dot_general(a, b, dn, precision="highest"))
    with mock.patch.object(blas, "_spread", lambda threaded: SPREADS[spread]):
        got = runner(a, b)
        product, activated = fn(a, b)
    assert got.shape == expected.shape and got.dtype == np.float32
    assert np.all(np.abs(got - expected) <= _bound(a, b, dn))
    np.testing.assert_allclose(np.asarray(product), got, rtol=0, atol=0)
    np.testing.assert_allclose(np.asarray(activated), np.tanh(got), rtol=2e-6, atol=2e-6)


def test_every_case_is_large_enough_to_split():
    for lhs_shape, rhs_shape, ((_, (rc,)), _) in CASES.values():
        free = rhs_shape[-1] if rc == len(rhs_shape) - 2 else rhs_shape[-2]
        assert np.prod(lhs_shape) * free >= THREADED_MIN_FLOPS


@pytest.mark.parametrize("case", ["nt", "tt", "nt, many rows"])
def test_few_rows_by_a_transposed_matrix_run_swapped(case):
    lhs_shape, rhs_shape, dn = CASES[case]
    a, b = _operands(lhs_shape, rhs_shape)
    fn = host_jit(_product_and_kernel(dn))
    fn(a, b)
    got = _team_runner(fn, a, b)(a, b)     # (b @ a.T).T for few rows: a transposed view
    assert got.flags.c_contiguous == (case == "nt, many rows")


@pytest.mark.parametrize("layout", ["transposed", "strided"])
def test_operands_of_another_layout_are_read_right(layout):
    lhs_shape, rhs_shape, dn = CASES["nn"]
    a, b = _operands(lhs_shape, rhs_shape)
    fn = host_jit(_product_and_kernel(dn))
    fn(a, b)
    runner = _team_runner(fn, a, b)
    if layout == "transposed":      # C-contiguous only as their transposes
        lhs, rhs = np.asfortranarray(a), np.asfortranarray(b)
    else:
        lhs = np.repeat(a, 2, axis=1)[:, ::2]
        rhs = np.repeat(b, 3, axis=0)[::3]
    assert not lhs.flags.c_contiguous and not rhs.flags.c_contiguous
    expected = np.asarray(jax.lax.dot_general(a, b, dn, precision="highest"))
    assert np.all(np.abs(runner(lhs, rhs) - expected) <= _bound(a, b, dn))


def _eqn(lhs, rhs, dn, **params):
    closed = pto.make_ir(lambda a, b: pto.lax.dot_general(a, b, dn, **params))(lhs, rhs)
    [eqn] = [e for e in closed.ir.eqns if e.prim is dot_general_p]
    return eqn


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_layout_of_each_form(case):
    lhs_shape, rhs_shape, dn = CASES[case]
    (lc, rc), (lb, _) = dn
    nb = len(lb)
    assert team_layout(_eqn(*_operands(lhs_shape, rhs_shape), dn)) == \
        Layout(nb, lc[0] - nb, rc[0] - nb)


@pytest.mark.parametrize("case", ["int", "float64", "batch last", "vector",
                                  "two contracted", "preferred wider"])
def test_products_the_team_leaves_to_numpy(case):
    a, b = _operands((8, 6), (6, 5))
    dn, params = PLAIN, {}
    if case == "int":
        a, b = a.astype(np.int32), b.astype(np.int32)
    elif case == "float64":      # (float64 programs run on numpy: no host kernels)
        a, b = a.astype(np.float64), b.astype(np.float64)
    elif case == "batch last":
        a, b, dn = _operands((8, 6, 3), (6, 5, 3)) + ((((1,), (0,)), ((2,), (2,))),)
    elif case == "vector":
        b, dn = b[:, 0], (((1,), (0,)), ((), ()))
    elif case == "two contracted":
        a, b, dn = _operands((8, 6, 2), (6, 2, 5)) + ((((1, 2), (0, 1)), ((), ())),)
    else:
        params = {"preferred_element_type": np.float64}
    with pto.enable_x64(case in ("float64", "preferred wider")):
        assert team_layout(_eqn(a, b, dn, **params)) is None


def _set_local_threads():
    for lib in openblas_libraries():
        fn = getattr(lib, "openblas_set_num_threads_local", None)
        if fn is not None:
            fn.argtypes, fn.restype = (ctypes.c_int,), ctypes.c_int
            return fn


def test_the_calling_threads_openblas_setting_is_restored(monkeypatch):
    """The team's products set OpenBLAS to one thread and give the caller its setting back,
    with one or two callers at once. (Load-following is another writer of the same process-wide
    count: on a busy machine it would set 1 between the products; held quiet here.)"""
    from ptojax.eval import machine_load
    monkeypatch.setattr(machine_load, "machine_busy", lambda: False)
    lhs_shape, rhs_shape, dn = CASES["nn"]
    a, b = _operands(lhs_shape, rhs_shape)
    fn = host_jit(_product_and_kernel(dn))
    fn(a, b)
    runner = _team_runner(fn, a, b)
    set_local = _set_local_threads()
    original = set_local(3)
    try:
        for spread in SPREADS.values():
            with mock.patch.object(blas, "_spread", lambda threaded: spread):
                runner(a, b)
            assert set_local(3) == 3
        threads = [threading.Thread(target=lambda: [runner(a, b) for _ in range(200)])
                   for _ in range(2)]                  # two callers at once
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert set_local(3) == 3
    finally:
        set_local(original)


def momentum(v, x, g):
    fresh = v + 1.0
    return 0.9 * fresh + x.T @ g


def test_dot_accumulate_runs_on_the_team_in_place_and_matches_jax():
    v, x, g = (RNG.standard_normal(s).astype(np.float32) for s in ((256, 128), (16, 256),
                                                                     (16, 128)))
    kept = v.copy()
    fn = host_jit(momentum)
    got = fn(v, x, g)
    np.testing.assert_allclose(np.asarray(got), np.asarray(jax.jit(momentum)(v, x, g)),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(v, kept)
    program = executable_of(fn, v, x, g).program
    [eqn] = [e for e in program.tensor_runners if e.prim is dot_accumulate_p]
    assert team_layout(eqn) == Layout(0, 0, 0)
    # the GEMM writes the fresh intermediate v + 1 (the add kernel's output)
    assert program.executable.source.splitlines()[2].endswith("in place: v4 over v3")


def test_dot_accumulate_into_a_fresh_buffer_leaves_the_accumulator_alone():
    v, x, g = (RNG.standard_normal(s).astype(np.float32) for s in ((256, 128), (16, 256),
                                                                     (16, 128)))
    fn = host_jit(momentum)
    fn(v, x, g)
    program = executable_of(fn, v, x, g).program
    [(eqn, runner)] = [(e, r) for e, r in program.tensor_runners.items()
                       if e.prim is dot_accumulate_p]
    acc = v + 1.0
    kept = acc.copy()
    got = runner(acc, x, g)
    np.testing.assert_array_equal(acc, kept)
    np.testing.assert_allclose(got, 0.9 * kept + x.T @ g, rtol=1e-5, atol=1e-5)
    in_place = runner.writing_into({0: 0})
    assert in_place(acc, x, g) is acc
    np.testing.assert_allclose(acc, 0.9 * kept + x.T @ g, rtol=1e-5, atol=1e-5)


def test_programs_with_team_products_do_not_pair():
    lhs_shape, rhs_shape, dn = CASES["nn"]
    a, b = _operands(lhs_shape, rhs_shape)

    def two_products(a, b):
        return pto.numpy.tanh(a @ b), pto.numpy.tanh(a @ (2.0 * b))
    fn = host_jit(two_products)
    fn(a, b)
    assert "pair_" not in executable_of(fn, a, b).program.executable.source


@pytest.fixture
def team():
    assert blas.team_installed()


@pytest.mark.parametrize("case", ["matrices", "stacks", "into out", "transposed views",
                                  "small"])
@pytest.mark.parametrize("busy", [False, True], ids=["split", "one thread"])
def test_ptojax_products_run_on_the_team_once_installed(team, case, busy):
    a, b = _operands((64, 128), (128, 160))
    out = None
    if case == "stacks":
        a, b = _operands((3, 64, 128), (3, 128, 60))
    elif case == "into out":
        out = np.full((64, 160), np.nan, np.float32)
    elif case == "transposed views":
        a, b = np.asfortranarray(a), b.T.copy().T
    elif case == "small":
        a, b = _operands((4, 8), (8, 3))
    calls = []
    gemm = blas._Team.gemm
    with mock.patch.object(blas._Team, "gemm", lambda *args: calls.append(args) or gemm(*args)), \
            mock.patch.object(blas, "machine_busy", lambda: busy):
        got = blas.matmul(a, b, out=out)
    assert len(calls) == 1 and calls[0][-1] == int(not busy and case != "small")
    expected = np.matmul(a.astype(np.float64), b.astype(np.float64))
    depth = a.shape[-1]
    bound = depth * np.finfo(np.float32).eps * np.matmul(np.abs(a).astype(np.float64),
                                                       np.abs(b).astype(np.float64))
    assert got.dtype == np.float32 and np.all(np.abs(got - expected) <= bound)
    if out is not None:
        assert got is out


@pytest.mark.parametrize("case", ["float64", "int", "broadcast stack", "vector",
                                  "out of another dtype", "out overlapping"])
def test_products_the_team_leaves_to_numpy_matmul(team, case):
    a, b = _operands((8, 6), (6, 5))
    out = None
    if case == "float64":
        a, b = a.astype(np.float64), b.astype(np.float64)
    elif case == "int":
        a, b = a.astype(np.int32), b.astype(np.int32)
    elif case == "broadcast stack":
        a, b = _operands((3, 8, 6), (1, 6, 5))
    elif case == "vector":
        b = b[:, 0]
    elif case == "out of another dtype":
        out = np.empty((8, 5), np.float64)
    else:                         # C-contiguous, over a's buffer
        buffer = RNG.standard_normal(48).astype(np.float32)
        a, out = buffer.reshape(8, 6), buffer[:40].reshape(8, 5)
    expected = np.matmul(a, b)
    calls = []
    gemm = blas._Team.gemm
    with mock.patch.object(blas._Team, "gemm", lambda *args: calls.append(args) or gemm(*args)):
        got = blas.matmul(a, b, out=out)
    assert calls == []
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_the_numpy_impl_of_dot_accumulate_runs_on_the_team(team):
    acc, x, g = (RNG.standard_normal(s).astype(np.float32) for s in ((256, 128), (16, 256),
                                                                       (16, 128)))
    calls = []
    gemm = blas._Team.gemm
    with mock.patch.object(blas._Team, "gemm", lambda *args: calls.append(args) or gemm(*args)):
        got = dot_accumulate_p.impl(acc, x, g, dimension_numbers=TN, beta=0.9)
    assert len(calls) == 1
    np.testing.assert_allclose(got, 0.9 * acc + x.T @ g, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("wanted", [False, True])
def test_the_first_library_settles_whether_there_is_one_pool(monkeypatch, wanted):
    monkeypatch.setattr(blas._Team, "gemm", None)
    monkeypatch.setattr(blas._Team, "decided", False)
    monkeypatch.setenv(blas.ONE_POOL_ENV, "1" if wanted else "0")
    monkeypatch.setattr(foreign_threads._Team, "threads", None)
    first, second = object(), object()
    blas.decide_team(first, lambda: [1, 2])
    blas.decide_team(second, lambda: [1, 2])
    assert blas._Team.gemm is (first if wanted else None)
    assert (foreign_threads._Team.threads is not None) == wanted


def test_no_team_without_its_thread_ids(monkeypatch):
    """Where the team's threads cannot be told from the others (not Linux), one pool would
    spin beside OpenBLAS's workers unwatched: it is not installed."""
    monkeypatch.setattr(blas._Team, "gemm", None)
    monkeypatch.setattr(blas._Team, "decided", False)
    monkeypatch.setenv(blas.ONE_POOL_ENV, "1")
    blas.decide_team(object(), lambda: [])
    assert blas._Team.gemm is None


def test_the_setting_is_off_by_default_and_refused_once_settled(monkeypatch):
    monkeypatch.delenv(blas.ONE_POOL_ENV, raising=False)
    assert not blas.one_pool_wanted()
    monkeypatch.setattr(blas._Team, "gemm", None)
    monkeypatch.setattr(blas._Team, "decided", True)
    with pytest.raises(pto.errors.ConfigError, match="first kernel library"):
        pto.config.update("ptojax_one_thread_pool", True)
    assert not blas.one_pool_wanted()          # the variable was restored
    pto.config.update("ptojax_one_thread_pool", False)    # what it is: accepted


@pytest.mark.parametrize("wanted", [False, True])
def test_openmp_workers_spin_only_with_one_pool(monkeypatch, wanted):
    from ptojax.lower.host import compiler
    for name in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(blas.ONE_POOL_ENV, "1" if wanted else "0")
    compiler.openmp_wait_policy()
    import os
    assert os.environ.get("OMP_WAIT_POLICY") == (None if wanted else "PASSIVE")
    assert os.environ.get("GOMP_SPINCOUNT") == (str(compiler.OPENMP_SPINS) if wanted else None)
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")       # the user's is kept
    compiler.openmp_wait_policy()
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"


@pytest.fixture
def held_at_one_thread(monkeypatch):
    """OpenBLAS at 2 threads, then held at one by ``follow_load`` on a busy machine:
    (get, set) of its thread count, restored after the test."""
    from ptojax.eval import machine_load
    get, set_ = machine_load._openblas_threads()
    monkeypatch.setattr(machine_load._Blas, "saved", None)
    before = get()
    set_(2)
    try:
        monkeypatch.setattr(machine_load, "machine_busy", lambda: True)
        machine_load.follow_load()
        assert get() == 1
        yield get, set_
    finally:
        set_(before)


def test_a_setting_made_while_the_load_held_openblas_at_one_thread_stands(monkeypatch,
                                                                          held_at_one_thread):
    """A thread count set while ``follow_load`` held OpenBLAS at one thread (the user's, or a
    team product restoring its caller's) is not overwritten with the count saved before once
    the machine is quiet: the count is one process-wide value."""
    from ptojax.eval import machine_load
    get, set_ = held_at_one_thread
    set_(3)
    monkeypatch.setattr(machine_load, "machine_busy", lambda: False)
    machine_load.follow_load()
    assert get() == 3 and machine_load._Blas.saved is None


def test_a_team_product_gives_openblas_its_threads_back_once_the_machine_is_quiet(
        monkeypatch, held_at_one_thread):
    """OpenBLAS is set to one thread while the machine is busy (``follow_load``); products on
    the team never call numpy's matmul, so they ask ``follow_load`` themselves: else the
    setting outlived the load and left the user's own numpy products on one thread."""
    from ptojax.eval import machine_load
    get, _ = held_at_one_thread
    monkeypatch.setattr(machine_load, "machine_busy", lambda: False)
    monkeypatch.setattr(blas, "machine_busy", lambda: False)
    a, b = _operands((64, 128), (128, 160))
    out = np.empty((64, 160), np.float32)
    blas.team_gemm(a, False, b, False, 0.0, out, True)
    assert get() == 2 and machine_load._Blas.saved is None
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-4)
