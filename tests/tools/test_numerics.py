"""check_numerics: every stage against the reference; a deliberately broken stage is caught at
the right equation and line."""
import builtins
import inspect

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.errors import UnsupportedError
from ptojax.ops import transcendental
from ptojax.tools.numerics import relative_error, tolerance
from ptojax.trace import PRIMITIVES

RNG = np.random.default_rng(0)
W = RNG.normal(size=(32, 64)).astype(np.float32)
X = RNG.normal(size=(64, 32)).astype(np.float32)


def line_of(fn, text):
    """The file line of the first source line of ``fn`` containing ``text``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def layer(w, x):
    h = pnp.tanh(x @ w)
    return pto.nn.softmax(pnp.exp(h) * 0.5, axis=-1)


def loss(w, x):
    return pnp.mean(layer(w, x) ** 2)


def statuses(report):
    return {s.name: s.status for s in report.stages}


# --- the error measure ---------------------------------------------------------------------------
def test_relative_error_is_relative_with_the_array_scale_as_floor():
    expected = np.array([1.0, 100.0, 1e-9], np.float32)
    assert relative_error(expected, expected) == 0.0
    off = expected * np.float32(1 + 1e-3)
    assert 0.9e-3 < relative_error(off, expected) < 1.1e-3
    # a tiny leftover value is judged against the array's scale, not its own size
    assert relative_error(np.array([1.0, 100.0, 2e-9], np.float32), expected) < 1e-10


def test_relative_error_nans_infinities_and_integers():
    nan_inf = np.array([np.nan, np.inf, 1.0], np.float32)
    assert relative_error(nan_inf, nan_inf.copy()) == 0.0
    assert relative_error(np.array([np.nan, 1.0], np.float32),
                          np.array([0.0, 1.0], np.float32)) == np.inf
    assert relative_error(np.array([np.inf], np.float32), np.array([1.0], np.float32)) == np.inf
    assert relative_error(np.array([1, 2]), np.array([1, 2])) == 0.0
    assert relative_error(np.array([1, 3]), np.array([1, 2])) == np.inf
    assert relative_error(np.ones(2, np.float16), np.ones(2, np.float32)) == np.inf


def test_tolerances_per_dtype():
    assert tolerance(np.float32) == 1e-5 and tolerance(np.float16) == 1e-3
    assert tolerance(pto.bfloat16) == 1e-2 and tolerance(np.int32) == 0.0


# --- clean programs ---------------------------------------------------------------------------
def test_a_correct_program_passes_every_stage(host_kernels):
    report = pto.tools.check_numerics(layer, W, X)
    assert [s.name for s in report.stages] == ["trace layer", "optimize", "tile (host_jit)",
                                               "host kernels"]
    assert statuses(report) == {"trace layer": "reference", "optimize": "ok",
                                "tile (host_jit)": "ok", "host kernels": "ok"}
    assert report.ok and report.first_divergence is None
    assert all(s.compared > 0 for s in report.stages[1:])
    assert "every stage matches" in str(report)


def test_each_transform_is_a_stage_of_its_own():
    names = [s.name for s in pto.tools.check_numerics(pto.jit(pto.grad(loss)), W, X).stages]
    assert names[:2] == ["trace loss", "grad"]
    square = lambda x: pnp.sum(pnp.sin(x) ** 3)  # noqa: E731
    hessian_names = [s.name for s in
                     pto.tools.check_numerics(pto.hessian(square), X[0, :4]).stages]
    assert hessian_names[:3] == ["trace <lambda>", "jacrev", "jacfwd"]


def test_jax_reference_checks_every_trace_stage(jax):
    report = pto.tools.check_numerics(pto.grad(loss), W, X, reference="jax")
    assert statuses(report)["trace loss"] == "ok" and statuses(report)["grad"] == "ok"
    assert report.ok, str(report)
    assert "against JAX" in str(report)


def test_jax_reference_translates_loops_and_names_what_it_cannot(jax):
    def rnn(w, xs):
        final, hs = pto.lax.scan(lambda h, x: (pnp.tanh(h @ w + x), h.sum()), xs[0], xs)
        return final, hs, xs[pnp.array([2, 0])]
    report = pto.tools.check_numerics(rnn, W[:, :32], X[:8], reference="jax")
    trace = report.stages[0]
    assert trace.status == "ok" and trace.compared > 0
    assert trace.note == "not checked (no JAX equivalent): gather"


def test_low_precision_values_are_judged_with_their_tolerance(host_kernels, monkeypatch):
    # the PTO build computes tanh as an instruction sequence, whose float16 results differ
    # from numpy's by more than float32's tolerance (the fused build's tanh_f32 does not)
    monkeypatch.setenv("PTOJAX_HOST_KERNELS", "pto")

    def column_sums(x):
        return pnp.tanh(pnp.exp(x) * 2.0).sum(0)
    report = pto.tools.check_numerics(column_sums, X.astype(np.float16))
    host = report.stages[-1]
    assert host.name == "host kernels" and host.status == "ok"
    assert tolerance(np.float32) < host.max_error < tolerance(np.float16)


# --- broken stages are caught ---------------------------------------------------------------
def test_a_wrong_primitive_impl_is_caught_against_jax_at_its_equation(jax, monkeypatch):
    monkeypatch.setattr(transcendental.exp_p, "impl", lambda x: np.exp(x) * np.float32(1.01))
    report = pto.tools.check_numerics(layer, W, X, reference="jax")
    divergence = report.first_divergence
    assert divergence.stage == "trace layer" and report.stages[0].status == "diverged"
    assert " = exp " in divergence.equation
    assert divergence.source.line == line_of(layer, "pnp.exp")
    assert 5e-3 < divergence.error < 2e-2 and divergence.tolerance == 1e-5
    assert not report.ok and "first divergence: trace layer" in str(report)


def test_a_wrong_tile_op_is_caught_at_the_tile_stage(monkeypatch):
    tile_exp = PRIMITIVES["tile_exp"]
    real = tile_exp.impl
    monkeypatch.setattr(tile_exp, "impl", lambda x: real(x) + np.float32(1e-3))
    report = pto.tools.check_numerics(layer, W, X)
    assert statuses(report)["optimize"] == "ok"
    assert statuses(report)["tile (host_jit)"] == "diverged"
    divergence = report.first_divergence
    assert divergence.stage == "tile (host_jit)" and divergence.kernel.startswith("k")
    assert divergence.source.line == line_of(layer, "pnp.exp")


def test_a_wrong_host_kernel_is_caught_at_the_host_stage(host_kernels, monkeypatch):
    from ptojax.lower.host import program as host_program
    real = host_program._launcher

    def off_by_a_bit(*args):
        launch = real(*args)
        return lambda *inputs: [out * np.float32(1.001) for out in launch(*inputs)]
    monkeypatch.setattr(host_program, "_launcher", off_by_a_bit)
    report = pto.tools.check_numerics(layer, W, X)
    assert statuses(report)["tile (host_jit)"] == "ok"
    divergence = report.first_divergence
    assert divergence.stage == "host kernels" and divergence.kernel is not None
    assert divergence.source.function == "layer"
    assert "host kernels" in report._repr_html_() and "diverged" in report._repr_html_()


def test_a_failing_stage_is_reported_not_raised(monkeypatch):
    from ptojax.tools import numerics

    def broken(*args, **kwargs):
        raise RuntimeError("planner exploded")
    monkeypatch.setattr(numerics, "tile_ir", broken)
    report = pto.tools.check_numerics(layer, W, X)
    assert report.stages[-1].status == "error" and "planner exploded" in report.stages[-1].note
    assert not report.ok and "stage 'tile (host_jit)' failed" in str(report)


# --- errors ------------------------------------------------------------------------------------
def test_jax_reference_without_jax_says_how_to_install_it(monkeypatch):
    real_import = builtins.__import__

    def no_jax(name, *args, **kwargs):
        if name == "jax" or name.startswith("jax."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_jax)
    with pytest.raises(UnsupportedError, match="pip install jax"):
        pto.tools.check_numerics(layer, W, X, reference="jax")


def test_unknown_reference_is_an_error():
    with pytest.raises(ValueError, match="'interpreter' or 'jax'"):
        pto.tools.check_numerics(layer, W, X, reference="numpy")


# --- check_nonfinite -----------------------------------------------------------------------------
def half_precision_layer(x):
    scores = pnp.exp(x * 12.0)                       # overflows float16 for x > ~0.92
    centered = scores - pnp.max(scores)              # inf - inf: NaN, explained by the inf
    return pnp.sum(pnp.sqrt(x) + centered)           # sqrt of a negative: a new NaN


def test_check_nonfinite_reports_the_overflow_and_the_nan_at_their_lines():
    x = np.array([0.5, 1.0, -0.25, 0.1], np.float16)
    report = pto.tools.check_nonfinite(half_precision_layer, x)
    assert not report.ok
    first, second = report.events
    assert first.kind == "overflow" and (first.infs, first.nans) == (1, 0)
    assert "exp" in first.equation and first.dtype == "float16"
    assert first.source.line == line_of(half_precision_layer, "pnp.exp")
    assert second.kind == "NaN" and "sqrt" in second.equation
    assert second.source.line == line_of(half_precision_layer, "pnp.sqrt")
    assert report.first is first
    text = str(report)
    assert "2 introduce infinities or NaNs" in text and "overflow: `" in text


def test_check_nonfinite_looks_through_grad_and_passes_finite_programs():
    x = np.array([0.5, 2.0], np.float16)
    report = pto.tools.check_nonfinite(
        pto.grad(lambda v: pnp.sum(pnp.exp(v * 12.0)).astype(np.float32)), x)
    assert report.first is not None and "exp" in report.first.equation
    ok = pto.tools.check_nonfinite(lambda v: pnp.tanh(v) * 2, X)
    assert ok.ok and "no equation produces" in str(ok)
