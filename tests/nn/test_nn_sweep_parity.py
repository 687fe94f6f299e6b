"""Differential checks of torch.nn corners against PyTorch (found by a module sweep)."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _exc(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e), str(e)
    return None


def _same_exc(fn):
    """``fn(lib)`` raises the same exception type and message under torch and ptcore."""
    t, p = _exc(lambda: fn(torch)), _exc(lambda: fn(ptcore))
    assert t is not None
    assert p is not None and p[0] is t[0], (t, p)
    assert p[1] == t[1]


@pytest.mark.parametrize("shape", [(), (4,), (4, 4), (1, 1, 1, 4, 4)])
def test_unfold_bad_rank_errors(shape):
    _same_exc(lambda lib: lib.nn.functional.unfold(lib.ones(shape), 2))
    _same_exc(lambda lib: lib.nn.Unfold(2)(lib.ones(shape)))


@pytest.mark.parametrize("shape", [(), (4,), (1, 4, 4, 4)])
def test_fold_bad_rank_errors(shape):
    _same_exc(lambda lib: lib.nn.functional.fold(lib.ones(shape), (3, 3), 2))


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_circular_pad_module_bad_rank_is_value_error(nd):
    _same_exc(lambda lib: getattr(lib.nn, f"CircularPad{nd}d")(1)(lib.ones((2,) * (nd + 3))))
    _same_exc(lambda lib: getattr(lib.nn, f"CircularPad{nd}d")(1)(lib.ones((2,) * nd)))
    x = np.random.RandomState(0).randn(*(3,) * (nd + 1)).astype(np.float32)
    out = getattr(ptcore.nn, f"CircularPad{nd}d")(1)
    ref = getattr(torch.nn, f"CircularPad{nd}d")(1)
    np.testing.assert_allclose(out(ptcore.from_numpy(x)).numpy(), ref(torch.from_numpy(x)).numpy())


def _linear(lib):
    m = lib.nn.Linear(3, 2)
    with lib.no_grad():
        m.weight.copy_(lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]))
        m.bias.copy_(lib.tensor([0.1, -0.2]))
    return m


def _legacy_backward_hook_run(lib):
    m = _linear(lib)
    log = []

    def hook(mod, gi, go):
        assert mod is m
        log.append(([None if g is None else g.tolist() for g in gi], [g.tolist() for g in go]))
        return (gi[0] * 3, gi[1], gi[2])

    h = m.register_backward_hook(hook)
    x = lib.ones(4, 3, requires_grad=True)
    (m(x) * lib.arange(8.).reshape(4, 2)).sum().backward()
    h.remove()
    m(x).sum().backward()
    return log, x.grad.tolist(), m.bias.grad.tolist(), m.weight.grad.tolist()


def test_module_register_backward_hook_legacy_semantics():
    # the deprecated hook runs on the output's grad_fn (addmm: bias, input, weight.T)
    assert _legacy_backward_hook_run(ptcore) == _legacy_backward_hook_run(torch)


def test_module_legacy_and_full_backward_hooks_do_not_mix():
    _same_exc(lambda lib: (lambda m: (m.register_backward_hook(lambda *a: None),
                                      m.register_full_backward_hook(lambda *a: None)))(lib.nn.Linear(2, 2)))
    _same_exc(lambda lib: (lambda m: (m.register_full_backward_hook(lambda *a: None),
                                      m.register_backward_hook(lambda *a: None)))(lib.nn.Linear(2, 2)))


def test_global_module_backward_hook():
    def run(lib):
        mm = lib.nn.modules.module
        log = []
        # (a global full backward hook registered by an earlier test leaves the
        # kind flag set after its removal, in torch as in ptcore)
        mm._global_is_full_backward_hook = None
        h = mm.register_module_backward_hook(lambda m, gi, go: log.append(type(m).__name__))
        try:
            x = lib.ones(4, 3, requires_grad=True)
            net = lib.nn.Sequential(_linear(lib), lib.nn.ReLU())
            net(x).sum().backward()
        finally:
            h.remove()
            mm._global_is_full_backward_hook = None
        return log
    assert run(ptcore) == run(torch) == ["ReLU", "Sequential", "Linear"]


def test_dir_lists_training_once():
    assert dir(ptcore.nn.Linear(2, 2)).count("training") == 1
    assert dir(torch.nn.Linear(2, 2)).count("training") == 1


_NORMS = {
    "layer_norm": lambda F, x, w, b: F.layer_norm(x, (3,), w[:3], b[:3]),
    "group_norm": lambda F, x, w, b: F.group_norm(x, 2, w, b),
    "batch_norm": lambda F, x, w, b: F.batch_norm(x, b.detach().float().clone(), w.detach().float().clone(), w, b,
                                                  training=True),
    "batch_norm_eval": lambda F, x, w, b: F.batch_norm(x, b.detach(), w.detach() * 2, w, b),
    "instance_norm": lambda F, x, w, b: F.instance_norm(x, None, None, w, b),
    "rms_norm": lambda F, x, w, b: F.rms_norm(x, (3,), w[:3]),
    "prelu": lambda F, x, w, b: F.prelu(x, w),
}


@pytest.mark.parametrize("fn", sorted(_NORMS))
@pytest.mark.parametrize("xd,wd", [("bfloat16", "float32"), ("float16", "float32"),
                                   ("float64", "float32"), ("float32", "float64"),
                                   ("bfloat16", "float16"), ("float32", "bfloat16")])
def test_norm_mixed_dtypes_as_torch(fn, xd, wd):
    # ATen (CPU) takes half/bfloat16 input with float32 parameters (result in the input's
    # dtype) and refuses other mixes; rms_norm always returns the input's dtype; prelu
    # refuses any mix
    x0 = np.random.RandomState(0).randn(4, 6, 3).astype(np.float32)
    w0 = np.random.RandomState(1).rand(6).astype(np.float32) + 0.5
    b0 = np.random.RandomState(2).randn(6).astype(np.float32)

    def run(lib):
        x = lib.from_numpy(x0).to(getattr(lib, xd)).requires_grad_()
        w = lib.from_numpy(w0).to(getattr(lib, wd)).requires_grad_()
        b = lib.from_numpy(b0).to(getattr(lib, wd))
        try:
            y = _NORMS[fn](lib.nn.functional, x, w, b)
        except RuntimeError as e:
            return "RuntimeError", str(e).split(":")[0]
        (y.float() * lib.from_numpy(x0 + 1)).sum().backward()
        return y, x.grad, w.grad

    t, p = run(torch), run(ptcore)
    if isinstance(t[0], str):
        assert p == t
        return
    assert not isinstance(p[0], str), p
    for a, b in zip(t, p):
        assert str(b.dtype) == str(a.dtype).replace("torch", "ptcore")
        tol = 3e-2 if xd in ("bfloat16", "float16") else 1e-4
        np.testing.assert_allclose(b.detach().float().numpy(), a.detach().float().numpy(),
                                   rtol=tol, atol=tol)


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_rms_norm_low_precision_default_eps_is_float32s(dt):
    # ATen computes half/bfloat16 rms_norm in float32, eps=None meaning float32's eps:
    # with bfloat16's eps (0.0078) small inputs were shrunk about a hundredfold
    x0 = np.random.RandomState(0).randn(3, 8).astype(np.float32) * 1e-3
    ref = torch.nn.functional.rms_norm(torch.from_numpy(x0).to(getattr(torch, dt)), (8,))
    out = ptcore.nn.functional.rms_norm(ptcore.from_numpy(x0).to(getattr(ptcore, dt)), (8,))
    assert str(out.dtype) == f"ptcore.{dt}"
    np.testing.assert_allclose(out.float().numpy(), ref.float().numpy(), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("cls", ["ZeroPad1d", "ZeroPad2d", "ConstantPad2d", "ReplicationPad1d",
                                 "ReflectionPad2d", "CircularPad2d"])
@pytest.mark.parametrize("pad", [(1, 2), [1, 2, 0, 1], (1, 2, 3, 0, 1, 1), (1, 2, 3)])
def test_pad_modules_keep_a_padding_of_any_length(cls, pad):
    # torch's _pair/_quadruple/_ntuple keep a sequence as given; F.pad then judges it
    def run(lib):
        m = getattr(lib.nn, cls)(*((pad, 1.5) if cls.startswith("Constant") else (pad,)))
        x = lib.arange(2 * 3 * 4 * 5, dtype=lib.float32).reshape(2, 3, 4, 5)
        try:
            return repr(m), m.padding, m(x).tolist()
        except Exception as e:  # noqa: BLE001
            return repr(m), m.padding, type(e).__name__
    assert run(ptcore) == run(torch)


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("shape", [(1, 2, 5), (2, 3, 5, 6), (1, 1, 3, 5, 4)])
@pytest.mark.parametrize("kw", [dict(scale_factor=1.7), dict(scale_factor=0.6), dict(size=7),
                                dict(scale_factor=1.7, recompute_scale_factor=True)])
def test_interpolate_nearest_uint8_images(mode, shape, kw):
    x = (np.arange(int(np.prod(shape))).reshape(shape) * 37 % 256).astype(np.uint8)
    ref = torch.nn.functional.interpolate(torch.from_numpy(x), mode=mode, **kw)
    out = ptcore.nn.functional.interpolate(ptcore.from_numpy(x), mode=mode, **kw)
    assert out.dtype == ptcore.uint8
    np.testing.assert_array_equal(out.numpy(), ref.numpy())


def test_fused_ops_name_their_grad_fn_as_torch():
    # print(out) of a CNN shows grad_fn=<ConvolutionBackward0> etc. in torch
    def names(lib):
        F = lib.nn.functional
        img = lib.ones(1, 1, 6, 6, requires_grad=True)
        cw = lib.ones(2, 1, 3, 3, requires_grad=True)
        return [type(y.grad_fn).__name__ for y in (
            F.conv2d(img, cw), F.max_pool2d(img, 2),
            F.batch_norm(img, None, None, training=True))]
    assert names(ptcore) == names(torch) == [
        "ConvolutionBackward0", "MaxPool2DWithIndicesBackward0", "NativeBatchNormBackward0"]
    y = ptcore.nn.functional.conv2d(ptcore.ones(1, 1, 4, 4, requires_grad=True),
                                    ptcore.ones(1, 1, 3, 3))
    assert "grad_fn=<ConvolutionBackward0>" in repr(y)
