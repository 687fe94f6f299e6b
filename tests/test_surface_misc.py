"""Tensor.to_dense/dense_dim/sparse_dim/xpu/ipu/mtia on dense tensors, the root sparse
products (smm, dsmm, hspmm), F.linear_cross_entropy, F.grouped_mm and
nn.LinearCrossEntropyLoss, compared with torch."""
import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _pt(a):
    return ptcore.tensor(a.detach().numpy())


def _close(got, exp, **kw):
    assert tuple(got.shape) == tuple(exp.shape)
    np.testing.assert_allclose(got.detach().numpy(), exp.detach().numpy(), **kw)


def _same_error(fn_pt, fn_t):
    with pytest.raises(Exception) as et:
        fn_t()
    with pytest.raises(type(et.value)):
        fn_pt()


def test_dense_tensor_sparse_queries_and_absent_devices():
    x, tx = ptcore.ones(2, 3), torch.ones(2, 3)
    assert x.to_dense() is x and tx.to_dense() is tx
    assert x.to_dense(ptcore.float64).dtype is ptcore.float64
    assert (x.dense_dim(), x.sparse_dim()) == (tx.dense_dim(), tx.sparse_dim())
    for name in ("xpu", "ipu", "mtia"):
        _same_error(lambda: getattr(x, name)(), lambda: getattr(tx, name)())


def test_root_sparse_products():
    d = torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 2.0, 3.0]])
    m = torch.arange(6.0).reshape(3, 2)
    S, tS = _pt(d).to_sparse(), d.to_sparse()
    got, exp = ptcore.smm(S, _pt(m)), torch.smm(tS, m)
    assert got.layout is ptcore.sparse_coo and exp.layout is torch.sparse_coo
    _close(got.to_dense(), exp.to_dense())
    _close(ptcore.dsmm(S, _pt(m)), torch.dsmm(tS, m))
    got, exp = ptcore.hspmm(S, _pt(m)), torch.hspmm(tS, m)
    assert got.layout is ptcore.sparse_coo and (got.sparse_dim(), got.dense_dim()) == \
        (exp.sparse_dim(), exp.dense_dim())
    np.testing.assert_array_equal(got.coalesce().indices().numpy(),
                                  exp.coalesce().indices().numpy())
    _close(got.to_dense(), exp.to_dense())
    _same_error(lambda: ptcore.smm(_pt(m), _pt(m)), lambda: torch.smm(m, m))
    _same_error(lambda: ptcore.hspmm(_pt(d), _pt(m)), lambda: torch.hspmm(d, m))


@pytest.mark.parametrize("kw", [dict(), dict(reduction="sum"), dict(reduction="none"),
                                dict(label_smoothing=0.1), dict(ignore_index=1),
                                dict(bias=True), dict(weight=True)])
def test_linear_cross_entropy(kw):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(5, 4, generator=g, requires_grad=True)
    W = torch.randn(3, 4, generator=g, requires_grad=True)
    t = torch.tensor([0, 1, 2, 1, 0])
    kw = dict(kw)
    b = torch.randn(3, generator=g) if kw.pop("bias", False) else None
    w = torch.rand(3, generator=g) if kw.pop("weight", False) else None
    exp = TF.linear_cross_entropy(x, W, t, linear_bias=b, weight=w, **kw)
    px, pW = _pt(x).requires_grad_(), _pt(W).requires_grad_()
    got = F.linear_cross_entropy(px, pW, _pt(t), linear_bias=None if b is None else _pt(b),
                                 weight=None if w is None else _pt(w), **kw)
    _close(got, exp, rtol=1e-5, atol=1e-6)
    exp.sum().backward()
    got.sum().backward()
    _close(pW.grad, W.grad, rtol=1e-5, atol=1e-6)
    _close(px.grad, x.grad, rtol=1e-5, atol=1e-6)


def test_linear_cross_entropy_k_dimensional_probabilities_and_errors():
    g = torch.Generator().manual_seed(1)
    x, W = torch.randn(5, 4, generator=g), torch.randn(3, 2, 4, generator=g)
    b = torch.randn(3, 2, generator=g)
    t = torch.randint(0, 3, (5, 2), generator=g)
    _close(F.linear_cross_entropy(_pt(x), _pt(W), _pt(t), linear_bias=_pt(b)),
           TF.linear_cross_entropy(x, W, t, linear_bias=b), rtol=1e-5)
    W2 = torch.randn(3, 4, generator=g)
    p = torch.softmax(torch.randn(5, 3, generator=g), -1)
    _close(F.linear_cross_entropy(_pt(x), _pt(W2), _pt(p)),
           TF.linear_cross_entropy(x, W2, p), rtol=1e-5)
    _same_error(lambda: F.linear_cross_entropy(_pt(x), _pt(W2), _pt(p), ignore_index=0),
                lambda: TF.linear_cross_entropy(x, W2, p, ignore_index=0))
    _same_error(lambda: F.linear_cross_entropy(_pt(x)[:, :3], _pt(W2), _pt(t[:, 0])),
                lambda: TF.linear_cross_entropy(x[:, :3], W2, t[:, 0]))
    _same_error(lambda: F.linear_cross_entropy(_pt(x)[0], _pt(W), _pt(t)[0]),
                lambda: TF.linear_cross_entropy(x[0], W, t[0]))


def test_linear_cross_entropy_loss_module():
    torch.manual_seed(0)
    tm = torch.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True,
                                         label_smoothing=0.05)
    pm = ptcore.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True,
                                          label_smoothing=0.05)
    assert repr(pm) == repr(tm)
    assert [n for n, _ in pm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    pm.load_state_dict({k: _pt(v) for k, v in tm.state_dict().items()})
    x = torch.randn(6, 4)
    t = torch.randint(0, 3, (6, 2))
    _close(pm(_pt(x), _pt(t)), tm(x, t), rtol=1e-5)
    with pytest.raises(RuntimeError):
        ptcore.nn.LinearCrossEntropyLoss(4, 3, weight=ptcore.ones(2))
    with pytest.raises(RuntimeError):
        ptcore.nn.LinearCrossEntropyLoss(4, 3, label_smoothing=1.5)


def test_grouped_mm_against_torch():
    g = torch.Generator().manual_seed(2)
    offs = torch.tensor([3, 4, 8], dtype=torch.int32)
    a, b = torch.randn(8, 8, generator=g), torch.randn(8, 8, generator=g)
    _close(F.grouped_mm(_pt(a), _pt(b), offs=_pt(offs)), TF.grouped_mm(a, b, offs=offs),
           rtol=1e-5, atol=1e-5)
    a3 = torch.randn(3, 4, 8, generator=g)
    _close(F.grouped_mm(_pt(a3), _pt(b), offs=_pt(offs)), TF.grouped_mm(a3, b, offs=offs),
           rtol=1e-5, atol=1e-5)
    a2 = torch.randn(8, 8, generator=g)
    b3 = torch.randn(3, 4, 8, generator=g).transpose(-2, -1)
    _close(F.grouped_mm(_pt(a2), _pt(b3.contiguous()), offs=_pt(offs)),
           TF.grouped_mm(a2, b3, offs=offs), rtol=1e-5, atol=1e-5)
    a3, b3 = torch.randn(3, 4, 8, generator=g), torch.randn(3, 8, 4, generator=g)
    got = F.grouped_mm(_pt(a3), _pt(b3))
    _close(got, torch.bmm(a3, b3), rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError):
        F.grouped_mm(_pt(a2), _pt(b3[0]))


def test_linear_cross_entropy_options_and_import_paths():
    from ptcore.nn.modules.loss import LinearCrossEntropyLoss
    from ptcore.nn.modules.linear_cross_entropy_options import LinearCrossEntropyOptions
    assert LinearCrossEntropyLoss is ptcore.nn.LinearCrossEntropyLoss
    assert LinearCrossEntropyOptions is ptcore.nn.LinearCrossEntropyOptions
    assert repr(LinearCrossEntropyOptions(batch_chunk_size=8)).replace("ptcore", "torch") == \
        repr(torch.nn.LinearCrossEntropyOptions(batch_chunk_size=8))
    x, W, t = torch.randn(4, 3), torch.randn(5, 3), torch.tensor([0, 1, 4, 2])
    got = F.linear_cross_entropy(_pt(x), _pt(W), _pt(t),
                                 options=LinearCrossEntropyOptions(batch_chunk_size=2))
    _close(got, TF.linear_cross_entropy(x, W, t), rtol=1e-5)


def test_nn_attention_sdpa_kernel_switches_the_flags():
    from ptcore.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.attention import SDPBackend as TB, sdpa_kernel as tk
    cb, tcb = ptcore.backends.cuda, torch.backends.cuda

    def flags(b):
        return (b.flash_sdp_enabled(), b.mem_efficient_sdp_enabled(), b.math_sdp_enabled(),
                b.cudnn_sdp_enabled())
    assert {m: int(v) for m, v in SDPBackend.__members__.items()} == \
        {m: int(v.value) for m, v in TB.__members__.items()}
    for sel in ("MATH", ["FLASH_ATTENTION", "MATH"], ["CUDNN_ATTENTION"]):
        pt_sel = getattr(SDPBackend, sel) if isinstance(sel, str) else \
            [getattr(SDPBackend, s) for s in sel]
        t_sel = getattr(TB, sel) if isinstance(sel, str) else [getattr(TB, s) for s in sel]
        with sdpa_kernel(pt_sel), tk(t_sel):
            assert flags(cb) == flags(tcb)
        assert flags(cb) == flags(tcb)
    _same_error(lambda: sdpa_kernel("x").__enter__(), lambda: tk("x").__enter__())
    assert ptcore.nn.attention.WARN_FOR_UNFUSED_KERNELS is torch.nn.attention.WARN_FOR_UNFUSED_KERNELS
    q = ptcore.randn(2, 3, 4)
    with sdpa_kernel(SDPBackend.MATH):
        out = F.scaled_dot_product_attention(q, q, q)
    assert tuple(out.shape) == (2, 3, 4)


def test_cuda_nvtx_annotations_run():
    nvtx = ptcore.cuda.nvtx
    assert nvtx.range_push("outer") == 0 and nvtx.range_push("inner") == 1
    assert nvtx.range_pop() == 1 and nvtx.range_pop() == 0 and nvtx.range_pop() == -1
    with nvtx.range("step {}", 3):
        assert nvtx._stack() == ["step 3"]
    assert nvtx._stack() == []
    rid = nvtx.range_start("async")
    nvtx.range_end(rid)
    nvtx.mark("here")
    assert set(nvtx.__all__) == {n for n in dir(torch.cuda.nvtx)
                                 if not n.startswith("_") and n != "contextmanager"}


def test_nn_attention_attribute_is_the_package():
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(ptcore.__file__))
    code = ("import ptcore; a = ptcore.nn.attention; "
            "assert a.__name__ == 'ptcore.nn.attention' and hasattr(a, 'sdpa_kernel'), a; "
            "assert ptcore.nn.utils.__name__ == 'ptcore.nn.utils'")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": root}, timeout=120)
    assert p.returncode == 0, p.stderr


def test_native_norm_of_sparse_values():
    d = torch.tensor([[3.0, 0.0, -1.0], [0.0, 4.0, 0.0]])
    S, tS = _pt(d).to_sparse(), d.to_sparse()
    for p in (2, 1, 3.0):
        _close(ptcore.native_norm(S, p), torch.native_norm(tS, p), rtol=1e-6)
    _close(ptcore.native_norm(S, 2, [0, 1], False, None),
           torch.native_norm(tS, 2, [0, 1], False, None), rtol=1e-6)
    _same_error(lambda: ptcore.native_norm(S, 2, [0, 1], True, None),
                lambda: torch.native_norm(tS, 2, [0, 1], True, None))
    _same_error(lambda: ptcore.native_norm(S, 2, [0, 1], False, ptcore.float64),
                lambda: torch.native_norm(tS, 2, [0, 1], False, torch.float64))
    _same_error(lambda: ptcore.native_norm(S, 2, [1], False, None),
                lambda: torch.native_norm(tS, 2, [1], False, None))
    _same_error(lambda: ptcore.native_norm(_pt(d)), lambda: torch.native_norm(d))


def test_contextlib_decorator_bases_as_torch():
    """``utils._contextlib`` (tensordict subclasses ``_DecoratorContextManager`` for its
    modes): a subclass works as context manager, ``@mode()`` and, from
    ``_NoParamDecoratorContextManager``, bare ``@mode``; generators resume inside the mode;
    ``context_decorator`` refuses classes and ambiguous managers."""
    torch = pytest.importorskip("torch")
    import ptcore.utils._contextlib as pc
    import torch.utils._contextlib as tc
    results = []
    for mod in (pc, tc):
        log = []

        class Mode(mod._DecoratorContextManager):
            def __init__(self, tag="m"):
                self.tag = tag

            def __enter__(self):
                log.append(f"in {self.tag}")

            def __exit__(self, *exc):
                log.append("out")

            def clone(self):
                return type(self)(self.tag)

        class Bare(mod._NoParamDecoratorContextManager):
            def __enter__(self):
                log.append("bare in")

            def __exit__(self, *exc):
                log.append("bare out")

        @Mode("f")
        def f(x):
            log.append("body")
            return x + 1

        @Bare
        def g():
            return "g"

        @Mode("gen")
        def gen():
            yield 1
            yield 2
        log.append(f(1))
        log.append(g())
        log.append(list(gen()))
        deco = mod.context_decorator(lambda: Mode("cd"), lambda: log.append("cd body"))
        deco()
        with pytest.raises(RuntimeError):
            mod.context_decorator(lambda: Mode(), Mode)
        with pytest.raises(AssertionError):
            mod.context_decorator(Mode, f)
        results.append(log)
    assert results[0] == results[1]


def test_device_type_helpers_as_torch():
    """``_utils._get_available_device_type``/``_get_device_module`` (tensordict's device
    code)."""
    torch = pytest.importorskip("torch")
    import ptcore._utils as pu
    import torch._utils as tu
    # (torch's answer on this machine, where ptcore's CUDA is not emulated)
    want = "cuda" if ptcore.cuda.is_available() else tu._get_available_device_type()
    assert pu._get_available_device_type() == want
    assert pu._get_device_module("cpu") is ptcore.cpu
    assert pu._get_device_module("cuda") is ptcore.cuda
    for mod in (pu, tu):
        with pytest.raises(RuntimeError, match="does not have a corresponding module"):
            mod._get_device_module("no_such_device")


def test_c_is_alias_of_as_torch():
    """``torch._C._is_alias_of`` (tensordict's ``to_module``): views, detach and a Parameter
    share their base's storage; clones and separate empty tensors do not."""
    torch = pytest.importorskip("torch")
    for lib in (ptcore, torch):
        a = lib.ones(4)
        f = lib._C._is_alias_of
        e = lib.empty(0)
        got = [f(a, a[1:]), f(a, a.clone()), f(a, a.view(2, 2)), f(a.detach(), a),
               f(lib.nn.Parameter(a), a), f(e, lib.empty(0)), f(e, e)]
        assert got == [True, False, True, True, True, False, True], lib.__name__
        assert f(a, 1) is f(None, a) is False       # (no tensor: False, not an error)


def test_torch_ops_module_names():
    """``torch._ops``' classes where ptcore's operator package stands for it (``from
    torch._ops import OpOverload, HigherOrderOperator``: tensordict's ``__torch_function__``
    asks whether an unhandled function is a higher-order operator)."""
    torch = pytest.importorskip("torch")
    import ptcore._ops as pops
    import torch._ops as tops
    for lib, mod in ((ptcore, pops), (torch, tops)):
        assert isinstance(lib.ops.aten.add.Tensor, mod.OpOverload)
        assert isinstance(lib.ops.aten.add, mod.OpOverloadPacket)
        assert not isinstance(lib.add, mod.HigherOrderOperator)
        with pytest.raises(TypeError):
            mod.HigherOrderOperator("abstract")

        class MyHop(mod.HigherOrderOperator):
            def __call__(self, fn, x):
                return fn(x) * 2
        hop = MyHop("my_hop_" + lib.__name__.split(".")[0])
        assert (hop.name(), hop.__name__, hop.namespace) == \
            ("my_hop_" + lib.__name__.split(".")[0],) * 2 + ("higher_order",)
        assert hop(lambda v: v + 1, 1) == 4

        class Sub(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                if isinstance(func, mod.HigherOrderOperator):
                    return "hop"
                return NotImplemented
        s = lib.ones(2).as_subclass(Sub)
        with pytest.raises(TypeError):
            lib.logaddexp(s, s)
