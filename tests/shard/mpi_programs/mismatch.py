"""The processes run different collectives; both must fail with a CollectiveError."""
import numpy as np

import ptojax as pto

pto.distributed.initialize(timeout=10)
mesh = pto.make_mesh((pto.device_count(),), ("x",))
x = np.ones(pto.device_count() * 2, np.float32)
if pto.process_index() == 0:
    fn = lambda a: pto.lax.psum(a, "x")  # noqa: E731
else:
    fn = lambda a: pto.lax.all_gather(a, "x", tiled=True)[:2]  # noqa: E731
try:
    pto.shard_map(fn, mesh=mesh, in_specs=pto.P("x"), out_specs=pto.P("x"),
                  check_rep=False)(x)
except pto.errors.CollectiveError as e:
    print(f"process {pto.process_index()}: CollectiveError: {e}", flush=True)
    pto.distributed.barrier()
