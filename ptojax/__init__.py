"""ptojax: JAX-style function transformations for tile-based AI accelerators (Ascend / PTO).

Write array code with ``ptojax.numpy`` (the NumPy API) and transform it as in JAX; ``jit``
compiles it to PTO tile kernels (or the host backend where no accelerator is present)::

    >>> import ptojax as pto
    >>> import ptojax.numpy as pnp
    >>> f = pto.jit(pto.grad(lambda x: pnp.sum(pnp.sin(x) ** 2)))
    >>> f(pnp.array([0.0, 1.0]))
    Array([0.       , 0.9092974], dtype=float32)

Transforms
    ``jit``, ``grad``, ``value_and_grad``, ``vmap``, ``jvp``, ``vjp``, ``linearize``,
    ``jacfwd``, ``jacrev`` (``jacobian``), ``hessian``, ``checkpoint`` (``remat``),
    ``custom_jvp``, ``custom_vjp``, ``shard_map``, ``shard``, ``pmap``; ``tile`` and ``make_ir`` show
    what a function becomes (tile plan, traced IR); ``kernel`` (with ``BlockSpec``) writes
    tile kernels by hand.

Namespaces
    ``numpy`` (with ``numpy.linalg``, ``numpy.fft``), ``lax`` (with ``lax.linalg``),
    ``nn`` (with ``nn.initializers``), ``ops`` (segment reductions), ``random``, ``scipy``
    (``linalg``, ``special``, ``stats``), ``image`` (resizing), ``tree`` and ``tree_util`` (pytrees), ``sharding`` (meshes and partition
    specs), ``distributed``, ``debug``, ``tools`` (drawing, profiling, numerics checks),
    ``quant`` (int8/fp8 quantization), ``mixed_precision`` (policies, loss scaling),
    ``config``, ``errors``, ``dtypes``, ``targets``, ``test_util``.

Devices and sharding
    ``devices``, ``device_count``, ``local_devices``, ``process_index``, ``make_mesh``,
    ``set_mesh``, ``NamedSharding``, ``P``, ``device_put``, ``device_get``, ``reshard``,
    ``with_sharding_constraint``.

``dir(ptojax)`` and ``help(ptojax)`` list this API (``__all__``).
"""
from ptojax import distributed, errors, lax, nn, numpy, random, tools, tree_util
from ptojax import mixed_precision, ops, quant
# the rest of JAX's top-level API (issue 15)
from ptojax import debug, scipy, test_util, tree
from ptojax import core
from ptojax.config import (check_tracer_leaks, checking_leaks, config, debug_infs, debug_nans,
                           default_matmul_precision, default_prng_impl, disable_jit,
                           enable_checks, enable_x64, no_tracing, threefry_partitionable,
                           explain_cache_misses, log_compiles, numpy_dtype_promotion,
                           numpy_rank_promotion, default_device, transfer_guard,
                           transfer_guard_device_to_device, transfer_guard_device_to_host,
                           transfer_guard_host_to_device)
from ptojax.autodiff.api import jacrev as jacobian
from ptojax.shard.runtime.arrays import block_until_ready, device_get
from ptojax.shard.explicit import reshard
from ptojax.sharding import AxisType, get_mesh, set_mesh
from ptojax.ir import ClosedIR, IR, TensorType, TileType
from ptojax.ir.symbolic import Dim
from ptojax.ops.pure_callback import pure_callback
from ptojax.trace import ensure_compile_time_eval
from ptojax.source_info import named_call, named_scope
from ptojax.jit import clear_caches, eval_shape, jit, make_ir, make_jaxpr
from ptojax.eval.leaves import ShapeDtypeStruct, typeof
from ptojax.eval.profiler import profile
from ptojax.eval.array import Array
from ptojax.autodiff.api import (grad, hessian, jacfwd, jacrev, jvp, linearize,
                                        value_and_grad, vjp)
from ptojax.autodiff.custom_derivatives import checkpoint, custom_jvp, custom_vjp, remat
from ptojax.autodiff.closure import closure_convert, custom_gradient
from ptojax.autodiff.linear_transpose import linear_transpose
from ptojax.autodiff.checkpoint_policies import checkpoint_policies
from ptojax.batching.api import vmap
from ptojax import targets
from ptojax.tile.api import tile
from ptojax.tile.planner import TileConfig
from ptojax.kernel.api import namespace as kernel
from ptojax.kernel.spec import BlockSpec
from ptojax.sharding import (Mesh, NamedSharding, P, PartitionSpec, SingleDeviceSharding,
                             make_mesh)
from ptojax.devices import (Device, default_backend, device_count, devices, local_device_count, local_devices,
                                    process_count, process_index)
from ptojax.shard.runtime.arrays import device_put
from ptojax.shard.api import shard
from ptojax.shard.constraint import with_sharding_constraint
from ptojax.shard.map import shard_map
from ptojax.pmap import pmap
from ptojax import image
from ptojax.dtypes import (bfloat16, float0, float8_e4m3fn, float8_e5m2, float16, float32, float64,
                           int8, int16, int32, int64, uint8, uint16, uint32)
from ptojax import typing
from ptojax import custom_derivatives
from ptojax import stages
from ptojax import profiler
from ptojax import custom_batching
from ptojax import experimental
from ptojax.make_array import (make_array_from_callback, make_array_from_process_local_data,
                               make_array_from_single_device_arrays)
from ptojax.runtime_info import (VERSION as _VERSION, copy_to_host_async, effects_barrier,
                                 live_arrays, print_environment_info, process_indices)
from ptojax.public import dir_function as _dir_function

__version__ = _VERSION

__all__ = ["Array", "AxisType", "BlockSpec", "Device", "ClosedIR", "Dim", "IR", "Mesh", "NamedSharding", "P",
           "PartitionSpec", "ShapeDtypeStruct", "SingleDeviceSharding", "TensorType",
           "TileConfig", "TileType", "bfloat16", "block_until_ready", "check_tracer_leaks",
           "checking_leaks", "checkpoint", "checkpoint_policies", "clear_caches",
           "closure_convert", "config", "core", "custom_gradient", "custom_jvp", "custom_vjp", "debug", "debug_infs", "debug_nans", "default_matmul_precision", "default_prng_impl",
           "default_backend", "default_device", "device_count", "device_get", "device_put",
           "devices", "disable_jit", "distributed", "dtypes", "copy_to_host_async", "custom_batching", "custom_derivatives", "effects_barrier", "enable_checks", "enable_x64", "ensure_compile_time_eval", "errors", "eval_shape", "experimental", "explain_cache_misses",
           "float0", "float16", "float32", "float64", "float8_e4m3fn", "float8_e5m2", "get_mesh", "grad", "hessian", "image", "int16",
           "int32", "int64", "int8", "jacfwd", "jacobian", "jacrev", "jit", "jvp", "kernel",
           "lax", "linear_transpose", "linearize", "log_compiles", "local_device_count", "local_devices", "make_ir", "make_jaxpr",
           "live_arrays", "make_array_from_callback", "make_array_from_process_local_data",
           "make_array_from_single_device_arrays", "make_mesh", "mixed_precision", "named_call", "named_scope", "nn",
           "no_tracing", "numpy_dtype_promotion", "numpy_rank_promotion", "numpy", "ops", "pmap", "print_environment_info", "process_count", "process_index", "process_indices",
           "profile", "profiler", "pure_callback", "quant", "random", "remat", "reshard", "scipy", "set_mesh", "shard",
           "shard_map", "sharding", "stages", "targets", "test_util", "threefry_partitionable", "tile", "tools", "transfer_guard",
           "transfer_guard_device_to_device", "transfer_guard_device_to_host",
           "transfer_guard_host_to_device", "tree", "tree_util", "typeof", "typing",
           "uint16", "uint32", "uint8", "value_and_grad", "vjp", "vmap",
           "with_sharding_constraint"]
__dir__ = _dir_function(__all__)
