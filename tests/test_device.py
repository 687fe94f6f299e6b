"""ptcore.device, Tensor.device, .to(...) and the dtype-conversion shortcuts,
.type(), and CUDA availability reporting (checked against PyTorch where it
has an equivalent)."""
import pickle

import numpy as np
import pytest

import ptcore

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
no_cuda = pytest.mark.skipif(ptcore.cuda.is_available(), reason="a CUDA device is usable")


def name_of(dt):
    return str(dt).split(".", 1)[1]


# ---------------------------------------------------------------------------
# device objects
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("spec,args,type_,index,text", [
    ("cpu", (), "cpu", None, "cpu"),
    ("cuda", (), "cuda", None, "cuda"),
    ("cuda:1", (), "cuda", 1, "cuda:1"),
    ("cuda", (3,), "cuda", 3, "cuda:3"),
    ("cpu:0", (), "cpu", 0, "cpu:0"),
    ("cpu", (0,), "cpu", 0, "cpu:0"),
    ("meta", (), "meta", None, "meta"),
])
def test_device_parsing(spec, args, type_, index, text):
    d = ptcore.device(spec, *args)
    assert d.type == type_
    assert d.index == index
    assert str(d) == text
    if index is None:
        assert repr(d) == f"device(type='{type_}')"
    else:
        assert repr(d) == f"device(type='{type_}', index={index})"


@needs_torch
@pytest.mark.parametrize("spec", ["cpu", "cuda", "cuda:1", "cuda:12", "cpu:0", "meta"])
def test_device_str_repr_match_torch(spec):
    assert str(ptcore.device(spec)) == str(torch.device(spec))
    assert repr(ptcore.device(spec)) == repr(torch.device(spec))


def test_device_from_int_is_cuda():
    assert ptcore.device(0) == ptcore.device("cuda:0")
    assert ptcore.device(2) == ptcore.device("cuda", 2)
    assert ptcore.device(2).type == "cuda" and ptcore.device(2).index == 2


def test_device_keywords_and_copy_construction():
    d = ptcore.device(type="cuda", index=3)
    assert (d.type, d.index) == ("cuda", 3)
    assert ptcore.device(ptcore.device("cuda:2")) == ptcore.device("cuda:2")


@pytest.mark.parametrize("bad", ["gpu", "CPU", "cuda:-1", "cuda:x", "cuda:", "cuda:01", " cpu",
                                 "cpu:0:1", ""])
def test_invalid_device_strings_raise_runtime_error(bad):
    if torch is not None:
        with pytest.raises(RuntimeError):
            torch.device(bad)
    with pytest.raises(RuntimeError):
        ptcore.device(bad)


def test_invalid_device_arguments():
    with pytest.raises(RuntimeError):
        ptcore.device(-1)
    with pytest.raises(RuntimeError):
        ptcore.device("cuda:1", 2)
    with pytest.raises(TypeError):
        ptcore.device(1.0)
    with pytest.raises(TypeError):
        ptcore.device(True)
    with pytest.raises(TypeError):
        ptcore.device(None)


def test_device_equality_and_hash():
    assert ptcore.device("cpu") == ptcore.device("cpu")
    assert ptcore.device("cuda:1") == ptcore.device("cuda", 1)
    assert ptcore.device("cuda") != ptcore.device("cuda:0")      # as torch
    assert ptcore.device("cpu") != ptcore.device("cuda")
    assert ptcore.device("cuda:0") != ptcore.device("cuda:1")
    assert not (ptcore.device("cpu") == "cpu")                   # as torch
    assert hash(ptcore.device("cuda:1")) == hash(ptcore.device("cuda", 1))
    table = {ptcore.device("cpu"): "c", ptcore.device("cuda:1"): "g"}
    assert table[ptcore.device("cpu")] == "c"
    assert table[ptcore.device("cuda", 1)] == "g"
    assert len({ptcore.device("cpu"), ptcore.device("cpu"), ptcore.device("cuda"),
                ptcore.device("cuda:0")}) == 3


@pytest.mark.parametrize("spec", ["cpu", "cuda", "cuda:3", "meta"])
def test_device_pickles(spec):
    d = ptcore.device(spec)
    d2 = pickle.loads(pickle.dumps(d))
    assert d2 == d and str(d2) == spec


# ---------------------------------------------------------------------------
# Tensor.device
# ---------------------------------------------------------------------------

def test_tensor_device_attributes():
    t = ptcore.zeros(2, 3)
    assert t.device == ptcore.device("cpu")
    assert t.device.type == "cpu"
    assert t.is_cpu and not t.is_cuda
    assert t.get_device() == -1
    assert t[0].device == ptcore.device("cpu")
    assert ptcore.zeros(2, device="cpu").device.type == "cpu"
    assert ptcore.zeros(2, device=ptcore.device("cpu")).device.type == "cpu"


# ---------------------------------------------------------------------------
# to(...)
# ---------------------------------------------------------------------------

def _data():
    return ptcore.tensor([[1.5, -2.25, 3.0], [0.0, 7.75, -8.5]])


def test_to_same_dtype_and_device_returns_self():
    t = _data()
    assert t.to(ptcore.float32) is t
    assert t.to("cpu") is t
    assert t.to(ptcore.device("cpu")) is t
    assert t.to("cpu", ptcore.float32) is t
    assert t.to(device="cpu", dtype=ptcore.float32) is t
    assert t.to(ptcore.zeros(1)) is t
    assert t.cpu() is t
    assert t.float() is t


def test_to_copy_true_always_copies():
    t = _data()
    for c in (t.to(ptcore.float32, copy=True), t.to("cpu", copy=True), t.to(copy=True),
              t.to(ptcore.zeros(1), copy=True), t.to(ptcore.float32, False, True)):
        assert c is not t
        assert c.data_ptr() != t.data_ptr()
        np.testing.assert_array_equal(c.numpy(), t.numpy())
        c.fill_(9.0)
        assert t.numpy()[0, 0] == 1.5


@pytest.mark.parametrize("call", [
    lambda t: t.to(ptcore.float64),
    lambda t: t.to(dtype=ptcore.float64),
    lambda t: t.to("cpu", ptcore.float64),
    lambda t: t.to(ptcore.device("cpu"), ptcore.float64),
    lambda t: t.to(device="cpu", dtype=ptcore.float64),
    lambda t: t.to(ptcore.zeros(1, dtype=ptcore.float64)),
    lambda t: t.to(ptcore.float64, non_blocking=True),
    lambda t: t.to(ptcore.float64, True),
    lambda t: t.to("cpu", ptcore.float64, True, False),
    lambda t: t.to(ptcore.float64, copy=True),
    lambda t: t.double(),
    lambda t: t.type(ptcore.float64),
    lambda t: t.type("ptcore.DoubleTensor"),
    lambda t: t.type("torch.DoubleTensor"),
], ids=lambda f: "")
def test_to_float64_overloads(call):
    t = _data()
    r = call(t)
    assert r is not t
    assert r.dtype is ptcore.float64
    assert r.device == ptcore.device("cpu")
    assert r.shape == t.shape
    np.testing.assert_array_equal(r.numpy(), t.numpy().astype(np.float64))


def test_to_keeps_strides_of_dense_inputs():
    t = ptcore.arange(6, dtype=ptcore.float32).view(2, 3).t()
    r = t.to(ptcore.float64)
    assert r.stride() == t.stride() == (1, 3)
    np.testing.assert_array_equal(r.numpy(), np.arange(6.0).reshape(2, 3).T)
    if torch is not None:
        tt = torch.arange(6, dtype=torch.float32).view(2, 3).t()
        assert tt.to(torch.float64).stride() == r.stride()


def test_to_memory_format():
    t = ptcore.arange(24, dtype=ptcore.float32).view(1, 2, 3, 4)
    r = t.to(memory_format=ptcore.channels_last)
    assert r.stride() == (24, 1, 8, 2)
    np.testing.assert_array_equal(r.numpy(), t.numpy())


def test_to_invalid_arguments():
    t = _data()
    with pytest.raises(TypeError):
        t.to("cpu", "cpu")
    with pytest.raises(TypeError):
        t.to(dtype=ptcore.float32, foo=1)
    with pytest.raises(TypeError):
        t.to(object())
    with pytest.raises(RuntimeError):
        t.to("gpu")


def test_to_propagates_requires_grad():
    t = ptcore.ones(3, requires_grad=True)
    r = t.to(ptcore.float64)
    assert r.requires_grad
    assert t.to(ptcore.float32) is t


@needs_torch
def test_to_requires_grad_result_matches_torch():
    t = torch.ones(3, requires_grad=True)
    p = ptcore.ones(3, requires_grad=True)
    for dt in ("float64", "float16", "complex64"):
        assert p.to(getattr(ptcore, dt)).requires_grad == t.to(getattr(torch, dt)).requires_grad
    assert p.to(ptcore.float64).is_leaf == t.to(torch.float64).is_leaf


SHORTCUTS = ["double", "float", "half", "bfloat16", "long", "int", "short", "char", "byte",
             "bool", "cfloat", "cdouble"]


@needs_torch
@pytest.mark.parametrize("method", SHORTCUTS)
@pytest.mark.parametrize("src", ["float32", "int64", "bool", "complex64"])
def test_conversion_shortcuts_match_torch(method, src):
    if src == "complex64":
        data = [1.5 - 2j, 3.25 + 0.5j, 0j, 100.75 + 1j]
    elif src == "bool":
        data = [True, False, True, True]
    else:
        data = [1.5, 3.75, -0.5, 100.25] if src == "float32" else [1, -3, 0, 300]
    p = ptcore.tensor(data, dtype=getattr(ptcore, src))
    t = torch.tensor(data, dtype=getattr(torch, src))
    if src == "complex64" and method not in ("cfloat", "cdouble"):
        # complex -> real casts discard the imaginary part (torch warns)
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tr = getattr(t, method)()
    else:
        tr = getattr(t, method)()
    pr = getattr(p, method)()
    assert name_of(pr.dtype) == name_of(tr.dtype)
    if tr.dtype is torch.bfloat16:
        tr, pr = tr.float(), pr.float()
    np.testing.assert_array_equal(pr.numpy(), tr.numpy())


@pytest.mark.parametrize("method,dt", [
    ("double", "float64"), ("float", "float32"), ("half", "float16"), ("bfloat16", "bfloat16"),
    ("long", "int64"), ("int", "int32"), ("short", "int16"), ("char", "int8"),
    ("byte", "uint8"), ("bool", "bool"), ("cfloat", "complex64"), ("cdouble", "complex128")])
def test_conversion_shortcut_dtypes(method, dt):
    t = ptcore.tensor([0.0, 1.0, 2.0, 3.0], dtype=ptcore.float64)
    r = getattr(t, method)()
    assert r.dtype is getattr(ptcore, dt)
    assert r.shape == t.shape
    back = r.double() if dt not in ("complex64", "complex128") else r
    expected = [0.0, 1.0, 1.0, 1.0] if dt == "bool" else [0.0, 1.0, 2.0, 3.0]
    np.testing.assert_array_equal(np.real(back.numpy()), expected)
    # converting to the current dtype returns self, as torch
    assert getattr(r, method)() is r


# ---------------------------------------------------------------------------
# .type()
# ---------------------------------------------------------------------------

LEGACY = {"bool": "BoolTensor", "uint8": "ByteTensor", "int8": "CharTensor",
          "int16": "ShortTensor", "int32": "IntTensor", "int64": "LongTensor",
          "float16": "HalfTensor", "bfloat16": "BFloat16Tensor", "float32": "FloatTensor",
          "float64": "DoubleTensor", "complex64": "ComplexFloatTensor",
          "complex128": "ComplexDoubleTensor"}


@pytest.mark.parametrize("dt", sorted(LEGACY))
def test_type_name(dt):
    t = ptcore.zeros(2, dtype=getattr(ptcore, dt))
    assert t.type() == "ptcore." + LEGACY[dt]
    if torch is not None:
        assert torch.zeros(2, dtype=getattr(torch, dt)).type() == "torch." + LEGACY[dt]


@pytest.mark.parametrize("dt", sorted(LEGACY))
def test_type_with_legacy_name_converts(dt):
    t = ptcore.tensor([1.0, 0.0, 2.0])
    r = t.type("ptcore." + LEGACY[dt])
    assert r.dtype is getattr(ptcore, dt)
    assert t.type(getattr(ptcore, dt)).dtype is getattr(ptcore, dt)


def test_type_invalid_name_raises_value_error():
    with pytest.raises(ValueError):
        ptcore.zeros(2).type("foo")
    with pytest.raises(ValueError):
        ptcore.zeros(2).type("ptcore.NopeTensor")
    if torch is not None:
        with pytest.raises(ValueError):
            torch.zeros(2).type("foo")


def test_type_same_dtype_returns_self():
    t = ptcore.zeros(2)
    assert t.type(ptcore.float32) is t
    assert t.type("ptcore.FloatTensor") is t


# ---------------------------------------------------------------------------
# CUDA not available
# ---------------------------------------------------------------------------

def test_cuda_availability_never_raises():
    avail = ptcore.cuda.is_available()
    assert isinstance(avail, bool)
    assert ptcore.cuda.is_available() == avail
    reason = ptcore.cuda._unavailable_reason()
    if avail:
        assert reason is None
    else:
        assert isinstance(reason, str) and len(reason) > 5
        assert ptcore.cuda.device_count() == 0


@no_cuda
@pytest.mark.parametrize("call", [
    lambda: ptcore.zeros(2).cuda(),
    lambda: ptcore.zeros(2).cuda(1),
    lambda: ptcore.zeros(2).to("cuda"),
    lambda: ptcore.zeros(2).to("cuda:0"),
    lambda: ptcore.zeros(2).to(ptcore.device("cuda")),
    lambda: ptcore.zeros(2).to(0),
    lambda: ptcore.zeros(2).to("cuda", ptcore.float64),
    lambda: ptcore.zeros(2).to(device="cuda", dtype=ptcore.float64),
    lambda: ptcore.zeros(2, device="cuda"),
    lambda: ptcore.ones(2, device="cuda:1"),
    lambda: ptcore.empty(2, device="cuda"),
    lambda: ptcore.full((2,), 1.0, device="cuda"),
    lambda: ptcore.tensor([1.0], device="cuda"),
    lambda: ptcore.arange(3, device="cuda"),
    lambda: ptcore.zeros_like(ptcore.zeros(2), device="cuda"),
    lambda: ptcore.rand(2, device="cuda"),
    lambda: ptcore.zeros(2).type("ptcore.cuda.FloatTensor"),
], ids=lambda f: "")
def test_cuda_use_raises_runtime_error_naming_why(call):
    with pytest.raises(RuntimeError) as ei:
        call()
    msg = str(ei.value)
    assert "CUDA" in msg or "cuda" in msg
    reason = ptcore.cuda._unavailable_reason()
    assert reason in msg


def test_cuda_method_rejects_cpu_device():
    with pytest.raises(RuntimeError):
        ptcore.zeros(2).cuda("cpu")


def test_device_objects_of_every_torch_device_type():
    torch = pytest.importorskip("torch")
    for s in ("mps", "xpu", "mps:0", "hpu", "privateuseone", "xla:1", "cuda:2", "meta"):
        p, t = ptcore.device(s), torch.device(s)
        assert (p.type, p.index, str(p), repr(p)) == (t.type, t.index, str(t), repr(t))
    assert ptcore.device("mps") != ptcore.device("cpu")
    for L in (ptcore, torch):
        with pytest.raises(RuntimeError, match="Expected one of cpu, cuda, ipu, xpu"):
            L.device("foo")
    with pytest.raises(NotImplementedError, match="mps"):
        ptcore.zeros(1, device="mps")       # a device ptcore does not run: no tensor on it
