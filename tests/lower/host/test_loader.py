"""Launching kernels: the data pointers passed to a kernel library."""
import numpy as np

from ptojax.eval.pointers import data_pointers


def test_kernel_launches_read_the_arrays_data_pointers():
    """``pointers.data_pointers`` (the fast read of numpy's data pointer) agrees with
    ``a.ctypes.data`` on arrays, views, and empty and 0-d arrays."""
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    arrays = [base, base[1:], base[:, 3:], base.T, np.empty((0, 5)), np.array(3.0), base[::2]]
    assert data_pointers(arrays) == [a.ctypes.data for a in arrays]


def test_launchers_given_the_arrays_objects_read_the_same_pointers():
    """``KernelLibrary.launcher`` passes the arrays' objects to each entry's twin, which reads
    their data pointers in C: the same results as ``launch`` passing the pointers, also into
    a view that starts inside its buffer."""
    import ptojax as pto
    from host_cases import executable_of, host_jit

    fn = host_jit(lambda x, y: pto.numpy.tanh(x) * y + 1.0)
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((64, 32), dtype=np.float32) for _ in range(2))
    fn(x, y)
    program = executable_of(fn, x, y).program
    [eqn] = program.launchers
    [out_type] = [v.type for v in eqn.outputs]
    ins = [rng.standard_normal(v.type.shape).astype(v.type.dtype) for v in eqn.inputs]
    library = program.library
    assert library._object_launchers[0] is not None
    big = np.zeros((out_type.shape[0] + 1, *out_type.shape[1:]), out_type.dtype)
    out_view, out_ref = big[1:], np.zeros(out_type.shape, out_type.dtype)
    library.launcher(0, len(ins) + 1)([*ins, out_view], 1, False)
    library.launch(0, [*ins, out_ref], 1, False)
    np.testing.assert_array_equal(out_view, out_ref)
    assert np.isfinite(out_ref).all() and out_ref.any() and not big[0].any()
