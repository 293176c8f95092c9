"""The tile interpreter models the on-chip buffers: tiles live at their planned addresses in
buffers of the target's real capacity, so an over-capacity plan is an error and overlapping
live tiles would corrupt results."""
import dataclasses

import numpy as np
import pytest

import ptojax as pto
from ptojax.errors import TileError
from ptojax.targets import ascend910b
from ptojax.tile.kernel import tile_kernel_p
from ptojax.tile import interpreter as tile_interpreter
from ptojax.tile.interpreter import run_tile_kernel
from ptojax.tile.api import tile_ir


def _kernel(fn, *args):
    (k,) = [e for e in tile_ir(pto.make_ir(fn)(*args)).ir.ir.eqns if e.prim is tile_kernel_p]
    return k


def test_running_a_kernel_on_a_smaller_buffer_is_an_error(monkeypatch, rng):
    x = rng.normal(size=(64, 1024)).astype(np.float32)
    k = _kernel(pto.nn.softmax, x)
    tiny = dataclasses.replace(ascend910b, name="tiny", buffers=type(ascend910b.buffers)(
        {**ascend910b.buffers, "UB": 4096}))
    monkeypatch.setattr(tile_interpreter, "get_target", lambda t: tiny)
    with pytest.raises(TileError, match=r"buffer UB overflows.*4,096 bytes of UB"):
        run_tile_kernel([x], **k.params)


def test_results_depend_on_the_planned_addresses(monkeypatch, rng):
    """Forcing two live tiles onto one address corrupts the result: the interpreter really
    computes in the modelled buffers."""
    x = rng.normal(size=(16, 64)).astype(np.float32)
    k = _kernel(lambda v: v * 2.0 + v, x)
    good = run_tile_kernel([x], **k.params)[0]
    np.testing.assert_array_equal(good, x * 2.0 + x)
    plan = tile_interpreter.cached_plan(k.params["bodies"][0], k.params["buffers"], ascend910b)
    slots = [s for s in plan.ordered if s.space == "UB"]
    saved = [(s.offset, s.stride) for s in slots]
    try:
        for s in slots:
            s.offset, s.stride = 0, s.nbytes      # everything at address 0
        bad = run_tile_kernel([x], **k.params)[0]
    finally:
        for s, (o, st) in zip(slots, saved):
            s.offset, s.stride = o, st
    assert not np.array_equal(bad, good)


def test_eager_and_jit_execution_agree(rng):
    x = rng.normal(size=(70, 90)).astype(np.float32)
    f = pto.tile(pto.nn.log_softmax)
    np.testing.assert_array_equal(np.asarray(f(x)), np.asarray(pto.jit(f)(x)))


def test_unwritten_outputs_would_show(rng):
    """Outputs start as NaN: a tile the grid failed to cover would be visible."""
    x = rng.normal(size=(33, 40)).astype(np.float32)
    k = _kernel(lambda v: v + 1.0, x)
    out = run_tile_kernel([x], **k.params)[0]
    assert not np.isnan(out).any()
