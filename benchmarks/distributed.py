"""ptcore.distributed benchmark: all-reduce bandwidth and DDP training steps, 2 MPI ranks.

    python benchmarks/distributed.py [--ranks 2] [--quick]

Starts itself under ``mpiexec -n RANKS`` (one thread per rank) and prints three tables:

1. all-reduce (SUM, float32, in place) of 1 KB - 64 MB: ptcore's ``all_reduce`` on a tensor
   against mpi4py's ``Allreduce`` on the NumPy array of the same memory (raw MPI, no wrapper)
   and torch.distributed's gloo backend; bus bandwidth = 2 (n-1)/n * bytes / time.
   Target: ptcore >= 0.95x raw mpi4py's bandwidth.
2. one training step (SGD, cross-entropy) of an MLP and a small CNN on a global batch:
   single process (1 thread, the whole batch; every rank runs one at the same time, so that
   it sees the same load as the DDP step) against DistributedDataParallel (RANKS ranks x
   1 thread, batch split), for ptcore (MPI) and torch (gloo, torch's DDP).
   Target: ptcore DDP step / torch DDP step <= 1.0.
3. small calls (64 bytes): the time per call of ptcore's all_reduce, broadcast,
   all_to_all_single (with split sizes), barrier and a send/recv round trip, with the
   agreement checks on (the default) and off (``PTCORE_DISTRIBUTED_CHECKS=0``), against the
   same calls of raw mpi4py: the checks' cost per call.  ``--small-only`` runs this table
   alone.

Ranks time the same iterations in lock-step (a barrier before each timed block); each figure is
the median over repetitions, and ptcore, mpi4py and torch alternate within a repetition so that
a drifting machine load biases none of them.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

for _v in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS", "PTCORE_NUM_THREADS"):
    os.environ[_v] = "1"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

import ptcore  # noqa: E402
from _harness import fmt_time, try_import_torch  # noqa: E402

SIZES = [1 << 10, 16 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]
BATCH = 64


def _args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--quick", action="store_true", help="fewer repetitions")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, default=29533, help="torch gloo rendezvous port")
    p.add_argument("--small-only", action="store_true", help="only the small-call table")
    return p.parse_args(argv)


# ------------------------------------------------------------------------------ models
def mlp(nn):
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10))


def cnn(nn):
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(32 * 7 * 7, 128), nn.ReLU(),
                         nn.Linear(128, 10))


MODELS = {"MLP 784-512-512-10": (mlp, (784,)), "CNN 2 conv + 2 linear, 28x28": (cnn, (1, 28, 28))}


def make_step(lib, build, shape, rows, wrap=None, seed=0):
    """A training step of ``build`` on ``rows`` samples (weights and data from ``seed``)."""
    rng = np.random.default_rng(seed)
    model = build(lib.nn)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.05))
    if wrap is not None:
        model = wrap(model)
    x = lib.from_numpy(rng.standard_normal((rows, *shape)).astype(np.float32))
    y = lib.from_numpy(rng.integers(0, 10, rows).astype(np.int64))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    F = lib.nn.functional

    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return step


# ------------------------------------------------------------------------------ worker
def worker(args):
    """Runs on every rank under mpiexec; rank 0 prints the results as one line each."""
    import ptcore.distributed as dist
    from ptcore.nn.parallel import DistributedDataParallel as DDP
    dist.init_process_group("mpi")
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    rank, n = dist.get_rank(), dist.get_world_size()
    ptcore.set_num_threads(1)
    torch = try_import_torch()
    tdist = None
    if torch is not None:
        torch.set_num_threads(1)
        import torch.distributed as tdist
        tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{args.port}", rank=rank,
                                 world_size=n)
    repeat = 3 if args.quick else 7

    def timed(fn, iters):
        comm.Barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        dt = (time.perf_counter() - t0) / iters
        return comm.allreduce(dt, op=MPI.MAX)      # the slowest rank's time per call

    if args.small_only:
        small_calls(dist, comm, MPI, rank, n, repeat, timed)
        dist.destroy_process_group()
        return

    for nbytes in SIZES:
        numel = nbytes // 4
        t = ptcore.ones(numel)
        a = np.from_dlpack(t)                      # the same memory, as NumPy
        tt = torch.ones(numel) if torch is not None else None
        iters = int(min(1000, max(4, (256 << 20) // nbytes // (4 if args.quick else 1))))
        fns = {"ptcore": lambda: dist.all_reduce(t),
               "mpi4py": lambda: comm.Allreduce(MPI.IN_PLACE, a, op=MPI.SUM)}
        if tdist is not None:
            fns["torch"] = lambda: tdist.all_reduce(tt)
        res = {k: [] for k in fns}
        for f in fns.values():
            f()
        for _ in range(repeat):
            for k, f in fns.items():
                res[k].append(timed(f, iters))
        if rank == 0:
            med = {k: statistics.median(v) for k, v in res.items()}
            print("ALLREDUCE", nbytes, " ".join(f"{k}={v!r}" for k, v in med.items()),
                  flush=True)

    for name, (build, shape) in MODELS.items():
        # DDP on BATCH/n samples per rank, and the single-process step on the whole batch,
        # which every rank runs at the same time on its own core (n independent
        # single-process runs), so that both see the same machine load
        local = BATCH // n
        steps = {"ptcore": make_step(ptcore, build, shape, local, DDP, seed=rank),
                 "ptcore1": make_step(ptcore, build, shape, BATCH, seed=rank)}
        if tdist is not None:
            from torch.nn.parallel import DistributedDataParallel as TDDP
            steps["torch"] = make_step(torch, build, shape, local, TDDP, seed=rank)
            steps["torch1"] = make_step(torch, build, shape, BATCH, seed=rank)
        res = {k: [] for k in steps}
        number = 5 if args.quick else 10
        for s in steps.values():
            s()
            s()
        for _ in range(repeat):
            for k, s in steps.items():
                res[k].append(timed(s, number))
        if rank == 0:
            med = {k: statistics.median(v) for k, v in res.items()}
            print("DDP", repr(name), " ".join(f"{k}={v!r}" for k, v in med.items()), flush=True)
    small_calls(dist, comm, MPI, rank, n, repeat, timed)
    if tdist is not None:
        tdist.destroy_process_group()
    dist.destroy_process_group()


def small_calls(dist, comm, MPI, rank, n, repeat, timed):
    """Table 3: per-call time of small collectives and messages, checks on/off, raw MPI."""
    from ptcore import _config
    iters = 300
    t = ptcore.ones(16)
    a = np.from_dlpack(t)
    x, y = ptcore.ones(4 * n), ptcore.zeros(4 * n)
    xa, ya = np.from_dlpack(x), np.from_dlpack(y)
    splits = [4] * n
    displs = [4 * i for i in range(n)]

    def pingpong(send, recv, buf):
        def run():                  # ranks 0 and 1 (the others idle)
            if rank < 2:
                for step in ((send, recv) if rank == 0 else (recv, send)):
                    step(buf, 1 - rank)
        return run
    calls = {
        "all_reduce": (lambda: dist.all_reduce(t), lambda: comm.Allreduce(MPI.IN_PLACE, a)),
        "broadcast": (lambda: dist.broadcast(t, 0), lambda: comm.Bcast(a, 0)),
        "all_to_all_single": (lambda: dist.all_to_all_single(y, x, splits, splits),
                              lambda: comm.Alltoallv([xa, (splits, displs)],
                                                     [ya, (splits, displs)])),
        "barrier": (lambda: dist.barrier(), comm.Barrier),
        "send/recv round trip": (pingpong(dist.send, dist.recv, t),
                                 pingpong(comm.Send, comm.Recv, a)),
    }
    for name, (pt, raw) in calls.items():
        res = {"on": [], "off": [], "mpi4py": []}
        for _ in range(repeat):
            for k in res:
                _config.DISTRIBUTED_CHECKS = int(k == "on")
                res[k].append(timed(raw if k == "mpi4py" else pt, iters))
        _config.DISTRIBUTED_CHECKS = 1
        if rank == 0:
            med = {k: statistics.median(v) for k, v in res.items()}
            print("SMALL", repr(name), " ".join(f"{k}={v!r}" for k, v in med.items()),
                  flush=True)


# ------------------------------------------------------------------------------ driver
def _fmt_bw(nbytes, s, n):
    if s is None:
        return "-"
    return f"{2 * (n - 1) / n * nbytes / s / 1e9:.2f} GB/s"


def _fmt_size(b):
    return f"{b >> 20} MB" if b >= 1 << 20 else f"{b >> 10} KB"


def main():
    args = _args()
    if args.worker:
        return worker(args)
    from ptcore.distributed import _mpi
    if not _mpi.available() or _mpi.find_mpiexec() is None:
        raise SystemExit("needs mpi4py and mpiexec: pip install '.[mpi]'")
    cmd = _mpi.mpiexec_command(_mpi.find_mpiexec(), args.ranks) + [
        sys.executable, "-u", os.path.abspath(__file__), "--worker", "--port", str(args.port)]
    if args.quick:
        cmd.append("--quick")
    if args.small_only:
        cmd.append("--small-only")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=1800)
    if p.returncode != 0:
        print(p.stdout)
        raise SystemExit(f"the MPI run failed ({p.returncode})")
    n = args.ranks
    if not args.small_only:
        _large_tables(p.stdout, n)
    _small_table(p.stdout, n)


def _large_tables(out, n):
    print(f"\n## all-reduce (SUM, float32, in place), {n} ranks x 1 thread: time per call and "
          "bus bandwidth\n")
    print("| size | ptcore | mpi4py (NumPy) | torch gloo | ptcore bw | mpi4py bw | torch bw "
          "| ptcore/mpi4py bw | ptcore/torch time |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    ddp = []
    for line in out.splitlines():
        if line.startswith("ALLREDUCE"):
            _, nbytes, *kv = line.split()
            nbytes = int(nbytes)
            d = {k: float(v) for k, v in (x.split("=") for x in kv)}
            pt, mp, to = d["ptcore"], d["mpi4py"], d.get("torch")
            print(f"| {_fmt_size(nbytes)} | {fmt_time(pt)} | {fmt_time(mp)} | {fmt_time(to)} | "
                  f"{_fmt_bw(nbytes, pt, n)} | {_fmt_bw(nbytes, mp, n)} | "
                  f"{_fmt_bw(nbytes, to, n)} | {mp / pt:.2f}x | "
                  f"{f'{pt / to:.2f}' if to else '-'} |")
        elif line.startswith("DDP"):
            name = line[line.index("'") + 1:line.rindex("'")]
            d = {k: float(v) for k, v in (x.split("=") for x in line[line.rindex("'") + 1:].split())}
            ddp.append((name, d))
    print(f"\n## training step, global batch {BATCH}, SGD: 1 process x 1 thread vs DDP "
          f"{n} ranks x 1 thread\n")
    print("| model | ptcore 1 proc | ptcore DDP | DDP/1 proc | torch 1 proc | torch DDP "
          "| DDP/1 proc | ptcore/torch DDP |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, d in ddp:
        pt1, pt, t1, tt = d["ptcore1"], d["ptcore"], d.get("torch1"), d.get("torch")
        print(f"| {name} | {fmt_time(pt1)} | {fmt_time(pt)} | {pt / pt1:.2f} | {fmt_time(t1)} | "
              f"{fmt_time(tt)} | {(tt / t1) if tt else float('nan'):.2f} | "
              f"{(pt / tt) if tt else float('nan'):.2f} |")


def _small_table(out, n):
    print(f"\n## small calls (64 bytes), {n} ranks x 1 thread: time per call, agreement checks "
          "on and off\n")
    print("| call | ptcore, checks on | ptcore, checks off | mpi4py | checks' cost | "
          "on/mpi4py |")
    print("|---|---:|---:|---:|---:|---:|")
    for line in out.splitlines():
        if line.startswith("SMALL"):
            name = line[line.index("'") + 1:line.rindex("'")]
            d = {k: float(v) for k, v in (x.split("=") for x in line[line.rindex("'") + 1:].split())}
            print(f"| {name} | {fmt_time(d['on'])} | {fmt_time(d['off'])} | "
                  f"{fmt_time(d['mpi4py'])} | {(d['on'] - d['off']) * 1e6:+.2f} us | "
                  f"{d['on'] / d['mpi4py']:.1f} |")


if __name__ == "__main__":
    main()
