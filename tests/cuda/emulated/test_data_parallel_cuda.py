"""nn.DataParallel over several CUDA devices (two emulated ones): the batch
is scattered, a replica per device runs its piece, the outputs are gathered
on the output device and the replicas' gradients add up in the module's own
parameters (it raised NotImplementedError); also torch.nn.parallel's
replicate/scatter/gather/parallel_apply/data_parallel functions."""
import collections
import warnings

import pytest

import ptcore
from ptcore import nn

def _rand(*shape, seed=0):
    g = ptcore.Generator().manual_seed(seed)
    return ptcore.randn(*shape, generator=g, dtype=ptcore.float64)


def _net(bn=False):
    ptcore.manual_seed(3)
    layers = [nn.Linear(5, 8)] + ([nn.BatchNorm1d(8)] if bn else []) + [nn.Tanh(), nn.Linear(8, 3)]
    return nn.Sequential(*layers).double()


def _twins(bn=False):
    net, ref = _net(bn), _net(bn)
    ref.load_state_dict(net.state_dict())
    return net, ref


def _need_two():
    if ptcore.cuda.device_count() < 2:
        pytest.skip("needs two CUDA devices")


def test_forward_backward_equal_the_pieces_on_the_cpu():
    _need_two()
    net, ref = _twins(bn=True)
    dp = nn.DataParallel(net).cuda()
    assert dp.device_ids == [0, 1] and dp.output_device == 0
    x, y = _rand(10, 5), _rand(10, 3, seed=1)
    out = dp(x.cuda())
    assert out.device == ptcore.device("cuda", 0) and out.shape == (10, 3)
    ((out - y.cuda()) ** 2).mean().backward()
    # the reference: each half through the module on its own (BatchNorm's
    # batch statistics are per replica, as torch's DataParallel computes them)
    halves = [ref(piece) for piece in x.chunk(2)]
    ((ptcore.cat(halves) - y) ** 2).mean().backward()
    assert ptcore.allclose(out.detach().cpu(), ptcore.cat(halves).detach(), atol=1e-12)
    for p, q in zip(net.parameters(), ref.parameters()):
        assert p.device.type == "cuda" and p.grad.device == p.device
        assert ptcore.allclose(p.grad.cpu(), q.grad, atol=1e-12)
    # the replica on device 0 shares the module's buffers: its running stats are
    # those of the first half's update alone
    ref2 = _net(bn=True)
    ref2(x.chunk(2)[0])
    assert ptcore.allclose(net[1].running_mean.cpu(), ref2[1].running_mean, atol=1e-12)
    assert int(net[1].num_batches_tracked) == 1


def test_training_matches_one_device():
    _need_two()
    net, ref = _twins()
    dp = nn.DataParallel(net.cuda())
    ref = ref.cuda()
    opts = [ptcore.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for m in (net, ref)]
    for step in range(3):
        x, y = _rand(12, 5, seed=10 + step).cuda(), _rand(12, 3, seed=20 + step).cuda()
        for m, o in ((dp, opts[0]), (ref, opts[1])):
            o.zero_grad()
            nn.functional.mse_loss(m(x), y).backward()
            o.step()
    for p, q in zip(net.parameters(), ref.parameters()):
        assert ptcore.allclose(p.detach().cpu(), q.detach().cpu(), atol=1e-12)


Out = collections.namedtuple("Out", "a b")


class _Multi(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 2).double()

    def forward(self, x, scale=1.0, extra=None, tag="t"):
        assert isinstance(tag, str)
        y = self.lin(x) * scale
        if extra is not None:
            y = y + extra
        return {"y": y, "pair": (y.sum(1), Out(y[:, 0], None))}


def test_structures_kwargs_and_output_device():
    _need_two()
    m = _Multi().cuda()
    dp = nn.DataParallel(m, device_ids=[0, 1], output_device=1)
    x, e = _rand(6, 4), _rand(6, 2, seed=2)
    r = dp(x.cuda(), scale=2.0, extra=e.cuda(), tag="s")
    want = m.lin(x.cuda()) * 2.0 + e.cuda()
    assert r["y"].device == ptcore.device("cuda", 1)
    assert ptcore.allclose(r["y"].cpu(), want.detach().cpu(), atol=1e-12)
    assert isinstance(r["pair"][1], Out) and r["pair"][1].b is None
    assert ptcore.allclose(r["pair"][0].cpu(), want.sum(1).detach().cpu(), atol=1e-12)


def test_fewer_samples_than_devices_and_scalar_outputs():
    _need_two()
    m = nn.Linear(4, 1).double().cuda()
    dp = nn.DataParallel(m)
    one = dp(_rand(1, 4).cuda())                        # one piece: one replica
    assert one.shape == (1, 1)

    class Loss(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 1).double()

        def forward(self, x):
            return self.lin(x).pow(2).mean()
    with pytest.warns(UserWarning, match="scalars; will instead unsqueeze"):
        v = nn.DataParallel(Loss().cuda())(_rand(8, 4).cuda())
    assert v.shape == (2,)


def test_single_device_moves_inputs_and_no_grad():
    m = nn.Linear(3, 2).double()
    dp = nn.DataParallel(m, device_ids=[0])
    assert next(m.parameters()).device == ptcore.device("cuda", 0)
    out = dp(_rand(4, 3))                               # a CPU batch is moved to device 0
    assert out.device == ptcore.device("cuda", 0)
    if ptcore.cuda.device_count() >= 2:
        with ptcore.no_grad():
            r = nn.DataParallel(m)(_rand(4, 3).cuda())
        assert r.grad_fn is None and not r.requires_grad


def test_module_off_the_first_device_raises():
    _need_two()
    m = nn.Linear(3, 2).double().to("cuda:1")
    with pytest.raises(RuntimeError, match="device_ids\\[0\\]"):
        nn.DataParallel(m)(_rand(4, 3).cuda())


def test_parallel_functions():
    _need_two()
    P = nn.parallel
    x = _rand(7, 3).cuda().requires_grad_()
    pieces = P.scatter(x, [0, 1])
    assert [p.device.index for p in pieces] == [0, 1] and [p.shape[0] for p in pieces] == [4, 3]
    g = P.gather([p * 2 for p in pieces], 0)
    g.sum().backward()
    assert ptcore.equal(x.grad.cpu(), ptcore.full((7, 3), 2.0, dtype=ptcore.float64))
    m = nn.Linear(3, 2).double().cuda()
    reps = P.replicate(m, [0, 1])
    assert [r.weight.device.index for r in reps] == [0, 1]
    assert len(list(reps[1].parameters())) == 0          # replicas hold no Parameters
    outs = P.parallel_apply(reps, [(p.detach(),) for p in pieces])
    assert [o.device.index for o in outs] == [0, 1]
    r = P.data_parallel(m, x.detach(), device_ids=[0, 1])
    assert ptcore.allclose(r.cpu(), m(x.detach()).detach().cpu(), atol=1e-12)

    class Bad(nn.Module):
        def forward(self, x):
            raise ValueError("boom")
    with pytest.raises(ValueError, match="in replica 0 on device 0"):
        P.parallel_apply([Bad(), Bad()], [(pieces[0],), (pieces[1],)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert P.gather([{"k": None}, {"k": None}], 0) == {"k": None}
