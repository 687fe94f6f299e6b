"""Whole-object checkpoints (ptcore.save(model)), weights_only and the
safe-globals allowlist, against torch.save / torch.load."""
import copy
import dataclasses
import io
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ptcore
from ptcore import serialization

torch = pytest.importorskip("torch")

# the directory holding the ptcore this test imported (the source tree with its
# compiled modules, or site-packages after `pip install .`): subprocesses import the same
PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(ptcore.__file__)))


@dataclasses.dataclass
class Config:
    lr: float
    layers: tuple


@pytest.fixture(autouse=True)
def _clean_allowlist():
    serialization.clear_safe_globals()
    yield
    serialization.clear_safe_globals()


def _net(L):
    L.manual_seed(0)
    nn = L.nn
    return nn.Sequential(nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.LeakyReLU(0.2, inplace=True),
                         nn.Flatten(), nn.Linear(3 * 4 * 4, 2))


def _roundtrip(obj, **kw):
    buf = io.BytesIO()
    ptcore.save(obj, buf)
    buf.seek(0)
    return ptcore.load(buf, **kw)


X = np.random.default_rng(0).standard_normal((2, 1, 6, 6)).astype(np.float32)


def test_whole_module_after_forward_backward_roundtrips():
    m = _net(ptcore)
    m(ptcore.tensor(X)).sum().backward()          # the graph's weak references exist now
    m.eval()
    m2 = _roundtrip(m, weights_only=False)
    assert type(m2) is type(m) and not m2.training
    assert type(m2[4].weight) is ptcore.nn.Parameter and m2[4].weight.requires_grad
    assert m2[4].weight.grad is None              # as torch: gradients are not pickled
    np.testing.assert_array_equal(m2(ptcore.tensor(X)).detach().numpy(),
                                  m(ptcore.tensor(X)).detach().numpy())
    assert list(m2.state_dict()) == list(m.state_dict())


def test_weights_only_default_refuses_with_torch_message():
    for L in (torch, ptcore):
        buf = io.BytesIO()
        L.save(L.nn.Linear(2, 3), buf)
        buf.seek(0)
        with pytest.raises(pickle.UnpicklingError) as ei:
            L.load(buf)
        name = f"{L.__name__}.nn.modules.linear.Linear"
        msg = str(ei.value)
        assert "Weights only load failed" in msg
        assert f"Unsupported global: GLOBAL {name} was not an allowed global by default" in msg
        assert f"{L.__name__}.serialization.add_safe_globals([{name}])" in msg
        buf.seek(0)
        assert L.serialization.get_unsafe_globals_in_checkpoint(buf) == [name]


def test_safe_globals_api():
    m = ptcore.nn.Linear(2, 3)
    buf = io.BytesIO()
    ptcore.save(m, buf)
    with serialization.safe_globals([ptcore.nn.Linear]):
        assert serialization.get_safe_globals() == [ptcore.nn.Linear]
        buf.seek(0)
        assert serialization.get_unsafe_globals_in_checkpoint(buf) == []
        buf.seek(0)
        m2 = ptcore.load(buf)
    assert serialization.get_safe_globals() == []
    np.testing.assert_array_equal(m2.weight.detach().numpy(), m.weight.detach().numpy())
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError):
        ptcore.load(buf, weights_only=True)
    serialization.add_safe_globals([ptcore.nn.Linear])
    buf.seek(0)
    assert isinstance(ptcore.load(buf), ptcore.nn.Linear)
    serialization.clear_safe_globals()
    assert serialization.get_safe_globals() == []
    with pytest.raises(TypeError):
        serialization.add_safe_globals(ptcore.nn.Linear)


def test_numpy_and_dataclass_need_allowlisting_as_in_torch():
    obj = {"arr": np.arange(6.0).reshape(2, 3), "cfg": Config(0.1, (2, 3))}
    unsafe = {}
    for L in (torch, ptcore):
        buf = io.BytesIO()
        L.save(obj, buf)
        buf.seek(0)
        unsafe[L.__name__] = set(L.serialization.get_unsafe_globals_in_checkpoint(buf))
        buf.seek(0)
        with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
            L.load(buf)
        buf.seek(0)
        got = L.load(buf, weights_only=False)
        np.testing.assert_array_equal(got["arr"], obj["arr"])
        assert got["cfg"] == obj["cfg"]
    assert unsafe["ptcore"] == unsafe["torch"]
    allowed = [np._core.multiarray._reconstruct, np.ndarray, np.dtype, type(np.dtype("float64")),
               Config]
    buf = io.BytesIO()
    ptcore.save(obj, buf)
    buf.seek(0)
    with serialization.safe_globals(allowed):
        got = ptcore.load(buf)
    np.testing.assert_array_equal(got["arr"], obj["arr"])
    assert got["cfg"] == obj["cfg"]


def test_optimizer_and_scheduler_resume_identically():
    def run(resume):
        m = _net(ptcore)
        opt = ptcore.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        sch = ptcore.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
        x = ptcore.tensor(X)
        losses = []
        for i in range(4):
            if resume and i == 2:
                ck = _roundtrip({"model": m, "opt": opt, "sch": sch}, weights_only=False)
                m, opt, sch = ck["model"], ck["opt"], ck["sch"]
                assert opt.param_groups[0]["params"][0] is next(m.parameters())
            opt.zero_grad()
            loss = m(x).square().mean()
            loss.backward()
            opt.step()
            sch.step()
            losses.append(loss.item())
        return losses, opt.param_groups[0]["lr"]
    assert run(True) == run(False)


def test_data_only_objects_need_no_allowlisting_in_either_library():
    obj = {"w": ptcore.ones(2), "opt": {"state": {0: {"step": ptcore.tensor(3.0)}},
                                        "param_groups": [{"lr": 0.1, "params": [0]}]}}
    buf = io.BytesIO()
    ptcore.save(obj, buf)
    for L in (ptcore, torch):
        buf.seek(0)
        assert L.serialization.get_unsafe_globals_in_checkpoint(buf) == []
        buf.seek(0)
        got = L.load(buf, weights_only=True)
        assert got["w"].tolist() == [1.0, 1.0] and got["opt"]["state"][0]["step"].item() == 3.0


def test_torch_and_ptcore_read_each_others_pickled_checkpoints():
    obj = {"arr": np.arange(3.0), "t": ptcore.arange(4.0), "p": ptcore.nn.Parameter(ptcore.ones(2))}
    buf = io.BytesIO()
    ptcore.save(obj, buf)
    buf.seek(0)
    got = torch.load(buf, weights_only=False)
    assert isinstance(got["t"], torch.Tensor) and got["t"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert isinstance(got["p"], torch.nn.Parameter)
    torch.manual_seed(0)
    tm = torch.nn.Linear(2, 3)
    buf = io.BytesIO()
    torch.save(tm, buf)
    buf.seek(0)
    pm = ptcore.load(buf, weights_only=False)
    assert isinstance(pm, ptcore.nn.Linear)
    np.testing.assert_allclose(pm(ptcore.ones(1, 2)).detach().numpy(),
                               tm(torch.ones(1, 2)).detach().numpy(), rtol=1e-6)


def test_tensor_pickle_drops_graph_as_torch():
    for L in (torch, ptcore):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.sum().backward()
        z = pickle.loads(pickle.dumps(y))
        assert z.is_leaf and z.requires_grad and z.grad_fn is None
        x2 = pickle.loads(pickle.dumps(x))
        assert x2.grad is None and x2.is_leaf
        x3 = copy.deepcopy(x)
        x3.grad = None
        (x3 * 3).sum().backward()
        assert x3.grad.tolist() == [3.0, 3.0] and x.grad.tolist() == [2.0, 2.0]


def test_whole_model_reloads_in_fresh_process(tmp_path):
    mod = tmp_path / "sa_models.py"
    mod.write_text(textwrap.dedent("""
        import ptcore
        class Net(ptcore.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = ptcore.nn.Conv2d(1, 2, 3)
                self.act = ptcore.nn.ELU(inplace=True)
                self.fc = ptcore.nn.Linear(2 * 4 * 4, 3)
                self.register_buffer("scale", ptcore.tensor(0.5))
            def forward(self, x):
                return self.fc(self.act(self.conv(x)).flatten(1)) * self.scale
    """))
    sys.path.insert(0, str(tmp_path))
    try:
        import sa_models
        ptcore.manual_seed(3)
        net = sa_models.Net()
        net(ptcore.tensor(X)).sum().backward()
        ptcore.save(net, tmp_path / "net.pt")
        np.save(tmp_path / "x.npy", X)
        expected = net(ptcore.tensor(X)).detach().numpy()
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("sa_models", None)
    code = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {str(tmp_path)!r})
        import numpy as np, ptcore
        net = ptcore.load({str(tmp_path / "net.pt")!r}, weights_only=False)
        out = net(ptcore.tensor(np.load({str(tmp_path / "x.npy")!r})))
        np.save({str(tmp_path / "out.npy")!r}, out.detach().numpy())
    """)
    env = dict(os.environ, PYTHONPATH=PKG_PARENT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), expected)
