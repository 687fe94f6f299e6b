"""The CUDA loop of ``ctc_loss`` (``ptcore.nn.functional._ctc``), registered
under ``"ctc_loss"``: the alpha and beta recursions in log space and
PyTorch's gradient with respect to ``log_probs`` (as ATen's
``ctc_loss_backward``) run as the kernels of :mod:`ptcore.cuda.kernels.ctc`
(one block per batch element, the time loop inside the kernel: one launch
for the forward, two for the backward, whatever the input length).  The loop
is registered here (``@cuda.loop``, :mod:`ptcore.cuda.ops.registration`);
:func:`register` installs it when the CUDA runtime comes up.
"""
from ptcore.cuda.ops import launch as L
from ptcore.cuda.ops.registration import Registrations

__all__ = ["ctc_loop", "register"]

# this module's loop, registered where it is defined
cuda = Registrations()


def _P():
    import ptcore
    return ptcore


def _recursion(kind, lp, tg, blank, il, tl, S2, *outs):
    """Launch ``ptc_nnloss_ctc<kind>`` (alpha: outs = (la, nll); beta: (lb,);
    grad: (la, lb, nll, grad, zero_infinity))."""
    T, N, C = lp.shape
    if N == 0:
        return
    L._launch(lp.device.index, f"ptc_nnloss_ctc{kind}_{L._tag(lp.dtype, 'ctc_loss')}", N,
              [L._ll(T), L._ll(N), L._ll(C), L._ll(S2), L._ptr(lp), L._ptr(tg), L._ll(tg.shape[1]),
               L._ll(blank), L._ptr(il), L._ptr(tl)] + [L._ll(o) if isinstance(o, int) else L._ptr(o)
                                                         for o in outs], rows=True)


@cuda.loop("ctc_loss")
def ctc_loop(log_probs, padded, in_lens, tgt_lens, blank, zero_infinity):
    """(losses ``(N,)``, infinities zeroed when ``zero_infinity``; a function
    giving d loss_n / d log_probs ``(T, N, C)``) for ``log_probs`` (T, N, C)
    and the padded int64 targets (N, S) on the device."""
    P = _P()
    dev = log_probs.device
    dt = P.float64 if log_probs.dtype == P.float64 else P.float32
    lp = log_probs.to(dt).contiguous()
    T, N, C = lp.shape
    i64 = P.int64
    tg = padded.to(i64).contiguous()
    il = P.tensor(list(in_lens), dtype=i64, device=dev)
    tl = P.tensor(list(tgt_lens), dtype=i64, device=dev)
    S2 = 2 * (max(tgt_lens) if N else 0) + 1
    la = P.empty((T, N, S2), dtype=dt, device=dev)
    nll = P.empty((N,), dtype=dt, device=dev)
    _recursion("alpha", lp, tg, blank, il, tl, S2, la, nll)
    out = P.where(P.isinf(nll), 0.0, nll) if zero_infinity else nll.clone()

    def grad_fn():
        lb = P.empty((T, N, S2), dtype=dt, device=dev)
        _recursion("beta", lp, tg, blank, il, tl, S2, lb)
        g = P.empty((T, N, C), dtype=dt, device=dev)
        _recursion("grad", lp, tg, blank, il, tl, S2, la, lb, nll, g, int(bool(zero_infinity)))
        return g
    return out, grad_fn


register = cuda.install       # run by ptcore.cuda.ops.register at CUDA's start
