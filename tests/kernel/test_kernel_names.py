"""A pto.kernel of any name runs on both host builds: a C++ keyword (``double``, ``class``),
text that is no identifier (``my-kernel``, ``2x``), names that map to one C++ symbol (``a-b``
and ``a_b``) or one tiling struct (``aB`` and ``a_b``: ABTiling), a name the host build's
headers or the PTO API declare (``Tile``, ``host``, the macro ``AICORE``, the fused build's
``convert`` and ``exp_f32``), a name of the builds' own (``ptojax_launch_0``): each kernel's
symbol is a readable C++ identifier of its own (``tile/kernel_names.py``)."""
import numpy as np

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close
from host_cases import host_jit
from ptojax.tile.kernel_names import cpp_identifier

K = pto.kernel
F32 = np.float32
NAMES = ["double", "class", "new", "int", "my-kernel", "2x", "a-b", "a_b", "aB", "__x", "main",
         "Tile", "host", "AICORE", "convert", "exp_f32", "ptojax_launch_0"]


def scaled(name, factor):
    @K(out_shape=pto.ShapeDtypeStruct((16, 16), F32), grid=(2,),
       in_specs=[pto.BlockSpec((8, 16), lambda i: (i, 0))],
       out_specs=pto.BlockSpec((8, 16), lambda i: (i, 0)), name=name)
    def body(x_ref, o_ref):
        o_ref[...] = pnp.tanh(x_ref[...] * factor) + 1.0
    return body


KERNELS = [scaled(name, float(i + 2)) for i, name in enumerate(NAMES)]


def every_kernel(x):
    return tuple(k(x) for k in KERNELS)


def test_names_become_readable_identifiers():
    assert [cpp_identifier(n) for n in NAMES] == \
        ["double_", "class_", "new_", "int_", "my_kernel", "k_2x", "a_b", "a_b", "aB", "k_x",
         "main_", "Tile_", "host_", "AICORE_", "convert_", "exp_f32_", "ptojax_launch_0_"]
    x = np.ones((16, 16), F32)
    names = [r.name for r in pto.jit(every_kernel).lower(x).cost()]
    assert names == ["double_", "class_", "new_", "int_", "my_kernel", "k_2x", "a_b",
                     "a_b_2", "aB_3", "k_x", "main_", "Tile_", "host_", "AICORE_", "convert_",
                     "exp_f32_", "ptojax_launch_0_"]


def test_kernels_of_any_name_run_on_both_host_builds():
    x = np.random.default_rng(0).standard_normal((16, 16)).astype(F32)
    expected = [np.tanh(x * float(i + 2)) + 1.0 for i in range(len(NAMES))]
    for kernels in ("pto", "fused"):
        assert_close(host_jit(every_kernel, kernels=kernels)(x), tuple(expected))
