"""``torch._dynamo.utils``: what libraries ask of the compiler before they choose a
path (torchvision's ``roi_align`` takes its Python implementation where the device
can compile and its C++ ops are missing), and the counters tests read."""
import collections
import functools
import math
import warnings

from ptcore._tensor import _TensorBase, device as _device

__all__ = ["is_compile_supported", "warn_once", "counters", "same"]

# torch's event counters, by group: "frames" ("total" captures tried, "ok" those
# that made graphs), "stats" ("unique_graphs", "calls_captured": ops captured),
# "unimplemented" (the reason of a graph break -> count).  Cleared by the caller (``counters.clear()``),
# not by ``reset()``, as in torch.
counters = collections.defaultdict(collections.Counter)

# the device types ptcore.compile generates kernels for: loops on the CPU, NVRTC
# kernels on CUDA (torch answers for CUDA by whether Triton is installed)
_COMPILED_DEVICES = ("cpu", "cuda")


def is_compile_supported(device_type):
    """Whether :func:`ptcore.compile` compiles code for ``device_type`` (a device or
    its type string)."""
    return _device(device_type).type in _COMPILED_DEVICES


@functools.lru_cache(None)
def warn_once(msg, stacklevel=1):
    """``warnings.warn(msg)`` the first time a message is given (torch's)."""
    warnings.warn(msg, stacklevel=stacklevel + 1)


def same(ref, res, fp64_ref=None, cos_similarity=False, tol=1e-4, equal_nan=False,
         exact_dtype=True, relax_numpy_equality=False, ignore_non_fp=False, log_error=None,
         **kwargs):
    """Whether ``res`` matches ``ref`` (torch's accuracy check of compiled
    results): sequences and dicts item by item, floating tensors and floats
    within ``tol`` (relative and absolute), other values equal."""
    def again(a, b):
        return same(a, b, None, cos_similarity, tol, equal_nan, exact_dtype,
                    relax_numpy_equality, ignore_non_fp, log_error)
    if isinstance(ref, (list, tuple)):
        if not isinstance(res, (list, tuple)):
            raise AssertionError(f"type mismatch {type(ref)} {type(res)}")
        return len(ref) == len(res) and all(again(a, b) for a, b in zip(ref, res))
    if isinstance(ref, dict):
        if not isinstance(res, dict):
            raise AssertionError(f"type mismatch {type(ref)} {type(res)}")
        return set(ref) == set(res) and all(again(ref[k], res[k]) for k in ref)
    if isinstance(ref, _TensorBase):
        if not isinstance(res, _TensorBase):
            raise AssertionError(f"type mismatch {type(ref)} {type(res)}")
        if tuple(ref.shape) != tuple(res.shape) or (exact_dtype and ref.dtype != res.dtype):
            return False
        if ref.is_sparse or res.is_sparse:
            ref, res = ref.to_dense(), res.to_dense()
        if ref.is_floating_point() or ref.is_complex():
            if res.dtype != ref.dtype:
                res = res.to(ref.dtype)
            return bool(ref.detach().cpu().allclose(res.detach().cpu(), rtol=tol, atol=tol,
                                                    equal_nan=equal_nan))
        if ignore_non_fp:
            return True
        return bool(ref.detach().cpu().equal(res.detach().cpu().to(ref.dtype)))
    if isinstance(ref, float):
        if not isinstance(res, (int, float)):
            return False
        if math.isnan(ref):
            return equal_nan and math.isnan(res)
        return math.isclose(ref, res, rel_tol=tol, abs_tol=tol)
    if ref is None or isinstance(ref, (bool, int, str, bytes)):
        return ref == res
    d = getattr(ref, "__dict__", None)
    if d is not None and type(ref) is type(res):
        return again(d, res.__dict__)
    return ref == res
