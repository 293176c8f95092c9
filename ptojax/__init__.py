"""ptojax: JAX-style function transformations for tile-based AI accelerators (Ascend / PTO).

    import ptojax as pto
    import ptojax.numpy as pnp
"""
from ptojax import distributed, errors, lax, nn, numpy, random, tools, tree_util
from ptojax import mixed_precision, quant
# the rest of JAX's top-level API (issue 15)
from ptojax import debug, scipy, test_util, tree
from ptojax.config import config, disable_jit
from ptojax.autodiff.api import jacrev as jacobian
from ptojax.shard.runtime.arrays import block_until_ready, device_get
from ptojax.shard.explicit import reshard
from ptojax.sharding import AxisType, get_mesh, set_mesh
from ptojax.ir import ClosedIR, IR, TensorType, TileType
from ptojax.jit import jit, make_ir, make_jaxpr
from ptojax.eval.leaves import ShapeDtypeStruct
from ptojax.eval.profiler import profile
from ptojax.eval.array import Array
from ptojax.autodiff.api import (grad, hessian, jacfwd, jacrev, jvp, linearize,
                                        value_and_grad, vjp)
from ptojax.autodiff.custom_derivatives import checkpoint, custom_jvp, custom_vjp, remat
from ptojax.batching.api import vmap
from ptojax import targets
from ptojax.tile.api import tile
from ptojax.tile.planner import TileConfig
from ptojax.kernel.api import namespace as kernel
from ptojax.kernel.spec import BlockSpec
from ptojax.sharding import (Mesh, NamedSharding, P, PartitionSpec, SingleDeviceSharding,
                             make_mesh)
from ptojax.devices import (device_count, devices, local_device_count, local_devices,
                                    process_count, process_index)
from ptojax.shard.runtime.arrays import device_put
from ptojax.shard.api import shard
from ptojax.shard.constraint import with_sharding_constraint
from ptojax.shard.map import shard_map
from ptojax.dtypes import (bfloat16, float8_e4m3fn, float8_e5m2, float16, float32, float64,
                           int8, int16, int32, int64, uint8, uint16, uint32)

__version__ = "0.1.0"
