"""The snippets of PyTorch's official tutorials, run under torch and ptcore.

"Learning PyTorch with Examples", "What is torch.nn really?", "Tensors",
"A gentle introduction to torch.autograd", "Autograd mechanics", "Saving and
loading models" and the 60 minute blitz, with synthetic data; each snippet
is written once, against a module argument, and run with both libraries.
"""
import math

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:      # noqa: BLE001  (the exception type is compared)
        return ("raises", type(e).__name__, str(e).replace("ptcore", "torch"))


# ---------------------------------------------------------------------------
# Autograd mechanics: saved tensors (grad_fn._saved_*)
# ---------------------------------------------------------------------------

def _saved_tensors_snippet(T):
    x = T.tensor([1., 2., 3.], requires_grad=True)
    out = []
    y = x.pow(2)
    out += [x.equal(y.grad_fn._saved_self), x is y.grad_fn._saved_self,
            y.grad_fn._saved_exponent, type(y.grad_fn._saved_exponent).__name__]
    y = x.exp()
    r = y.grad_fn._saved_result
    out += [y.equal(r), y is r, r.grad_fn is y.grad_fn]
    y = x.pow(2)
    y.sum().backward()
    out += [_outcome(lambda: y.grad_fn._saved_self)[:2], y.grad_fn._saved_exponent]
    out.append(_outcome(lambda: y.grad_fn._saved_result)[:2])
    y = x * 2
    out += [y.grad_fn._saved_other.tolist(), y.grad_fn._saved_self]
    z = T.ones(3, requires_grad=True)
    y = x * z
    out += [y.grad_fn._saved_other is z, y.grad_fn._saved_self is x]
    y = x / z
    out += [y.grad_fn._saved_other is z, y.grad_fn._saved_self is x]
    y = x / 2
    out += [y.grad_fn._saved_other.tolist(), y.grad_fn._saved_self]
    y = x.square()
    out += [type(y.grad_fn).__name__, y.grad_fn._saved_exponent, y.grad_fn._saved_self is x]
    y = x ** T.tensor(2.)
    out += [type(y.grad_fn).__name__, y.grad_fn._saved_result.tolist()]
    y = 2 ** x
    out += [y.grad_fn._saved_self, y.grad_fn._saved_exponent is x]
    for f in ("sin", "log", "sigmoid", "tanh", "relu", "sqrt", "abs", "neg"):
        node = getattr(x, f)().grad_fn
        out.append((f, [a for a in dir(node) if a.startswith("_saved_")]))
    return out


def test_saved_tensor_attributes_match_torch():
    assert _saved_tensors_snippet(ptcore) == _saved_tensors_snippet(torch)


def _raw_saved_hooks_snippet(T):
    log = []

    def pack(t):
        log.append(("pack", list(t.shape)))
        return t * 1

    def unpack(t):
        log.append("unpack")
        return t

    x = T.tensor([1., 2., 3.], requires_grad=True)
    y = x.pow(2)
    y.grad_fn._raw_saved_self.register_hooks(pack, unpack)
    log.append(y.grad_fn._saved_self.tolist())
    log.append(_outcome(lambda: y.grad_fn._raw_saved_self.register_hooks(pack, unpack)))
    y.sum().backward()
    log.append(x.grad.tolist())
    y = x.exp()
    y.grad_fn._raw_saved_result.register_hooks(pack, unpack)
    y.sum().backward()
    log.append(_outcome(lambda: y.grad_fn._raw_saved_result.register_hooks(pack, unpack)))
    return log


def test_raw_saved_tensor_register_hooks_match_torch():
    assert _raw_saved_hooks_snippet(ptcore) == _raw_saved_hooks_snippet(torch)


def test_saved_tensor_modified_in_place_raises_as_torch():
    def run(T):
        w = T.ones(3, requires_grad=True) * 1
        y = w.pow(2)
        w.add_(1)
        return _outcome(lambda: y.grad_fn._saved_self)[:2]
    assert run(ptcore) == run(torch) == ("raises", "RuntimeError")


def test_pow_tensor_exponent_saves_its_result_as_torch():
    # torch's pow.Tensor_Tensor saves the result even when the exponent needs
    # no gradient: modifying the output in place then fails backward
    def run(T):
        x = T.tensor([1., 2., 3.], requires_grad=True)
        y = x ** T.tensor(2.)
        y.add_(1)
        return _outcome(lambda: y.sum().backward())[:2]
    assert run(ptcore) == run(torch) == ("raises", "RuntimeError")
    x = ptcore.tensor([1., 2., 3.], requires_grad=True)
    (x ** ptcore.tensor([2., 1., 0.])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2., 1., 0.])


def test_saved_values_are_dropped_after_backward():
    x = ptcore.ones(3, requires_grad=True)
    y = x.exp()
    node = y.grad_fn
    y.sum().backward()
    assert node._sv is None or all(not isinstance(v, ptcore.Tensor) for v in node._sv)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        node._saved_result


def _hooks_order_snippet(T):
    # "Hooks for autograd saved tensors": the pack/unpack hooks print what
    # they see, in torch's order
    log = []

    def pack_hook(x):
        log.append(("Packing", x.tolist()))
        return x

    def unpack_hook(x):
        log.append(("Unpacking", x.tolist()))
        return x

    a = T.ones(5, requires_grad=True)
    b = T.ones(5, requires_grad=True) * 2
    with T.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        y = a * b
    y.sum().backward()
    e = T.full((3,), 3., requires_grad=True)
    with T.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        y = a[:3] ** e
    y.sum().backward()
    return log


def test_saved_tensors_hooks_order_matches_torch():
    assert _hooks_order_snippet(ptcore) == _hooks_order_snippet(torch)


def _anomaly_snippet(T):
    # Autograd mechanics / anomaly detection: the failing node is reported
    # as a UserWarning with the forward traceback; the error keeps its message
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with T.autograd.set_detect_anomaly(True):
            x = T.tensor([0.], requires_grad=True)
            y = x.sqrt() * 0
            err = _outcome(y.backward)
    msgs = [(m.category.__name__, str(m.message).split("\n")[0]) for m in w]
    frames = [[ln.strip() for ln in str(m.message).split("\n") if ln.strip().startswith("File")]
              for m in w]
    return err, msgs, frames


def test_anomaly_mode_warns_with_forward_traceback_as_torch():
    err, msgs, frames = _anomaly_snippet(ptcore)
    assert (err, msgs) == _anomaly_snippet(torch)[:2]
    # the innermost frame is the user's line (not ptcore's dispatch internals)
    assert frames and frames[0][-1].startswith(f'File "{__file__}"')


# ---------------------------------------------------------------------------
# print(loss) shows torch's grad_fn for the classification losses
# ---------------------------------------------------------------------------

def _loss_nodes(T):
    F = T.nn.functional
    out = []
    for shape in [(5,), (4, 5), (2, 5, 3), (2, 5, 3, 2), (2, 5, 2, 2, 2)]:
        x = T.ones(shape).requires_grad_()
        t = T.zeros((shape[0],) + shape[2:] if len(shape) > 1 else (), dtype=T.long)
        for red in ("mean", "sum", "none"):
            for w in (None, T.ones(5)):
                y = F.nll_loss(x, t, weight=w, reduction=red)
                z = F.cross_entropy(x, t, weight=w, reduction=red)
                out.append((shape, red, w is None, type(y.grad_fn).__name__,
                            type(y.grad_fn.next_functions[0][0]).__name__,
                            type(z.grad_fn).__name__, z.shape))
    x = T.ones(4, 5).requires_grad_()
    p = T.full((4, 5), 0.2)
    t = T.tensor([0, 1, 2, 3])
    out.append(type(F.cross_entropy(x, p).grad_fn).__name__)
    out.append(type(F.cross_entropy(x, t, label_smoothing=0.1).grad_fn
                    .next_functions[0][0].next_functions[0][0]).__name__)
    out.append(type(T.div(x, 2, rounding_mode="floor").grad_fn).__name__)
    return out


def test_classification_loss_nodes_match_torch():
    assert _loss_nodes(ptcore) == _loss_nodes(torch)


def test_nll_loss_nd_values_and_grads_match_torch():
    rs = np.random.RandomState(0)
    for shape in [(2, 5, 3), (2, 5, 3, 2), (2, 5, 2, 2, 2)]:
        x = rs.randn(*shape).astype(np.float32)
        t = rs.randint(0, 5, (shape[0],) + shape[2:])
        w = rs.rand(5).astype(np.float32)
        for red in ("mean", "sum", "none"):
            res = []
            for T in (ptcore, torch):
                xt = T.tensor(x, requires_grad=True)
                y = T.nn.functional.cross_entropy(xt, T.tensor(t), weight=T.tensor(w),
                                                  reduction=red)
                (y * T.arange(y.numel()).reshape(y.shape).float()).sum().backward() \
                    if red == "none" else y.backward()
                res.append((y.detach().numpy(), xt.grad.numpy()))
            np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-5, atol=1e-6)


def test_nll_loss_nd_target_shape_error_as_torch():
    def run(T):
        x = T.zeros(2, 5, 3, requires_grad=True)
        return _outcome(lambda: T.nn.functional.nll_loss(x, T.zeros(2, 4, dtype=T.long)))[:3]
    assert run(ptcore) == run(torch)


def _more_loss_nodes(T):
    F = T.nn.functional
    rs = np.random.RandomState(0)
    x = T.tensor(rs.randn(4, 5).astype(np.float32), requires_grad=True)
    sgn = T.tensor(np.sign(rs.randn(4, 5)).astype(np.float32))
    t = T.tensor([0, 1, 2, 3])
    ml = T.tensor([[0, 1, -1, 0, 0]] * 4)
    out = []
    for red in ("mean", "sum", "none"):
        for y in (F.soft_margin_loss(x, sgn, reduction=red),
                  F.multi_margin_loss(x, t, reduction=red),
                  F.multi_margin_loss(x, t, p=2, weight=T.arange(5.), reduction=red),
                  F.multilabel_margin_loss(x, ml, reduction=red),
                  F.multilabel_margin_loss(x[0], ml[0], reduction=red)):
            g, = T.autograd.grad(y.sum(), x)
            out.append((type(y.grad_fn).__name__, np.round(y.detach().numpy(), 5).tolist(),
                        np.round(g.numpy(), 5).tolist()))
    lp = x.view(4, 1, 5).log_softmax(2)
    y = F.ctc_loss(lp, T.tensor([[1, 2]]), T.tensor([4]), T.tensor([2]))
    out.append(type(y.grad_fn).__name__)
    z = T.zeros(3)
    out.append([type(v.grad_fn).__name__ for v in (
        x.clamp_min(0), x.clamp_max(0), x.clamp(min=0), x.clip(0, 1), x[0, :3].clamp(min=z),
        x[0, :3].clamp_min(z), x[0, :3].clamp_max(z))])
    return out


def test_margin_and_ctc_loss_nodes_match_torch():
    assert _more_loss_nodes(ptcore) == _more_loss_nodes(torch)


def _warning_files(*calls):
    """The files the warnings raised by ``calls`` are attributed to."""
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for c in calls:
            c()
    return [m.filename for m in w]


def test_kl_div_mean_warning_points_at_the_caller():
    assert _warning_files(
        lambda: ptcore.nn.functional.kl_div(ptcore.zeros(2, 3), ptcore.ones(2, 3))) == [__file__]


# ---------------------------------------------------------------------------
# loss dtypes and target-dtype errors (integer labels into BCEWithLogitsLoss,
# float64 numpy targets) as torch's kernels
# ---------------------------------------------------------------------------

def _loss_dtypes(T):
    F = T.nn.functional
    rows = []
    pairs = [(T.float32, T.float64), (T.float64, T.float32), (T.float16, T.float32),
             (T.float32, T.float16), (T.float32, T.int64), (T.float32, T.int32),
             (T.float32, T.bool)]
    for a, b in pairs:
        x = T.zeros(4, dtype=a)
        t = T.ones(4, dtype=b)
        row = []
        for fn in (lambda: F.mse_loss(x, t), lambda: F.smooth_l1_loss(x, t),
                   lambda: F.huber_loss(x, t), lambda: F.soft_margin_loss(x, t),
                   lambda: F.binary_cross_entropy_with_logits(x, t),
                   lambda: F.binary_cross_entropy_with_logits(x, t, reduction="none"),
                   lambda: F.binary_cross_entropy_with_logits(x, t, weight=T.ones(4),
                                                              pos_weight=T.ones(4))):
            r = _outcome(fn)
            row.append((r[0], str(r[1].dtype).split(".")[-1], round(float(r[1].float().mean()), 3))
                       if r[0] == "ok" else r)
        rows.append(row)
    return rows


def test_loss_result_dtypes_and_target_errors_match_torch():
    assert _loss_dtypes(ptcore) == _loss_dtypes(torch)


def test_bce_with_logits_float16_target_gradient_matches_torch():
    res = []
    for T in (ptcore, torch):
        x = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = T.nn.functional.binary_cross_entropy_with_logits(x, T.tensor([1., 0., 1.]).half())
        y.backward()
        res.append((str(y.dtype).split(".")[-1], x.grad.numpy()))
    assert res[0][0] == res[1][0] == "float16"
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-3)


def _gradcheck_failure(T):
    # "Extending PyTorch": gradcheck of a Function with a wrong backward
    class Bad(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3
    x = T.ones(2, dtype=T.double, requires_grad=True)
    return (_outcome(lambda: T.autograd.gradcheck(Bad.apply, (x,))),
            T.autograd.gradcheck(Bad.apply, (x,), raise_exception=False))


def test_gradcheck_failure_message_matches_torch():
    assert _gradcheck_failure(ptcore) == _gradcheck_failure(torch)


# ---------------------------------------------------------------------------
# Autograd mechanics: gradients at ties and NaNs, warnings at the user's line
# ---------------------------------------------------------------------------

def _minmax_grads(T):
    nan = float("nan")
    out = []
    for f in ("fmax", "fmin", "maximum", "minimum"):
        a = T.tensor([1., 2., nan, nan, 0., 3.], requires_grad=True)
        b = T.tensor([1., 1., 1., nan, nan, 5.], requires_grad=True)
        getattr(T, f)(a, b).sum().backward()
        out.append((f, a.grad.tolist(), b.grad.tolist()))
    return out


def test_elementwise_min_max_gradients_at_ties_and_nan_match_torch():
    assert _minmax_grads(ptcore) == _minmax_grads(torch)


def test_degrees_of_freedom_warnings_point_at_the_caller():
    x = ptcore.tensor([1.])
    assert _warning_files(x.std, x.var, lambda: ptcore.cov(x)) == [__file__] * 3
