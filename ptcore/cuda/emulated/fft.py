"""cuFFT for the emulated device, on the host (``scipy.fft``, pocketfft).

:func:`execute` has the semantics of ``cufftPlanMany`` with the basic
(contiguous) data layout -- or, given a ``stride`` above 1 (C2C/Z2Z), the
interleaved advanced layout (``inembed = onembed = n``, ``istride =
ostride = stride``, ``idist = odist = 1``) -- followed by one
``cufftExec*`` call:

* ``kind`` is one of ``C2C``, ``R2C``, ``C2R`` (single precision) and
  ``Z2Z``, ``D2Z``, ``Z2D`` (double precision);
* ``shape`` holds the 1 to 3 logical transform sizes ``n``; ``batch``
  transforms lie one after the other: a complex (C2C) signal takes
  ``prod(n)`` complex elements, a real one ``prod(n)`` reals and a
  half spectrum ``prod(n[:-1]) * (n[-1] // 2 + 1)`` complex elements;
* ``direction`` is ``-1`` (CUFFT_FORWARD) or ``+1`` (CUFFT_INVERSE) for
  C2C/Z2Z; R2C/D2Z are forward and C2R/Z2D inverse;
* nothing is normalised (an inverse transform is ``n`` times the
  mathematical inverse), as cuFFT.

:func:`check` validates the arguments before anything is queued, so a bad
call raises at the call site (as a cuFFT plan failure would).
"""
import ctypes
import math

import numpy as np

__all__ = ["KINDS", "check", "sizes", "execute"]

#: kind -> (input element numpy dtype, output element numpy dtype)
KINDS = {
    "C2C": (np.complex64, np.complex64), "R2C": (np.float32, np.complex64),
    "C2R": (np.complex64, np.float32), "Z2Z": (np.complex128, np.complex128),
    "D2Z": (np.float64, np.complex128), "Z2D": (np.complex128, np.float64),
}


def check(kind, shape, batch, direction, stride=1):
    """Raise ValueError for arguments cuFFT would refuse (or ptcore does not
    use: an interleaved layout other than C2C/Z2Z's, or with more signals
    than its stride); returns the shape tuple."""
    if kind not in KINDS:
        raise ValueError(f"cuFFT: unknown transform kind {kind!r} (one of {', '.join(KINDS)})")
    shape = tuple(int(n) for n in shape)
    if not 1 <= len(shape) <= 3:
        raise ValueError(f"cuFFT: a plan transforms 1 to 3 dims, got {len(shape)} ({shape})")
    if any(n < 1 for n in shape):
        raise ValueError(f"cuFFT: transform sizes must be positive, got {shape}")
    if int(batch) < 1:
        raise ValueError(f"cuFFT: batch must be positive, got {batch}")
    if kind in ("C2C", "Z2Z") and direction not in (-1, 1):
        raise ValueError(f"cuFFT: direction must be -1 (forward) or 1 (inverse), got {direction!r}")
    if stride != 1 and (kind not in ("C2C", "Z2Z") or not 1 <= int(batch) <= int(stride)):
        raise ValueError(f"cuFFT: an interleaved layout (stride {stride}) takes C2C/Z2Z and at most "
                         f"{stride} signals, got {kind} with batch {batch}")
    return shape


def sizes(kind, shape):
    """``(in_elements, out_elements)`` of one transform (elements of the
    kind's input / output types)."""
    full = math.prod(shape)
    half = math.prod(shape[:-1]) * (shape[-1] // 2 + 1)
    if kind in ("C2C", "Z2Z"):
        return full, full
    if kind in ("R2C", "D2Z"):
        return full, half
    return half, full


def _array(ptr, dtype, count):
    dtype = np.dtype(dtype)
    buf = (ctypes.c_char * (count * dtype.itemsize)).from_address(ptr)
    return np.frombuffer(buf, dtype=dtype, count=count)


def execute(kind, shape, batch, idata, odata, direction=-1, stride=1):
    """Run the transform on host memory at ``idata`` / ``odata`` (see the
    module docstring); in-place (``idata == odata``) works for C2C/Z2Z."""
    import scipy.fft as sf
    shape = check(kind, shape, batch, direction, stride)
    if stride != 1:
        # interleaved: the signals are the last axis of a (*shape, stride) array
        count = math.prod(shape) * stride
        tin = KINDS[kind][0]
        x = _array(idata, tin, count).reshape(shape + (stride,))[..., :batch]
        fn = sf.fftn if direction == -1 else sf.ifftn
        r = fn(x, axes=tuple(range(len(shape))), norm="backward" if direction == -1 else "forward")
        _array(odata, tin, count).reshape(shape + (stride,))[..., :batch] = r
        return
    tin, tout = KINDS[kind]
    nin, nout = sizes(kind, shape)
    half = shape[:-1] + (shape[-1] // 2 + 1,)
    axes = tuple(range(1, len(shape) + 1))
    x = _array(idata, tin, nin * batch)
    if kind in ("C2C", "Z2Z"):
        x = x.reshape((batch,) + shape)
        fn = sf.fftn if direction == -1 else sf.ifftn
        # "forward" normalisation of the inverse = no scaling, as cuFFT
        r = fn(x, axes=axes, norm="backward" if direction == -1 else "forward")
    elif kind in ("R2C", "D2Z"):
        r = sf.rfftn(x.reshape((batch,) + shape), axes=axes)
    else:
        r = sf.irfftn(x.reshape((batch,) + half), s=shape, axes=axes, norm="forward")
    out = _array(odata, tout, nout * batch)
    out[...] = np.asarray(r, dtype=tout).reshape(-1)
