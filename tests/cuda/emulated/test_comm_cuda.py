"""torch.nn.parallel.comm / torch.cuda.comm on two emulated devices: values
against the CPU, devices of the results, torch's argument errors."""
import numpy as np
import pytest

import ptcore
from ptcore.nn.parallel import comm


def _two_devices():
    # (checked in the test: the module's emulated devices exist only once its
    # fixture runs; a real one-GPU machine skips)
    if ptcore.cuda.device_count() < 2:
        pytest.skip("needs two CUDA devices")


def _x(shape=(4, 6), seed=0):
    return ptcore.from_numpy(np.random.default_rng(seed).standard_normal(shape))


def test_broadcast_and_coalesced():
    _two_devices()
    x = _x().cuda(0)
    a, b = comm.broadcast(x, [0, "cuda:1"])
    assert a is x and b.device == ptcore.device("cuda", 1) and ptcore.equal(b.cpu(), x.cpu())
    outs = [ptcore.empty(4, 6, dtype=ptcore.float64, device="cuda:0"),
            ptcore.empty(4, 6, dtype=ptcore.float64, device="cuda:1")]
    assert comm.broadcast(x, out=outs) == tuple(outs) and ptcore.equal(outs[1].cpu(), x.cpu())
    with pytest.raises(RuntimeError, match="Exactly one"):
        comm.broadcast(x, [0], out=outs)
    with pytest.raises(RuntimeError, match="Exactly one"):
        comm.broadcast(x)
    y = _x((3,), 1).cuda(0)
    per_dev = comm.broadcast_coalesced([x, y], [0, 1])
    assert len(per_dev) == 2 and [t.device.index for t in per_dev[1]] == [1, 1]
    assert ptcore.equal(per_dev[1][1].cpu(), y.cpu())
    import ptcore.cuda.comm as cuda_comm
    assert cuda_comm.broadcast is comm.broadcast


def test_reduce_add_and_coalesced():
    _two_devices()
    xs = [_x(seed=s) for s in range(3)]
    ins = [xs[0].cuda(0), xs[1].cuda(1), xs[2].cuda(1)]
    r = comm.reduce_add(ins, destination=1)
    assert r.device.index == 1
    np.testing.assert_allclose(r.cpu().numpy(), (xs[0] + xs[1] + xs[2]).numpy(), rtol=1e-12)
    assert comm.reduce_add([ins[0]]) is ins[0]
    with pytest.raises(ValueError, match="input 1 has invalid size: got 3x6, but expected 4x6"):
        comm.reduce_add([ins[0], _x((3, 6)).cuda(1)], 0)
    with pytest.raises(AssertionError, match="input 1 is on CPU"):
        comm.reduce_add([ins[0], xs[1]], 0)
    with pytest.raises(RuntimeError, match="same GPU"):
        comm.reduce_add([ins[1]], destination=0)
    ys = [_x((2,), 5), _x((2,), 6)]
    out = comm.reduce_add_coalesced([[ins[0], ys[0].cuda(0)], [ins[1], ys[1].cuda(1)]], destination=0)
    assert [t.device.index for t in out] == [0, 0]
    np.testing.assert_allclose(out[1].cpu().numpy(), (ys[0] + ys[1]).numpy(), rtol=1e-12)


def test_scatter_and_gather():
    _two_devices()
    x = _x((5, 3))
    parts = comm.scatter(x.cuda(0), [0, 1])
    assert [p.device.index for p in parts] == [0, 1] and [p.shape[0] for p in parts] == [3, 2]
    parts = comm.scatter(x.cuda(0), [0, 1], chunk_sizes=[1, 4])
    assert [p.shape[0] for p in parts] == [1, 4]
    np.testing.assert_array_equal(parts[1].cpu().numpy(), x[1:].numpy())
    outs = [ptcore.empty(2, 3, dtype=ptcore.float64, device="cuda:0"),
            ptcore.empty(3, 3, dtype=ptcore.float64, device="cuda:1")]
    assert comm.scatter(x, out=outs) == tuple(outs)
    np.testing.assert_array_equal(outs[1].cpu().numpy(), x[2:].numpy())
    with pytest.raises(RuntimeError, match="'devices' must not be specified"):
        comm.scatter(x, [0], out=outs)
    g = comm.gather([p for p in comm.scatter(x.cuda(1), [1, 0], dim=1)], dim=1, destination=0)
    assert g.device.index == 0 and ptcore.equal(g.cpu(), x)
    with pytest.warns(FutureWarning):
        gc = comm.gather(list(parts), destination=-1)
    assert gc.device.type == "cpu" and ptcore.equal(gc, x)
    assert comm.gather(list(parts), destination="cpu").device.type == "cpu"
    out = ptcore.empty(5, 3, dtype=ptcore.float64, device="cuda:1")
    assert comm.gather(list(parts), out=out) is out and ptcore.equal(out.cpu(), x)
    with pytest.raises(RuntimeError, match="'destination' must not be specified"):
        comm.gather(list(parts), destination=0, out=out)
