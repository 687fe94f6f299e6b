"""CUDA tensors saved by ptcore.save: the pickle names their device
(``cuda:0``, ``cuda:1``) as torch.save does, torch.load(map_location='cpu',
weights_only=True) reads them with equal values, and ptcore.load puts them
back on their devices (or where map_location says)."""
import io
import zipfile

import numpy as np
import pytest

import ptcore
from device_target import need_devices

torch = pytest.importorskip("torch")


def _ref(shape, dtype, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape) * 10
    return ptcore.tensor(a).to(dtype)


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float16, ptcore.bfloat16,
                                   ptcore.int64, ptcore.bool, ptcore.complex64])
def test_cuda_tensors_load_in_torch_on_the_cpu(dtype):
    x = _ref((4, 5), dtype)
    y = x.cuda()
    w = ptcore.nn.Parameter(_ref((3,), ptcore.float32, seed=1).cuda())
    obj = {"y": y, "row": y[2], "t": y.t(), "w": w}
    buf = io.BytesIO()
    ptcore.save(obj, buf)
    blob = buf.getvalue()
    pkl = zipfile.ZipFile(io.BytesIO(blob)).read("archive/data.pkl")
    assert b"cuda:0" in pkl and b"cpu" not in pkl
    if not torch.cuda.is_available():     # (a torch with CUDA puts them on the GPU)
        with pytest.raises(RuntimeError, match="CUDA"):
            torch.load(io.BytesIO(blob), weights_only=True)
    got = torch.load(io.BytesIO(blob), map_location="cpu", weights_only=True)
    for k, v in obj.items():
        tv = got[k]
        assert tv.device.type == "cpu" and tuple(tv.shape) == tuple(v.shape)
        assert tuple(tv.stride()) == tuple(v.stride()) and tv.storage_offset() == v.storage_offset()
        assert str(tv.dtype) == "torch." + v.dtype._name
        assert tv.tolist() == v.cpu().tolist()
    assert type(got["w"]) is torch.nn.Parameter and got["w"].requires_grad
    assert got["row"].untyped_storage().data_ptr() == got["y"].untyped_storage().data_ptr()
    back = ptcore.load(io.BytesIO(blob))
    assert back["y"].is_cuda and back["row"].untyped_storage() is back["y"].untyped_storage()
    assert back["t"].cpu().tolist() == y.t().cpu().tolist()
    cpu = ptcore.load(io.BytesIO(blob), map_location="cpu")
    assert not cpu["w"].is_cuda and cpu["w"].tolist() == w.cpu().tolist()


def test_second_device_keeps_its_index():
    need_devices(2)
    y = ptcore.arange(6.0, device="cuda:1")
    buf = io.BytesIO()
    ptcore.save({"y": y}, buf)
    assert b"cuda:1" in zipfile.ZipFile(io.BytesIO(buf.getvalue())).read("archive/data.pkl")
    got = torch.load(io.BytesIO(buf.getvalue()), map_location={"cuda:1": "cpu"},
                     weights_only=True)
    assert got["y"].tolist() == list(range(6))
    assert ptcore.load(io.BytesIO(buf.getvalue()))["y"].device == ptcore.device("cuda", 1)


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.bfloat16, ptcore.int64])
def test_legacy_format_cuda_tensors(dtype):
    # torch.save(..., _use_new_zipfile_serialization=False): the storages' bytes follow
    # the pickle, so a storage restored on the GPU is filled after the tensors are built
    y = _ref((4, 5), dtype).cuda()
    obj = {"y": y, "row": y[2], "t": y.t()}
    buf = io.BytesIO()
    ptcore.save(obj, buf, _use_new_zipfile_serialization=False)
    blob = buf.getvalue()
    got = torch.load(io.BytesIO(blob), map_location="cpu", weights_only=True)
    for k, v in obj.items():
        assert got[k].tolist() == v.cpu().tolist() and str(got[k].dtype) == "torch." + v.dtype._name
    back = ptcore.load(io.BytesIO(blob))
    assert back["y"].is_cuda and back["t"].is_cuda
    assert back["row"].untyped_storage().data_ptr() == back["y"].untyped_storage().data_ptr()
    for k, v in obj.items():
        assert back[k].cpu().tolist() == v.cpu().tolist()
    cpu = ptcore.load(io.BytesIO(blob), map_location="cpu")
    assert not cpu["y"].is_cuda and cpu["y"].tolist() == y.cpu().tolist()
    # a CPU file moved to the GPU by map_location
    tb = io.BytesIO()
    torch.save({"a": torch.arange(6.0).view(2, 3)}, tb, _use_new_zipfile_serialization=False)
    moved = ptcore.load(io.BytesIO(tb.getvalue()), map_location="cuda")
    assert moved["a"].is_cuda and moved["a"].cpu().tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
