"""Run an nn function on the CPU and on the (emulated) CUDA device with the
same inputs and compare outputs and gradients (the CPU run is the oracle;
its own agreement with torch is tested under tests/nn)."""
import ptcore
from device_target import REAL

TOL = {ptcore.float32: (2e-5, 2e-6), ptcore.float64: (1e-11, 1e-12),
       ptcore.float16: (2e-3, 2e-3), ptcore.bfloat16: (1.6e-2, 1e-2)}
if REAL:
    # FMA-contracted kernels and cuBLAS's summation order: a float32 sum of terms
    # of magnitude ~10-20 that cancels to near zero (a convolution's output or
    # gradient entry) differs by a few ulp of its terms (2.2e-6 seen on an H100)
    TOL[ptcore.float32] = (2e-5, 1e-5)


def rand(shape, dtype=ptcore.float32, seed=0, scale=1.0):
    g = ptcore.Generator().manual_seed(seed)
    return (ptcore.randn(shape, generator=g, dtype=ptcore.float64) * scale).to(dtype)


def _to(x, dev, grad):
    if isinstance(x, ptcore.Tensor):
        y = x.detach().to(dev)
        if grad and y.dtype.is_floating_point:
            y.requires_grad_(True)
        return y
    return x


def run(fn, args, dev, grad, kwargs):
    a = [_to(x, dev, i in grad) for i, x in enumerate(args)]
    out = fn(*a, **kwargs)
    outs = out if isinstance(out, tuple) else (out,)
    o = outs[0]
    grads = []
    if grad:
        w = rand(tuple(o.shape), ptcore.float64, seed=99).to(o.dtype).to(dev)
        (o * w).sum().backward()
        grads = [a[i].grad for i in grad]
    return [t.detach().cpu() for t in outs], [None if g is None else g.cpu() for g in grads]


def close(dev_t, cpu_t, dtype=None, exact=False):
    assert dev_t.dtype == cpu_t.dtype, (dev_t.dtype, cpu_t.dtype)
    assert tuple(dev_t.shape) == tuple(cpu_t.shape), (dev_t.shape, cpu_t.shape)
    if exact or not dev_t.dtype.is_floating_point:
        assert ptcore.equal(dev_t, cpu_t), (dev_t, cpu_t)
        return
    rtol, atol = TOL[dtype or dev_t.dtype]
    assert ptcore.allclose(dev_t.double(), cpu_t.double(), rtol=rtol, atol=atol, equal_nan=True), \
        (dev_t - cpu_t).abs().max()


def check(fn, *args, grad=(0,), dtype=None, **kwargs):
    """``fn(*args, **kwargs)`` on cuda equals the CPU run (outputs and the
    gradients of the arguments at the positions ``grad``)."""
    c_out, c_grad = run(fn, args, "cpu", grad, kwargs)
    d_out, d_grad = run(fn, args, "cuda", grad, kwargs)
    for d, c in zip(d_out, c_out):
        close(d, c, dtype)
    for d, c in zip(d_grad, c_grad):
        assert (d is None) == (c is None)
        if c is not None:
            close(d, c, dtype)
    return d_out, d_grad
