"""The in-process collective runtime: mismatched collectives and missing or failing devices end
in a CollectiveError (or the device's own error) within the timeout — never a hang."""
import threading
import time

import numpy as np
import pytest

import ptojax as pto
from ptojax.errors import CollectiveError
from ptojax.ir.types import TensorType
from ptojax.eval.axis_env import bound_axes
from ptojax.shard.runtime.in_process import Communicator, DeviceContext, device_context
from ptojax.shard.runtime.spmd import SpmdProgram
from ptojax.trace import trace_flat

MESH = pto.make_mesh((4,), ("x",))


def _run_on_devices(communicator, programs):
    """Run ``programs[k]()`` as device k in its own thread; returns results or exceptions."""
    results = [None] * len(programs)

    def run(k):
        with device_context(DeviceContext(communicator, MESH.device_list[k])):
            try:
                results[k] = programs[k]()
            except Exception as e:  # noqa: BLE001 (the test inspects it)
                results[k] = e

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(programs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    return results


def _psum(x):
    from ptojax.shard.collectives import psum_p
    return psum_p.impl(x, axes=("x",))


def _all_gather(x):
    from ptojax.shard.collectives import all_gather_p
    return all_gather_p.impl(x, axes=("x",), axis_size=4, dim=0, tiled=True)


def test_collectives_meet_and_agree():
    results = _run_on_devices(Communicator(MESH, timeout=5),
                              [lambda k=k: _psum(np.full(2, k, np.float32)) for k in range(4)])
    for r in results:
        np.testing.assert_array_equal(r, [6.0, 6.0])


def test_mismatched_collectives_are_reported():
    programs = [lambda: _psum(np.ones(2, np.float32))] * 3 + \
        [lambda: _all_gather(np.ones(2, np.float32))]
    start = time.monotonic()
    results = _run_on_devices(Communicator(MESH, timeout=5), programs)
    assert time.monotonic() - start < 5
    for r in results:
        assert isinstance(r, CollectiveError)
        assert "mismatched collectives" in str(r) and "device 3: all_gather" in str(r)


def test_missing_device_times_out():
    programs = [lambda: _psum(np.ones(2, np.float32))] * 3 + [lambda: None]
    start = time.monotonic()
    results = _run_on_devices(Communicator(MESH, timeout=0.5), programs)
    assert time.monotonic() - start < 5
    assert results[3] is None
    for r in results[:3]:
        assert isinstance(r, CollectiveError)
        assert "timed out after 0.5 s waiting for device(s) [3]" in str(r)


def test_a_failing_device_wakes_the_others_and_its_error_is_raised(monkeypatch):
    from ptojax.ops import transcendental as tr
    from ptojax.shard.collectives import psum_p
    from ptojax.shard.runtime import in_process as collectives

    def logistic_failing_on_device_2(x):
        if collectives._current.context.device.id == 2:
            raise ValueError("device 2 ran out of luck")
        return 1 / (1 + np.exp(-x))

    monkeypatch.setattr(tr.logistic_p, "impl", logistic_failing_on_device_2)
    with bound_axes(MESH.shape):
        body = trace_flat(lambda x: [psum_p.bind(tr.logistic_p.bind(x), axes=("x",))],
                          [TensorType((2,), np.dtype(np.float32))])
    program = SpmdProgram(body, MESH, [((),)], [((),)], timeout=30)
    start = time.monotonic()
    with pytest.raises(ValueError, match="device 2 ran out of luck"):
        program.run_global(np.ones(2, np.float32))
    assert time.monotonic() - start < 5


def test_collective_outside_a_device_context():
    with pytest.raises(CollectiveError, match="outside a sharded computation"):
        _psum(np.ones(2, np.float32))
