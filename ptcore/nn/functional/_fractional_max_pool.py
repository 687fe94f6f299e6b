"""Fractional max pooling (Graham, 2014): ``fractional_max_pool2d`` / ``3d``.

Each plane's pooling windows start at pseudo-random offsets drawn from one uniform sample
per spatial dim (``_random_samples``, shape ``(N, C, 2)`` or ``(N, C, 3)``); given the same
samples the windows, values and indices equal torch's (the interval formula is evaluated in
the input's floating dtype, as torch's kernel does).  The values are gathered from the input
with the chosen indices, so the gradient flows back to the maximum of each window.
"""
import itertools
import math

import ptcore

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d", "fractional_max_pool3d_with_indices"]


def _tuple(v, n, name):
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            return tuple(v) * n
        if len(v) != n:
            raise ValueError(f"{name} must be an int or a tuple of {n} ints, got {v}")
        return tuple(v)
    return (v,) * n


def _intervals(sample, in_size, out_size, pool):
    """Window starts of one dim for each plane: ``(planes,)`` samples (float32
    or float64, on the input's device) -> ``(planes, out)`` int64, computed
    in the samples' precision as torch's kernel."""
    planes = sample.shape[0]
    dev = sample.device
    last = ptcore.full((planes, 1), in_size - pool, dtype=ptcore.int64, device=dev)
    if out_size <= 1:
        return last[:, :out_size]
    alpha = ptcore.full((), in_size - pool, dtype=sample.dtype, device=dev) / (out_size - 1)
    i = ptcore.arange(out_size - 1, dtype=sample.dtype, device=dev)
    a = ((i.unsqueeze(0) + sample.unsqueeze(1)) * alpha).to(ptcore.int64)
    b = (sample * alpha).to(ptcore.int64)
    return ptcore.cat([a - b.unsqueeze(1), last], 1)


def _fractional_max_pool(input, kernel_size, output_size, output_ratio, random_samples, nd):
    name = f"fractional_max_pool{nd}d"
    if not isinstance(input, ptcore.Tensor):
        raise TypeError(f"{name}(): input must be a tensor, got {type(input).__name__}")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    spatial = list(input.shape[-nd:])
    if output_size is None:
        if isinstance(output_ratio, (list, tuple)) and len(output_ratio) > nd:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple "
                             f"of Ints.")
        ratio = _tuple(output_ratio, nd, "output_ratio")
        output_size = [int(s * r) for s, r in zip(spatial, ratio)]
    out = list(_tuple(output_size, nd, "output_size"))
    pool = list(_tuple(kernel_size, nd, "kernel_size"))
    batched = input.dim() == nd + 2
    x = input if batched else input.unsqueeze(0)
    n, c = x.shape[0], x.shape[1]
    if random_samples is None:
        random_samples = ptcore.rand(n, c, nd, dtype=input.dtype, device=input.device)
    if random_samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    # torch's checks: 3 dimensions, at least the batch's rows (the first n are
    # used, so a no-batch input takes row 0), the channels, nd samples a plane
    rs = tuple(random_samples.shape)
    if len(rs) != 3:
        raise RuntimeError(f"{name}(): expected _random_samples to have 3 dimensions, got "
                           f"{len(rs)} (shape {rs})")
    if rs[0] < n or rs[1] != c or rs[2] != nd:
        raise RuntimeError(f"{name}(): expected _random_samples of shape (N >= {n}, {c}, {nd}) "
                           f"(batch, channels, {nd}), got {rs}")
    random_samples = random_samples[:n]
    dims = ["height", "width"] if nd == 2 else ["time", "height", "width"]
    for d in range(nd):
        if pool[d] <= 0 or out[d] <= 0:
            raise RuntimeError(f"{name}(): kernel_size and output_size must be positive, got "
                               f"{pool} and {out}")
        # torch's 3-d check is one stricter than its 2-d one (out + pool - 1 < in)
        if out[d] + pool[d] - 1 > spatial[d] - (nd == 3):
            raise RuntimeError(f"{name}(): pool {dims[d]} {pool[d]} too large relative to "
                               f"input {dims[d]} {spatial[d]}")
    fdt = ptcore.float64 if input.dtype == ptcore.float64 else ptcore.float32
    samples = random_samples.detach().to(fdt).reshape(n * c, nd)
    # torch's sample order: (w, h) for 2-d, (t, h, w) for 3-d.
    sample_dim = [1, 0] if nd == 2 else [0, 1, 2]
    seqs = [_intervals(samples[:, sample_dim[d]], spatial[d], out[d], pool[d]) for d in range(nd)]
    strides = [math.prod(spatial[d + 1:]) for d in range(nd)]
    # Linear input index of every window element: (planes, *out, K) with K = prod(pool),
    # the window scanned in row-major order (ties keep the first element, as torch).
    cand = []
    for offs in itertools.product(*[range(p) for p in pool]):
        lin = 0
        for d in range(nd):
            shape = [n * c] + [1] * nd
            shape[d + 1] = out[d]
            lin = lin + (seqs[d] + offs[d]).reshape(shape) * strides[d]
        cand.append(lin.expand([n * c] + out))
    # explicit sizes: a -1 is ambiguous when the batch or channels are empty
    k, n_out = math.prod(pool), math.prod(out)
    cand_t = ptcore.stack(cand, -1).reshape(n, c, n_out * k)
    flat = x.reshape(n, c, math.prod(spatial))
    with ptcore.no_grad():
        vals = flat.gather(2, cand_t).reshape(n, c, n_out, k)
        # NaN wins, as in torch's kernel (val > max || isnan(val)).
        key = ptcore.where(ptcore.isnan(vals), ptcore.full_like(vals, float("inf")), vals)
        arg = key.argmax(dim=-1, keepdim=True)
        indices = cand_t.reshape(n, c, n_out, k).gather(3, arg).reshape(n, c, n_out)
    output = flat.gather(2, indices).reshape(n, c, *out)
    indices = indices.reshape(n, c, *out)
    if not batched:
        output, indices = output.squeeze(0), indices.squeeze(0)
    return output, indices


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """2-d fractional max pooling; returns ``(output, indices)``.

    Parameters
    ----------
    input : Tensor
        ``(N, C, H, W)`` or ``(C, H, W)``.
    kernel_size : int or (int, int)
    output_size : int or (int, int), optional
    output_ratio : float or (float, float), optional
        The output size as a fraction of the input size (one of the two is required).
    _random_samples : Tensor, optional
        ``(N, C, 2)`` samples in ``[0, 1)`` that place the windows (drawn when omitted).
    """
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples,
                                2)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """2-d fractional max pooling (see :func:`fractional_max_pool2d_with_indices`)."""
    out, idx = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio,
                                                  return_indices, _random_samples)
    return (out, idx) if return_indices else out


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """3-d fractional max pooling on ``(N, C, T, H, W)`` or ``(C, T, H, W)``; ``(N, C, 3)``
    samples.  Returns ``(output, indices)``."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples,
                                3)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """3-d fractional max pooling (see :func:`fractional_max_pool3d_with_indices`)."""
    out, idx = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio,
                                                  return_indices, _random_samples)
    return (out, idx) if return_indices else out
