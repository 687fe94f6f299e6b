"""Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""
from collections import OrderedDict

import numpy as np
import pytest

import ptcore
import ptcore.nn as nn

try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def _norm(s):
    return s.replace("ptcore", "torch")


def test_sequential_forward_indexing_and_mutation():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    s = nn.Sequential(a, b, c)
    assert len(s) == 3 and s[0] is a and s[-1] is c
    assert isinstance(s[1:], nn.Sequential) and list(s[1:]) == [b, c]
    x = ptcore.randn(4, 2)
    np.testing.assert_allclose(s(x).detach().numpy(), c(b(a(x))).detach().numpy())
    with pytest.raises(IndexError, match="index 3 is out of range"):
        s[3]
    s[1] = nn.Tanh()
    assert isinstance(s[1], nn.Tanh)
    del s[1]
    assert list(s._modules) == ["0", "1"] and s[1] is c
    s.append(nn.Sigmoid())
    s.insert(0, nn.Identity())
    assert [type(m).__name__ for m in s] == ["Identity", "Linear", "Linear", "Sigmoid"]
    popped = s.pop(0)
    assert isinstance(popped, nn.Identity) and len(s) == 3
    s.extend([nn.ReLU()])
    assert len(s) == 4
    s2 = s + nn.Sequential(nn.ReLU())
    assert len(s2) == 5
    s3 = nn.Sequential(nn.ReLU()) * 3
    assert len(s3) == 3 and s3[0] is s3[2]
    s3 *= 2
    assert len(s3) == 6
    with pytest.raises(ValueError, match="add operator supports only objects of Sequential class"):
        s + 1
    with pytest.raises(ValueError, match="Non-positive multiplication factor"):
        s * 0


def test_sequential_ordered_dict():
    s = nn.Sequential(OrderedDict([("conv", nn.Linear(1, 1)), ("act", nn.ReLU())]))
    assert list(s._modules) == ["conv", "act"]
    assert s.act is s[1]
    assert list(s.state_dict()) == ["conv.weight", "conv.bias"]


def test_module_list():
    ml = nn.ModuleList([nn.Linear(1, 1), nn.ReLU()])
    ml.append(nn.Tanh())
    ml.extend([nn.Sigmoid()])
    ml.insert(1, nn.Identity())
    assert [type(m).__name__ for m in ml] == ["Linear", "Identity", "ReLU", "Tanh", "Sigmoid"]
    assert isinstance(ml[1:3], nn.ModuleList) and len(ml[1:3]) == 2
    assert ml[-1] is ml[4]
    del ml[0]
    assert list(ml._modules) == ["0", "1", "2", "3"]
    ml[0] = nn.ELU()
    assert isinstance(ml[0], nn.ELU)
    assert isinstance(ml.pop(-1), nn.Sigmoid)
    combined = ml + nn.ModuleList([nn.ReLU()])
    assert len(combined) == 4
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable"):
        ml.extend(nn.ReLU())
    with pytest.raises(IndexError):
        ml[10]
    with pytest.raises(NotImplementedError):
        ml(1)


def test_module_dict():
    md = nn.ModuleDict({"b": nn.ReLU(), "a": nn.Tanh()})
    assert list(md.keys()) == ["b", "a"]
    md["c"] = nn.Identity()
    assert "c" in md and len(md) == 3
    md.update([("d", nn.ELU())])
    assert list(md) == ["b", "a", "c", "d"]
    assert isinstance(md.pop("a"), nn.Tanh)
    del md["b"]
    assert list(md.keys()) == ["c", "d"]
    assert [type(v).__name__ for v in md.values()] == ["Identity", "ELU"]
    with pytest.raises(ValueError, match="has length 1; 2 is required"):
        md.update([("x",)])
    with pytest.raises(TypeError, match="should be Iterable"):
        md.update([1])
    md.clear()
    assert len(md) == 0


def test_parameter_list():
    pl = nn.ParameterList([ptcore.zeros(2), nn.Parameter(ptcore.ones(3))])
    assert all(isinstance(p, nn.Parameter) for p in pl)
    pl.append(ptcore.zeros(1))
    pl.extend([ptcore.ones(4, 4)])
    assert len(pl) == 4
    assert [k for k, _ in pl.named_parameters()] == ["0", "1", "2", "3"]
    assert len(pl[1:]) == 3
    pl[0] = ptcore.full((2,), 5.0)
    assert isinstance(pl[0], nn.Parameter) and float(pl[0][0]) == 5.0
    with pytest.raises(RuntimeError, match="ParameterList should not be called"):
        pl()
    with pytest.raises(TypeError, match="ParameterList.extend should be called with an iterable"):
        pl.extend(ptcore.zeros(2))


def test_parameter_dict():
    pd = nn.ParameterDict({"b": ptcore.zeros(2), "a": ptcore.ones(1)})
    assert list(pd.keys()) == ["a", "b"]  # plain dicts are sorted, as torch
    pd["c"] = ptcore.zeros(3)
    assert isinstance(pd["c"], nn.Parameter)
    assert "c" in pd and len(pd) == 3
    assert pd.get("zz") is None
    assert pd.setdefault("d", ptcore.ones(1)) is pd["d"]
    k, v = pd.popitem()
    assert k == "d"
    assert [k for k, _ in pd.named_parameters()] == ["a", "b", "c"]
    pd2 = pd | nn.ParameterDict(OrderedDict([("z", ptcore.zeros(1))]))
    assert list(pd2) == ["a", "b", "c", "z"]
    assert list(pd.copy()) == ["a", "b", "c"]
    del pd["a"]
    assert list(pd) == ["b", "c"]
    with pytest.raises(TypeError, match="not a string"):
        pd[1] = ptcore.zeros(1)
    pd.clear()
    assert len(pd) == 0


@needs_torch
def test_container_reprs_match_torch():
    def build(lib):
        n = lib.nn
        return n.Sequential(
            n.Linear(2, 3),
            n.ModuleList([n.ReLU(), n.ReLU(), n.ReLU(), n.Tanh(), n.Linear(1, 1), n.Linear(1, 1)]),
            n.ModuleDict({"x": n.Sequential(n.Linear(1, 2), n.Dropout()), "y": n.Identity()}),
            n.Sequential(),
            n.ModuleList(),
        )

    assert _norm(repr(build(ptcore))) == repr(build(torch))


@needs_torch
def test_parameter_container_reprs_match_torch():
    pl = nn.ParameterList([ptcore.zeros(2, 3), ptcore.zeros(1, dtype=ptcore.float64)])
    tl = torch.nn.ParameterList([torch.zeros(2, 3), torch.zeros(1, dtype=torch.float64)])
    assert _norm(repr(pl)) == repr(tl)
    pd = nn.ParameterDict({"a": ptcore.zeros(2), "b": ptcore.zeros(1, 4)})
    td = torch.nn.ParameterDict({"a": torch.zeros(2), "b": torch.zeros(1, 4)})
    assert _norm(repr(pd)) == repr(td)


@needs_torch
def test_sequential_state_dict_matches_torch_values():
    torch.manual_seed(1)
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    p = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    p.load_state_dict({k: ptcore.from_numpy(v.numpy().copy()) for k, v in t.state_dict().items()})
    x = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(p(ptcore.from_numpy(x)).detach().numpy(),
                               t(torch.from_numpy(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
