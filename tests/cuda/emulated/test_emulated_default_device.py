"""ptcore.set_default_device and ``with ptcore.device(...)`` on the emulated
CUDA device: the factory functions follow them as torch's DeviceContext."""
import threading

import numpy as np
import pytest

import ptcore
from device_target import need_devices
from ptcore._dispatch import default_device as _dd


@pytest.fixture(autouse=True)
def _reset():
    yield
    ptcore.set_default_device(None)
    assert _dd._current() is None


FACTORIES = [
    ("zeros", lambda: ptcore.zeros(2, 3)),
    ("ones", lambda: ptcore.ones(4)),
    ("empty", lambda: ptcore.empty(2)),
    ("full", lambda: ptcore.full((2,), 1.5)),
    ("tensor", lambda: ptcore.tensor([1.0, 2.0])),
    ("as_tensor", lambda: ptcore.as_tensor([1, 2])),
    ("arange", lambda: ptcore.arange(5)),
    ("linspace", lambda: ptcore.linspace(0, 1, 5)),
    ("eye", lambda: ptcore.eye(3)),
    ("empty_strided", lambda: ptcore.empty_strided((2, 2), (2, 1))),
]


@pytest.mark.parametrize("name,make", FACTORIES, ids=[f[0] for f in FACTORIES])
def test_factories_follow_the_default_device(name, make):
    cpu = make()
    assert cpu.device.type == "cpu"
    ptcore.set_default_device("cuda")
    t = make()
    assert t.device == ptcore.device("cuda", 0), name
    if name != "empty" and name != "empty_strided":
        np.testing.assert_array_equal(t.cpu().numpy(), cpu.numpy())
    assert t.dtype == cpu.dtype and t.shape == cpu.shape
    ptcore.set_default_device(None)
    assert make().device.type == "cpu"


@pytest.mark.parametrize("index", [0, 1])
def test_explicit_device_and_like_functions_win(index):
    need_devices(index + 1)
    ptcore.set_default_device(f"cuda:{index}")
    assert ptcore.get_default_device() == ptcore.device("cuda", index)
    assert ptcore.zeros(2, device="cpu").device.type == "cpu"
    c = ptcore.zeros(2, device="cpu")
    assert ptcore.zeros_like(c).device.type == "cpu"        # *_like keep the input's device
    assert ptcore.ones(2).device == ptcore.device("cuda", index)
    # ops on CPU tensors stay on the CPU (only factories follow the default)
    assert (c + 1).device.type == "cpu"
    assert ptcore.cat([c, c]).device.type == "cpu"
    assert c.new_zeros(3).device.type == "cpu"


@pytest.mark.parametrize("index", [0, 1])
def test_with_device_blocks_nest_and_win_over_the_default(index):
    need_devices(index + 1)
    ptcore.set_default_device("cuda")
    with ptcore.device("cpu"):
        assert ptcore.ones(1).device.type == "cpu"
        assert ptcore.get_default_device() == ptcore.device("cpu")
        with ptcore.device(f"cuda:{index}"):
            assert ptcore.ones(1).device == ptcore.device("cuda", index)
        assert ptcore.ones(1).device.type == "cpu"
    assert ptcore.ones(1).device.type == "cuda"
    ptcore.set_default_device(None)
    with ptcore.device("cuda:0") as d:
        assert d == ptcore.device("cuda", 0)
        assert ptcore.arange(3).device == d
    assert ptcore.arange(3).device.type == "cpu"


def test_default_device_is_per_thread():
    ptcore.set_default_device("cuda")
    seen = []
    th = threading.Thread(target=lambda: seen.append(ptcore.zeros(1).device.type))
    th.start()
    th.join(60)
    assert seen == ["cpu"]
    assert ptcore.zeros(1).device.type == "cuda"


def test_training_step_on_the_default_device():
    # parameters built on the CPU and moved, data made by factories on the default device
    ptcore.manual_seed(0)
    w_cpu = ptcore.randn(3, 4)
    ptcore.set_default_device("cuda")
    w = w_cpu.to("cuda").requires_grad_()
    x = ptcore.ones(5, 4) * 0.5
    loss = (x @ w.T).sum()
    loss.backward()
    assert w.grad.device.type == "cuda"
    np.testing.assert_allclose(w.grad.cpu().numpy(), np.full((3, 4), 2.5, np.float32))


def test_layer_is_off_without_a_default_device():
    ptcore.set_default_device("cuda")
    assert _dd._LAYER.enabled
    ptcore.set_default_device(None)
    assert not _dd._LAYER.enabled
    with ptcore.device("cuda"):
        assert _dd._LAYER.enabled
    assert not _dd._LAYER.enabled


def test_modules_are_built_on_the_default_device():
    # nn layers create their parameters with the factories (and initialise
    # them with the CUDA random kernels): torch's `with torch.device('cuda'):`
    with ptcore.device("cuda"):
        lin = ptcore.nn.Linear(4, 3)
        x = ptcore.randn(5, 4)
    assert lin.weight.device.type == "cuda" and lin.bias.device.type == "cuda"
    assert x.device.type == "cuda"
    loss = lin(x).square().mean()
    loss.backward()
    assert lin.weight.grad.device.type == "cuda"
    ref = ptcore.nn.functional.linear(x.cpu(), lin.weight.detach().cpu(), lin.bias.detach().cpu())
    np.testing.assert_allclose(lin(x).detach().cpu().numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)
