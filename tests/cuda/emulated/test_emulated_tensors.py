"""Tensors on the (emulated) CUDA device: creation, transfers, views,
pinned memory, serialization, nn.Module.to, DLPack and the CUDA array
interface.  Every value is compared with the CPU result."""
import copy
import io

import numpy as np
import pytest

import ptcore
from ptcore import cuda

DTYPES = [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16, ptcore.int64,
          ptcore.int32, ptcore.uint8, ptcore.bool, ptcore.complex64]


def _ref(shape=(3, 4), dtype=ptcore.float32, seed=0):
    g = np.random.default_rng(seed)
    a = g.standard_normal(shape) * 10
    return ptcore.tensor(a).to(dtype)


def _same(a, b):
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
    assert a.cpu().tolist() == b.cpu().tolist()


@pytest.mark.parametrize("dtype", DTYPES)
def test_roundtrip_dtypes(dtype):
    x = _ref((5, 7), dtype)
    y = x.cuda()
    assert y.is_cuda and not y.is_cpu and y.device == ptcore.device("cuda", 0)
    assert y.get_device() == 0 and x.get_device() == -1
    _same(y.cpu(), x)
    assert y.cpu().data_ptr() != x.data_ptr()


def test_factories_on_device():
    for dev in ("cuda", "cuda:0", ptcore.device("cuda"), ptcore.device("cuda", 0)):
        z = ptcore.zeros(2, 3, device=dev)
        assert z.device == ptcore.device("cuda", 0)
        _same(z, ptcore.zeros(2, 3))
    _same(ptcore.ones(4, dtype=ptcore.int64, device="cuda"), ptcore.ones(4, dtype=ptcore.int64))
    _same(ptcore.full((2, 2), 3.5, device="cuda"), ptcore.full((2, 2), 3.5))
    _same(ptcore.full((3,), True, device="cuda"), ptcore.full((3,), True))
    _same(ptcore.tensor([[1, 2], [3, 4]], device="cuda"), ptcore.tensor([[1, 2], [3, 4]]))
    _same(ptcore.as_tensor(np.arange(6.0), device="cuda"), ptcore.as_tensor(np.arange(6.0)))
    _same(ptcore.arange(10, device="cuda"), ptcore.arange(10))
    _same(ptcore.linspace(0, 1, 5, device="cuda"), ptcore.linspace(0, 1, 5))
    _same(ptcore.eye(3, device="cuda"), ptcore.eye(3))
    e = ptcore.empty(2, 3, device="cuda")
    assert e.is_cuda and e.shape == (2, 3)
    s = ptcore.empty_strided((2, 3), (1, 2), device="cuda")
    assert s.is_cuda and s.stride() == (1, 2)
    x = _ref((2, 3)).cuda()
    for fn, ref in ((ptcore.zeros_like, ptcore.zeros(2, 3)), (ptcore.ones_like, ptcore.ones(2, 3))):
        r = fn(x)
        assert r.is_cuda
        _same(r, ref)
    _same(ptcore.full_like(x, 7), ptcore.full((2, 3), 7.0))
    assert ptcore.empty_like(x).is_cuda
    assert ptcore.zeros_like(ptcore.zeros(2), device="cuda").is_cuda
    assert x.new_zeros(4).is_cuda and x.new_ones(2).is_cuda and x.new_tensor([1.0]).is_cuda
    assert ptcore.zeros(0, device="cuda").cpu().tolist() == []
    r = ptcore.ones(3, device="cuda", requires_grad=True)
    assert r.requires_grad and r.is_leaf


@pytest.mark.skipif("ptcore.cuda.device_count() < 2")
def test_second_device_and_peer_copies():
    x = _ref((4, 5))
    a = x.to("cuda:0")
    b = a.to("cuda:1")
    assert b.device == ptcore.device("cuda", 1)
    _same(b.cpu(), x)
    c = ptcore.empty(4, 5, device="cuda:1")
    c.copy_(a)                                  # across devices
    _same(c.cpu(), x)
    d = ptcore.zeros(5, device="cuda:1")
    d.copy_(a[1])
    _same(d.cpu(), x[1])
    assert b.to(a).device == a.device
    assert a.to(b).device == b.device


def test_to_overloads_and_dtype_conversion_on_device():
    x = _ref((3, 4))
    y = x.to("cuda")
    _same(y.to(ptcore.float16).cpu(), x.to(ptcore.float16))
    _same(y.to(ptcore.int32).cpu(), x.to(ptcore.int32))
    _same(y.double().cpu(), x.double())
    _same(y.to("cpu", ptcore.bfloat16), x.to(ptcore.bfloat16))
    _same(x.to("cuda", ptcore.float64).cpu(), x.double())
    _same(x.to(y).cpu(), x)
    assert y.to("cuda") is y and y.cuda() is y and x.cpu() is x
    assert y.to("cuda", copy=True) is not y
    other = ptcore.zeros(1, dtype=ptcore.int64, device="cuda")
    _same(x.to(other).cpu(), x.to(ptcore.int64))
    _same(x.cuda(0).cpu(), x)
    with pytest.raises(RuntimeError, match="cuda device"):
        x.cuda("cpu")


def test_views_are_geometry_only():
    x = _ref((4, 6))
    y = x.cuda()
    base = y.untyped_storage().data_ptr()
    views = {
        "view": (y.view(6, 4), x.view(6, 4)),
        "reshape": (y.reshape(2, 12), x.reshape(2, 12)),
        "t": (y.t(), x.t()),
        "transpose": (y.transpose(0, 1), x.transpose(0, 1)),
        "slice": (y[1:3, ::2], x[1:3, ::2]),
        "select": (y[2], x[2]),
        "expand": (y[:, :1].expand(4, 5), x[:, :1].expand(4, 5)),
        "unsqueeze": (y.unsqueeze(1), x.unsqueeze(1)),
        "permute": (y.permute(1, 0), x.permute(1, 0)),
        "narrow": (y.narrow(1, 2, 3), x.narrow(1, 2, 3)),
        "diagonal": (y.diagonal(), x.diagonal()),
        "unfold": (y.unfold(1, 2, 2), x.unfold(1, 2, 2)),
        "chunk": (y.chunk(2)[1], x.chunk(2)[1]),
    }
    for name, (v, r) in views.items():
        assert v.is_cuda, name
        assert v.untyped_storage().data_ptr() == base, name
        assert v.stride() == r.stride() and v.storage_offset() == r.storage_offset(), name
        _same(v.cpu(), r)
        _same(v.contiguous().cpu(), r.contiguous())
        _same(v.clone().cpu(), r.clone())
    # a non-viewable reshape copies on the device
    _same(y.t().reshape(24).cpu(), x.t().reshape(24))


def test_strided_and_broadcast_copies():
    x = _ref((4, 6))
    y = x.cuda()
    z = ptcore.zeros(4, 6, device="cuda")
    z[1:3, ::2] = y[1:3, ::2]
    ref = ptcore.zeros(4, 6)
    ref[1:3, ::2] = x[1:3, ::2]
    _same(z.cpu(), ref)
    z.t()[0].copy_(ptcore.arange(4.0))           # host -> strided device view
    ref.t()[0].copy_(ptcore.arange(4.0))
    _same(z.cpu(), ref)
    z[2].fill_(-1.5)
    ref[2].fill_(-1.5)
    _same(z.cpu(), ref)
    z[:, 5] = 9
    ref[:, 5] = 9
    _same(z.cpu(), ref)
    w = ptcore.empty(3, 6, device="cuda")
    w.copy_(ptcore.arange(6.0))                   # broadcast from the host
    _same(w.cpu(), ptcore.arange(6.0).expand(3, 6).contiguous())
    w.copy_(y[0].to(ptcore.float16))              # dtype change + broadcast on the device
    _same(w.cpu(), x[0].to(ptcore.float16).float().expand(3, 6).contiguous())
    host = ptcore.zeros(6, 4)
    host.copy_(y.t())                             # strided device -> host
    _same(host, x.t().contiguous())
    z.zero_()
    _same(z.cpu(), ptcore.zeros(4, 6))


def test_scalars_repr_and_numpy():
    y = ptcore.tensor([[1.5, -2.0], [3.0, 4.25]], device="cuda")
    assert y[0, 0].item() == 1.5 and float(y[1, 1]) == 4.25 and int(y[1, 0]) == 3
    assert bool(y[0, 0]) is True
    assert y.tolist() == [[1.5, -2.0], [3.0, 4.25]]
    assert "device='cuda:0'" in repr(y)
    assert repr(y).replace(", device='cuda:0'", "") == repr(y.cpu())
    with pytest.raises(TypeError, match="cpu"):
        y.numpy()
    with pytest.raises(TypeError):
        np.asarray(y)
    assert y.numpy(force=True).tolist() == y.tolist()
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        y.item()


def test_deepcopy_and_pickle():
    y = _ref((3, 3)).cuda()
    d = copy.deepcopy(y)
    assert d.is_cuda and d.data_ptr() != y.data_ptr()
    _same(d.cpu(), y.cpu())
    import pickle
    p = pickle.loads(pickle.dumps(y))
    assert p.is_cuda
    _same(p.cpu(), y.cpu())


def test_pinned_memory_and_non_blocking():
    x = _ref((64, 32))
    assert not x.is_pinned()
    p = x.pin_memory()
    assert p.is_pinned() and p.pin_memory() is p
    _same(p, x)
    e = ptcore.empty(4, 4, pin_memory=True)
    assert e.is_pinned()
    assert ptcore.zeros(3, pin_memory=True).is_pinned()
    assert ptcore.ones(3, pin_memory=True).tolist() == [1.0, 1.0, 1.0]
    y = p.to("cuda", non_blocking=True)
    back = y.to("cpu", non_blocking=True)
    assert back.is_pinned()
    cuda.synchronize()
    _same(back, x)
    s = cuda.Stream()
    with cuda.stream(s):
        z = p.cuda(non_blocking=True)
    s.synchronize()
    _same(z.cpu(), x)
    with pytest.raises(RuntimeError, match="pin"):
        y.pin_memory()


def test_dataloader_pin_memory():
    from ptcore.utils.data import DataLoader, TensorDataset
    ds = TensorDataset(ptcore.arange(20.0).view(10, 2), ptcore.arange(10))
    batches = list(DataLoader(ds, batch_size=4, pin_memory=True))
    assert all(b[0].is_pinned() and b[1].is_pinned() for b in batches)
    assert batches[0][0].tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]


def test_save_and_load_map_location(tmp_path):
    y = _ref((3, 5)).cuda()
    obj = {"w": y, "v": y[1], "n": 3}
    path = tmp_path / "ckpt.pt"
    ptcore.save(obj, path)
    back = ptcore.load(path)
    assert back["w"].is_cuda and back["v"].is_cuda
    _same(back["w"].cpu(), y.cpu())
    _same(back["v"].cpu(), y[1].cpu())
    cpu = ptcore.load(path, map_location="cpu")
    assert not cpu["w"].is_cuda
    _same(cpu["w"], y.cpu())
    cpu2 = ptcore.load(path, map_location=lambda s, loc: s)
    assert not cpu2["w"].is_cuda
    buf = io.BytesIO()
    ptcore.save({"h": y.cpu()}, buf)
    buf.seek(0)
    moved = ptcore.load(buf, map_location="cuda:0")
    assert moved["h"].is_cuda
    _same(moved["h"].cpu(), y.cpu())
    buf.seek(0)
    moved = ptcore.load(buf, map_location={"cpu": "cuda:0"})
    assert moved["h"].is_cuda


def test_module_to_cuda():
    ptcore.manual_seed(0)
    m = ptcore.nn.Sequential(ptcore.nn.Linear(4, 3), ptcore.nn.ReLU(), ptcore.nn.Linear(3, 2))
    ref = {k: v.clone() for k, v in m.state_dict().items()}
    m.to("cuda")
    for k, v in m.state_dict().items():
        assert v.is_cuda, k
        _same(v.cpu(), ref[k])
    assert all(p.is_cuda and p.requires_grad and isinstance(p, ptcore.nn.Parameter)
               for p in m.parameters())
    m.cpu()
    assert not any(p.is_cuda for p in m.parameters())
    m.cuda()
    assert all(p.is_cuda for p in m.parameters())
    bn = ptcore.nn.BatchNorm1d(3).cuda()
    assert bn.running_mean.is_cuda and bn.num_batches_tracked.is_cuda


def test_autograd_through_transfers():
    x = ptcore.tensor([1.0, 2.0, 3.0], device="cuda", requires_grad=True)
    y = x.cpu()
    (y * 2).sum().backward()
    assert x.grad.is_cuda
    assert x.grad.cpu().tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match="leaf"):
        x.copy_(ptcore.zeros(3))


def test_dlpack_and_cuda_array_interface():
    y = _ref((3, 4)).cuda()
    assert y.__dlpack_device__() == (2, 0)
    z = ptcore.from_dlpack(y)
    assert z.is_cuda and z.data_ptr() == y.data_ptr()
    s = cuda.Stream()
    cap = y.__dlpack__(stream=s.cuda_stream)
    w = ptcore.from_dlpack(cap)
    assert w.data_ptr() == y.data_ptr()
    _same(w.cpu(), y.cpu())
    cai = y.__cuda_array_interface__
    assert cai["version"] == 3 and cai["shape"] == (3, 4) and cai["typestr"] == "<f4"
    assert cai["data"] == (y.data_ptr(), False) and cai["strides"] is None
    assert y.t().__cuda_array_interface__["strides"] == (4, 16)
    assert not hasattr(ptcore.zeros(2), "__cuda_array_interface__")


def test_ops_without_cuda_kernel_raise(monkeypatch):
    y = _ref((3, 4)).cuda()
    # (every op has a CUDA kernel now: one is taken away for the test)
    from ptcore._dispatch.table import lookup
    monkeypatch.delitem(lookup("ldl_factor", "linalg").kernels, "cuda")
    for fn, name in ((lambda: ptcore.linalg.ldl_factor(y[:3, :3]), "ldl_factor"),):
        with pytest.raises(NotImplementedError, match=name) as ei:
            fn()
        assert "cuda:0" in str(ei.value)
    # advanced indexing runs on the device, CPU index tensors included (as PyTorch)
    assert y[ptcore.tensor([0, 2])].cpu().tolist() == y.cpu()[ptcore.tensor([0, 2])].tolist()
    y[ptcore.tensor([0, 2])] = 1.0
    assert y.cpu()[0].tolist() == [1.0] * 4
    with pytest.raises(RuntimeError, match="same device"):
        ptcore.add(y, ptcore.ones(3, 4))
    # the CPU path is unchanged while the layer is on
    assert ptcore.add(ptcore.ones(2), ptcore.ones(2)).tolist() == [2.0, 2.0]


def test_dlpack_stream_argument_orders_the_consumer():
    s1, s2 = cuda.Stream(), cuda.Stream()
    cuda.synchronize()
    with cuda.stream(s1):
        y = ptcore.full((1000,), 3.0, device="cuda")        # queued on s1, not yet run
        cap = y.__dlpack__(stream=s2.cuda_stream)            # s2 waits for s1's work
    shared = ptcore.from_dlpack(cap)
    with cuda.stream(s2):
        z = shared.clone()
    s2.synchronize()
    assert z.cpu().tolist() == [3.0] * 1000
    with pytest.raises(ValueError):
        y.__dlpack__(stream=0)
    y.__dlpack__(stream=-1)


def test_random_factories_on_device():
    for fn in (lambda **k: ptcore.randn(6, **k), lambda **k: ptcore.rand(2, 3, **k),
               lambda **k: ptcore.randint(0, 10, (4,), **k)):
        ptcore.manual_seed(1)
        a = fn(device="cuda")
        ptcore.manual_seed(1)
        assert a.device.type == "cuda" and ptcore.equal(a.cpu(), fn())


def test_storage_on_device_is_refused_clearly():
    with pytest.raises(NotImplementedError, match="untyped_storage"):
        ptcore._tensor.Storage(8, device="cuda")
    st = ptcore.empty(8, dtype=ptcore.uint8, device="cuda").untyped_storage()
    assert st.device == ptcore.device("cuda", 0) and st.nbytes() == 8


def test_new_cuda_tensors_start_at_version_zero():
    """Factories and transfers give version-0 tensors, as torch's (the fill
    or copy into the new memory is not an in-place write of the result)."""
    x = ptcore.ones(3)
    made = [ptcore.ones(3, device="cuda"), ptcore.zeros(3, device="cuda"),
            ptcore.full((2,), 3.0, device="cuda"), ptcore.tensor([1.0], device="cuda"), x.cuda(),
            x.cuda().cpu(), ptcore.arange(3, device="cuda"), ptcore.eye(2, device="cuda")]
    assert [t._version for t in made] == [0] * len(made)
    y = x.cuda()
    y.add_(1)
    assert y._version == 1


def test_copy_into_an_expanded_tensor_is_refused_as_on_the_cpu():
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        torch.empty(1).expand(3).copy_(torch.ones(3))
    for src_dev in ("cuda", "cpu"):
        for dst_dev in ("cuda", "cpu"):
            if src_dev == dst_dev == "cpu":
                continue
            dst = ptcore.empty(1, device=dst_dev).expand(3)
            with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
                dst.copy_(ptcore.ones(3, device=src_dev))
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        ptcore.bernoulli(ptcore.full((3,), 0.5, device="cuda"),
                         out=ptcore.empty(1, device="cuda").expand(3))
