"""Records of jax-ml/jax tests/fft_test.py (FftTest): ``jnp.fft.fn`` vs ``pnp.fft.fn``.

RECORDS: testFftn (fftn/ifftn/rfftn/irfftn over every axes choice of _get_fftn_test_axes),
testFft (the 1-D transforms along axis -1 and 0, with n), testFft2, testFftfreq,
testRfftfreq, testFftshift, testIfftshift, and the norm modes. GRAD_RECORDS: the gradients
testFftn checks (float32 / complex64; irfftn of inputs whose first imaginary part is zero is
left out: its derivative is undefined on the rest of the domain).
"""
import itertools

from .spec import record

_REAL = ["float32", "int32", "bool"]         # jtu.dtypes.floating + integer + boolean
_ALL = _REAL + ["complex64"]
_TOL = {"float32": 1e-4, "complex64": 1e-4}


def _fftn_axes(shape):
    """_get_fftn_test_axes: no axes, all (rank <= 3), every combination of up to three, and
    each single negative axis."""
    ndim = len(shape)
    axes = [()] + ([None] if ndim <= 3 else [])
    for n in range(1, min(ndim, 3) + 1):
        axes += list(itertools.combinations(range(ndim), n))
    return axes + [(-i,) for i in range(1, ndim + 1)]


def _fftn_record(fn, dtypes):
    return record(f"fft.{fn}", name=f"fft.{fn}", dtypes=dtypes, tol=_TOL, combos=[
        dict(shapes=(s,), axes=a) for s in [(10,), (10, 10), (9,), (2, 3, 4), (2, 3, 4, 5)]
        for a in _fftn_axes(s)])


def _fft_record(fn, dtypes):
    return record(f"fft.{fn}", name=f"fft.{fn}", dtypes=dtypes, tol=_TOL, shapes=[(10,)],
                  kwargs={"axis": [-1, 0], "n": [None, 7, 12], "norm": [None, "ortho",
                                                                      "forward"]})


def _fft2_record(fn, dtypes):
    return record(f"fft.{fn}", name=f"fft.{fn}", dtypes=dtypes, tol=_TOL,
                  shapes=[(16, 8, 4, 8), (16, 8, 4, 8, 4)],
                  kwargs={"axes": [(-2, -1), (0, 1), (1, 3), (-1, 2)]})


def _freq_record(fn):
    return record(f"fft.{fn}", name=f"fft.{fn}", nargs=0, dtypes="float32", tol=_TOL,
                  kwargs={"n": [9, 10, 101, 102], "d": [0.1, 2.0]})


def _shift_record(fn):
    return record(f"fft.{fn}", name=f"fft.{fn}", dtypes=_ALL, combos=[
        dict(shapes=(s,), axes=a) for s in [(9,), (10,), (101,), (102,), (3, 5), (3, 17),
                                            (5, 7, 11)] for a in _fftn_axes(s)])


RECORDS = [
    _fftn_record("fftn", _ALL), _fftn_record("ifftn", _ALL), _fftn_record("rfftn", _REAL),
    _fftn_record("irfftn", _ALL),
    *[_fft_record(fn, _ALL) for fn in ("fft", "ifft", "irfft", "hfft")],
    *[_fft_record(fn, _REAL) for fn in ("rfft", "ihfft")],
    *[_fft2_record(fn, _ALL) for fn in ("fft2", "ifft2", "irfft2")],
    _fft2_record("rfft2", _REAL),
    _freq_record("fftfreq"), _freq_record("rfftfreq"),
    _shift_record("fftshift"), _shift_record("ifftshift"),
]

GRAD_RECORDS = [
    record(f"fft.{fn}", name=f"fft.{fn}.grad", dtypes=dtypes, order=2, modes=("jvp", "vjp"),
           tol=_TOL, combos=[dict(shapes=(s,), axes=a) for s in [(10,), (2, 3, 4)]
                             for a in _fftn_axes(s)])
    for fn, dtypes in [("fftn", ["float32", "complex64"]), ("ifftn", ["float32", "complex64"]),
                       ("rfftn", ["float32"])]
]

NOT_PORTED = {
    "testFftnErrors, testFftErrors, testFft2Errors, testFft*freqErrors": "error messages",
    "testFftEmpty": "an empty transform (jnp returns its input)",
    "irfftn gradients (_irfft_with_zeroed_inputs)": "a wrapper function, not one jnp call",
}
