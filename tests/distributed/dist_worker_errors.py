"""Worker (mpiexec -n N): one error case per run, named by argv[1]; prints CAUGHT <type>: <msg>."""
import datetime
import os
import sys
import time

import ptcore
import ptcore.distributed as dist

case = sys.argv[1]


def caught(e):
    r = dist.get_rank() if dist.is_initialized() else "?"
    sys.stdout.write(f"CAUGHT rank={r} {type(e).__name__}: {e}\n")    # one write: one line
    sys.stdout.flush()
    if os.environ.get("CAUGHT_DIR"):
        # also to a file: a job that aborts at exit may lose the launcher's last stdout lines
        with open(os.path.join(os.environ["CAUGHT_DIR"], f"caught.{os.getpid()}"), "a") as f:
            f.write(f"CAUGHT rank={r} {type(e).__name__}: {e}\n")
            f.flush()
            os.fsync(f.fileno())


def _done(sync):
    # the survivors' "done" files only: the directory also holds CAUGHT_DIR (counting it
    # let the first survivor abort the job before the others had reported, under load)
    return sum(1 for f in os.listdir(sync) if f.startswith("done"))


if case == "world_size":
    os.environ["WORLD_SIZE"] = "5"
    try:
        dist.init_process_group()
    except RuntimeError as e:
        caught(e)
    sys.exit(0)

dist.init_process_group(timeout=datetime.timedelta(seconds=float(os.environ.get("TMO", "600"))))
rank = dist.get_rank()
try:
    dist.init_process_group()
except ValueError as e:         # (torch 2.13's type)
    if rank == 0:
        caught(e)

if case == "shape":
    try:
        dist.all_reduce(ptcore.ones(2, 3 + rank))
    except ValueError as e:
        caught(e)
elif case == "dtype":
    try:
        dist.broadcast(ptcore.ones(4, dtype=ptcore.float32 if rank == 0 else ptcore.float64), 0)
    except ValueError as e:
        caught(e)
elif case == "recv_size":
    if rank == 0:
        dist.send(ptcore.ones(3), 1)
    elif rank == 1:
        try:
            dist.recv(ptcore.zeros(5), 0)
        except ValueError as e:
            caught(e)
elif case == "hang":
    # rank 1 hangs without taking part; rank 0's all_reduce must fail within the timeout,
    # and the job must then end (rank 0 aborts it at exit)
    if rank == 1:
        print("HANGING rank=1", flush=True)
        time.sleep(600)
        print("STILL ALIVE", flush=True)
    try:
        dist.all_reduce(ptcore.ones(4))
    except dist.DistBackendError as e:
        caught(e)
    try:
        dist.all_reduce(ptcore.ones(4))
    except RuntimeError as e:
        caught(e)
elif case == "dead":
    # rank 1 dies in the middle of the job while the launcher keeps the others running
    # (mpiexec -disable-auto-cleanup, srun without --kill-on-bad-exit): rank 0's receive from
    # it and the other ranks' all_reduce fail with an error naming it, long before the
    # process group's 600 s timeout
    dist.all_reduce(ptcore.ones(4))
    if rank == 1:
        os._exit(int(sys.argv[2]))
    try:
        if rank == 0:
            dist.recv(ptcore.zeros(2), 1)
        else:
            dist.all_reduce(ptcore.ones(4))
    except dist.DistBackendError as e:
        caught(e)
    try:
        dist.barrier()
    except RuntimeError as e:
        caught(e)
    # the first survivor to exit aborts the job: wait (bounded) until every survivor has
    # printed, signalling through files since the group can no longer be used
    sync = os.environ["SYNC_DIR"]
    open(os.path.join(sync, f"done{rank}"), "w").close()
    deadline = time.monotonic() + 60
    while _done(sync) < dist.get_world_size() - 1 and time.monotonic() < deadline:
        time.sleep(0.05)
elif case == "p2p_after_exit":
    # rank 2 leaves; a receive between ranks 0 and 1 that waits past the liveness checks
    # still completes (it does not depend on rank 2), a collective then names rank 2
    dist.all_reduce(ptcore.ones(4))
    if rank == 2:
        os._exit(0)
    if rank == 1:
        time.sleep(2)                     # rank 0 waits through several liveness checks
        dist.send(ptcore.full((3,), 7.0), 0)
    else:
        t = ptcore.zeros(3)
        dist.recv(t, 1)
        sys.stdout.write(f"RECV rank=0 {t.tolist()}\n")
    try:
        dist.all_reduce(ptcore.ones(4))
    except dist.DistBackendError as e:
        caught(e)
    sync = os.environ["SYNC_DIR"]
    open(os.path.join(sync, f"done{rank}"), "w").close()
    deadline = time.monotonic() + 60
    while _done(sync) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
elif case == "crash":
    # rank 1 dies with an error; the MPI launcher must end the whole job
    if rank == 1:
        os._exit(3)
    dist.all_reduce(ptcore.ones(4))
    dist.barrier()
    time.sleep(600)
    print("STILL ALIVE", flush=True)
elif case == "raise":
    # rank 1 leaves with an uncaught exception while the others wait in a collective: the
    # launcher's bootstrap aborts the job (its MPI_Finalize would wait on them forever)
    if rank == 1:
        raise RuntimeError("rank 1 fails")
    dist.barrier()
    print("STILL ALIVE", flush=True)
sys.stdout.flush()
if case in ("shape", "dtype", "recv_size"):
    # both ranks have printed before either aborts the (broken) job at exit
    from mpi4py import MPI
    MPI.COMM_WORLD.Barrier()
