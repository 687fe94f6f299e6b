"""Normalization functions of ``ptcore.nn.functional`` (PyTorch semantics):
``batch_norm``, ``instance_norm``, ``layer_norm``, ``group_norm``,
``rms_norm``, ``normalize``, ``local_response_norm``.

Training-mode batch norm on CPU float32/float64 is one autograd Function
(:class:`_BatchNormTrain`) over the per-channel kernels of
``ptcore._ops.kernels._norm`` (statistics, normalisation and affine in one kernel
call, the backward in another).  Other normalisation by batch statistics
goes through :class:`_Standardize` (explicit backward) and ordinary ops for
the affine part.  Evaluation-mode batch norm is one ``x * scale + shift``.  Running
statistics are updated in place without recording gradients.
"""
import builtins

import ptcore as _pt
from ptcore._tensor import _TensorBase
from ptcore._dispatch import dispatcher as _dispatcher
from ptcore._dispatch import forward_ad as _fwad
from ptcore._dispatch.batching import frames as _vmap_frames
from ptcore._dispatch.device import (cpu_kernel as _loop, has_loop as _has_loop,
                                     loop_for as _loop_for, in_host_memory as _in_host_memory,
                                     refuse_cpu_half as _refuse_cpu_half)
from ptcore._ops.kernels import _nn_kernels as _NNK
from ptcore._ops.kernels import _norm as _norm_kernels
from ptcore.autograd import _record as _R
from ptcore.autograd._formulas import _recorded
from ptcore.autograd.function import Function, output_mask
from ptcore.autograd.graph import current_output_mask
from ptcore._scalar_args import bool_param, float_param, int_list_item, plain_number, \
    strict_int_param
from ptcore._ops._memory_format import _in_memory_format, _output_memory_format

__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm", "normalize",
           "local_response_norm"]


def _shape(t):
    return list(t.shape)


def _verify_batch_size(size):
    size_prods = size[0]
    for i in range(len(size) - 2):
        size_prods *= size[i + 2]
    if size_prods == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{size}")


def _verify_spatial_size(size):
    size_prods = 1
    for i in range(2, len(size)):
        size_prods *= size[i]
    if size_prods == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{size}")


def _check_numel(t, name, n, scale=1):
    if t is not None and t.numel() * scale != n:
        raise RuntimeError(f"{name} should contain {n} elements not {t.numel() * scale}")


def _check_param_dtype(input, *params):
    """Whether to compute in float32 and return the input's dtype: True for a half /
    bfloat16 input, with parameters of its dtype or float32 (ATen's "mixed type"): torch's
    kernels compute these norms in float32 and round once; False for other inputs whose
    parameters match.  Any other mix raises as torch."""
    given = [p for p in params if p is not None]
    if input.dtype in (_pt.float16, _pt.bfloat16) and \
            all(p.dtype == _pt.float32 or p.dtype == input.dtype for p in given):
        return True
    if all(p.dtype == input.dtype for p in given):
        return False
    for p in given:
        if p.dtype != input.dtype:
            if input.dtype == _pt.float32 and p.dtype != _pt.float32:
                raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def _f32(t):
    """``t`` in float32 (None stays None): a parameter of a half-precision norm."""
    return t if t is None or t.dtype == _pt.float32 else t.float()


def _with_stats(fn, x, running_mean, running_var, dtype, *rest):
    """``fn(x, ...)`` with ``dtype`` copies of the running statistics, written
    back after (rounded to their dtype, as torch's update)."""
    rm, rv = (s if s is None or s.dtype == dtype else s.to(dtype)
              for s in (running_mean, running_var))
    y = fn(x, rm, rv, *rest)
    with _pt.no_grad():
        for run, f in ((running_mean, rm), (running_var, rv)):
            if run is not None and f is not run:
                run.copy_(f)
    return y


def _stats_in_f32(fn, input, running_mean, running_var, *rest):
    """``fn`` on the float32 input with float32 copies of half-precision running
    statistics, written back after (rounded to their dtype, as torch's update)."""
    return _with_stats(fn, input.float(), running_mean, running_var, _pt.float32,
                       *rest).to(input.dtype)


class _Standardize(Function):
    """``(x - mean) * rsqrt(var + eps)`` over ``dims`` with an explicit backward.

    Also returns the (keepdim) mean and biased variance, not differentiable,
    for running statistics.  Statistics take two passes (mean, then the mean
    of the squared centred input): faster than ``var_mean`` here and as
    accurate.  Backward saves the input, mean and ``rstd`` (as PyTorch, so an
    in-place op on the output stays legal) and computes
    ``rstd * (g - mean(g) - y * mean(g * y))``.
    """

    @staticmethod
    def forward(ctx, x, dims, eps, update=None):
        mean = x.mean(dims, keepdim=True)
        y = x - mean
        var = (y * y).mean(dims, keepdim=True)
        rstd = _pt.rsqrt(var + eps)
        y.mul_(rstd)
        if update is not None:
            update(mean, var)         # running statistics: before saving (see batch_norm)
        ctx.save_for_backward(x, mean, rstd)
        ctx.dims = dims
        ctx.eps = eps
        ctx.mark_non_differentiable(mean, var)
        ctx.set_materialize_grads(False)
        return y, mean, var

    @staticmethod
    def backward(ctx, gy, gmean, gvar):
        if gy is None:
            return None, None, None, None
        x, mean, rstd = ctx.saved_tensors
        dims = ctx.dims
        if (_pt.is_grad_enabled() and (x.requires_grad or gy.requires_grad)) or _fwad.levels():
            # double backward (or forward AD over this backward): the
            # statistics depend on x too
            mean = x.mean(dims, keepdim=True)
            xc = x - mean
            rstd = _pt.rsqrt((xc * xc).mean(dims, keepdim=True) + ctx.eps)
        y = (x - mean) * rstd
        gx = gy - gy.mean(dims, keepdim=True) - y * (gy * y).mean(dims, keepdim=True)
        return gx * rstd, None, None, None


def _cpu_ln_kernels():
    """The one-pass layer norm kernels on the CPU (devices register theirs as
    the loop ``layer_norm_kernels``)."""
    return _NNK


_BN_DTYPES = (_pt.float32, _pt.float64)
_CPU = _pt.device("cpu")


class _BatchNormTrain(Function):
    """Training-mode batch norm ``(x, weight, bias) -> (y, mean, var)`` in one
    kernel per direction (``ptcore._ops.kernels._norm``; ``mean``/``var``, the batch
    statistics, are not differentiable).  A backward that must itself be
    differentiable (``create_graph=True``) re-runs the composite formula."""
    _backward_name = "NativeBatchNormBackward0"           # grad_fn as torch names it
    _backward_inputs = 3

    @staticmethod
    def forward(ctx, x, weight, bias, eps, update=None):
        K = _norm_kernels
        N, C = x.shape[0], x.shape[1]
        L = x.numel() // (N * C)
        xc = x.contiguous()
        y = _pt.empty(tuple(x.shape), dtype=x.dtype)
        mean = _pt.empty(C, dtype=x.dtype)
        invstd = _pt.empty(C, dtype=x.dtype)
        var = _pt.empty(C, dtype=x.dtype)
        K.batch_norm_forward(xc, N, C, L, None if weight is None else weight.contiguous(),
                             None if bias is None else bias.contiguous(), y, mean, invstd, var,
                             eps)
        if update is not None:
            update(mean, var)         # running statistics: before saving (see batch_norm)
        ctx.save_for_backward(x, weight, bias)
        ctx.bn = (mean, invstd, eps, N, C, L)
        ctx.mark_non_differentiable(mean, var)
        ctx.set_materialize_grads(False)
        return _in_memory_format(y, _output_memory_format(x)), mean, var

    @staticmethod
    def backward(ctx, gy, gmean, gvar):
        if gy is None:
            return None, None, None, None, None
        x, weight, bias = ctx.saved_tensors
        mean, invstd, eps, N, C, L = ctx.bn
        needs = output_mask(ctx)      # (torch's native_batch_norm_backward output_mask)
        if _pt.is_grad_enabled() or _fwad.levels():
            dims = (0,) + tuple(range(2, x.dim()))
            shape = [1, C] + [1] * (x.dim() - 2)
            # the gradients are taken at aliases of the inputs, so that a bias
            # computed from the weight (or the same tensor) is not counted twice
            ins = [t.view_as(t) if t is not None and t.requires_grad else t for t in (x, weight, bias)]
            with _pt.enable_grad():
                y = _affine(_Standardize.apply(ins[0], dims, eps)[0], ins[1], ins[2], shape)
            use = [t is not None and t.requires_grad and need for t, need in zip(ins, needs)]
            wanted = [t for t, u in zip(ins, use) if u]
            if not wanted:
                return None, None, None, None, None
            res = iter(_pt.autograd.grad(y, wanted, gy, create_graph=True, allow_unused=True))
            return tuple(next(res) if u else None for u in use) + (None, None)
        K = _norm_kernels
        gx = _pt.empty(tuple(x.shape), dtype=x.dtype) if needs[0] else None
        gw = _pt.empty(C, dtype=x.dtype) if needs[1] else None
        gb = _pt.empty(C, dtype=x.dtype) if needs[2] else None
        K.batch_norm_backward(gy.contiguous(), x.contiguous(), N, C, L,
                              None if weight is None else weight.contiguous(), mean, invstd,
                              gx, gw, gb)
        return gx, gw, gb, None, None


class _BatchNormEval(Function):
    """Evaluation-mode batch norm ``(x, weight, bias) -> x * scale + shift`` with the
    running statistics, as one node (torch's ``NativeBatchNormBackward0``) whose next
    functions are the input's and the parameters' nodes: tools that walk the graph from a
    layer's output (torch-pruning's dependency graph) find the layer before it there, not
    the nodes of ``weight * rsqrt(running_var + eps)``.  The backward is written with ptcore
    ops, so it is differentiable again."""
    _backward_name = "NativeBatchNormBackward0"
    _backward_inputs = 3

    @staticmethod
    def forward(ctx, x, weight, bias, stats):
        running_mean, running_var, eps, shape = stats
        invstd = _pt.rsqrt(running_var + eps)
        scale = invstd if weight is None else weight * invstd
        shift = -running_mean * scale if bias is None else bias - running_mean * scale
        ctx.save_for_backward(x, weight)
        ctx.stats = (running_mean.reshape(shape), invstd.reshape(shape), shape, bias is not None)
        ctx.set_materialize_grads(False)
        return _bn_layout(x * scale.reshape(shape) + shift.reshape(shape), x)

    @staticmethod
    def backward(ctx, gy):
        if gy is None:
            return None, None, None, None
        x, weight = ctx.saved_tensors
        mean, invstd, shape, has_bias = ctx.stats
        dims = (0,) + tuple(range(2, x.dim()))
        needs = output_mask(ctx)
        gx = gw = gb = None
        if needs[0]:
            gx = gy * invstd if weight is None else gy * (weight.reshape(shape) * invstd)
        if needs[1] and weight is not None:
            gw = (gy * ((x - mean) * invstd)).sum(dims)
        if needs[2] and has_bias:
            gb = gy.sum(dims)
        return gx, gw, gb, None


def _bn_fusable(input, weight, bias):
    if _dispatcher.parts_intercepted() or input.dtype not in _BN_DTYPES or input.device != _CPU:
        return False
    if input.dim() < 2 or input.numel() == 0:
        return False
    for t in (weight, bias):
        if t is not None and (t.dtype != input.dtype or t.device != _CPU):
            return False
    return True


def _standardize(x, dims, eps, update=None):
    """``(y, mean, var)``: ``x`` normalised over ``dims`` (see :class:`_Standardize`);
    ``update(mean, var)`` runs on the statistics before the Function saves them."""
    if isinstance(dims, builtins.int):
        dims = (dims,)
    return _Standardize.apply(x, tuple(dims), eps, update)


def _affine(y, weight, bias, shape):
    """``y * weight + bias`` with per-channel parameters viewed as ``shape``."""
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


def _update_running(running, stat, momentum):
    # running = (1 - momentum) * running + momentum * stat, in place, no autograd
    with _pt.no_grad():
        running.mul_(1 - momentum).add_(stat.detach().to(running.dtype), alpha=momentum)


def _floating_only(input, kname, complex_ok=False):
    """torch's normalization kernels are dispatched on floating dtypes only."""
    if isinstance(input, _pt.Tensor) and not input.is_floating_point() and \
            not (complex_ok and input.is_complex()):
        raise NotImplementedError(f'"{kname}" not implemented for \'{_tname(input.dtype)}\'')


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Batch normalization over all dims but the channel dim 1.

    Parameters
    ----------
    input : Tensor
        ``(N, C, *)``.
    running_mean, running_var : Tensor or None
        ``(C)`` buffers; updated in place when ``training`` (the variance
        with the unbiased batch variance), used instead of batch statistics
        when not ``training``.
    weight, bias : Tensor, optional
        Affine ``(C)`` parameters.
    training : bool
    momentum : float
    eps : float
    """
    bool_param(training, "batch_norm", "training", 6)
    momentum = float_param(momentum, "batch_norm", "momentum", 7)
    eps = float_param(eps, "batch_norm", "eps", 8)
    if input.numel():
        _floating_only(input, "batch_norm")
    if training:
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    if not input.numel():
        # torch's _batch_norm_impl_index: an empty input skips the checks; a
        # clone keeps the graph, scaled by weight[0] and shifted by bias[0]
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    nd = input.dim()
    C = input.shape[1] if nd > 1 else 0
    _check_numel(running_mean, "running_mean", C)
    _check_numel(running_var, "running_var", C)
    _check_numel(weight, "weight", C)
    _check_numel(bias, "bias", C)
    if _check_param_dtype(input, weight, bias, running_mean, running_var):
        return _stats_in_f32(batch_norm, input, running_mean, running_var, _f32(weight),
                             _f32(bias), training, momentum, eps)
    if nd < 2 and (training or (running_mean is not None and running_var is not None)):
        # torch counts 0 channels for such an input, then fails indexing dim 1
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-builtins.max(nd, 1)}, {builtins.max(nd, 1) - 1}], but got 1)")
    shape = [1, C] + [1] * (nd - 2)
    if training:
        def update(mean, var):
            # inside the Function, before it saves its tensors: a non-reentrant
            # checkpoint's early-stopping recomputation stops at that save, and the
            # statistics are updated again there, as torch's kernel does
            if running_mean is not None:
                _update_running(running_mean, mean.reshape(C), momentum)
            if running_var is not None:
                n = input.numel() // builtins.max(C, 1)
                _update_running(running_var, var.reshape(C) * (n / (n - 1)), momentum)
        upd = update if running_mean is not None or running_var is not None else None
        if _bn_fusable(input, weight, bias):
            y, mean, var = _BatchNormTrain.apply(input, weight, bias, eps, upd)
        else:
            dims = (0,) + tuple(range(2, nd))
            y, mean, var = _standardize(input, dims, eps, upd)
            y = _bn_layout(_affine(y, weight, bias, shape), input)
        return y
    if running_mean is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    if running_var is None:
        raise RuntimeError("running_var must be defined in evaluation mode")
    if _bn_fusable(input, weight, bias) and not running_mean.requires_grad and \
            not running_var.requires_grad and running_mean.dtype == input.dtype and \
            running_var.dtype == input.dtype:
        return _BatchNormEval.apply(input, weight, bias, (running_mean, running_var, eps, shape))
    invstd = _pt.rsqrt(running_var + eps)
    scale = invstd if weight is None else weight * invstd
    shift = -running_mean * scale if bias is None else bias - running_mean * scale
    return _R.name_grad_fn(_bn_layout(input * scale.reshape(shape) + shift.reshape(shape), input),
                           "NativeBatchNormBackward0", input)


def _bn_layout(y, input):
    """``y`` in the layout torch's batch norm kernel writes (the input's suggested
    memory format, else contiguous), as the fused kernel's: the ops' result follows
    the input's strides (a transposed input: a compiled graph that captured one
    path and runs the other would read other strides)."""
    fmt = _output_memory_format(input)
    return y.contiguous() if fmt is _pt.contiguous_format else _in_memory_format(y, fmt)


def _update_instance_stats(running_mean, running_var, mean, var, input, momentum):
    """Running statistics from instance statistics ``mean``/``var`` (biased, one per sample
    and channel): their averages over the batch.  After the Function that computed them
    (torch copies the instance statistics back after its batch_norm call: a checkpoint's
    early-stopping recomputation skips it)."""
    N, C = input.shape[0], input.shape[1]
    if running_mean is not None:
        _update_running(running_mean, mean.reshape(N, C).mean(0), momentum)
    if running_var is not None:
        n = 1
        for s in input.shape[2:]:
            n *= s
        _update_running(running_var, (var.reshape(N, C) * (n / (n - 1))).mean(0), momentum)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Instance normalization: per sample and channel over the spatial dims.

    ``running_mean``/``running_var`` (``(C)``), when given with
    ``use_input_stats``, are updated with the batch average of the instance
    statistics; with ``use_input_stats=False`` they normalise the input.
    """
    bool_param(use_input_stats, "instance_norm", "use_input_stats", 6)
    momentum = float_param(momentum, "instance_norm", "momentum", 7)
    eps = float_param(eps, "instance_norm", "eps", 8)
    _floating_only(input, "batch_norm")        # torch's instance norm is its batch norm
    if use_input_stats:
        _verify_spatial_size(input.size())
    nd = input.dim()
    N, C = input.shape[0], input.shape[1]
    _check_numel(running_mean, "running_mean", N * C, N)
    _check_numel(running_var, "running_var", N * C, N)
    _check_numel(weight, "weight", N * C, N)
    _check_numel(bias, "bias", N * C, N)
    # torch's instance norm takes running statistics of any floating dtype (only
    # weight and bias must match the input): they are used and updated as the
    # input's dtype (float32 for a half input)
    want = _pt.float32 if input.dtype in (_pt.float16, _pt.bfloat16) else input.dtype
    if any(s is not None and s.dtype not in (input.dtype, want) and s.is_floating_point()
           for s in (running_mean, running_var)):
        return _with_stats(instance_norm, input, running_mean, running_var, want, weight, bias,
                           use_input_stats, momentum, eps)
    if _check_param_dtype(input, weight, bias, running_mean, running_var):
        return _stats_in_f32(instance_norm, input, running_mean, running_var, _f32(weight),
                             _f32(bias), use_input_stats, momentum, eps)
    shape = [1, C] + [1] * (nd - 2)
    # torch normalises input.contiguous() folded to (1, N*C, ...): the output
    # is contiguous whatever the input's layout
    input = input.contiguous()
    if use_input_stats and _bn_fusable(input, weight, bias):
        # as torch: the batch norm kernel on the folded input, with the parameters repeated
        # per sample, viewed back (the graph's nodes are torch's: View, NativeBatchNorm
        # over View and Repeat nodes)
        folded = input.reshape(1, N * C, *input.shape[2:])
        y, mean, var = _BatchNormTrain.apply(
            folded, None if weight is None else weight.repeat(N),
            None if bias is None else bias.repeat(N), eps, None)
        _update_instance_stats(running_mean, running_var, mean, var, input, momentum)
        return y.view(input.shape)
    if use_input_stats:
        dims = tuple(range(2, nd))
        y, mean, var = _standardize(input, dims, eps)
        _update_instance_stats(running_mean, running_var, mean, var, input, momentum)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("Expected running_mean and running_var to be defined when "
                               "use_input_stats is false")
        rstd = _pt.rsqrt(running_var + eps)
        y = input * rstd.reshape(shape) + (-running_mean * rstd).reshape(shape)
    # (torch's instance norm is a batch norm of the folded input, viewed back)
    return _R.name_grad_fn(_affine(y, weight, bias, shape), "ViewBackward0", input)


def _normalized_shape(normalized_shape, fname):
    if isinstance(normalized_shape, (builtins.int, _pt.Size)) and not isinstance(
            normalized_shape, builtins.bool):
        if isinstance(normalized_shape, builtins.int):
            raise TypeError(f"{fname}(): argument 'normalized_shape' (position 2) must be tuple "
                            "of ints, not int")
    return [int_list_item(s, fname, "normalized_shape", i) for i, s in enumerate(normalized_shape)]


def _check_normalized(input, ns, weight, bias, star_sep):
    if len(ns) == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and _shape(t) != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got "
                               f"{name} of shape {_shape(t)} and normalized_shape = {ns}")
    k = len(ns)
    if input.dim() < k or _shape(input)[-k:] != ns:
        inner = ", ".join(str(s) for s in ns)
        raise RuntimeError(f"Given normalized_shape={ns}, expected input with shape "
                           f"[*{star_sep}{inner}], but got input of size{_shape(input)}")


def _layer_norm_plain(x, ns, w, b, eps):
    """The output of the most common call -- a CPU float32/float64 input
    normalized over its last dim, weight and bias None or vectors of its
    dtype -- where nothing records (inference), by the one-pass kernel
    without the general path's parsing; None for anything else (the general
    path checks, records and raises)."""
    if type(ns) is not tuple and type(ns) is not list and type(ns) is not _pt.Size:
        return None
    if len(ns) != 1 or not isinstance(x, _TensorBase) or not _in_host_memory(x):
        return None
    n = ns[0]
    if type(n) is not builtins.int or x.ndim == 0 or x.shape[-1] != n:
        return None
    rec = _R._state.enabled and x._requires_grad
    for p in (w, b):
        if p is not None:
            if not isinstance(p, _TensorBase) or p.ndim != 1 or p.dtype is not x.dtype:
                return None
            rec = rec or (_R._state.enabled and p._requires_grad)
    if rec:
        return None
    r = _NNK.layer_norm_forward(x, n, w, b, eps)
    return None if r is None else r[0]


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Layer normalization over the trailing ``normalized_shape`` dims.

    Parameters
    ----------
    input : Tensor
    normalized_shape : sequence of int
    weight, bias : Tensor, optional
        Elementwise affine parameters of shape ``normalized_shape``.
    eps : float
    """
    if type(eps) is builtins.float and not _dispatcher.parts_intercepted():
        y = _layer_norm_plain(input, normalized_shape, weight, bias, eps)
        if y is not None:
            return y
    ns = _normalized_shape(normalized_shape, "layer_norm")
    eps = float_param(eps, "layer_norm", "eps", 5)
    _check_normalized(input, ns, weight, bias, ", ")
    if not input.is_floating_point():
        raise NotImplementedError(f'"LayerNormKernelImpl" not implemented for '
                                  f"'{_tname(input.dtype)}'")
    if _check_param_dtype(input, weight, bias):
        return layer_norm(input.float(), normalized_shape, _f32(weight), _f32(bias),
                          eps).to(input.dtype)
    n = 1
    for s in ns:
        n *= s
    if input.dtype in (_pt.float32, _pt.float64) and input.is_contiguous() and n > 0 \
            and input.numel() > 0 and all(p is None or (p.dtype is input.dtype and p.is_contiguous())
                                          for p in (weight, bias)) \
            and _has_loop("layer_norm_kernels", input.device.type):
        return _layer_norm_kernel(input, weight, bias, tuple(ns), n, builtins.float(eps))
    dims = tuple(range(-len(ns), 0))
    y = _standardize(input, dims, eps)[0]
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y.contiguous()       # torch's layer norm output is contiguous whatever the input's


def _layer_norm_kernel(x, weight, bias, ns, n, eps):
    """Layer norm of contiguous float32/float64 input over its last ``n``
    elements: one pass per row forward and backward (the statistics in
    double), as ATen's kernel, recorded as one node (no autograd.Function:
    its per-call bookkeeping cost a third of the kernel's time at GPT
    sizes).  A recorded backward (create_graph) runs the same one-pass
    kernel and records it as one node, torch's
    NativeLayerNormBackwardBackward0 (:func:`_ln_record_backward`); the
    differentiable composite serves forward AD, vmap and dispatch layers."""
    kernels = _loop("layer_norm_kernels", x.device, _cpu_ln_kernels)()
    st = _R._state
    prev = st.enabled
    st.enabled = False
    try:
        y, mean, rstd = kernels.layer_norm_forward(x, n, weight, bias, eps)
    finally:
        st.enabled = prev
    if not prev or not (x._requires_grad or (weight is not None and weight._requires_grad)
                        or (bias is not None and bias._requires_grad)):
        return y
    need_w = weight is not None and weight._requires_grad
    need_b = bias is not None and bias._requires_grad
    saved = [_R.save(t) for t in (x, weight, mean, rstd)]     # (saved-tensor hooks see all four)

    def bw(gy):
        x_, w, mean_, rstd_ = [sv.unpack() for sv in saved]
        # the gradients this pass uses (torch's native_layer_norm_backward output_mask):
        # a gradient penalty's autograd.grad(out, x) runs no parameter reduction
        m = current_output_mask()
        nx = m is None or m[0]
        nw = need_w and (m is None or m[1])
        nb = need_b and (m is None or m[2])
        rec = _recorded(gy, x_, w)
        if not rec or not (_fwad.levels() or _vmap_frames() or _dispatcher.parts_intercepted()):
            was = st.enabled
            st.enabled = False          # (the kernel's outputs: plain tensors)
            try:
                r = kernels.layer_norm_backward(gy.contiguous(), x_, mean_, rstd_, w, nw, nb, nx)
                if r is not None:
                    gx, gw, gb = r
                    gw = None if gw is None else gw.view(ns)
                    gb = None if gb is None else gb.view(ns)
            finally:
                st.enabled = was
            if r is not None:
                if rec:
                    return _ln_record_backward(gx, gw, gb, gy, x_, w, bias, mean_, rstd_,
                                               ns, n, eps)
                return gx, gw, gb
        # differentiable composite (double backward)
        x2 = x_.reshape(-1, n)
        g2 = gy.reshape(-1, n)
        mu = x2.mean(-1, keepdim=True)
        xc = x2 - mu
        rs = _pt.rsqrt((xc * xc).mean(-1, keepdim=True) + eps)
        xh = xc * rs
        gx = None
        if nx:
            dxh = g2 * w.reshape(1, -1) if w is not None else g2
            gx = rs * (dxh - dxh.mean(-1, keepdim=True) - xh * (dxh * xh).mean(-1, keepdim=True))
            gx = gx.view(x_.shape)
        gw = (g2 * xh).sum(0).view(ns) if nw else None
        gb = g2.sum(0).view(ns) if nb else None
        return gx, gw, gb

    _R.attach("NativeLayerNormBackward0", y, (x, weight, bias), bw)
    return y


_LN_DOUBLE = "NativeLayerNormBackwardBackward0"
_R.node_class(_LN_DOUBLE, saved=("grad_out", "input", "mean", "rstd", "weight",
                                 "normalized_shape"), scalars=("normalized_shape",))


def _ln_record_backward(gx, gw, gb, gy, x, w, bias, mean, rstd, ns, n, eps):
    """The one-pass kernel's gradients ``gx, gw, gb`` (plain tensors, None where
    not computed) of a layer norm's backward run under create_graph, recorded
    as torch records native_layer_norm_backward: one node over ``(grad_out,
    input, mean, rstd, weight, bias)`` whose backward is
    :func:`_ln_double_backward`."""
    # (plain aliases, not views: the node's outputs own their history)
    outs = [gx, None if gw is None else gw.detach(), None if gb is None else gb.detach()]
    saved = [_R.save(t) for t in (gy, x, mean, rstd, w)]
    shape = tuple(x.shape)

    def bw(ggx, ggw, ggb):
        m = current_output_mask()
        gy_, x_, mean_, rstd_, w_ = [sv.unpack() for sv in saved]
        return _ln_double_backward(ggx, ggw, ggb, gy_, x_, w_, mean_, rstd_, ns, n, eps, shape,
                                   m)
    node = _R.attach(_LN_DOUBLE, outs, (gy, x, None, None, w, bias), bw, multi=True,
                     accepts_none=True)
    if node is not None:
        node._sv = tuple(saved) + (tuple(ns),)
    return tuple(outs)


def _ln_double_backward(ggx, ggw, ggb, gy, x, w, mean, rstd, ns, n, eps, shape, mask):
    """Gradients of layer norm's backward ``(gx, gw, gb) = f(gy, x, w)`` in
    ``(gy, x, mean, rstd, weight, bias)`` from those of its outputs (torch's
    layer_norm_double_backward).  Per row of ``n`` elements, with ``xh`` the
    normalised input, ``rs`` its reciprocal deviation and ``P(c) = c -
    mean(c) - xh * mean(c * xh)``: ``gx = rs * P(gy * w)``, ``gw = sum(gy *
    xh)``, ``gb = sum(gy)``; ``P`` is self-adjoint and ``rs * P`` is the
    transposed Jacobian of ``xh`` in ``x``.  Written with ptcore ops: a
    recorded pass (a third derivative) differentiates it again, the
    statistics then recomputed from ``x`` so that their dependence on it is
    in the graph."""
    want_gy = mask is None or mask[0]
    want_x = mask is None or mask[1]
    want_w = w is not None and (mask is None or mask[4])
    rows = x.numel() // n
    x2 = x.reshape(rows, n)
    g2 = gy.reshape(rows, n)
    if _recorded(x):
        mu = x2.mean(-1, keepdim=True)
        rs = _pt.rsqrt(((x2 - mu) * (x2 - mu)).mean(-1, keepdim=True) + eps)
    else:
        mu, rs = mean.reshape(rows, 1), rstd.reshape(rows, 1)
    xh = (x2 - mu) * rs
    w2 = None if w is None else w.reshape(1, n)
    u = None if ggx is None else ggx.reshape(rows, n)
    pu = None
    if u is not None:
        pu = rs * (u - u.mean(-1, keepdim=True) - xh * (u * xh).mean(-1, keepdim=True))
    g_gy = g_x = g_w = None
    if want_gy:
        parts = []
        if pu is not None:
            parts.append(pu if w2 is None else pu * w2)
        if ggw is not None:
            parts.append(ggw.reshape(1, n) * xh)
        if ggb is not None:
            parts.append(ggb.reshape(1, n).expand(rows, n))
        if parts:
            g_gy = parts[0]
            for t in parts[1:]:
                g_gy = g_gy + t
            g_gy = g_gy.reshape(gy.shape)
    if want_w and pu is not None:
        g_w = (g2 * pu).sum(0).reshape(ns)
    if want_x:
        c = k = None
        if u is not None:
            dxh = g2 if w2 is None else g2 * w2
            a = dxh.mean(-1, keepdim=True)
            b = (dxh * xh).mean(-1, keepdim=True)
            uxh = (u * xh).sum(-1, keepdim=True)
            # d/d rs and d/d xh of sum(u * gx) (the latter through b too)
            k = (u * dxh).sum(-1, keepdim=True) - a * u.sum(-1, keepdim=True) - uxh * b
            c = (u * b + dxh * (uxh / n)) * -rs
        if ggw is not None:
            v = g2 * ggw.reshape(1, n)      # d sum(ggw * gw) / d xh
            c = v if c is None else c + v
        if c is None:
            g_x = _pt.zeros(shape, dtype=x.dtype, device=x.device)   # (torch's zeros_like)
        else:
            g_x = rs * (c - c.mean(-1, keepdim=True) - xh * (c * xh).mean(-1, keepdim=True))
            if k is not None:
                g_x = g_x - (k * rs * rs / n) * xh
            g_x = g_x.reshape(shape)
    return g_gy, g_x, None, None, g_w, None


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Root-mean-square normalization over the trailing ``normalized_shape`` dims.

    ``eps=None`` uses ``finfo(input.dtype).eps``.
    """
    ns = _normalized_shape(normalized_shape, "rms_norm")
    if eps is not None:
        eps = float_param(eps, "rms_norm", "eps", 4)
    _check_normalized(input, ns, weight, None, "")
    _floating_only(input, "rms_norm", complex_ok=True)
    # as ATen's composite: half / bfloat16 computed in float32 (whose eps is the
    # default), the result in the input's dtype whatever the weight's
    x = input.float() if input.dtype in (_pt.float16, _pt.bfloat16) else input
    if eps is None:
        eps = _pt.finfo(x.dtype).eps
    if x is input and x.dtype in _BN_DTYPES and x.numel() > 0 and x.is_contiguous() \
            and (weight is None or (weight.dtype is x.dtype and weight.is_contiguous())):
        kernels = _loop_for("rms_norm_kernels", x.device, _cpu_rms_kernels)
        n = 1
        for v in ns:
            n *= v
        if kernels is not None and n > 0 and not _dispatcher.parts_intercepted() \
                and not _fwad.levels() and not _vmap_frames() and \
                (weight is None or weight.device == x.device):
            return _rms_norm_kernel(kernels(), x, weight, tuple(ns), n, builtins.float(eps))
    dims = tuple(range(-len(ns), 0))
    y = x * _pt.rsqrt((x * x).mean(dims, keepdim=True) + eps)
    if weight is not None:
        y = y * weight
    return y if y.dtype == input.dtype else y.to(input.dtype)


def _cpu_rms_kernels():
    """The one-pass RMS norm kernels on the CPU (``ptcore._ops.kernels._norm``;
    a device registers its own as the loop ``rms_norm_kernels``)."""
    return _norm_kernels


def _rms_norm_kernel(kernels, x, weight, ns, n, eps):
    """RMS norm of contiguous float32/float64 ``x`` over its last ``n``
    elements: one pass per row forward (the mean square in double), one per
    row and one over the rows backward, recorded as one node named as
    torch's last node of its composite (``MulBackward0``).  A recorded
    backward (create_graph) runs the differentiable composite."""
    R = x.numel() // n
    st = _R._state
    prev = st.enabled
    st.enabled = False
    try:
        y = _pt.empty(x.shape, dtype=x.dtype, device=x.device)
        rstd = _pt.empty(R, dtype=x.dtype, device=x.device)
        kernels.rms_norm_forward(x, R, n, weight, y, rstd, eps)
    finally:
        st.enabled = prev
    if not prev or not (x._requires_grad or (weight is not None and weight._requires_grad)):
        return y
    need_w = weight is not None and weight._requires_grad
    saved = [_R.save(t) for t in (x, weight, rstd)]

    def bw(gy):
        x_, w, rstd_ = [sv.unpack() for sv in saved]
        m = current_output_mask()
        nx = x_._requires_grad and (m is None or m[0])
        nw = need_w and (m is None or m[1])
        if not _recorded(gy, x_, w) and not (_fwad.levels() or _vmap_frames() or
                                             _dispatcher.parts_intercepted()) \
                and gy.dtype is x_.dtype and gy.shape == x_.shape:
            was = st.enabled
            st.enabled = False
            try:
                gc = gy.contiguous()
                gx = _pt.empty(x_.shape, dtype=x_.dtype, device=x_.device) if nx else None
                gw = _pt.empty(ns, dtype=x_.dtype, device=x_.device) if nw else None
                kernels.rms_norm_backward(gc, x_, R, n, w, rstd_, gx, gw)
            finally:
                st.enabled = was
            return gx, gw
        # differentiable composite (double backward)
        x2 = x_.reshape(-1, n)
        g2 = gy.reshape(-1, n)
        rs = _pt.rsqrt((x2 * x2).mean(-1, keepdim=True) + eps)
        gx = gw = None
        if nx:
            gwx = g2 * w.reshape(1, -1) if w is not None else g2
            gx = (rs * gwx - x2 * (rs * rs * rs) * (gwx * x2).mean(-1, keepdim=True)).view(x_.shape)
        if nw:
            gw = (g2 * x2 * rs).sum(0).view(ns)
        return gx, gw

    _R.attach("MulBackward0", y, (x, weight), bw)
    return y


class _GroupNorm(Function):
    """Group norm ``(x, weight, bias) -> y`` as one node (torch's ``NativeGroupNormBackward0``)
    whose next functions are the input's and the parameters' nodes, as torch's: tools that
    walk the graph from a layer's output (torch-pruning) find the layer before it there.
    Statistics per sample and group as :class:`_Standardize`'s; the backward is written with
    ptcore ops and recomputes the statistics from ``x`` when it is differentiated again."""
    _backward_name = "NativeGroupNormBackward0"
    _backward_inputs = 3

    @staticmethod
    def forward(ctx, x, weight, bias, args):
        groups, eps = args
        N, C = x.shape[0], x.shape[1]
        shape = [1, C] + [1] * (x.dim() - 2)
        # (group_norm checked: float32/float64 CPU operands, N * C * L > 0, no layer on)
        xc = x.contiguous()
        y = _pt.empty(x.shape, dtype=x.dtype)
        mean = _pt.empty((N, groups, 1), dtype=x.dtype)
        rstd = _pt.empty((N, groups, 1), dtype=x.dtype)
        _norm_kernels.group_norm_forward(
            xc, N, C, groups, x.numel() // (N * C), None if weight is None else weight.contiguous(),
            None if bias is None else bias.contiguous(), y, mean,
            rstd, eps)
        ctx.save_for_backward(x, weight)
        ctx.gn = (mean, rstd, groups, eps, shape, bias is not None)
        ctx.set_materialize_grads(False)
        return _in_memory_format(y, _output_memory_format(x))

    @staticmethod
    def backward(ctx, gy):
        if gy is None:
            return None, None, None, None
        x, weight = ctx.saved_tensors
        mean, rstd, groups, eps, shape, has_bias = ctx.gn
        xr = x.reshape(x.shape[0], groups, -1)
        again = (_pt.is_grad_enabled() and (x.requires_grad or gy.requires_grad or
                                            (weight is not None and weight.requires_grad))) \
            or _fwad.levels()
        if not again and not _dispatcher.parts_intercepted() and gy.dtype == x.dtype and gy.device == _CPU \
                and gy.shape == x.shape:
            # one kernel: per-channel sums, then gx in one pass
            needs = output_mask(ctx)
            N, C = x.shape[0], x.shape[1]
            gx = _pt.empty(x.shape, dtype=x.dtype) if needs[0] else None
            gw = _pt.empty(C, dtype=x.dtype) if needs[1] and weight is not None else None
            gb = _pt.empty(C, dtype=x.dtype) if needs[2] and has_bias else None
            _norm_kernels.group_norm_backward(
                gy.contiguous(), x.contiguous(), N, C, groups, x.numel() // (N * C),
                None if weight is None else weight.contiguous(), mean, rstd, gx, gw, gb)
            if gx is not None:
                gx = _in_memory_format(gx, _output_memory_format(x))
            return gx, gw, gb, None
        if again:
            # differentiated again: the statistics depend on x too
            mean = xr.mean(-1, keepdim=True)
            xc = xr - mean
            rstd = _pt.rsqrt((xc * xc).mean(-1, keepdim=True) + eps)
        xhat = (xr - mean) * rstd
        dims = (0,) + tuple(range(2, x.dim()))
        needs = output_mask(ctx)
        gw = (gy * xhat.reshape(x.shape)).sum(dims) if needs[1] and weight is not None \
            else None
        gb = gy.sum(dims) if needs[2] and has_bias else None
        gx = None
        if needs[0]:
            g = (gy if weight is None else gy * weight.reshape(shape)).reshape(xr.shape)
            gx = ((g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True))
                  * rstd).reshape(x.shape)
        return gx, gw, gb, None


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Group normalization: channels split into ``num_groups`` groups, each
    normalised over its channels and the spatial dims; per-channel affine."""
    num_groups = strict_int_param(num_groups, "group_norm", "num_groups", 2)
    eps = float_param(eps, "group_norm", "eps", 5)
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    N, C = input.shape[0], input.shape[1]
    if num_groups == 0:
        raise ZeroDivisionError("integer division or modulo by zero")
    _verify_batch_size([N * C // num_groups, num_groups] + _shape(input)[2:])
    _floating_only(input, "GroupNormKernelImpl")
    if C % num_groups != 0:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {_shape(input)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != C):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {_shape(t)} and "
                               f"input of shape {_shape(input)}")
    if _check_param_dtype(input, weight, bias):
        return group_norm(input.float(), num_groups, _f32(weight), _f32(bias),
                          eps).to(input.dtype)
    if N and _bn_fusable(input, weight, bias):
        return _GroupNorm.apply(input, weight, bias, (num_groups, eps))
    x = input.reshape(N, num_groups, input.numel() // N // num_groups if N else 0)
    y = _standardize(x, -1, eps)[0].reshape(input.shape)
    y = _affine(y, weight, bias, [1, C] + [1] * (input.dim() - 2))
    # torch's kernel writes in the input's suggested memory format
    return _R.name_grad_fn(_in_memory_format(y, _output_memory_format(input)),
                           "NativeGroupNormBackward0", input)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``."""
    eps = plain_number(eps, "clamp_min", "min", 1)
    if eps is None:
        raise TypeError("clamp_min() received an invalid combination of arguments - got eps=None: "
                        "normalize's eps must be a number")
    if p is None:                   # (torch's Tensor.norm(None, dim): the 2-norm)
        p = 2.0
    # (keepdim positionally: the recorded call's arguments need no reordering for the formula)
    denom = _pt.linalg.vector_norm(input, p, dim, True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return _pt.div(input, denom, out=out)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Local response normalization across channels (dim 1).

    ``input / (k + alpha / size * sum of squares over size neighbouring
    channels) ** beta``.
    """
    # (torch's composite: the size is used as an int, 0-d integral arrays included; the
    # constants meet tensors in its arithmetic, which takes no NumPy array)
    if not isinstance(size, int):
        if not hasattr(type(size), "__index__"):
            raise TypeError(f"local_response_norm(): argument 'size' must be int, not "
                            f"{type(size).__name__}")
        size = size.__index__()
    alpha = plain_number(alpha, "mul", "other", 1)
    beta = plain_number(beta, "pow", "exponent", 1)
    k = plain_number(k, "add", "other", 1)
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if input.numel() == 0:
        return input
    if dim > 3:     # (torch averages a 4-d+ input with avg_pool3d)
        _refuse_cpu_half("avg_pool3d_out_frame", input)
    N, C = input.shape[0], input.shape[1]
    sq = (input * input).reshape(N, C, -1)
    before, after = size // 2, (size - 1) // 2
    parts = []
    if before:
        parts.append(_pt.zeros((N, before, sq.shape[2]), dtype=sq.dtype, device=sq.device))
    parts.append(sq)
    if after:
        parts.append(_pt.zeros((N, after, sq.shape[2]), dtype=sq.dtype, device=sq.device))
    padded = _pt.cat(parts, 1) if len(parts) > 1 else sq
    acc = padded[:, 0:C]
    for s in range(1, size):
        acc = acc + padded[:, s:s + C]
    # torch averages with avg_pool, whose integral kernels divide as integers (truncating)
    avg = acc / size if acc.is_floating_point() or acc.is_complex() else acc // size
    div = avg.reshape(input.shape)
    div = (div * alpha + k) ** beta
    return input / div


from ptcore.nn.functional._loss import _tname  # noqa: E402
