"""Process 0 logs many lines to stderr, then dies of an uncaught error while process 1 waits
in a barrier: all of it, the traceback last, must reach mpiexec's stderr before the job is
aborted."""
import sys

import ptojax as pto

pto.distributed.initialize(timeout=60)
if pto.process_index() == 0:
    for i in range(800):
        print(f"log line {i:04d} " + "x" * 60, file=sys.stderr)
    raise RuntimeError("rank 0 fails on purpose: END OF THE ERROR MESSAGE")
pto.distributed.barrier()
print("unreachable: the barrier completed", flush=True)
