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
