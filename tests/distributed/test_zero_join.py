"""ptcore.distributed.optim.ZeroRedundancyOptimizer and ptcore.distributed.algorithms.join.

The multi-rank checks run ``dist_worker_zero.py`` under ``mpiexec`` (2 and 3 processes,
bounded by a timeout; skipped without mpi4py / mpiexec): training equals one optimizer over
all parameters, the partition equals torch's, state dicts equal a single optimizer's, Join
handles uneven inputs.  The rest runs in this process.
"""
import re
import types

import pytest

import ptcore
from dist_launch import run_mpi
from ptcore.distributed.algorithms.join import Join, Joinable, JoinHook
from ptcore.distributed.optim import ZeroRedundancyOptimizer

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.mark.parametrize("n", [2, 3])
def test_zero_and_join_multi_rank(n):
    p = run_mpi("dist_worker_zero.py", n, timeout=150)
    assert p.returncode == 0, p.stdout
    for stage in ("partition", "train", "lr", "ddp", "state_dict", "join", "ddp-join"):
        ranks = sorted(int(r) for r in re.findall(rf"OK-ZERO {stage} rank=(\d+)", p.stdout))
        assert ranks == list(range(n)), (stage, p.stdout)


def test_bad_params_raise_torch_types():
    with pytest.raises(ValueError):
        ZeroRedundancyOptimizer([], ptcore.optim.SGD, lr=0.1)
    with pytest.raises(TypeError):
        ZeroRedundancyOptimizer(ptcore.zeros(3, requires_grad=True), ptcore.optim.SGD, lr=0.1)
    with pytest.raises(TypeError):
        ZeroRedundancyOptimizer(5, ptcore.optim.SGD, lr=0.1)
    with pytest.raises(TypeError):
        ZeroRedundancyOptimizer([ptcore.zeros(2), {"params": []}], ptcore.optim.SGD, lr=0.1)
    with pytest.raises(ValueError):
        ZeroRedundancyOptimizer([{"lr": 0.1}], ptcore.optim.SGD, lr=0.1)
    with pytest.raises(ValueError):
        ZeroRedundancyOptimizer([ptcore.zeros(2), ptcore.zeros(2, dtype=ptcore.float64)],
                                ptcore.optim.SGD, lr=0.1)
    with pytest.raises(NotImplementedError, match="overlap_with_ddp"):
        ZeroRedundancyOptimizer([ptcore.zeros(2, requires_grad=True)], ptcore.optim.SGD,
                                overlap_with_ddp=True, lr=0.1)


@pytest.mark.parametrize("world", [2, 3, 4])
def test_partition_equals_torch(world):
    torch = pytest.importorskip("torch")
    from torch.distributed.optim import ZeroRedundancyOptimizer as TorchZeRO
    shapes = [[(3, 4), (5,), (12,), (2, 2), (4,)], [(7, 1), (1,), (6, 2), (4,), (9,), (2,)]]
    ours = [[ptcore.zeros(s) for s in g] for g in shapes]
    theirs = [[torch.zeros(s) for s in g] for g in shapes]

    mine = types.SimpleNamespace(
        world_size=world, _partition_cache=[],
        param_groups=[{"params": g, "lr": 0.1} for g in ours],
        _add_partitioned_group=ZeroRedundancyOptimizer._add_partitioned_group)
    got = ZeroRedundancyOptimizer._partition_parameters(mine)

    ref = types.SimpleNamespace(world_size=world, _partition_parameters_cache=[],
                                param_groups=[{"params": g, "lr": 0.1} for g in theirs])
    ref._get_min_index = lambda values, disallowed=None: TorchZeRO._get_min_index(ref, values,
                                                                                   disallowed)
    ref._partition_param_group = lambda g, per: TorchZeRO._partition_param_group(ref, g, per)
    want = TorchZeRO._partition_parameters(ref)

    def positions(partition, groups):
        index = {id(t): (gi, ti) for gi, g in enumerate(groups) for ti, t in enumerate(g)}
        return [[[index[id(p)] for p in g["params"]] for g in rank_groups]
                for rank_groups in partition]

    assert positions(got, ours) == positions(want, theirs)
    assert all(g["lr"] == 0.1 for rank_groups in got for g in rank_groups)


class _Probe(Joinable):
    def __init__(self):
        super().__init__()

    def join_hook(self, **kwargs):
        return JoinHook()

    @property
    def join_device(self):
        return ptcore.device("cpu")

    @property
    def join_process_group(self):
        return None


def test_join_api_without_processes():
    with pytest.raises(ValueError):
        Join([])
    with pytest.raises(TypeError):
        Joinable()                      # abstract

    class Partial(Joinable):
        def __init__(self):
            super().__init__()

        def join_hook(self, **kwargs):
            return JoinHook()
    with pytest.raises(TypeError):
        Partial()                       # join_device / join_process_group missing
    probe = _Probe()
    # outside a join context: no communication, nothing returned
    assert probe._join_config.enable is False
    assert Join.notify_join_context(probe) is None
    hook = JoinHook()
    assert hook.main_hook() is None and hook.post_hook(True) is None

    class NoInit(_Probe):
        def __init__(self):
            pass
    with pytest.raises(RuntimeError, match="Joinable.__init__"):
        Join.notify_join_context(NoInit())
