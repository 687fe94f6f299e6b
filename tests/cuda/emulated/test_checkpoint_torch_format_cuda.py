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
