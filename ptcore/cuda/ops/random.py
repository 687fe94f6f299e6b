"""CUDA loops of the random samplers of ``ptcore._ops.random``: uniform,
normal, randint, bernoulli and exponential through the Philox kernels
(bit-identical to the CPU generator: for the same (seed, offset) a CUDA
tensor holds the CPU's values), with the device's default generator
(:func:`ptcore.cuda.random.default_generator`) or a ``Generator('cuda')``.

``poisson`` and ``binomial`` (``ptcore._ops.random_samplers``) run rejection
samplers on the device (PTRS / multiplication for Poisson, PyTorch's BTRS /
inversion for the binomial), each element on its own Philox stream: the same
distributions as the CPU's, not the same values.

``randperm(device='cuda')`` draws on the host from the CUDA generator (the
CPU's algorithm, no device data is read) and uploads the permutation.
"""
import ctypes

from ptcore import _tensor as _C
from ptcore._dispatch.device import register_loop
from ptcore._ops.kernels import _random as _KR
from ptcore._ops.random import Generator
from ptcore.cuda import graphs
from ptcore.cuda import random as _random
from ptcore.cuda.kernels import library as K
from ptcore.cuda.kernels.index import SAMPLER_BLOCKS
from ptcore.cuda.ops import index as LI
from ptcore.cuda.ops import launch as L

__all__ = ["register"]

_MASK64 = (1 << 64) - 1


def generator_for(device, generator):
    """The generator a draw on CUDA ``device`` uses."""
    if generator is None:
        return _random.default_generator(device.index or 0)
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a ptcore.Generator, got {type(generator).__name__}")
    if generator.device.type != device.type:
        raise RuntimeError(f"Expected a '{device.type}' device type for generator but found "
                           f"'{generator.device.type}'")
    return generator


def _u64(v):
    return ctypes.c_ulonglong(int(v) & _MASK64)


def _philox(g):
    """``(seed, offset, graph_state)`` of the next draw from CUDA generator ``g``:
    ``graph_state`` is 0, or, on a stream capturing a CUDA graph, the device
    address of the (seed, offset) each replay refills (``offset`` is then the
    draw's position inside the graph: ptcore.cuda.graphs)."""
    return graphs.philox_args(g)


def _state(address):
    return ctypes.c_void_p(address or None)


def _target(t):
    return t if t.is_contiguous() else L._empty(list(t.shape), t.dtype, t.device)


def _finish(t, target):
    if target is not t:
        L.cast_copy(t, target)
    return t


def _random_fill(t, kind, generator, *args):
    """Fill CUDA tensor ``t`` with ``kind`` ("uniform", "normal", "randint",
    "exponential") samples; ``args`` as the CPU fill's."""
    g = generator_for(t.device, generator)
    target = _target(t)
    n = target.numel()
    if n == 0:
        return t
    dt = L._name(t.dtype)
    tag = L._tag(t.dtype, kind)
    seed, off, graph = _philox(g)
    head = [L._ll(n), L._ptr(target), _u64(seed), _u64(off), _state(graph)]
    if kind == "uniform":
        low, rng, high, clamp = K.philox_uniform_args(dt, args[0], args[1])
        extra = [ctypes.c_double(low), ctypes.c_double(rng), ctypes.c_double(high), ctypes.c_double(clamp)]
        blocks = K.philox_blocks(dt, n)
    elif kind == "normal":
        extra = [ctypes.c_double(args[0]), ctypes.c_double(args[1])]
        blocks = K.philox_blocks(dt, n)
    elif kind == "exponential":
        extra = [ctypes.c_double(args[0])]
        blocks = K.philox_blocks(dt, n)
    elif kind == "randint":
        low, high = int(args[0]), int(args[1])
        r = (high - low) & _MASK64
        tier = 0 if r <= (1 << 16) else (1 if r <= (1 << 32) else 2)
        extra = [ctypes.c_longlong(low), _u64(r), ctypes.c_int(tier)]
        blocks = (n + 3) // 4 if tier == 0 else ((n + 1) // 2 if tier == 1 else n)
    else:
        raise ValueError(kind)
    L._launch(t.device.index, f"ptc_random_{kind}_{tag}_c", (n + 3) // 4, head + extra)
    g._advance(off + blocks)
    return _finish(t, target)


def _random_bernoulli(t, p, generator):
    """``t`` filled with 0/1 draws of probability ``p`` (a float or a tensor
    broadcast to ``t``)."""
    import ptcore
    g = generator_for(t.device, generator)
    dev = t.device
    if isinstance(p, _C._TensorBase):
        if p.device != dev:
            p = p.to(dev)
        if p.numel():
            bad = ptcore.logical_or(ptcore.logical_or(ptcore.lt(p, 0), ptcore.gt(p, 1)), ptcore.ne(p, p))
            if bool(ptcore.any(bad).item()):
                raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
        probs = LI._contig_copy(p, _C.float64, shape=list(t.shape))
        stride = 1
    else:
        probs = L._empty([1], _C.float64, dev)
        L.fill(probs, float(p))
        stride = 0
    target = _target(t)
    n = target.numel()
    if n == 0:
        return t
    seed, off, graph = _philox(g)
    L._launch(dev.index, f"ptc_random_bernoulli_{L._tag(t.dtype, 'bernoulli')}_c", (n + 3) // 4,
              [L._ll(n), L._ptr(target), _u64(seed), _u64(off), _state(graph), L._ptr(probs),
               L._ll(stride)])
    g._advance(off + (n + 3) // 4)
    return _finish(t, target)


_DROP_FLOATS = ("float16", "bfloat16", "float32", "float64")


def _dropout_noise(shape, dtype, device, keep):
    """Dropout's scaled mask on CUDA ``device``: ``bernoulli_(keep)`` then ``div_(keep)``
    of a new ``dtype`` tensor of ``shape`` in one kernel, the same bits and the same draws
    of the device's default generator; None for a dtype that is not floating."""
    if L._name(dtype) not in _DROP_FLOATS:
        return None
    g = generator_for(device, None)
    t = L._empty(list(shape), dtype, device)
    n = t.numel()
    if n == 0:
        return t
    seed, off, graph = _philox(g)
    L._launch(device.index, f"ptc_random_dropnoise_{L._tag(dtype, 'dropout')}_c", (n + 3) // 4,
              [L._ll(n), L._ptr(t), _u64(seed), _u64(off), _state(graph),
               ctypes.c_double(keep), ctypes.c_double(keep)])
    g._advance(off + (n + 3) // 4)
    return t


def _random_normal_tensor(mean, std, shape, dt, generator):
    """normal(mean, std) with a tensor mean and/or std: ``mean + std * z`` in
    float64 (z standard normal float64 draws), then ``dt`` (as the CPU)."""
    import ptcore
    dev = (mean if isinstance(mean, _C._TensorBase) else std).device
    if isinstance(std, _C._TensorBase):
        if std.numel() and bool(ptcore.any(ptcore.lt(std, 0)).item()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    z = L._empty(list(shape), _C.float64, dev)
    _random_fill(z, "normal", generator, 0.0, 1.0)
    m = LI._contig_copy(mean, _C.float64, shape=list(shape)) if isinstance(mean, _C._TensorBase) else float(mean)
    s = LI._contig_copy(std, _C.float64, shape=list(shape)) if isinstance(std, _C._TensorBase) else float(std)
    v = ptcore.add(m, ptcore.mul(s, z)) if isinstance(m, _C._TensorBase) else ptcore.add(ptcore.mul(s, z), m)
    return v.to(dt)


def _randperm(n, device, generator):
    """A permutation drawn from the CUDA generator (on the host) as int64 on ``device``."""
    g = generator_for(device, generator)
    t = _C.empty(n, dtype=_C.int64)
    if n:
        s, off = g._take()
        g._advance(_KR.randperm_addr(t.data_ptr(), n, s, off))
    return t.to(device)


def _multinomial(input, num_samples, replacement, generator):
    """(rows x num_samples) int64 samples; ``input`` validated by the front-end."""
    import ptcore
    dev = input.device
    cats = input.shape[-1]
    p = LI._contig_copy(input, _C.float64).reshape(-1, cats)
    rows = p.shape[0]
    if not bool(ptcore.all(ptcore.logical_and(ptcore.isfinite(p), ptcore.ge(p, 0))).item()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if bool(ptcore.any(ptcore.le(p.sum(1), 0)).item()):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and bool(ptcore.any(ptcore.lt(ptcore.gt(p, 0).sum(1), num_samples)).item()):
        raise RuntimeError("invalid multinomial distribution (with replacement=False, not enough "
                           "non-negative category to sample)")
    g = generator_for(dev, generator)
    seed, off, graph = _philox(g)
    if replacement:
        cdf = L._empty([rows, cats], _C.float64, dev)
        last = L._empty([rows], _C.int64, dev)
        L._launch(dev.index, "ptc_random_multinomial_cdf_c", rows,
                  [L._ll(rows), L._ll(cats), L._ptr(cdf), L._ptr(last), L._ptr(p)])
        n = rows * num_samples
        res = L._empty([rows, num_samples], _C.int64, dev)
        L._launch(dev.index, "ptc_random_multinomial_repl_c", (n + 1) // 2,
                  [L._ll(n), L._ptr(res), _u64(seed), _u64(off), _state(graph), L._ptr(cdf),
                   L._ptr(last), L._ll(cats), L._ll(num_samples)])
        g._advance(off + (n + 1) // 2)
        return res
    n = rows * cats
    keys = L._empty([rows, cats], _C.float64, dev)
    L._launch(dev.index, "ptc_random_multinomial_keys_c", (n + 1) // 2,
              [L._ll(n), L._ptr(keys), _u64(seed), _u64(off), _state(graph), L._ptr(p)])
    g._advance(off + (n + 1) // 2)
    _, idx = LI.sort_rows(keys, False)
    return LI._contig_copy(idx[:, :num_samples])


def _sampler(kind, device, generator, *params):
    """float64 ``kind`` ("poisson": rates; "binomial": counts, probs) samples
    of the contiguous float64 ``params`` on ``device``, element i on its own
    Philox stream; the generator advances by a fixed number of blocks."""
    g = generator_for(device, generator)
    out = L._empty(list(params[0].shape), _C.float64, device)
    n = out.numel()
    if n:
        seed, off, graph = _philox(g)
        L._launch(device.index, f"ptc_random_{kind}_f64_c", n,
                  [L._ll(n), L._ptr(out)] + [L._ptr(p) for p in params]
                  + [_u64(seed), _u64(off), _state(graph)])
        g._advance(off + SAMPLER_BLOCKS[kind])
    return out


def _poisson(rates, generator):
    return _sampler("poisson", rates.device, generator, rates)


def _binomial(count, prob, generator):
    return _sampler("binomial", count.device, generator, count, prob)


_registered = [False]


def register():
    if _registered[0]:
        return
    register_loop("random_fill", "cuda", _random_fill)
    register_loop("random_bernoulli", "cuda", _random_bernoulli)
    register_loop("dropout_noise", "cuda", _dropout_noise)
    register_loop("random_normal_tensor", "cuda", _random_normal_tensor)
    register_loop("randperm", "cuda", _randperm)
    register_loop("multinomial", "cuda", _multinomial)
    register_loop("poisson", "cuda", _poisson)
    register_loop("binomial", "cuda", _binomial)
    _registered[0] = True
