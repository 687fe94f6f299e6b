"""Worker (mpiexec -n N): the disagreement cases of dist_agreement_cases.py, argv[1] naming
them ("collectives": all but the last two, or one of those, which break the default group).
Each rank saves what it raised to $OUT_DIR/agreement.<rank>.npy."""
import datetime
import os
import sys

import ptcore.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # (the tests run PYTHONSAFEPATH)
import dist_agreement_cases as cases  # noqa: E402

dist.init_process_group(timeout=datetime.timedelta(seconds=120))
rank, n = dist.get_rank(), dist.get_world_size()
which = sys.argv[1]
names = cases.collective_names() if which == "collectives" else [which]
results = cases.run(dist, rank, n, names)
cases.save(os.path.join(os.environ["OUT_DIR"], f"agreement.{rank}.npy"), results)
print(f"DONE rank={rank}", flush=True)
# the failed groups are broken, so the job is aborted at exit: first let every rank save
from mpi4py import MPI  # noqa: E402
MPI.COMM_WORLD.Barrier()
