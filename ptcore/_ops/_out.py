"""Outputs of the op front-ends: ``out=`` arguments (torch's ``resize_output``:
an out of the wrong shape is resized, with a deprecation warning unless it
was empty) and their dtype rules, and the shape rule of in-place ops, shared
so every op words them the same way."""
from ptcore._tensor import _TensorBase
from ptcore._settings import grad_state
from ptcore._warn import warn_at_caller
from ptcore._dtype_utils import _cpp_name

__all__ = ["resize_out", "copy_out", "copy_out_same_dtype", "copy_out_exact", "check_out_grad",
           "check_same_dtype", "check_out_dtype_exact", "broadcast_shapes", "check_inplace_shape",
           "dense_overlap", "assert_no_overlap", "assert_no_partial_overlap", "assert_no_internal_overlap",
           "check_out_overlaps", "check_written", "check_out_arg"]


def resize_out(out, shape):
    """Resize ``out`` to ``shape`` as torch's ``resize_output``: a tensor
    holding elements warns (the call is attributed to the user's line)."""
    if not isinstance(out, _TensorBase):
        check_out_arg(out, None)
    shape = tuple(shape)
    if tuple(out.shape) != shape:
        if out.numel() != 0:
            warn_at_caller(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out.shape)}, which does not match the required output shape "
                f"{list(shape)}. This behavior is deprecated, and in a future PyTorch release "
                "outputs will not be resized unless they have zero elements. You can explicitly "
                "reuse an out tensor t by resizing it, inplace, to zero elements with "
                "t.resize_(0).")
        out.resize_(shape)
    return out


def copy_out(out, result):
    """``result`` written into ``out`` (resized first, as :func:`resize_out`)."""
    resize_out(out, result.shape)
    out.copy_(result)
    return out


def check_out_grad(fname, out, *inputs):
    """torch's refusal of ``out=`` when grad mode is on and a tensor input
    requires grad (the ops computed as compositions check it themselves; an
    op with an autograd formula has the recording layer check it)."""
    if out is not None and grad_state.enabled and any(
            isinstance(t, _TensorBase) and t.requires_grad for t in inputs):
        raise RuntimeError(f"{fname}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")


def copy_out_same_dtype(out, result):
    """``result`` written into ``out`` (:func:`copy_out`), which must have
    exactly ``result``'s dtype (the ``out=`` of torch's ops that do not cast)."""
    check_same_dtype(out, result.dtype)
    return copy_out(out, result)


def check_out_dtype_exact(out, dtype):
    """The ``out=`` of torch's structured ops that are not TensorIterator ops
    (``scatter``, ``index_add``, ``tril``, the ``*_copy`` view copies ...) must have
    exactly the result's ``dtype``: their ``set_output`` refuses any other."""
    if isinstance(out, _TensorBase) and out.dtype is not dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_cpp_name(dtype)}, but got "
                           f"{_cpp_name(out.dtype)} instead")


def copy_out_exact(out, result):
    """``result`` written into ``out`` (:func:`copy_out`), which must have exactly
    ``result``'s dtype (:func:`check_out_dtype_exact`); None ``out``: ``result``."""
    if out is None:
        return result
    check_out_dtype_exact(out, result.dtype)
    return copy_out(out, result)


def check_same_dtype(out, dtype):
    """The ``out=`` of an op whose output keeps its input's dtype (torch's
    TensorIterator ``check_all_same_dtype``: ``abs``, ``neg``, ``floor`` ...)
    must have exactly that dtype; checked before the kernel's dtype support."""
    if isinstance(out, _TensorBase) and out.dtype is not dtype:
        raise RuntimeError(f"Found dtype {out.dtype._legacy} but expected {dtype._legacy}")


def broadcast_shapes(*shapes):
    """The broadcast of ``shapes`` (a list), folded left to right with torch's
    ``infer_size``: each pair compared from the last dim, so a mismatch names
    the last mismatched dim as torch does."""
    out = []
    for shape in shapes:
        shape = list(shape)
        if len(shape) > len(out):
            out = [1] * (len(shape) - len(out)) + out
        off = len(out) - len(shape)
        for i in range(len(out) - 1, off - 1, -1):
            o, s = out[i], shape[i - off]
            if o == s or s == 1:
                continue
            if o == 1:
                out[i] = s
            else:
                raise RuntimeError(
                    f"The size of tensor a ({o}) must match the size of tensor b ({s}) at "
                    f"non-singleton dimension {i}")
    return out


def check_inplace_shape(self, operands):
    """An in-place op's tensor ``operands`` must broadcast to ``self``'s shape
    (torch checks it first, before the dtypes and the kernel's support)."""
    shape = self.shape
    for o in operands:
        if isinstance(o, _TensorBase) and o.shape != shape:
            b = broadcast_shapes(shape, *(t.shape for t in operands if isinstance(t, _TensorBase)))
            if b != list(shape):
                raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast "
                                   f"shape {b}")
            return


def dense_overlap(a, b):
    """PyTorch's ``get_overlap_status`` != No, for non-overlapping-and-dense
    tensors ('too hard' otherwise -> False)."""
    if a.numel() == 0 or b.numel() == 0:
        return False
    if a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr():
        return False
    if not a.is_non_overlapping_and_dense() or not b.is_non_overlapping_and_dense():
        return False
    a0, b0 = a.data_ptr(), b.data_ptr()
    a1 = a0 + a.numel() * a.element_size()
    b1 = b0 + b.numel() * b.element_size()
    return a0 < b1 and b0 < a1


def assert_no_overlap(a, b):
    if dense_overlap(a, b):
        raise RuntimeError(
            "unsupported operation: some elements of the input tensor and the written-to tensor "
            "refer to a single memory location. Please clone() the tensor before performing the "
            "operation.")


def assert_no_partial_overlap(a, b):
    """torch's ``assert_no_partial_overlap``: ``a`` may be ``b`` (the same
    memory range), not part of it."""
    if dense_overlap(a, b) and not (a.data_ptr() == b.data_ptr() and a.numel() * a.element_size()
                                     == b.numel() * b.element_size()):
        raise RuntimeError(
            "unsupported operation: some elements of the input tensor and the written-to tensor "
            "refer to a single memory location. Please clone() the tensor before performing the "
            "operation.")


def check_out_overlaps(out, inputs, partial=()):
    """torch's out= aliasing checks of index ops (gather, take, masked_select ...):
    ``out`` has no internal overlap, shares no memory with ``inputs`` and is at most
    exactly one of ``partial``."""
    if out is None or not isinstance(out, _TensorBase):
        return
    assert_no_internal_overlap(out)
    for t in inputs:
        assert_no_overlap(out, t)
    for t in partial:
        assert_no_partial_overlap(out, t)


def assert_no_internal_overlap(t):
    if t.numel() == 0:      # no elements, no two that share memory (torch: contiguous)
        return
    for s, st in zip(t.shape, t.stride()):
        if st == 0 and s > 1:
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers to "
                "a single memory location. Please clone() the tensor before performing the "
                "operation.")


def check_written(out, *inputs):
    """torch's checks of the tensor an elementwise op writes (its ``out=`` or
    ``self`` in place), before the shapes and dtypes: no two of its elements
    share memory, and each tensor input is either that tensor's own memory or
    none of it."""
    if isinstance(out, _TensorBase):
        assert_no_internal_overlap(out)
        for t in inputs:
            if isinstance(t, _TensorBase):
                assert_no_partial_overlap(out, t)


def check_out_arg(out, fname, n=None):
    """torch's argument parser on ``out=``, before any other check: None, a
    Tensor (``n`` None) or a tuple/list of ``n`` Tensors; else its TypeError."""
    if out is None:
        return
    where = f"{fname}(): " if fname else ""
    if n is None:
        if not isinstance(out, _TensorBase):
            raise TypeError(f"{where}argument 'out' must be Tensor, not {type(out).__name__}")
        return
    if not isinstance(out, (tuple, list)):
        raise TypeError(f"{where}argument 'out' must be tuple of Tensors, not "
                        f"{type(out).__name__}")
    if len(out) != n:
        raise TypeError(f"expected tuple of {n} elements but got {len(out)}")
    for i, o in enumerate(out):
        if not isinstance(o, _TensorBase):
            raise TypeError(f"{where}expected Tensor as element {i} in argument 'out', but "
                            f"got {type(o).__name__}")
