"""The discrete Fourier transforms of ``torch.fft`` (``fft`` ... ``ihfftn``).

Each function follows PyTorch's ``SpectralOps.cpp``: promote the input
(integers and bool to the default float dtype; complex where the transform
needs it), canonicalize ``n``/``s`` and ``dim``, zero-pad or trim the input
(differentiably), then call one or two of the primitives of
:mod:`ptcore.fft._primitives`.  ``norm`` is ``"backward"`` (default: no
scaling forward, ``1/n`` inverse), ``"ortho"`` (``1/sqrt(n)`` both ways) or
``"forward"`` (``1/n`` forward, none inverse).
"""
import operator as _operator

import numpy as _np

from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._ops._out import resize_out as _resize_out
from ptcore.autograd import _record
from ptcore.autograd import grad_mode as _gm
from ptcore.fft._primitives import (c2c, r2c, c2r, conj as _conj, zero_pad as _zero_pad, _plain,
                                    rfft_plain as _rfft_plain, NORM_NONE, NORM_ROOT, NORM_N)

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn"]

_COMPLEX_OF = {_C.float32: _C.complex64, _C.float64: _C.complex128}
_REAL_OF = {_C.complex64: _C.float32, _C.complex128: _C.float64}


def _scalar_name(dt):
    return dt._legacy


def _norm(norm, forward):
    """PyTorch's ``norm_from_string``."""
    if norm is None or norm == "backward":
        return NORM_NONE if forward else NORM_N
    if norm == "forward":
        return NORM_N if forward else NORM_NONE
    if norm == "ortho":
        return NORM_ROOT
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _check_input(x, fname):
    if not isinstance(x, _TensorBase):
        raise TypeError(f"fft_{fname}(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(x).__name__}")


def _promote(x, require_complex=False):
    """PyTorch's ``promote_tensor_fft``."""
    dt = x.dtype
    if dt.is_complex:
        if dt not in _REAL_OF:
            raise RuntimeError(f"Unsupported dtype {_scalar_name(dt)}: ptcore.fft computes in "
                               "complex64 and complex128")
        return x
    if dt.is_floating_point:
        if dt not in _COMPLEX_OF:
            raise RuntimeError(f"Unsupported dtype {_scalar_name(dt)}")
    else:
        x = x.to(_C.get_default_dtype())
    if require_complex:
        x = x.to(_COMPLEX_OF[x.dtype])
    return x


def _wrap_dim(d, ndim):
    d = _operator.index(d)
    if ndim == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if not -ndim <= d < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {d})")
    return d % ndim


def _check_n(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resize(x, dims, sizes):
    """Zero-pad or trim ``x`` along ``dims`` to ``sizes`` (PyTorch's
    ``resize_fft_input``): trimming is a view, padding a concatenation."""
    for d, n in zip(dims, sizes):
        cur = x.shape[d]
        if n < cur:
            x = x.narrow(d, 0, n)
        elif n > cur:
            x = _zero_pad(x, d, n - cur)
    return x


def _shape_and_dims(x, s, dim):
    """PyTorch's ``canonicalize_fft_shape_and_dim_args``."""
    ndim = x.dim()
    dims = None
    if dim is not None:
        if isinstance(dim, int) or not hasattr(dim, "__len__"):
            dim = (dim,)
        dims = [_wrap_dim(d, ndim) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = [_operator.index(v) for v in s]
        if dims is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{ndim} dimensions.")
        if dims is None:
            dims = list(range(ndim - len(s), ndim))
        shape = [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]
    elif dims is None:
        dims = list(range(ndim))
        shape = list(x.shape)
    else:
        shape = [x.shape[d] for d in dims]
    for n in shape:
        _check_n(n)
    return shape, dims


def _c2r_shape_and_dims(fname, x, s, dim):
    """PyTorch's ``canonicalize_fft_c2r_shape_and_dim_args``: also the
    real output length of the last dim."""
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{fname} must transform at least one axis")
    if s is None or s[-1] == -1:
        last = 2 * (x.shape[dims[-1]] - 1)
    else:
        last = shape[-1]
    _check_n(last)
    shape[-1] = last // 2 + 1
    return shape, dims, last


def _finish(fname, r, out, want_complex):
    if out is None:
        return r
    if not isinstance(out, _TensorBase):
        raise TypeError(f"fft_{fname}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if want_complex and not out.is_complex():
        raise RuntimeError(f"{fname} expects a complex output tensor, but got "
                           f"{_scalar_name(out.dtype)}")
    if not want_complex and not out.dtype.is_floating_point:
        raise RuntimeError(f"{fname} expects a floating point output tensor, but got "
                           f"{_scalar_name(out.dtype)}")
    if r.requires_grad and _gm._state.enabled:
        raise RuntimeError(f"fft_{fname}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    _resize_out(out, r.shape)
    out.copy_(r)
    return out


# ---------------------------------------------------------------------------
# 1-D building blocks (PyTorch's fft_c2c / fft_r2c / fft_c2r)
# ---------------------------------------------------------------------------

def _fft_c2c(fname, x, n, dim, norm, forward):
    d = _wrap_dim(dim, x.dim())
    if n is not None:
        n = _operator.index(n)
    else:
        n = x.shape[d]
    _check_n(n)
    x = _resize(x, (d,), (n,))
    return c2c(x, (d,), _norm(norm, forward), forward)


def _fft_r2c(fname, x, n, dim, norm, forward, onesided):
    if x.is_complex():
        raise RuntimeError(f"{fname} expects a real input tensor, but got "
                           f"{_scalar_name(x.dtype)}")
    x = _promote(x)
    d = _wrap_dim(dim, x.dim())
    n = x.shape[d] if n is None else _operator.index(n)
    _check_n(n)
    x = _resize(x, (d,), (n,))
    if onesided or x.device.type != "cpu":
        r = r2c(x, (d,), _norm(norm, forward), onesided)
    else:
        r = _r2c_full(x, d, _norm(norm, forward))
    return r if forward else _conj(r)


def _r2c_full(x, d, norm):
    """The two-sided transform of real ``x`` along ``d`` as torch computes it:
    the one-sided half, the rest filled with the conjugates of its mirror
    images (so the signed zeros are torch's: the DC and Nyquist terms keep
    the +0 imaginary part of the one-sided transform)."""
    import ptcore
    half = r2c(x, (d,), norm, True)
    m = x.shape[d] - half.shape[d]
    if m == 0:
        return half
    if x.device.type == "cpu" and _plain(x):
        # nothing to record: the mirror images written with NumPy into one
        # array (the values and signed zeros of the ops below, without their
        # five dispatched calls)
        a = half.numpy()
        h = a.shape[d]
        shape = list(a.shape)
        shape[d] = h + m
        full = _np.empty(shape, dtype=a.dtype)
        lo = [slice(None)] * a.ndim
        hi = [slice(None)] * a.ndim
        src = [slice(None)] * a.ndim
        lo[d], hi[d], src[d] = slice(0, h), slice(h, h + m), slice(m, 0, -1)
        full[tuple(lo)] = a
        _np.conjugate(a[tuple(src)], out=full[tuple(hi)])
        return ptcore.from_numpy(full)
    r = ptcore.cat([half, _conj(half.narrow(d, 1, m).flip(d)).resolve_conj()], d)
    return _record.name_grad_fn(r, "FftR2CBackward0", x)


def _fft_c2r(fname, x, n, dim, norm, forward):
    x = _promote(x, require_complex=True)
    d = _wrap_dim(dim, x.dim())
    last = 2 * (x.shape[d] - 1) if n is None else _operator.index(n)
    _check_n(last)
    if n is not None:
        x = _resize(x, (d,), (last // 2 + 1,))
    if forward:
        x = _conj(x)
    return c2r(x, (d,), _norm(norm, forward), last)


# ---------------------------------------------------------------------------
# public transforms
# ---------------------------------------------------------------------------

def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """One-dimensional discrete Fourier transform (``torch.fft.fft``).

    Parameters
    ----------
    input : Tensor
        Real or complex input; integers and bool are promoted to the default
        float dtype, real input gives the complex dtype of its precision.
    n : int, optional
        Signal length: the input is zero-padded or trimmed to ``n`` along ``dim``.
    dim : int
        The dimension transformed (default: the last).
    norm : {"backward", "ortho", "forward"}, optional
        Normalization (default ``"backward"``: none on the forward transform).

    Returns
    -------
    Tensor
        complex64 or complex128.

    Examples
    --------
    >>> import ptcore
    >>> X = ptcore.fft.fft(ptcore.tensor([1., 2., 0., 0.]))
    >>> X.real
    tensor([ 3.,  1., -1.,  1.])
    >>> X[1]
    tensor(1.-2.j)
    """
    _check_input(input, "fft")
    x = _promote(input)
    r = _fft_c2c("fft", x, n, dim, norm, True) if x.is_complex() else \
        _fft_r2c("fft", x, n, dim, norm, True, False)
    return _finish("fft", r, out, True)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """One-dimensional inverse discrete Fourier transform (``torch.fft.ifft``);
    arguments as :func:`fft`."""
    _check_input(input, "ifft")
    x = _promote(input)
    r = _fft_c2c("ifft", x, n, dim, norm, False) if x.is_complex() else \
        _fft_r2c("ifft", x, n, dim, norm, False, False)
    if not x.is_complex():
        _exact_complex_out(out, r)
    return _finish("ifft", r, out, True)


def _exact_complex_out(out, r):
    """torch's inverse transforms of a real input (ifft, ihfft; not the n-D
    ones) write through a conjugation that wants exactly the result's
    complex dtype in ``out``."""
    if isinstance(out, _TensorBase) and out.is_complex() and out.dtype is not r.dtype:
        raise RuntimeError(f"Found dtype {out.dtype._legacy} but expected {r.dtype._legacy}")


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """FFT of a real signal, keeping the ``n // 2 + 1`` non-redundant
    frequencies (``torch.fft.rfft``); complex input raises."""
    if out is None and n is None and norm is None and type(dim) is int:
        # a float32/float64 CPU tensor that records nothing: pocketfft at once
        r = _rfft_plain(input, dim)
        if r is not None:
            return r
    _check_input(input, "rfft")
    return _finish("rfft", _fft_r2c("rfft", input, n, dim, norm, True, True), out, True)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Inverse of :func:`rfft`: a Hermitian half spectrum to a real signal of
    length ``n`` (default ``2 * (m - 1)``) (``torch.fft.irfft``)."""
    _check_input(input, "irfft")
    return _finish("irfft", _fft_c2r("irfft", input, n, dim, norm, False), out, False)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """FFT of a Hermitian-symmetric signal given by its first half: a real
    spectrum of length ``n`` (default ``2 * (m - 1)``) (``torch.fft.hfft``)."""
    _check_input(input, "hfft")
    return _finish("hfft", _fft_c2r("hfft", input, n, dim, norm, True), out, False)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Inverse of :func:`hfft`: the one-sided inverse FFT of a real signal
    (``torch.fft.ihfft``)."""
    _check_input(input, "ihfft")
    r = _fft_r2c("ihfft", input, n, dim, norm, False, True)
    _exact_complex_out(out, r)
    return _finish("ihfft", r, out, True)


def _fftn_c2c(fname, input, s, dim, norm, forward, out):
    _check_input(input, fname)
    shape, dims = _shape_and_dims(input, s, dim)
    x = _promote(input, require_complex=True)
    x = _resize(x, dims, shape)
    return _finish(fname, c2c(x, dims, _norm(norm, forward), forward), out, True)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional FFT over ``dim`` (default: the last ``len(s)`` dims, or
    all), each padded or trimmed to ``s`` (``torch.fft.fftn``)."""
    return _fftn_c2c("fftn", input, s, dim, norm, True, out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional inverse FFT (``torch.fft.ifftn``); arguments as :func:`fftn`."""
    return _fftn_c2c("ifftn", input, s, dim, norm, False, out)


def _dim_2d(fname, dim):
    """torch's binding of the 2-D transforms: ``dim`` is a tuple of ints (None
    is a TypeError there, unlike the n-D transforms' optional ``dim``)."""
    if dim is None:
        raise TypeError(f"fft_{fname}(): argument 'dim' must be tuple of ints, not NoneType")
    return dim


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional FFT (``torch.fft.fft2``): :func:`fftn` over the last two dims."""
    return _fftn_c2c("fft2", input, s, _dim_2d("fft2", dim), norm, True, out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional inverse FFT (``torch.fft.ifft2``)."""
    return _fftn_c2c("ifft2", input, s, _dim_2d("ifft2", dim), norm, False, out)


def _rfftn(fname, input, s, dim, norm, out):
    _check_input(input, fname)
    # torch checks the dims (IndexError) and the axis count before the input's dtype
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError(f"{fname} must transform at least one axis")
    if input.is_complex():
        raise RuntimeError(f"{fname} expects a real-valued input tensor, but got "
                           f"{_scalar_name(input.dtype)}")
    x = _resize(_promote(input), dims, shape)
    return _finish(fname, r2c(x, dims, _norm(norm, True), True), out, True)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional FFT of a real input, one-sided in the last transformed
    dim (``torch.fft.rfftn``)."""
    return _rfftn("rfftn", input, s, dim, norm, out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional :func:`rfftn` (``torch.fft.rfft2``)."""
    return _rfftn("rfft2", input, s, _dim_2d("rfft2", dim), norm, out)


def _irfftn(fname, input, s, dim, norm, out):
    _check_input(input, fname)
    shape, dims, last = _c2r_shape_and_dims(fname, input, s, dim)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    return _finish(fname, c2r(x, dims, _norm(norm, False), last), out, False)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """Inverse of :func:`rfftn` (``torch.fft.irfftn``); the last dim's output
    length is ``s[-1]`` (default ``2 * (m - 1)``)."""
    return _irfftn("irfftn", input, s, dim, norm, out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional :func:`irfftn` (``torch.fft.irfft2``)."""
    return _irfftn("irfft2", input, s, _dim_2d("irfft2", dim), norm, out)


def _hfftn(fname, input, s, dim, norm, out):
    _check_input(input, fname)
    shape, dims, last = _c2r_shape_and_dims(fname, input, s, dim)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    nm = _norm(norm, True)
    if len(dims) > 1:
        x = c2c(x, dims[:-1], nm, True)
    return _finish(fname, c2r(_conj(x), dims[-1:], nm, last), out, False)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional FFT of a Hermitian-symmetric input given by its half
    (``torch.fft.hfftn``); real output."""
    return _hfftn("hfftn", input, s, dim, norm, out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional :func:`hfftn` (``torch.fft.hfft2``)."""
    return _hfftn("hfft2", input, s, _dim_2d("hfft2", dim), norm, out)


def _ihfftn(fname, input, s, dim, norm, out):
    _check_input(input, fname)
    # torch checks the dims (IndexError) and the axis count before the input's dtype
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError(f"{fname} must transform at least one axis")
    if input.is_complex():
        raise RuntimeError(f"{fname} expects a real-valued input tensor, but got "
                           f"{_scalar_name(input.dtype)}")
    x = _resize(_promote(input), dims, shape)
    nm = _norm(norm, False)
    r = _conj(r2c(x, dims[-1:], nm, True))
    if len(dims) > 1:
        r = c2c(r, dims[:-1], nm, False)
    else:       # one axis: torch writes through the conjugation, as ihfft's
        _exact_complex_out(out, r)
    return _finish(fname, r, out, True)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """Inverse of :func:`hfftn` (``torch.fft.ihfftn``): real input,
    one-sided complex output."""
    return _ihfftn("ihfftn", input, s, dim, norm, out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional :func:`ihfftn` (``torch.fft.ihfft2``)."""
    return _ihfftn("ihfft2", input, s, _dim_2d("ihfft2", dim), norm, out)
