"""The CUDA loop of ``ctc_loss`` (``ptcore.nn.functional._ctc``), registered
under ``"ctc_loss"``: the CPU loop's alpha/beta recursions in log space,
vectorised over the batch and the extended label positions (one step per
time step), written with ops on the device; PyTorch's gradient with respect
to ``log_probs`` (as ATen's ``ctc_loss_backward``).
"""
import math

__all__ = ["ctc_loop"]

_NEG = -math.inf


def _P():
    import ptcore
    return ptcore


def _lse(*xs):
    """Elementwise log(sum(exp(x))) of same-shaped tensors, -inf safe."""
    P = _P()
    m = xs[0]
    for x in xs[1:]:
        m = P.maximum(m, x)
    ms = P.where(P.eq(m, _NEG), 0.0, m)
    s = None
    for x in xs:
        e = P.exp(P.sub(x, ms))
        s = e if s is None else P.add(s, e)
    return P.add(ms, P.log(s))


def _shift(a, k):
    """Shift the last dim right by ``k``, filling with -inf."""
    P = _P()
    n = a.shape[-1]
    fill = P.full(tuple(a.shape[:-1]) + (min(k, n),), _NEG, dtype=a.dtype, device=a.device)
    return P.cat([fill, a[..., :n - k]], -1) if k < n else P.full_like(a, _NEG)


def _shift_left(a, k, fill=_NEG):
    P = _P()
    n = a.shape[-1]
    pad = P.full(tuple(a.shape[:-1]) + (min(k, n),), fill, dtype=a.dtype, device=a.device)
    return P.cat([a[..., k:], pad], -1) if k < n else P.full_like(a, fill)


def ctc_loop(log_probs, padded, in_lens, tgt_lens, blank, zero_infinity):
    """(losses ``(N,)``, infinities zeroed when ``zero_infinity``; a function
    giving d loss_n / d log_probs ``(T, N, C)``) for ``log_probs`` (T, N, C)
    and the padded int64 targets (N, S) on the device."""
    P = _P()
    dev = log_probs.device
    dt = P.float64 if log_probs.dtype == P.float64 else P.float32
    lp = log_probs.to(dt)
    T, N, C = lp.shape
    i64 = P.int64
    il = P.tensor(list(in_lens), dtype=i64, device=dev)
    tl = P.tensor(list(tgt_lens), dtype=i64, device=dev)
    S2 = 2 * (max(tgt_lens) if N else 0) + 1
    s_idx = P.arange(S2, dtype=i64, device=dev).unsqueeze(0)              # (1, S2)
    ext = P.full((N, S2), blank, dtype=i64, device=dev)
    if S2 > 1:
        ext[:, 1::2] = padded[:, :S2 // 2]
    valid = P.lt(s_idx, (2 * tl + 1).unsqueeze(1))
    ext = P.where(valid, ext, blank)                                       # labels past the end: blank
    if S2 > 2:
        prev2 = P.cat([P.full((N, 2), -1, dtype=i64, device=dev), ext[:, :-2]], 1)
    else:
        prev2 = P.full((N, S2), -1, dtype=i64, device=dev)
    skip = (P.remainder(s_idx, 2) == 1) & (s_idx >= 2) & (ext != prev2)
    lp_ext = P.gather(lp, 2, ext.unsqueeze(0).expand(T, N, S2).contiguous())   # (T, N, S2)
    neg = P.full((N, S2), _NEG, dtype=dt, device=dev)

    # alpha
    rows = []
    if T:
        a = neg.clone()
        a[:, 0] = lp_ext[0, :, 0]
        if S2 > 1:
            a[:, 1] = P.where(tl > 0, lp_ext[0, :, 1], _NEG)
        a = P.where(valid, a, neg)
        rows.append(a)
        for t in range(1, T):
            a2 = P.where(skip, _shift(a, 2), neg)
            a = P.where(valid, lp_ext[t] + _lse(a, _shift(a, 1), a2), neg)
            rows.append(a)
    la = P.stack(rows) if rows else P.full((0, N, S2), _NEG, dtype=dt, device=dev)

    # the losses
    n_idx = P.arange(N, dtype=i64, device=dev)
    if T:
        last = la[P.clamp(il - 1, min=0), n_idx]                           # (N, S2)
        v_end = P.gather(last, 1, (2 * tl).unsqueeze(1)).squeeze(1)
        v_prev = P.gather(last, 1, P.clamp(2 * tl - 1, min=0).unsqueeze(1)).squeeze(1)
        nll = P.where(tl == 0, -last[:, 0], -_lse(v_end, v_prev))
    else:
        nll = P.full((N,), math.inf, dtype=dt, device=dev)
    nll = P.where(il == 0, P.where(tl == 0, 0.0, math.inf), nll)
    out = P.where(P.isinf(nll), 0.0, nll) if zero_infinity else nll.clone()

    def grad_fn():
        end = (2 * tl).unsqueeze(1)
        init_mask = (s_idx == end) | ((s_idx == end - 1) & (tl.unsqueeze(1) > 0))
        skip_from = _shift_left(skip, 2, False)
        nxt = neg
        back = [None] * T
        for t in range(T - 1, -1, -1):
            b2 = P.where(skip_from, _shift_left(nxt, 2), neg)
            rec = lp_ext[t] + _lse(nxt, _shift_left(nxt, 1), b2)
            init = P.where(init_mask, lp_ext[t], neg)
            cur = P.where((il == t + 1).unsqueeze(1), init,
                          P.where((il > t + 1).unsqueeze(1), rec, neg))
            cur = P.where(valid, cur, neg)
            back[t] = cur
            nxt = cur
        lb = P.stack(back)
        ab = la + lb
        m = P.amax(ab, 2, keepdim=True)
        ms = P.where(m == _NEG, 0.0, m)
        e = P.exp(ab - ms)
        acc = P.zeros((T, N, C), dtype=dt, device=dev)
        acc.scatter_add_(2, ext.unsqueeze(0).expand(T, N, S2).contiguous(), e)
        lcab = P.log(acc) + ms
        g = P.exp(lp) - P.exp(lcab + nll.reshape(1, N, 1) - lp)
        t_idx = P.arange(T, dtype=i64, device=dev).unsqueeze(1)
        g = P.where((t_idx < il.unsqueeze(0)).unsqueeze(2), g, 0.0)
        if zero_infinity:
            g = P.where(P.isinf(nll).reshape(1, N, 1), 0.0, g)
        return g
    return out, grad_fn
