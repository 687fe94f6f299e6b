"""``torch._subclasses.fake_tensor.FakeTensorMode`` against torch's: fake tensors made
from real ones and by factories inside the mode, the shapes, dtypes and devices of
ops and of whole models (a TransformerEncoder, a conv net, an LSTM), in-place ops
returning their argument, data-dependent ops raising torch's exception types, real
tensors refused unless ``allow_non_fake_inputs``, the real model's state untouched."""
import importlib
import subprocess
import sys

import pytest

import ptcore

torch = pytest.importorskip("torch")

LIBS = [torch, ptcore]


def _ft(lib):
    return importlib.import_module(f"{lib.__name__}._subclasses.fake_tensor")


def _facts(t):
    return (type(t).__name__, tuple(t.shape), str(t.dtype).split(".")[-1], t.device.type)


@pytest.mark.parametrize("lib", LIBS, ids=lambda L: L.__name__)
def test_from_tensor_keeps_metadata_and_identity(lib):
    F = _ft(lib)
    mode = F.FakeTensorMode()
    t = lib.randn(2, 3, requires_grad=True)
    f = mode.from_tensor(t)
    assert F.is_fake(f) and f.fake_mode is mode and F.maybe_get_fake_mode(f) is mode
    assert mode.from_tensor(t) is f
    assert _facts(f) == ("FakeTensor", (2, 3), "float32", "cpu")
    assert f.requires_grad and f.is_leaf
    assert repr(f) == "FakeTensor(..., size=(2, 3), requires_grad=True)"
    assert F.maybe_get_fake_mode(t) is None


def _ops(lib, f):
    return {
        "matmul": lambda: f @ f.t(),
        "sum": lambda: f.sum(1),
        "cat": lambda: lib.cat([f, f], 0),
        "view": lambda: f.reshape(3, 2),
        "where": lambda: lib.where(f > 0, f, 0.0),
        "cast": lambda: f.to(lib.float64),
        "softmax": lambda: f.softmax(-1),
        "zeros": lambda: lib.zeros(4, dtype=lib.int64),
        "empty": lambda: lib.empty(3, 5),
        "arange": lambda: lib.arange(6),
        "tensor": lambda: lib.tensor([1.0, 2.0]),
        "index": lambda: f[:, 1:],
    }


def test_ops_give_torch_s_metadata():
    got = {}
    for lib in LIBS:
        mode = _ft(lib).FakeTensorMode()
        with mode:
            f = mode.from_tensor(lib.randn(2, 3))
            got[lib.__name__] = {k: _facts(fn()) for k, fn in _ops(lib, f).items()}
    assert got["ptcore"] == got["torch"]


def test_models_give_torch_s_shapes_and_leave_the_model_untouched():
    got = {}
    for lib in LIBS:
        nn = lib.nn
        lib.manual_seed(0)
        enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(32, 4, 64, batch_first=True), 2)
        net = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                            nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, stride=2),
                            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))
        lstm, emb = nn.LSTM(8, 16, batch_first=True), nn.Embedding(100, 8)
        with _ft(lib).FakeTensorMode(allow_non_fake_inputs=True):
            e = emb(lib.zeros(5, 7, dtype=lib.long))
            got[lib.__name__] = [_facts(enc(lib.randn(3, 10, 32))),
                                 _facts(net(lib.empty(4, 3, 32, 32))), _facts(e),
                                 _facts(lstm(e)[0])]
        assert float(net[1].running_mean.abs().sum()) == 0.0
    assert got["ptcore"] == got["torch"]
    assert got["ptcore"][1] == ("FakeTensor", (4, 10), "float32", "cpu")


@pytest.mark.parametrize("lib", LIBS, ids=lambda L: L.__name__)
def test_in_place_ops_return_their_argument(lib):
    with _ft(lib).FakeTensorMode():
        a = lib.empty(4)
        assert a.add_(1) is a and a.mul_(2) is a


@pytest.mark.parametrize("lib", LIBS, ids=lambda L: L.__name__)
def test_data_dependent_ops_raise_as_torch(lib):
    F = _ft(lib)
    mode = F.FakeTensorMode()
    with mode:
        f = mode.from_tensor(lib.randn(3))
        with pytest.raises(F.DataDependentOutputException):
            f.sum().item()
        with pytest.raises(F.DynamicOutputShapeException):
            lib.nonzero(f > 0)


@pytest.mark.parametrize("lib", LIBS, ids=lambda L: L.__name__)
def test_real_tensors_are_refused_unless_allowed(lib):
    F = _ft(lib)
    t = lib.ones(2)
    with pytest.raises(AssertionError, match="allow_non_fake_inputs"):
        with F.FakeTensorMode():
            t + 1
    with F.FakeTensorMode(allow_non_fake_inputs=True):
        r = t + 1
    assert F.is_fake(r) and t.tolist() == [1.0, 1.0]


def test_a_fake_tensor_outside_its_mode_runs_in_it():
    for lib in LIBS:
        F = _ft(lib)
        mode = F.FakeTensorMode()
        f = mode.from_tensor(lib.ones(2, 3))
        r = f.sum(0)
        assert F.is_fake(r) and r.fake_mode is mode and tuple(r.shape) == (3,)
    with pytest.raises(TypeError, match="meta"):
        _ft(ptcore).FakeTensor(None, ptcore.ones(2), "cpu")


def test_recorded_pooling_in_a_fresh_process():
    # A max pool recorded for autograd (its input requires grad) runs its kernel as
    # aten.max_pool2d_with_indices under the mode; the mode derives the result through
    # ptcore.ops' resolver, which a program that never touched ptcore.ops had not installed
    # (the test above passed or failed with the order of the suite).
    code = ("import ptcore\n"
            "from ptcore._subclasses.fake_tensor import FakeTensorMode\n"
            "nn = ptcore.nn\n"
            "net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))\n"
            "with FakeTensorMode(allow_non_fake_inputs=True):\n"
            "    y = net(ptcore.empty(2, 3, 8, 8))\n"
            "print(type(y).__name__, tuple(y.shape), y.requires_grad)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["FakeTensor", "(2,", "4,", "4,", "4)", "True"]
