"""Process 1 dies ("exit") or stops responding ("hang") before a collective; process 0 must
raise a CollectiveError within the timeout, which aborts the job."""
import os
import sys
import time

import numpy as np

import ptojax as pto

pto.distributed.initialize(timeout=3)
mesh = pto.make_mesh((pto.device_count(),), ("x",))
if pto.process_index() == 1:
    if sys.argv[1] == "exit":
        os._exit(0)
    time.sleep(120)
pto.shard_map(lambda a: pto.lax.psum(a, "x"), mesh=mesh, in_specs=pto.P("x"),
              out_specs=pto.P())(np.ones(pto.device_count(), np.float32))
print("unreachable: the psum completed", flush=True)
