"""``ptcore._C._nn`` (``torch._C._nn``): the nn ops under ATen's names and signatures, which
libraries call directly, against torch's."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")
C_NN = ptcore._C._nn


def _pair(shape, seed=0, low=None):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    if low is not None:
        a = np.abs(a) % 1 * 0.98 + 0.01
    return ptcore.tensor(a), torch.tensor(a)


def _same(p, t, tol=1e-6):
    np.testing.assert_allclose(p.numpy(), t.numpy(), rtol=tol, atol=tol)
    assert str(p.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]


@pytest.mark.parametrize("args", [("cpu",), ("float64",), ("cpu", "float16"), ("tensor",),
                                  ("cpu", "int32", True), ()])
def test_parse_to_matches_torch(args):
    def conv(lib, a):
        if a == "tensor":
            return lib.zeros(1, dtype=lib.float16)
        if a in ("float64", "float16", "int32"):
            return getattr(lib, a)
        return a
    got = C_NN._parse_to(*[conv(ptcore, a) for a in args])
    want = torch._C._nn._parse_to(*[conv(torch, a) for a in args])
    assert len(got) == len(want) == 4
    assert (str(got[0]) if got[0] is not None else None) == \
        (str(want[0]) if want[0] is not None else None)
    assert str(got[1]).split(".")[-1] == str(want[1]).split(".")[-1]
    assert got[2:] == want[2:]


def test_parse_to_keywords_and_copy():
    assert C_NN._parse_to(device="cpu", dtype=ptcore.float32, non_blocking=True,
                          memory_format=ptcore.channels_last) == \
        (ptcore.device("cpu"), ptcore.float32, True, ptcore.channels_last)
    with pytest.raises(RuntimeError, match="copy"):
        C_NN._parse_to(copy=True)
    with pytest.raises(RuntimeError, match="copy"):
        torch._C._nn._parse_to(copy=True)


@pytest.mark.parametrize("name,args", [
    ("gelu", ()), ("silu", ()), ("mish", ()), ("hardswish", ()),
    ("hardsigmoid", ()), ("relu6", ()), ("log_sigmoid", ()), ("softplus", (2, 5)),
    ("leaky_relu", (0.2,)), ("hardtanh", (-0.5, 0.7)), ("glu", (1,)),
])
def test_activations(name, args):
    p, t = _pair((4, 6))
    _same(getattr(C_NN, name)(p, *args), getattr(torch._C._nn, name)(t, *args))


def test_gelu_approximate_is_keyword_only():
    p, t = _pair((4, 6))
    _same(C_NN.gelu(p, approximate="tanh"), torch._C._nn.gelu(t, approximate="tanh"))
    with pytest.raises(TypeError):
        C_NN.gelu(p, "tanh")


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("name,extra", [("mse_loss", ()), ("l1_loss", ()),
                                        ("smooth_l1_loss", (0.5,)), ("huber_loss", (0.7,)),
                                        ("soft_margin_loss", ())])
def test_losses_take_reduction_as_an_int(name, extra, reduction):
    p, t = _pair((5, 3))
    q, u = _pair((5, 3), seed=1)
    _same(getattr(C_NN, name)(p, q, reduction, *extra),
          getattr(torch._C._nn, name)(t, u, reduction, *extra), tol=1e-5)


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_nll_cross_entropy_bce(reduction):
    p, t = _pair((6, 4))
    tgt = np.array([0, 3, 1, 2, -100, 1])
    w = np.array([1.0, 2.0, 0.5, 1.5], np.float32)
    _same(C_NN.nll_loss(p.log_softmax(1), ptcore.tensor(tgt), ptcore.tensor(w), reduction, -100),
          torch._C._nn.nll_loss(t.log_softmax(1), torch.tensor(tgt), torch.tensor(w), reduction,
                                -100), tol=1e-5)
    _same(C_NN.cross_entropy_loss(p, ptcore.tensor(tgt), None, reduction, -100, 0.1),
          torch._C._nn.cross_entropy_loss(t, torch.tensor(tgt), None, reduction, -100, 0.1),
          tol=1e-5)
    pp, tt = _pair((6, 4), low=True)
    qq, uu = _pair((6, 4), seed=2, low=True)
    _same(C_NN.binary_cross_entropy(pp, qq, None, reduction),
          torch._C._nn.binary_cross_entropy(tt, uu, None, reduction), tol=1e-5)
    with pytest.raises(TypeError, match="reduction"):
        C_NN.mse_loss(p, p, "mean")


def test_linear_pad_one_hot_sdpa_pad_sequence():
    x, tx = _pair((3, 5))
    w, tw = _pair((4, 5), seed=1)
    b, tb = _pair((4,), seed=2)
    _same(C_NN.linear(x, w, b), torch._C._nn.linear(tx, tw, tb), tol=1e-5)
    _same(C_NN.pad(x, (1, 2), "constant", 3.0), torch._C._nn.pad(tx, (1, 2), "constant", 3.0))
    _same(C_NN.one_hot(ptcore.tensor([0, 2, 1]), 4), torch._C._nn.one_hot(torch.tensor([0, 2, 1]), 4))
    q, tq = _pair((2, 3, 4, 8))
    _same(C_NN.scaled_dot_product_attention(q, q, q, None, 0.0, True, scale=0.3),
          torch._C._nn.scaled_dot_product_attention(tq, tq, tq, None, 0.0, True, scale=0.3),
          tol=1e-5)
    seqs = [np.arange(n, dtype=np.float32) for n in (3, 1, 2)]
    _same(C_NN.pad_sequence([ptcore.tensor(s) for s in seqs], True, -1.0),
          torch._C._nn.pad_sequence([torch.tensor(s) for s in seqs], True, -1.0))


def test_flatten_and_unflatten_dense_tensors():
    ts = [ptcore.arange(6.).reshape(2, 3), ptcore.tensor([7.]), ptcore.ones(2, 2)]
    flat = C_NN.flatten_dense_tensors(ts)
    ref = torch._C._nn.flatten_dense_tensors([torch.tensor(t.numpy()) for t in ts])
    _same(flat, ref)
    back = C_NN.unflatten_dense_tensors(flat, ts)
    ref_back = torch._C._nn.unflatten_dense_tensors(ref, [torch.tensor(t.numpy()) for t in ts])
    assert type(back) is type(ref_back)
    assert [tuple(b.shape) for b in back] == [(2, 3), (1,), (2, 2)]
    for b, t in zip(back, ts):
        assert ptcore.equal(b, t)
    with pytest.raises(RuntimeError, match="shapes"):
        C_NN.unflatten_dense_tensors(flat[:-1], ts)


def test_utils_flatten_dense_tensors_as_torch_utils():
    """ptcore._utils (torch._utils): the flatten/unflatten pair that neuraloperator's model-
    parallel helpers import by torch's private names; the views share the flat buffer."""
    from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors

    from ptcore._utils import _flatten_dense_tensors as flatten
    from ptcore._utils import _unflatten_dense_tensors as unflatten
    ts = [ptcore.arange(6.).reshape(2, 3), ptcore.tensor([7.])]
    refs = [torch.tensor(t.numpy()) for t in ts]
    flat, ref = flatten(ts), _flatten_dense_tensors(refs)
    _same(flat, ref)
    back, ref_back = unflatten(flat, ts), _unflatten_dense_tensors(ref, refs)
    assert type(back) is type(ref_back) and len(back) == len(ref_back)
    for b, r in zip(back, ref_back):
        _same(b, r)
    back[1].fill_(-1.0)
    assert flat[-1].item() == -1.0
