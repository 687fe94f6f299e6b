"""The three FFT primitives every ``ptcore.fft`` function is built from, as
PyTorch builds them: ``_c2c`` (complex to complex), ``_r2c`` (real to complex,
one-sided or full) and ``_c2r`` (Hermitian half-spectrum to real).

Each is an autograd :class:`~ptcore.autograd.Function` whose forward calls
``scipy.fft`` (pocketfft) on NumPy views of the tensors (no copy where the
layout allows; SciPy keeps single precision single) with ``workers=`` set to
the team size of ptcore's parallel kernels (``ptcore.get_num_threads()``,
fewer while other programs keep cores busy), and whose backward is PyTorch's formula
(``fft_r2c_backward``, ``fft_c2r_backward``) written with these same
primitives, so higher-order gradients follow.

Tensors on another device (CUDA) go to that device's implementation of the
three forward transforms, registered in :data:`DEVICE_IMPLS` by the device
runtime (``ptcore.cuda.ops.fft``: cuFFT); the backward formulas are
shared.

``norm`` is PyTorch's normalization enum: 0 no scaling, 1 ``1/sqrt(n)``,
2 ``1/n``, where ``n`` is the product of the signal sizes; the backward of a
transform applies the same scaling in the opposite direction.
"""
import numpy as _np

from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._dispatch import batching as _batching
from ptcore._ops.kernels import _parallel
from ptcore.autograd.function import _FWL
from ptcore.autograd.function import Function as _Function
from ptcore.autograd.grad_mode import _state as _gm_state

NORM_NONE, NORM_ROOT, NORM_N = 0, 1, 2
# scipy.fft's ``norm`` for (enum, forward): forward transforms scale by
# nothing/sqrt/n for "backward"/"ortho"/"forward", inverse ones the reverse
_SCIPY_NORM_FWD = ("backward", "ortho", "forward")
_SCIPY_NORM_INV = ("forward", "ortho", "backward")

_sfft = None


def _scipy_fft():
    global _sfft
    if _sfft is None:
        import scipy.fft as m
        _sfft = m
    return _sfft


_pocketfft_mod = [None]


def _pocketfft():
    """scipy.fft's pocketfft binding (``scipy.fft._pocketfft.pypocketfft``,
    what its ``rfft`` front-end calls), or False where this SciPy has none."""
    m = _pocketfft_mod[0]
    if m is None:
        try:
            # lazy: scipy.fft loads on the first transform (a heavy import)
            from scipy.fft._pocketfft import pypocketfft as m
        except ImportError:
            m = False
        _pocketfft_mod[0] = m
    return m


def rfft_plain(x, dim):
    """``rfft(x, dim=dim)`` (no ``n``, norm "backward") of a float32/float64
    CPU tensor that records nothing (:func:`_plain`), through pocketfft's
    binding directly: the call ``scipy.fft.rfft`` makes, without its
    front-end's argument handling (three times the transform's own cost for
    100 points); None for any other call (the general path)."""
    if not isinstance(x, _TensorBase):
        return None
    dt = x.dtype
    nd = x.ndim
    if (dt is not _C.float32 and dt is not _C.float64) or not x.is_cpu \
            or not -nd <= dim < nd or x.shape[dim] < 1 or not _plain(x):
        return None
    pp = _pocketfft()
    if not pp:
        return None
    a = x.detach().numpy() if x._requires_grad else x.numpy()
    return _C.from_numpy(pp.r2c(a, (dim,), True, 0, None, _threads()))


def _threads():
    return max(1, _parallel._team_size())


#: device type -> object with ``c2c(x, dims, norm, forward)``,
#: ``r2c(x, dims, norm, onesided)`` and ``c2r(x, dims, norm, last_dim_size)``
DEVICE_IMPLS = {}


def _device_impl(x):
    """The device implementation for ``x``'s device, None on the CPU."""
    typ = x.device.type
    if typ == "cpu":
        return None
    impl = DEVICE_IMPLS.get(typ)
    if impl is None:
        raise NotImplementedError(f"ptcore.fft: no FFT implementation for tensors on {x.device}")
    return impl


def _np_view(x):
    """A NumPy view of a CPU tensor (the tensor's memory, no copy)."""
    if x.device.type != "cpu":
        raise RuntimeError(f"ptcore.fft: tensors on {x.device} are not supported yet "
                           "(only CPU tensors)")
    if not x._requires_grad and not x.is_conj():
        return x.numpy()
    return x.detach().resolve_conj().numpy()


def _wrap(a):
    import ptcore
    a = _np.asarray(a)
    if not a.flags.writeable:
        a = a.copy()
    return ptcore.from_numpy(a)


def zero_pad(x, d, extra):
    """``x`` with ``extra`` zeros appended along dim ``d`` (differentiable)."""
    import ptcore
    if x.device.type != "cpu":
        return _ZeroPad.apply(x, d, extra)
    shape = list(x.shape)
    shape[d] = extra
    return ptcore.cat([x, ptcore.zeros(shape, dtype=x.dtype, device=x.device)], d)


class _ZeroPad(_Function):
    """Zero padding written with a device copy (no ``cat`` kernel needed)."""

    @staticmethod
    def forward(ctx, x, d, extra):
        ctx.args = (d, x.shape[d])
        shape = list(x.shape)
        shape[d] += extra
        out = x.new_zeros(shape)
        out.narrow(d, 0, x.shape[d]).copy_(x)
        return out

    @staticmethod
    def backward(ctx, g):
        d, n = ctx.args
        return g.narrow(d, 0, n), None, None


def conj(x):
    """``x.conj()``; on a device without a conj kernel, a negated-imaginary
    copy (differentiable)."""
    if x.device.type == "cpu" or not x.is_complex():
        return x.conj()
    return _DeviceConj.apply(x)


def _neg_imag(x):
    import ptcore
    y = x.clone()
    ptcore.view_as_real(y).select(-1, 1).mul_(-1)
    return y


class _DeviceConj(_Function):
    @staticmethod
    def forward(ctx, x):
        return _neg_imag(x)

    @staticmethod
    def backward(ctx, g):
        return conj(g)


def _run_scipy(fn, a, dims, norm, inverse, n, **kw):
    """``fn`` (a ``scipy.fft`` transform) of ``a`` over ``dims`` with the
    normalization enum ``norm`` of a signal of ``n`` elements.  Over several
    dims the scale is applied to the finished transform, as torch's MKL
    plans (DFTI_FORWARD_SCALE) do: pocketfft scales in its first axis pass,
    which makes the later passes sum rounded values (a zero DC term comes
    out as a signed rounding residue)."""
    modes = _SCIPY_NORM_INV if inverse else _SCIPY_NORM_FWD
    if len(dims) == 1:
        # one dim: the 1-D front-end (the same pocketfft call, without the
        # n-D front-end's shape and axes canonicalisation)
        name = fn.__name__[:-1]         # rfftn -> rfft ...
        if "s" in kw:
            kw = {"n": kw["s"][0]}
        return getattr(_scipy_fft(), name)(a, axis=dims[0], norm=modes[norm],
                                           workers=_threads(), **kw)
    if len(dims) < 2 or norm == NORM_NONE:
        return fn(a, axes=dims, norm=modes[norm], workers=_threads(), **kw)
    r = _np.asarray(fn(a, axes=dims, norm=modes[NORM_NONE], workers=_threads(), **kw))
    fct = 1.0 / (_np.sqrt(float(n)) if norm == NORM_ROOT else float(n))
    flat = r.view(r.real.dtype) if r.dtype.kind == "c" else r     # (re, im) pairs: signed zeros kept
    flat *= flat.dtype.type(fct)
    return r


def _numel(shape, dims):
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _batch_dims(dims):
    """``dims`` of a sample as dims of the physical tensor (batch dim 0 in front)."""
    return tuple(d + 1 if d >= 0 else d for d in dims)


# Under vmap (a batched input: vmap of a transform, jacfwd, hessian) each
# primitive runs on the physical tensor, the batch dim one more axis that
# scipy.fft leaves alone (the ``vmap`` staticmethods).

class _C2C(_Function):
    @staticmethod
    def forward(x, dims, norm, forward):
        if not dims:
            return x.clone()
        impl = _device_impl(x)
        if impl is not None:
            return impl.c2c(x, dims, norm, forward)
        f = _scipy_fft()
        fn = f.fftn if forward else f.ifftn
        return _wrap(_run_scipy(fn, _np_view(x), dims, norm, not forward,
                                _numel(x.shape, dims)))

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.args = inputs[1:]

    @staticmethod
    def vmap(info, in_dims, x, dims, norm, forward):
        return c2c(x, _batch_dims(dims), norm, forward), 0

    @staticmethod
    def backward(ctx, g):
        dims, norm, forward = ctx.args
        if not g.is_complex():
            g = g.to(_C.complex128 if g.dtype is _C.float64 else _C.complex64)
        return c2c(g, dims, norm, not forward), None, None, None


class _R2C(_Function):
    @staticmethod
    def forward(x, dims, norm, onesided):
        impl = _device_impl(x)
        if impl is not None:
            return impl.r2c(x, dims, norm, onesided)
        f = _scipy_fft()
        fn = f.rfftn if onesided else f.fftn
        return _wrap(_run_scipy(fn, _np_view(x), dims, norm, False, _numel(x.shape, dims)))

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, dims, norm, onesided = inputs
        ctx.args = (dims, norm, onesided, x.shape[dims[-1]])

    @staticmethod
    def vmap(info, in_dims, x, dims, norm, onesided):
        return r2c(x, _batch_dims(dims), norm, onesided), 0

    @staticmethod
    def backward(ctx, g):
        # PyTorch's fft_r2c_backward: fill the discarded half with zeros,
        # inverse C2C transform, keep the real part
        dims, norm, onesided, last = ctx.args
        if onesided:
            d = dims[-1]
            missing = last - g.shape[d]
            if missing > 0:
                g = zero_pad(g, d, missing)
        import ptcore
        return ptcore.real(c2c(g, dims, norm, False)), None, None, None


class _C2R(_Function):
    @staticmethod
    def forward(x, dims, norm, last_dim_size):
        impl = _device_impl(x)
        if impl is not None:
            return impl.c2r(x, dims, norm, last_dim_size)
        s = [x.shape[d] for d in dims[:-1]] + [last_dim_size]
        return _wrap(_run_scipy(_scipy_fft().irfftn, _np_view(x), dims, norm, True,
                                _numel(s, range(len(s))), s=s))

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.args = inputs[1:3]

    @staticmethod
    def vmap(info, in_dims, x, dims, norm, last_dim_size):
        return c2r(x, _batch_dims(dims), norm, last_dim_size), 0

    @staticmethod
    def backward(ctx, g):
        # PyTorch's fft_c2r_backward: one-sided R2C of the gradient, then the
        # entries whose mirror images fell outside the half spectrum doubled
        dims, norm = ctx.args
        gI = r2c(g, dims, norm, True)
        d = dims[-1]
        double = g.shape[d] - gI.shape[d]
        if double > 0:
            import ptcore
            w = _np.ones(gI.shape[d], dtype=_np.float32 if gI.dtype is _C.complex64
                         else _np.float64)
            w[1:1 + double] = 2
            shape = [1] * gI.dim()
            shape[d] = gI.shape[d]
            if gI.device.type == "cpu":
                gI = gI * ptcore.from_numpy(w.reshape(shape))
            else:       # real weights on the (real, imag) pairs: no complex kernel needed
                wt = ptcore.from_numpy(w.reshape(shape + [1])).to(gI.device)
                gI = ptcore.view_as_complex((ptcore.view_as_real(gI) * wt).contiguous())
        return gI, None, None, None


# the graph nodes carry PyTorch's names
for _cls, _name in ((_C2C, "FftC2CBackward0"), (_R2C, "FftR2CBackward0"),
                    (_C2R, "FftC2RBackward0")):
    _cls._backward_cls.__name__ = _cls._backward_cls.__qualname__ = _name
del _cls, _name


def _plain(x):
    """Whether a primitive applied to ``x`` records nothing and no forward-AD
    or vmap layer sees it, so its forward runs directly (what
    ``Function.apply`` would do then, without its bookkeeping)."""
    return not (x._requires_grad and _gm_state.enabled) and not _FWL.enabled \
        and not _batching._active[0]


def c2c(x, dims, norm, forward):
    """Complex-to-complex transform of ``x`` over ``dims`` (a tuple)."""
    if _plain(x):
        return _C2C.forward(x, tuple(dims), norm, bool(forward))
    return _C2C.apply(x, tuple(dims), norm, bool(forward))


def r2c(x, dims, norm, onesided):
    """Forward real-to-complex transform; ``onesided`` keeps the last
    transformed dim's first ``n // 2 + 1`` entries."""
    if _plain(x):
        return _R2C.forward(x, tuple(dims), norm, bool(onesided))
    return _R2C.apply(x, tuple(dims), norm, bool(onesided))


def c2r(x, dims, norm, last_dim_size):
    """Inverse transform of a Hermitian half spectrum to a real signal whose
    last transformed dim has ``last_dim_size`` entries."""
    if _plain(x):
        return _C2R.forward(x, tuple(dims), norm, int(last_dim_size))
    return _C2R.apply(x, tuple(dims), norm, int(last_dim_size))
