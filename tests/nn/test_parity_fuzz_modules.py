"""Differences between ptcore's nn.Module layer and torch's, found by a
differential fuzz of the module classes, containers and nn.utils against torch
(the oracle), each pinned here against torch itself."""
import importlib

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _classes(lib, name):
    return [c.__name__ for c in getattr(lib.nn, name).__mro__]


# -- class hierarchy: torch code tests ``isinstance(m, <private base>)`` --------

@pytest.mark.parametrize("name", ["AvgPool1d", "CTCLoss", "ReflectionPad1d", "ReflectionPad2d",
                                  "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
                                  "ReplicationPad3d", "ConstantPad2d", "ZeroPad1d"])
def test_module_bases_as_torch(name):
    # every class of torch's MRO (AvgPool1d -> _AvgPoolNd, CTCLoss -> _Loss,
    # ReflectionPad*d -> _ReflectionPadNd, ...) is in ptcore's
    want = set(_classes(torch, name))
    assert want <= set(_classes(ptcore, name))


def test_ctc_loss_is_a_loss():
    m = ptcore.nn.CTCLoss(blank=1, reduction="sum", zero_infinity=True)
    assert isinstance(m, ptcore.nn.modules.loss._Loss)
    assert (m.blank, m.reduction, m.zero_infinity) == (1, "sum", True)
    ctc = importlib.import_module("ptcore.nn.modules.ctc")      # the old path still imports
    assert ctc.CTCLoss is ptcore.nn.CTCLoss is ptcore.nn.modules.loss.CTCLoss
    # torch's constructor has no legacy size_average/reduce
    with pytest.raises(TypeError):
        torch.nn.CTCLoss(size_average=True)
    with pytest.raises(TypeError):
        ptcore.nn.CTCLoss(size_average=True)
    lp = torch.randn(6, 2, 4, dtype=torch.float64).log_softmax(2)
    args = (lp, torch.tensor([[1, 2], [3, 3]]), torch.tensor([6, 5]), torch.tensor([2, 2]))
    want = torch.nn.CTCLoss(reduction="sum")(*args)
    got = ptcore.nn.CTCLoss(reduction="sum")(*[ptcore.from_numpy(a.numpy().copy()) for a in args])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10)


def test_avg_pool1d_is_avg_pool_nd():
    for lib in (torch, ptcore):
        m = lib.nn.AvgPool1d(3, 2, 1, ceil_mode=True, count_include_pad=False)
        assert isinstance(m, lib.nn.modules.pooling._AvgPoolNd)
        assert not hasattr(m, "divisor_override")
    x = np.arange(7.0).reshape(1, 1, 7)
    want = torch.nn.AvgPool1d(3, 2, 1, ceil_mode=True, count_include_pad=False)(torch.tensor(x))
    got = ptcore.nn.AvgPool1d(3, 2, 1, ceil_mode=True, count_include_pad=False)(ptcore.tensor(x))
    np.testing.assert_allclose(got.numpy(), want.numpy())
    assert str(ptcore.nn.AvgPool1d(3)) == str(torch.nn.AvgPool1d(3))


def test_padding_private_bases_as_torch():
    x = np.arange(8.0).reshape(1, 2, 4)
    for lib in (torch, ptcore):
        pad = lib.nn.modules.padding
        assert isinstance(lib.nn.ReflectionPad2d(1), pad._ReflectionPadNd)
        assert isinstance(lib.nn.ReplicationPad3d(1), pad._ReplicationPadNd)

        class ValuePad(pad._ConstantPadNd):
            # torch's _ConstantPadNd takes the value only; the subclass sets padding
            def __init__(self):
                super().__init__(3.0)
                self.padding = (1, 2)

        out = ValuePad()(lib.tensor(x))
        assert out.tolist() == torch.nn.functional.pad(torch.tensor(x), (1, 2), value=3.0).tolist()
        assert str(ValuePad()) == "ValuePad(padding=(1, 2), value=3.0)"
    for name, args in [("ConstantPad2d", ((1, 2, 0, 1), 2.5)), ("ZeroPad1d", ((2, 1),)),
                       ("ReflectionPad1d", (2,)), ("ReplicationPad1d", ((0, 3),))]:
        want = getattr(torch.nn, name)(*args)
        got = getattr(ptcore.nn, name)(*args)
        assert str(got) == str(want)
        assert got(ptcore.tensor(x)).tolist() == want(torch.tensor(x)).tolist()


def test_rnn_apply_permutation_deprecated_helper():
    x = np.arange(6).reshape(2, 3)
    perm = [2, 0, 1]
    with pytest.warns(FutureWarning, match="apply_permutation` is deprecated"):
        want = torch.nn.modules.rnn.apply_permutation(torch.tensor(x), torch.tensor(perm))
    with pytest.warns(FutureWarning, match="apply_permutation` is deprecated"):
        got = ptcore.nn.modules.rnn.apply_permutation(ptcore.tensor(x), ptcore.tensor(perm))
    assert got.tolist() == want.tolist()
    with pytest.warns(FutureWarning):
        got = ptcore.nn.modules.rnn.apply_permutation(ptcore.tensor(x), ptcore.tensor([1, 0]), 0)
    assert got.tolist() == x[[1, 0]].tolist()


def _load_in_swap_mode(lib, assign):
    old = lib.__future__.get_swap_module_params_on_conversion()
    lib.__future__.set_swap_module_params_on_conversion(True)
    try:
        m = lib.nn.BatchNorm1d(2)
        weight, mean = m.weight, m.running_mean
        sd = {"weight": lib.tensor([2.0, 3.0], dtype=lib.float64), "bias": lib.zeros(2),
              "running_mean": lib.tensor([1.0, -1.0], dtype=lib.float64),
              "running_var": lib.ones(2), "num_batches_tracked": lib.tensor(4)}
        m.load_state_dict(sd, assign=assign)
        return (m.weight is weight, m.running_mean is mean, type(m.weight).__name__,
                m.weight.requires_grad, str(m.weight.dtype).split(".")[-1],
                str(m.running_mean.dtype).split(".")[-1], m.weight.tolist(),
                m.running_mean.tolist(), int(m.num_batches_tracked))
    finally:
        lib.__future__.set_swap_module_params_on_conversion(old)


@pytest.mark.parametrize("assign", [False, True])
def test_load_state_dict_swap_mode_keeps_the_objects(assign):
    # with torch.__future__'s swap mode the module keeps its Parameter/buffer
    # objects and swaps their tensors (assign=True replaced the objects)
    got = _load_in_swap_mode(ptcore, assign)
    assert got == _load_in_swap_mode(torch, assign)
    assert got[:2] == (True, True)
    assert got[4] == ("float64" if assign else "float32")


def test_star_export_lists_as_torch():
    # ``from torch.nn.modules import *`` / ``from torch.nn.utils import *`` bind
    # torch's __all__ (ptcore had none, so a star import took every helper module)
    assert ptcore.nn.modules.__all__ == torch.nn.modules.__all__
    assert ptcore.nn.utils.__all__ == torch.nn.utils.__all__
    ns = {}
    exec("from ptcore.nn.modules import *", ns)
    assert "conv" not in ns and "Conv2d" in ns and "LinearCrossEntropyOptions" in ns
    # ptcore.nn keeps torch.nn's namespace (attention and utils are the packages)
    assert ptcore.nn.utils is importlib.import_module("ptcore.nn.utils")
    assert ptcore.nn.attention is importlib.import_module("ptcore.nn.attention")
    assert not hasattr(ptcore.nn, "conv") and not hasattr(torch.nn, "conv")


@pytest.mark.parametrize("name", ["activation", "sparse", "loss", "linear_cross_entropy"])
def test_module_file_star_exports_as_torch(name):
    # torch exports MultiheadAttention from activation, EmbeddingBag from sparse and
    # LinearCrossEntropyLoss from loss (ptcore defines them in other files)
    want = importlib.import_module("torch.nn.modules." + name).__all__
    mod = importlib.import_module("ptcore.nn.modules." + name)
    assert sorted(mod.__all__) == sorted(want)
    ns = {}
    exec(f"from ptcore.nn.modules.{name} import *", ns)
    assert all(ns[n] is getattr(ptcore.nn, n) for n in want)
