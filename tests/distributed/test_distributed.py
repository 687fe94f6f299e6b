"""ptcore.distributed, DistributedDataParallel and the launcher, run with 2 and 3 MPI processes.

Each test starts a worker script under ``mpiexec`` (bounded by a timeout) and checks what every
rank printed; the workers compare against NumPy and against single-process training.
Skipped when mpi4py or mpiexec is missing.
"""
import re
import subprocess
import sys

import pytest

import ptcore
from dist_launch import run_launcher, run_mpi, run_mpi_keep_going

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _ranks(out, pattern):
    return sorted(int(r) for r in re.findall(pattern, out))


@pytest.mark.parametrize("n", [2, 3])
def test_collectives_against_numpy(n):
    p = run_mpi("dist_worker_collectives.py", n)
    assert p.returncode == 0, p.stdout
    found = re.findall(r"OK rank=(\d+) world=(\d+) checks=(\d+)", p.stdout)
    assert sorted(int(r) for r, _, _ in found) == list(range(n)), p.stdout
    assert all(int(w) == n and int(c) > 60 for _, w, c in found)


@pytest.mark.parametrize("n", [2, 3])
def test_ddp_matches_single_process(n):
    p = run_mpi("dist_worker_ddp.py", n, timeout=240)
    assert p.returncode == 0, p.stdout
    for stage in ("mlp", "cnn", "buckets", "no_sync", "find_unused", "unused-error", "buffers"):
        assert _ranks(p.stdout, rf"OK-DDP {stage} rank=(\d+)") == list(range(n)), (stage, p.stdout)


def test_launcher_sets_torchrun_env():
    pytest.importorskip("mpi4py")
    from ptcore.distributed import _mpi
    if _mpi.find_mpiexec() is None:
        pytest.skip("no mpiexec")
    cmd = [sys.executable, "-m", "ptcore.distributed.run", "--nproc_per_node", "3", "--master-port", "29511"]
    from dist_launch import HERE, _env
    p = subprocess.run(cmd + [str(HERE / "dist_worker_env.py"), "a", "--b"], text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120, env=_env())
    assert p.returncode == 0, p.stdout
    lines = re.findall(r"ENV rank=(\d) local=(\d) world=3 local_world=3 "
                       r"master=127.0.0.1:29511 sum=3 argv=\['a', '--b'\]", p.stdout)
    assert sorted(lines) == [("0", "0"), ("1", "1"), ("2", "2")], p.stdout


def test_launcher_reports_failure():
    p = run_launcher("dist_worker_errors.py", 2, "crash", timeout=120)
    assert p.returncode != 0, p.stdout
    assert "STILL ALIVE" not in p.stdout


def test_launcher_ends_job_on_uncaught_exception():
    # 3 ranks: rank 1 raises, ranks 0 and 2 wait in a barrier that can never complete
    p = run_launcher("dist_worker_errors.py", 3, "raise", timeout=120)
    assert p.returncode != 0, p.stdout
    assert "RuntimeError: rank 1 fails" in p.stdout
    assert "STILL ALIVE" not in p.stdout


def _caught(out):
    return re.findall(r"CAUGHT rank=(\S+) (\w+): (.*)", out)


def _caught_all(p, caught_dir):
    """What the ranks caught, from their stdout and from the files they also write (the
    job's abort at exit can cut the launcher's forwarding of a rank's last stdout lines,
    seen under load): each (rank, exception, message) once."""
    files = "".join(f.read_text() for f in sorted(caught_dir.glob("caught.*")))
    return sorted(set(_caught(p.stdout + "\n" + files)))


@pytest.mark.parametrize("case,exc,words", [
    ("shape", "ValueError", ["all_reduce", "shape (2, 3)", "shape (2, 4)"]),
    ("dtype", "ValueError", ["broadcast", "dtype"]),
])
def test_mismatched_collectives_raise(case, exc, words, tmp_path):
    # the ranks also write what they caught to files: the job's abort at exit (the group is
    # broken) can cut the launcher's forwarding of a rank's last stdout line under load
    p = run_mpi("dist_worker_errors.py", 2, case, env={"CAUGHT_DIR": str(tmp_path)})
    caught = _caught_all(p, tmp_path)
    got = [(r, e, m) for r, e, m in caught if e == exc and "twice" not in m]
    assert sorted(r for r, _, _ in got) == ["0", "1"], p.stdout
    text = " ".join(m for _, _, m in got)
    for w in words:
        assert w in text, (w, p.stdout)
    # the group is broken after a failed collective: the job is aborted at exit, not hung
    assert p.returncode != 0
    if case == "shape":
        assert any("twice" in m for _, e, m in caught if e == "ValueError")


def test_recv_of_the_wrong_size_raises(tmp_path):
    p = run_mpi("dist_worker_errors.py", 2, "recv_size", env={"CAUGHT_DIR": str(tmp_path)})
    got = [m for r, e, m in _caught_all(p, tmp_path) if e == "ValueError" and "twice" not in m]
    assert got and "received 3 elements" in got[0] and "(5,)" in got[0], p.stdout


def test_world_size_mismatch():
    p = run_mpi("dist_worker_errors.py", 2, "world_size")
    msgs = [m for _, e, m in _caught(p.stdout) if e == "RuntimeError"]
    assert len(msgs) == 2 and all("world_size is 5" in m for m in msgs), p.stdout


def test_hung_rank_gives_timeout_error(tmp_path):
    # rank 1 never joins: rank 0 raises DistBackendError after its 3 s timeout, later calls
    # say the group is unusable, and the job ends (aborted) instead of hanging.  The workers
    # also write what they caught to files: the abort at exit can cut the launcher's
    # forwarding of their last stdout lines (seen under load)
    p = run_mpi("dist_worker_errors.py", 2, "hang", env={"TMO": "3", "CAUGHT_DIR": str(tmp_path)},
                timeout=120)
    caught = _caught_all(p, tmp_path)
    assert any(r == "0" and e == "DistBackendError" and "timed out after 3 s" in m
               for r, e, m in caught), p.stdout
    assert any(e == "RuntimeError" and "unusable" in m for _, e, m in caught), p.stdout
    assert "STILL ALIVE" not in p.stdout
    assert p.returncode != 0


@pytest.mark.parametrize("n,code", [(2, 3), (3, 0)])
def test_dead_rank_gives_error_before_the_timeout(n, code, tmp_path):
    # rank 1 exits (with an error, or cleanly without finishing) while the launcher keeps the
    # others running; they must raise DistBackendError naming rank 1 although the group's
    # timeout is 600 s (the 120 s bound on the job is far shorter), then end the job
    cdir = tmp_path / "caught"
    cdir.mkdir()
    p = run_mpi_keep_going("dist_worker_errors.py", n, "dead", code, timeout=120,
                           env={"SYNC_DIR": str(tmp_path), "CAUGHT_DIR": str(cdir)})
    caught = _caught_all(p, cdir)
    died = [r for r, e, m in caught if e == "DistBackendError" and "rank 1" in m
            and "has ended" in m]
    assert sorted(died) == [str(r) for r in range(n) if r != 1], p.stdout
    assert any("recv" in m for r, _, m in caught if r == "0"), p.stdout
    unusable = [r for r, e, m in caught if e == "RuntimeError" and "unusable" in m]
    assert sorted(unusable) == sorted(died), p.stdout
    assert p.returncode != 0


def test_point_to_point_ignores_other_ranks_exit(tmp_path):
    cdir = tmp_path / "caught"
    cdir.mkdir()
    p = run_mpi_keep_going("dist_worker_errors.py", 3, "p2p_after_exit", timeout=120,
                           env={"SYNC_DIR": str(tmp_path), "CAUGHT_DIR": str(cdir)})
    assert "RECV rank=0 [7.0, 7.0, 7.0]" in p.stdout, p.stdout
    died = [r for r, e, m in _caught_all(p, cdir) if e == "DistBackendError" and "rank 2" in m]
    assert sorted(died) == ["0", "1"], p.stdout


def test_crashed_rank_ends_the_job():
    p = run_mpi("dist_worker_errors.py", 2, "crash", timeout=120)
    assert p.returncode != 0 and "STILL ALIVE" not in p.stdout, p.stdout


# ------------------------------------------------------------------ in-process (no MPI needed)
def test_import_does_not_import_mpi4py():
    code = ("import sys, ptcore, ptcore.distributed, ptcore.nn.parallel; "
            "import ptcore.utils.data.distributed; print('mpi4py' in sys.modules)")
    from dist_launch import _env
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=_env()).stdout.strip()
    assert out == "False"


def test_calls_before_init_raise():
    import ptcore.distributed as dist
    assert not dist.is_initialized()
    with pytest.raises(AssertionError, match="Process group cannot be None"):     # as torch
        dist.destroy_process_group()
    for fn in (lambda: dist.all_reduce(ptcore.ones(2)), dist.get_rank, dist.get_world_size,
               dist.barrier, lambda: dist.new_group([0])):
        with pytest.raises(ValueError, match="not been initialized"):     # as torch
            fn()
    from ptcore.nn.parallel import DistributedDataParallel
    with pytest.raises(ValueError, match="not been initialized"):
        DistributedDataParallel(ptcore.nn.Linear(2, 2))


def test_reduce_op_and_availability():
    import ptcore.distributed as dist
    assert [op.name for op in dist.ReduceOp] == ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND",
                                                  "BOR", "BXOR", "PREMUL_SUM"]
    # torch's values, comparable with ints, printed as torch prints them
    assert [int(op) for op in dist.ReduceOp] == list(range(9))
    assert dist.ReduceOp.AVG == 1 and dist.ReduceOp.RedOpType.MAX is dist.ReduceOp.MAX
    assert str(dist.ReduceOp.SUM) == "RedOpType.SUM"
    assert repr(dist.ReduceOp.BXOR) == "<RedOpType.BXOR: 7>"
    try:
        import mpi4py  # noqa: F401
        assert dist.is_available()
    except ImportError:
        assert not dist.is_available()


def test_ddp_digits_example_runs():
    pytest.importorskip("sklearn")
    from dist_launch import HERE
    # every rank runs with UserWarnings as errors: ptcore's own example warns about nothing
    p = run_mpi(str(HERE.parents[1] / "examples" / "ddp_digits.py"), 2, "--epochs", "2",
                timeout=300, env={"PYTHONWARNINGS": "error::UserWarning"})
    assert p.returncode == 0, p.stdout
    for r in (0, 1):
        assert re.search(rf"\[rank {r}/2\] epoch  2/2 .* test acc", p.stdout), p.stdout
        assert f"[rank {r}/2] final test accuracy" in p.stdout, p.stdout
    assert p.stdout.count("weights identical on all ranks: True") == 2, p.stdout


# dist_worker_extras.py: new_subgroups(_by_enumeration), all_gather_single and
# send/recv_object_list; dist_worker_mesh.py: init_device_mesh / DeviceMesh
@pytest.mark.parametrize("worker, tag, checks", [("dist_worker_extras.py", "OK-EXTRAS", "[45]"),
                                                 ("dist_worker_mesh.py", "OK-MESH", "5")])
@pytest.mark.parametrize("n", [2, 4])
def test_workers_of_the_everyday_surface(worker, tag, checks, n):
    p = run_mpi(worker, n)
    assert p.returncode == 0, p.stdout
    assert _ranks(p.stdout, rf"{tag} rank=(\d+) world={n} checks={checks}") == list(range(n)), \
        p.stdout


def test_single_process_queries():
    import os
    import ptcore.distributed as dist
    torch = pytest.importorskip("torch")
    tdist = torch.distributed
    assert dist.is_backend_available("foo") is tdist.is_backend_available("foo") is False
    assert dist.get_default_backend_for_device("cuda") == "mpi"
    for bad in ("meta", ptcore.device("meta")):
        with pytest.raises(ValueError):
            dist.get_default_backend_for_device(bad)
    with pytest.raises(ValueError):
        tdist.get_default_backend_for_device("meta")
    saved = os.environ.pop("LOCAL_RANK", None)
    try:
        with pytest.raises(RuntimeError):
            tdist.get_node_local_rank()
        with pytest.raises(RuntimeError):
            dist.get_node_local_rank()
        assert dist.get_node_local_rank(fallback_rank=3) == tdist.get_node_local_rank(3) == 3
        os.environ["LOCAL_RANK"] = "2"
        assert dist.get_node_local_rank(fallback_rank=3) == tdist.get_node_local_rank(3) == 2
    finally:
        os.environ.pop("LOCAL_RANK", None)
        if saved is not None:
            os.environ["LOCAL_RANK"] = saved


def test_init_method_urls_rendezvous_through_mpi():
    # tcp:// and file:// (the examples' --dist-url) are accepted: MPI connects the ranks
    pytest.importorskip("mpi4py")
    from dist_launch import _env
    code = ("import ptcore.distributed as d, sys\n"
            "d.init_process_group('gloo', init_method=sys.argv[1], rank=0, world_size=1)\n"
            "print(d.get_rank(), d.get_world_size()); d.destroy_process_group()\n")
    for url in ("tcp://127.0.0.1:23456", "file:///tmp/ptcore_rdv", "env://"):
        out = subprocess.run([sys.executable, "-c", code, url], capture_output=True, text=True,
                             timeout=120, env=_env())
        assert out.stdout.strip() == "0 1", out.stderr
    import ptcore.distributed as dist
    with pytest.raises(ValueError, match="not supported"):
        dist.init_process_group(init_method="udp://x:1")


def test_ddp_comm_hooks():
    p = run_mpi("dist_worker_comm_hooks.py", 2, timeout=240)
    assert p.returncode == 0 and p.stdout.count("OK") == 2, p.stdout
