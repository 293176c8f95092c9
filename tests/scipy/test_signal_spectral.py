"""``pto.scipy.signal``'s spectral functions against ``jax.scipy.signal``: detrend (linear,
constant, breakpoints), stft (boundaries, padding, overlap, nfft, named/tuple/array windows,
two-sided, complex input, axis), welch/csd (mean and median averages, scalings, detrend
types, unequal lengths, ``y=None``), istft (odd/even segments, two-sided, axes, boundary,
window); grad, jit and vmap; JAX's errors. The named windows against SciPy's get_window."""
import warnings

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.scipy import signal
from ptojax.scipy.signal_windows import NAMES, get_window
from helpers import assert_close
from jax_golden import expected

RNG = np.random.RandomState(0)
X = RNG.randn(3, 50).astype(np.float32)
Y = RNG.randn(3, 50).astype(np.float32)


def _jax_results(jax, cases, inputs):
    """JAX's results of ``cases`` (one compiled program; the arrays among their ``args`` are
    its inputs), each a tuple."""
    import jax.scipy.signal as jsig
    with jax.enable_x64(False), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wants = jax.jit(lambda all_args: [
            getattr(jsig, name)(*args, **kwargs)
            for (name, _, kwargs), args in zip(cases, all_args)])(inputs)
    return [w if isinstance(w, tuple) else (w,) for w in wants]


def _check(cases, gots, wants):
    for (name, _, kwargs), got, want in zip(cases, gots, wants, strict=True):
        got = got if isinstance(got, tuple) else (got,)
        assert len(got) == len(want), (name, kwargs)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype, (name, kwargs)
            assert_close(g, np.asarray(w), rtol=2e-4, atol=2e-4)


def _ours(cases):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [getattr(signal, name)(*args, **kwargs) for name, args, kwargs in cases]


def _compare(jax, cases):
    """Each ``(name, args, kwargs)`` of ``cases`` against JAX's, run now."""
    _check(cases, _ours(cases), _jax_results(jax, cases, [args for _, args, _ in cases]))


def _arrays(cases):
    """The arrays among the cases' ``args``: the stored values' digest."""
    return [a for _, args, _ in cases for a in args if a is not None]


def _compare_with_stored(key, cases):
    """Each ``(name, args, kwargs)`` of ``cases`` against JAX's results stored by
    jax_golden.py (a table of ``jax_reference_tables``)."""
    gots = _ours(cases)
    leaves = iter(expected(f"signal/{key}", _arrays(cases)))
    wants = [tuple(next(leaves) for _ in (got if isinstance(got, tuple) else (got,)))
             for got in gots]
    assert next(leaves, None) is None
    _check(cases, gots, wants)


DETREND = [("detrend", (X,), {}), ("detrend", (X,), {"type": "constant"}),
           ("detrend", (X,), {"bp": [10, 30]}),
           ("detrend", (X.T,), {"axis": 0, "bp": 7}),
           ("detrend", (np.arange(10),), {})]
STFT = [("stft", (X,), kwargs) for kwargs in [
    {"nperseg": 16}, {"nperseg": 16, "noverlap": 4, "nfft": 20},
    {"nperseg": 15, "boundary": "even"},
    {"nperseg": 16, "boundary": "odd", "padded": False},
    {"nperseg": 16, "boundary": None, "detrend": "linear"},
    {"nperseg": 16, "boundary": "constant", "return_onesided": False},
    {"nperseg": 8, "window": "hamming", "fs": 10.0},
    {"nperseg": 8, "window": ("tukey", 0.3)},
    {"nperseg": 8, "window": np.ones(8, np.float32)}]] + [
    ("stft", (X.T,), {"nperseg": 16, "axis": 0}),
    ("stft", ((X + 1j * Y).astype(np.complex64),), {"nperseg": 16})]
_WELCH = [{}, {"nperseg": 16, "average": "median"},
          {"nperseg": 10, "noverlap": 3, "nfft": 13, "scaling": "spectrum"},
          {"nperseg": 16, "return_onesided": False, "detrend": "linear", "window": "blackman"},
          {"nperseg": 16, "detrend": False, "fs": 3.0}]
WELCH_CSD = ([("welch", (X,), kwargs) for kwargs in _WELCH]
             + [("csd", (X, Y), kwargs) for kwargs in _WELCH]
             + [("welch", (X.T,), {"nperseg": 16, "axis": 0}),
                ("csd", (X[:1], Y[:, :40]), {"nperseg": 16}),
                ("csd", (X, None), {"nperseg": 16, "average": "median"})])
STORED = {"detrend": DETREND, "stft": STFT, "welch-csd": WELCH_CSD}


def _jax_grad_jit_vmap(jax, x):
    import jax.scipy.signal as jsig
    with jax.enable_x64(False):
        return [jax.jit(jax.grad(
                    lambda a: jsig.istft(jsig.stft(a, nperseg=8)[2])[1].sum()
                    + jsig.welch(a, nperseg=16)[1].sum()))(x),
                jax.jit(jax.vmap(lambda a: jsig.stft(a, nperseg=8)[2]))(x),
                jax.jit(lambda a: jsig.csd(a, a[::-1], nperseg=8, average="median")[1])(x)]


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py: the fixed-input tables
    (JAX in 32-bit mode, as the tests compare)."""
    for key, cases in STORED.items():
        yield (f"signal/{key}", _arrays(cases),
               lambda *_, cases=cases: [w for want in _jax_results(
                   jax, cases, [args for _, args, _ in cases]) for w in want])
    yield "signal/grad-jit-vmap", [X[:2, :40]], lambda x: _jax_grad_jit_vmap(jax, x)


def test_detrend():
    _compare_with_stored("detrend", DETREND)


def test_stft():
    _compare_with_stored("stft", STFT)


def test_welch_csd():
    _compare_with_stored("welch-csd", WELCH_CSD)


def test_istft(jax):
    cases = []
    for nperseg, noverlap, onesided, nfft in [(16, None, True, None), (15, None, True, 15),
                                              (16, 4, True, None), (16, None, False, None),
                                              (16, None, True, 20)]:
        _, _, zxx = signal.stft(X, nperseg=nperseg, noverlap=noverlap,
                                return_onesided=onesided)
        cases.append(("istft", (np.asarray(zxx),), {
            "nperseg": nperseg, "noverlap": noverlap, "input_onesided": onesided,
            "nfft": nfft}))
    zxx = np.asarray(signal.stft(X, nperseg=16)[2])
    cases += [("istft", (zxx.transpose(2, 0, 1),), {"time_axis": 0, "freq_axis": -1}),
              ("istft", (zxx,), {"boundary": False, "window": "hamming", "fs": 2.0})]
    _compare(jax, cases)


def test_istft_inverts_stft():
    _, _, zxx = signal.stft(X, nperseg=16)
    _, back = signal.istft(zxx)
    assert_close(back[:, :50], X, rtol=1e-4, atol=1e-5)


def test_grad_jit_vmap():
    """Against JAX's values stored by jax_golden.py."""
    x = X[:2, :40]
    want_grad, want_vmap, want_median = expected("signal/grad-jit-vmap", [x])
    got_grad = pto.grad(lambda a: signal.istft(signal.stft(a, nperseg=8)[2])[1].sum()
                        + signal.welch(a, nperseg=16)[1].sum())(x)
    assert_close(got_grad, np.asarray(want_grad), rtol=1e-4, atol=1e-5)
    assert_close(pto.vmap(lambda a: signal.stft(a, nperseg=8)[2])(x), np.asarray(want_vmap),
                 rtol=1e-4, atol=1e-5)
    got = pto.jit(lambda a: signal.csd(a, a[::-1], nperseg=8, average="median")[1])(x)
    assert_close(got, np.asarray(want_median), rtol=1e-4, atol=1e-5)


def test_named_windows_match_scipy():
    get = pytest.importorskip("scipy.signal").get_window
    for name in NAMES + ["han", "rect"]:
        window = (name, 0.3 if name == "tukey" else 2.5) if name in (
            "kaiser", "gaussian", "tukey") else name
        for n in (1, 2, 7, 8):
            assert_close(get_window(window, n), get(window, n), rtol=1e-12, atol=1e-12)


def test_errors_as_jax():
    x = pnp.ones(32)
    cases = [
        (dict(nperseg=0), "nperseg must be a positive integer"),
        (dict(nperseg=8, noverlap=8), "noverlap must be less than nperseg"),
        (dict(nperseg=8, nfft=4), "nfft must be greater than or equal to nperseg"),
        (dict(nperseg=8, boundary="wrap"), "Unknown boundary option"),
        (dict(nperseg=8, detrend=1), "Unsupported detrend type"),
        (dict(nperseg=4, window=np.ones(8)), "different from length of window"),
        (dict(window=np.ones((2, 4))), "window must be 1-D"),
        (dict(nperseg=8, window="no-such-window"), "Unknown window type"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            signal.stft(x, **kwargs)
    with pytest.raises(ValueError, match="Unknown scaling"):
        signal.welch(x, nperseg=8, scaling="power")
    with pytest.raises(ValueError, match='average must be "median" or "mean"'):
        signal.welch(x, nperseg=8, average="mode")
    with pytest.raises(ValueError, match="Trend type must be"):
        signal.detrend(x, type="quadratic")
    with pytest.raises(ValueError, match="Breakpoints must be non-negative"):
        signal.detrend(x, bp=40)
    with pytest.raises(NotImplementedError, match="overwrite_data"):
        signal.detrend(x, overwrite_data=True)
    with pytest.raises(ValueError, match="at least 2d"):
        signal.istft(x)
    with pytest.raises(ValueError, match="differing time and frequency axes"):
        signal.istft(pnp.ones((5, 4)), time_axis=0, freq_axis=0)
    with pytest.raises(ValueError, match="must be longer than nperseg"):
        signal.istft(pnp.ones((5, 4)), nfft=4)
