"""pto.profile records jitted calls, summarizes them and writes a Chrome trace."""
import json

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp


def test_profile_records_jitted_calls(tmp_path):
    double = pto.jit(lambda x: x * 2.0)
    triple = pto.jit(lambda x: x * 3.0)
    x = pnp.ones(1000)
    double(x)
    with pto.profile() as p:
        for _ in range(3):
            double(x)
        triple(x)
    rows = {r["name"]: r for r in p.report().rows}
    assert rows["<lambda>"]["calls"] == 4
    assert rows["<lambda>"]["bytes"] == 4 * 2 * 4000
    assert "calls" in str(p.report()) and "<table>" in p.report()._repr_html_()
    path = tmp_path / "trace.json"
    p.save_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    assert len(events) == 4 and all(e["ph"] == "X" and e["dur"] >= 0 for e in events)


def test_nothing_recorded_outside_a_profile():
    f = pto.jit(lambda x: x + 1.0)
    with pto.profile() as p:
        pass
    f(np.ones(3, np.float32))
    assert p.events == []


def test_profiles_do_not_nest():
    with pto.profile():
        with pytest.raises(RuntimeError, match="do not nest"):
            with pto.profile():
                pass


def test_profile_records_each_host_kernel_run_with_its_cost_estimate(host_kernels):
    from ptojax.lower.host.backend import CpuBackend
    softmax = pto.jit(lambda x: pto.nn.softmax(pnp.tanh(x), axis=-1),
                      backend=CpuBackend(tiered=False, min_elements=0))
    x = np.ones((64, 128), np.float32)
    softmax(x)
    with pto.profile() as p:
        softmax(x)
        softmax(x)
    kernels = [r for r in p.report().rows if r["kind"] == "kernel"]
    assert len(kernels) == 1 and kernels[0]["calls"] == 2
    assert kernels[0]["name"].startswith("k0_")
    assert kernels[0]["bytes"] == 2 * 2 * x.nbytes
    assert kernels[0]["estimate_us"] > 0
    jit_row = next(r for r in p.report().rows if r["kind"] == "jit")
    assert jit_row["total"] >= kernels[0]["total"]


def test_report_rows_are_sorted_by_total_time():
    def sort_all(x):
        return pnp.sort(x)

    def add_one(x):
        return x + 1.0
    slow, fast = pto.jit(sort_all), pto.jit(add_one)
    x = pnp.asarray(np.random.default_rng(0).random(200_000, np.float32))
    slow(x), fast(x[:10])
    with pto.profile() as p:
        fast(x[:10])
        slow(x)
    rows = p.report().rows
    assert [r["name"] for r in rows] == ["sort_all", "add_one"]
    assert rows[0]["total"] >= rows[1]["total"]
