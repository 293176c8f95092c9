"""``pto.profiler``: traces written where JAX writes its ``.trace.json.gz``, annotations as
spans in ptojax's profile, one trace at a time (JAX's errors), and the device memory profile
as a pprof protocol buffer with JAX's sample types and labels (decoded here independently)."""
import gzip
import json
import os

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp


def _trace_files(log_dir):
    return sorted(os.path.relpath(os.path.join(d, f), log_dir)
                  for d, _, files in os.walk(log_dir) for f in files)


def _layout(paths):
    """plugins/profile/<run>/<name> with the run and host names replaced."""
    out = []
    for p in paths:
        parts = p.split(os.sep)
        name = parts[-1] if parts[-1].startswith("perfetto") else "<host>" + \
            parts[-1][parts[-1].index("."):]
        out.append((parts[0], parts[1], len(parts), name))
    return out


def _run(api, m, log_dir, perfetto):
    with api.profiler.trace(log_dir, create_perfetto_trace=perfetto):
        with api.profiler.TraceAnnotation("my_label", size=3):
            api.jit(lambda x: x * 2)(m.ones(3)).block_until_ready()
        with api.profiler.StepTraceAnnotation("train", step_num=1):
            pass


@pytest.mark.parametrize("perfetto", [False, True])
def test_trace_layout_and_events_as_jax(perfetto, tmp_path, jax, jnp):
    _run(pto, pnp, tmp_path / "ours", perfetto)
    _run(jax, jnp, tmp_path / "theirs", perfetto)
    ours, theirs = _trace_files(tmp_path / "ours"), _trace_files(tmp_path / "theirs")
    theirs_json = [p for p in theirs if p.endswith(".json.gz")]   # (JAX's .xplane.pb: not ours)
    assert _layout(ours) == _layout(theirs_json)
    for path in ours:
        events = json.load(gzip.open(tmp_path / "ours" / path))["traceEvents"]
        labels = [e for e in events if e["name"] == "my_label"]
        assert len(labels) == 1 and labels[0]["ph"] == "X" and labels[0]["args"] == {"size": "3"}
        assert labels[0]["dur"] > 0
        assert any(e["cat"] == "jit" for e in events)          # the program ran inside
        assert any(e["name"] == "train" and e["args"] == {"step_num": "1"} for e in events)
    theirs_events = json.load(gzip.open(tmp_path / "theirs" / theirs_json[0]))["traceEvents"]
    assert [e["args"] for e in theirs_events if e.get("name") == "my_label"] == [{"size": "3"}]


def test_one_trace_at_a_time(tmp_path, jax):
    for api in (pto, jax):
        with pytest.raises(RuntimeError, match="No profile started"):
            api.profiler.stop_trace()
        api.profiler.start_trace(tmp_path / api.__name__)
        with pytest.raises(RuntimeError, match="already been started"):
            api.profiler.start_trace(tmp_path / "again")
        api.profiler.stop_trace()
    with pto.profile():
        with pytest.raises(RuntimeError, match="already been started"):
            pto.profiler.start_trace(tmp_path / "inside")


def test_annotations_in_ptojax_profile_and_annotate_function(jax):
    def double(x):
        return x * 2
    ours, theirs = pto.profiler.annotate_function(double), \
        jax.profiler.annotate_function(double)
    assert ours.__name__ == theirs.__name__ == "double"
    named = pto.profiler.annotate_function(double, name="twice", scale=2)
    with pto.profile() as prof:
        np.testing.assert_array_equal(ours(pnp.ones(2)), [2.0, 2.0])
        named(pnp.ones(2))
        with pto.profiler.StepTraceAnnotation("train", step_num=4):
            pass
    spans = [(e.name, e.kind, e.args) for e in prof.events if e.kind in ("annotation", "step")]
    # JAX's default name is the function's qualname
    assert spans == [(double.__qualname__, "annotation", {}),
                     ("twice", "annotation", {"scale": 2}),
                     ("train", "step", {"step_num": 4})]
    assert "twice" in str(prof.report())
    with pto.profiler.TraceAnnotation("nothing active"):   # no profile: nothing recorded
        pass


# pprof ----------------------------------------------------------------------------------------
def _varint(buf, i):
    value = shift = 0
    while True:
        byte = buf[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def _fields(buf):
    """A protocol buffer message as [(field number, int or bytes)] (wire types 0 and 2)."""
    i, out = 0, []
    while i < len(buf):
        key, i = _varint(buf, i)
        if key & 7 == 0:
            value, i = _varint(buf, i)
        else:
            assert key & 7 == 2, key
            n, i = _varint(buf, i)
            value, i = bytes(buf[i:i + n]), i + n
        out.append((key >> 3, value))
    return out


def _profile(data):
    """(sample types, [(values, {label: text})]) of a gzipped pprof Profile."""
    top = _fields(gzip.decompress(data))
    strings = [v.decode() for f, v in top if f == 6]
    types = [tuple(strings[v] for _, v in _fields(m)) for f, m in top if f == 1]
    samples = []
    for f, m in top:
        if f == 2:
            sample = _fields(m)
            packed = next(v for k, v in sample if k == 2)
            values, i = [], 0
            while i < len(packed):
                v, i = _varint(packed, i)
                values.append(v)
            labels = {strings[dict(_fields(v))[1]]: strings[dict(_fields(v))[2]]
                      for k, v in sample if k == 3}
            samples.append((values, labels))
    return types, samples


def test_device_memory_profile_is_pprof_as_jax(tmp_path, jax, jnp):
    ours_x, theirs_x = pnp.ones((64, 32)), jnp.ones((64, 32), np.float32)
    ours_types, ours_samples = _profile(pto.profiler.device_memory_profile())
    theirs_types, theirs_samples = _profile(jax.profiler.device_memory_profile())
    assert ours_types == theirs_types == [("allocations", "count"), ("space", "bytes")]
    theirs_keys = set().union(*(labels for _, labels in theirs_samples))
    assert {"kind", "device"} <= theirs_keys
    assert all({"kind", "device"} <= set(labels) for _, labels in ours_samples)
    assert [1, 8192] in [v for v, labels in ours_samples if labels["shape"] == "f32[64,32]"]
    assert [1, 8192] in [v for v, labels in theirs_samples if labels["kind"] == "buffer"]
    path = tmp_path / "memory.prof"
    pto.profiler.save_device_memory_profile(path)
    assert _profile(path.read_bytes())[0] == ours_types
    del ours_x, theirs_x
