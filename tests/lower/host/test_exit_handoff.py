"""Programs still waiting for their kernels at interpreter exit are handed to a detached
builder (``lower/host/exit_handoff.py``, ``exit_builder.py``): it builds them into the cache,
complete or not at all, and the next process loads them; exiting does not wait for it."""
import dataclasses
import os
import pickle
import threading
import types

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.lower.host import backend as host_backend
from ptojax.lower.host import exit_builder, exit_handoff, hotness
from ptojax.lower.host.backend import CpuBackend, HostExecutable
from ptojax.lower.host.cache import CacheEntry, cache_root, read_program_hint
from ptojax.targets import host_jit

X = np.linspace(-1.0, 1.0, 64 * 48, dtype=np.float32).reshape(64, 48)


def chain(x):
    return pnp.tanh(3.25 * x + 0.5) * x + float(os.getpid() % 1000)   # a library of its own


def _waiting(fn=chain, options=CpuBackend(min_elements=0)) -> HostExecutable:
    return HostExecutable(pto.make_ir(fn)(X), options)


def _program(executable) -> exit_handoff.Program:
    return exit_handoff.Program(executable.given, executable.options, executable.donated,
                                executable._fingerprint())


def test_a_handed_off_program_is_built_complete_and_the_next_process_loads_it():
    root = cache_root()
    proc = exit_handoff.hand_off([_program(_waiting())])
    assert proc is not None and proc.poll() is None     # exiting does not wait for the build
    assert len(exit_handoff.pending_requests(root)) == 1
    assert proc.wait(600) == 0
    assert exit_handoff.pending_requests(root) == []    # the builder removed its request
    again = _waiting()                                  # the next process's executable
    key = read_program_hint(root, again._fingerprint())
    assert key is not None and CacheEntry(key, root).published() is not None
    assert CacheEntry(key, root).temporaries() == []    # nothing half-written left
    assert again._warm_cache()
    assert again._build(warn=False, cached_only=True) and again.status == "compiled"
    np.testing.assert_allclose(np.asarray(again.program.run(X)[0]),
                               np.asarray(again.numpy.run(X)[0]), rtol=2e-6, atol=2e-6)


def test_at_exit_only_programs_whose_build_has_not_started_are_handed_off(monkeypatch):
    def looped(x):
        return pto.lax.fori_loop(0, 3, lambda i, c: pnp.tanh(c) + 0.5, x)

    waiting, started, done, loop = (_waiting(fn) for fn in (chain, lambda x: chain(x) * 2,
                                                              lambda x: chain(x) - 1, looped))
    started.library_started = True
    done.status = "compiled"
    (body,) = loop.loop_bodies
    owners = [waiting, started, done, body, loop]
    monkeypatch.setattr(host_backend, "_worker_instance",
                        types.SimpleNamespace(waiting_owners=lambda: owners))
    monkeypatch.setattr(hotness, "held_owners", lambda: [])
    handed = []
    monkeypatch.setattr(exit_handoff, "hand_off", handed.extend)
    monkeypatch.setenv(exit_handoff.ENV, "1")
    host_backend._hand_off_at_exit()
    # the loop's body is built with its loop
    assert [p.fingerprint for p in handed] == [waiting._fingerprint(), loop._fingerprint()]
    handed.clear()
    monkeypatch.setenv(exit_handoff.ENV, "0")
    host_backend._hand_off_at_exit()
    assert handed == []


def test_the_worker_knows_whose_jobs_are_waiting():
    worker, release = host_backend._Worker(), threading.Event()
    first, second = object(), object()
    worker.submit(release.wait, first)
    worker.submit(lambda: None, second)
    worker.submit(lambda: None, first, first=True)
    assert worker.waiting_owners() == [first, second]
    release.set()
    assert worker.wait_idle(60) and worker.waiting_owners() == []


def test_a_program_that_does_not_pickle_is_left_to_the_next_run():
    custom = dataclasses.replace(host_jit, name="host_jit_custom")   # not a named target
    executable = _waiting(options=CpuBackend(min_elements=0, target=custom))
    before = exit_handoff.pending_requests(cache_root())
    assert exit_handoff.hand_off([_program(executable)]) is None
    assert exit_handoff.pending_requests(cache_root()) == before


def test_an_ir_pickles_by_primitive_name_and_a_request_names_nothing_of_the_users():
    closed = pto.make_ir(chain)(X)
    again = exit_builder._load(pickle.dumps(closed))
    assert str(again) == str(closed)
    assert again.ir.eqns[0].prim is closed.ir.eqns[0].prim     # the same primitive object
    with pytest.raises(pickle.UnpicklingError, match="not one of ptojax's own names"):
        exit_builder._load(pickle.dumps(chain))       # would import this test module


def test_a_request_whose_builder_died_is_swept_after_an_hour(monkeypatch):
    from ptojax.lower.host import cache
    folder = exit_handoff.handoff_dir(cache_root())
    old, new = folder / f"dead{os.getpid()}.pickle", folder / f"live{os.getpid()}.pickle"
    for path in (old, new):
        path.write_bytes(b"")
    os.utime(old, (1, 1))
    monkeypatch.setattr(cache, "_swept", set())
    cache.sweep_temporaries(cache_root())
    assert not old.exists() and new.exists()
    new.unlink()


def test_a_program_holding_large_constants_is_left_to_the_next_run():
    from ptojax.lower.host import own_pickle
    big = np.ones((own_pickle.MAX_CONST_BYTES // 4 // 48 + 1, 48), np.float32)
    executable = _waiting(lambda x: x + (x[:1, :1] * big).sum())
    assert sum(c.nbytes for c in executable.given.consts) > own_pickle.MAX_CONST_BYTES
    before = exit_handoff.pending_requests(cache_root())
    assert exit_handoff.hand_off([_program(executable)]) is None
    assert exit_handoff.pending_requests(cache_root()) == before
