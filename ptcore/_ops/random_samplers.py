"""More random sampling: ``poisson``, ``binomial`` and the Tensor methods
``bernoulli``, ``multinomial``, ``log_normal_``, ``cauchy_``, ``geometric_``.

Every sample is driven by a ptcore :class:`~ptcore.Generator` (the default
one unless ``generator=`` is given), so ``manual_seed`` makes them
reproducible.  ``log_normal_``, ``cauchy_`` and ``geometric_`` transform
the generator's normal/uniform draws.  ``poisson`` and ``binomial`` need
rejection samplers: they draw a 128-bit key from the ptcore generator and
run NumPy's Philox-based samplers with it (the same distributions as
PyTorch; the values differ from PyTorch's stream, as all of ptcore's do).
The argument checks run in the front-ends; the samplers are the loops
``"poisson"`` and ``"binomial"`` (NumPy here, rejection-sampling kernels on
CUDA, ``ptcore.cuda.ops.random``).
"""
import builtins
import math

import numpy as np

from ptcore._dispatch.device import cpu_kernel as _loop, common_device as _common_device
from ptcore._dispatch.generate import method_form as _method_form
from ptcore._scalar_args import float_param as _float_param
from ptcore._tensor import _TensorBase

__all__ = ["poisson", "binomial"]


def _pt():
    import ptcore
    return ptcore


def _check_tensor(x, fname, argname="input"):
    if not isinstance(x, _TensorBase):
        raise TypeError(f"{fname}(): argument '{argname}' must be Tensor, not {type(x).__name__}")


def _np_rng(generator):
    """A NumPy Generator keyed by 128 bits drawn from the ptcore generator."""
    pt = _pt()
    key = pt.randint(0, 1 << 62, (2,), generator=generator, dtype=pt.int64).numpy()
    return np.random.Generator(np.random.Philox(key=[builtins.int(key[0]), builtins.int(key[1])]))


def _attach_zero_grad(sample, *inputs):
    # PyTorch's Poisson/Binomial samples are differentiable outputs with zero
    # gradient; keep that: sample + 0 * input (without NaN from inf * 0).
    pt = _pt()
    if not pt.is_grad_enabled() or not builtins.any(t.requires_grad for t in inputs):
        return sample
    out = sample
    for t in inputs:
        if t.requires_grad:
            out = out + pt.where(t.isfinite(), t, pt.zeros((), dtype=t.dtype)) * 0
    return out


def poisson(input, generator=None):
    """Samples of Poisson(``input``) elementwise (``input`` = the rates, floating point).

    Parameters
    ----------
    input : Tensor
        Non-negative rates.
    generator : ptcore.Generator, optional

    Returns
    -------
    Tensor
        Same shape and dtype as ``input`` (integer-valued).
    """
    _check_tensor(input, "poisson")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"poisson_{input.device.type}\" not implemented for "
                                  f"'{input.dtype._legacy}'")
    pt = _pt()
    rates = input.detach().to(pt.float64).contiguous()
    if rates.numel() and not bool(pt.all(pt.ge(rates, 0)).item()):      # also catches NaN
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    out = _loop("poisson", input.device, _poisson_cpu)(rates, generator)
    return _attach_zero_grad(out.to(input.dtype), input)


def _poisson_cpu(rates, generator):
    """float64 samples of the contiguous non-negative float64 ``rates``."""
    rates = rates.numpy()
    rng = _np_rng(generator)
    finite = np.isfinite(rates)
    out = np.empty(rates.shape, np.float64)
    if rates.size:
        # NumPy's PTRS sampler is limited to rates below ~1e19; above that the
        # normal approximation is exact to float precision.
        big = finite & (rates > 1e15)
        small = finite & ~big
        out[small] = rng.poisson(rates[small])
        out[big] = np.round(rates[big] + np.sqrt(rates[big]) * rng.standard_normal(big.sum()))
        out[~finite] = np.inf
    return _pt().from_numpy(out)


def binomial(count, prob, generator=None):
    """Samples of Binomial(``count``, ``prob``) elementwise.

    ``count`` and ``prob`` are floating tensors of the same dtype that
    broadcast together; ``count`` is truncated to an integer (except where
    ``prob >= 1``: the count itself, as PyTorch) and negative counts give 0,
    ``prob`` is clamped to ``[0, 1]``.
    """
    _check_tensor(count, "binomial", "count")
    _check_tensor(prob, "binomial", "prob")
    if not count.dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{count.dtype._legacy}")
    if not prob.dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for prob, got: "
                         f"{prob.dtype._legacy}")
    if count.dtype is not prob.dtype:
        raise RuntimeError(f"Found dtype {prob.dtype._legacy} but expected {count.dtype._legacy}")
    pt = _pt()
    dev = _common_device(count, prob)        # (a 0-d CPU operand joins)
    n, p = pt.broadcast_tensors(count.detach().to(dev, pt.float64), prob.detach().to(dev, pt.float64))
    if n.numel() and bool(pt.any(pt.logical_or(pt.isnan(n), pt.isnan(p))).item()):
        raise RuntimeError("binomial: count and prob must not be NaN")
    n0 = n
    n = pt.clamp(pt.trunc(n), 0.0, float(_MAX_COUNT)).contiguous()
    p = pt.clamp(p, 0.0, 1.0).contiguous()
    out = _loop("binomial", n.device, _binomial_cpu)(n, p, generator)
    # PyTorch returns the count itself where prob >= 1 (a non-integer count
    # included) and 0 where count <= 0
    out = pt.where(pt.logical_and(p >= 1.0, n0 > 0), n0, out)
    return _attach_zero_grad(out.to(count.dtype), count, prob)


_MAX_COUNT = np.iinfo(np.int64).max // 2


def _binomial_cpu(count, prob, generator):
    """float64 samples for the contiguous float64 integer ``count`` in
    [0, 2**62] and ``prob`` in [0, 1]."""
    ni = np.minimum(count.numpy(), _MAX_COUNT).astype(np.int64)
    rng = _np_rng(generator)
    # (NumPy returns a Python int for 0-d operands)
    out = np.asarray(rng.binomial(ni, prob.numpy()), dtype=np.float64) if ni.size else \
        np.zeros(ni.shape)
    return _pt().from_numpy(out)


# ---------------------------------------------------------------------------
# Tensor methods
# ---------------------------------------------------------------------------

def _float_fill_check(t, kname):
    if not t.dtype.is_floating_point:
        raise NotImplementedError(f"\"{kname}\" not implemented for '{t.dtype._legacy}'")


@_method_form("log_normal_")
def _log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with samples of ``exp(N(mean, std**2))``."""
    mean = _float_param(mean, "log_normal_", "mean", 1)
    std = _float_param(std, "log_normal_", "std", 2)
    _float_fill_check(self, "log_normal_cpu")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_fmt(std)}")
    pt = _pt()
    with pt.no_grad():
        z = pt.empty(self.shape, dtype=_work_dtype(self.dtype), device=self.device)
        z.normal_(builtins.float(mean), builtins.float(std), generator=generator)
        self.copy_(z.exp_())
    return self


@_method_form("cauchy_")
def _cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with samples of Cauchy(``median``, ``sigma``): ``median + sigma * tan(pi * (u - 1/2))``."""
    median = _float_param(median, "cauchy_", "median", 1)
    sigma = _float_param(sigma, "cauchy_", "sigma", 2)
    if not self.dtype.is_floating_point:
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. dtype "
                           f"must be a floating point but you specified {_cname(self.dtype)}")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_fmt(sigma)}")
    pt = _pt()
    with pt.no_grad():
        u = pt.empty(self.shape, dtype=_work_dtype(self.dtype), device=self.device)
        u.uniform_(0.0, 1.0, generator=generator)
        self.copy_(((u - 0.5) * math.pi).tan_().mul_(builtins.float(sigma))
                   .add_(builtins.float(median)))
    return self


@_method_form("geometric_")
def _geometric_(self, p, *, generator=None):
    """Fill with samples of Geometric(``p``) on {1, 2, ...}: ``ceil(log(u) / log(1 - p))``."""
    p = _float_param(p, "geometric_", "p", 1)
    pt = _pt()
    if self.dtype is pt.bool or self.dtype.is_complex:
        raise NotImplementedError(f"\"geometric_cpu\" not implemented for '{self.dtype._legacy}'")
    p = builtins.float(p)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_fmt(p)}")
    with pt.no_grad():
        u = pt.empty(self.shape, dtype=pt.float64, device=self.device)
        u.uniform_(0.0, 1.0, generator=generator)
        # 1 - u is in (0, 1]: log is finite and <= 0; the sample is at least 1
        g = ((1.0 - u).log_() / math.log1p(-p)).ceil_().clamp_(min=1.0)
        self.copy_(g)
    return self


def _work_dtype(dt):
    pt = _pt()
    return pt.float32 if dt in (pt.float16, pt.bfloat16) else dt


def _cname(dt):
    return {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool"}.get(dt._name, dt._name)


def _fmt(v):
    return "%g" % v


_log_normal_.__name__ = "log_normal_"
_cauchy_.__name__ = "cauchy_"
_geometric_.__name__ = "geometric_"

# every public function and method above becomes an entry of the dispatch point
from ptcore._dispatch.generate import bind_module as _bind_module  # noqa: E402
_bind_module(globals(), "random")
del _bind_module
