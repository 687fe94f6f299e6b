"""``ptcore.ops`` (``torch.ops``): the op namespaces, with ATen's ops callable.

``ptcore.ops.aten.<op>`` is an :class:`~ptcore._dispatch.op_overload.OpOverloadPacket`
and ``ptcore.ops.aten.<op>.<overload>`` an ``OpOverload`` with torch's
schema; ``ptcore.ops.<namespace>.<op>`` is a custom op of
:mod:`ptcore.library`.  Calling an aten overload binds the arguments to its
schema and calls ptcore's public op of that name (``ptcore.X``,
``Tensor.X``, ``nn.functional.X``, ``linalg``/``special``/``fft``), so the
call passes the dispatch point (autograd, modes) like the public call.  The
aten ops whose arguments or results differ from the public op's
(``_softmax``, ``native_layer_norm``, ``convolution``, ``_to_copy``,
``embedding``, the losses' integer ``reduction`` ...) are written here with
ptcore's public ops.

Examples
--------
>>> a = ptcore.ops.aten
>>> a.add.Tensor(ptcore.ones(2), ptcore.ones(2))
tensor([2., 2.])
>>> str(a.sum.dim_IntList), a.sum.dim_IntList.name()
('aten.sum.dim_IntList', 'aten::sum.dim_IntList')
>>> a.index_put_(ptcore.zeros(3), [ptcore.tensor([1])], ptcore.tensor(5.0))
tensor([0., 5., 0.])
"""
import ctypes
import importlib
import inspect
import math
import os

import ptcore
from ptcore._dispatch import op_overload as _ov
from ptcore._dispatch import op_schema as _op_schema
from ptcore._dispatch.aten_schemas import overload_lines
from ptcore.nn import functional as F
from ptcore.sparse import SparseTensor
from ptcore.tensor import Tensor

__all__ = ["ops"]


# ---------------------------------------------------------------------------
# the namespaces
# ---------------------------------------------------------------------------

# the module that registers the built-in ops of a namespace other than aten, imported
# when the namespace is first used (the profiler's record_function ops)
_PROVIDERS = {"profiler": "ptcore.profiler.profiler"}


class _OpNamespace:
    """``ptcore.ops.<namespace>``: the ops of one namespace (``torch.ops.aten`` ...)."""

    def __init__(self, name):
        self._name = name
        self.name = f"ptcore.ops.{name}"

    def __repr__(self):
        return f"<module 'ptcore.ops.{self._name}' from 'ptcore.ops'>"

    def __getattr__(self, name):
        if name.startswith("__") and name not in overload_lines():
            raise AttributeError(name)      # (aten has __and__ ...; no namespace has __dict__)
        p = _ov.packet(self._name, name)
        if p is None and self._name in _PROVIDERS:
            importlib.import_module(_PROVIDERS[self._name])       # (registers its ops)
            p = _ov.packet(self._name, name)
        if p is None and name.startswith("_"):
            # (an op whose name starts with _: torchvision's _roi_align_backward ...)
            raise AttributeError(name)
        if p is None:
            raise AttributeError(f"'ptcore.ops.{self._name}' has no op '{name}' (custom ops "
                                 "are registered with ptcore.library.custom_op)")
        return p

    def __dir__(self):
        names = set(overload_lines()) if self._name == "aten" else set()
        names |= {n for ns, n in _ov._PACKETS if ns == self._name}
        return sorted(names | set(super().__dir__()))


# the shared libraries of PyTorch's C++ runtime: a library that needs one was built
# against libtorch's C++ ABI, which ptcore does not have
_LIBTORCH_NAMES = (b"libc10.so", b"libtorch.so", b"libtorch_cpu.so", b"libtorch_python.so",
                   b"libtorch_cuda.so", b"c10.dll", b"torch_cpu.dll")


def _needs_libtorch(path):
    """Whether the shared library at ``path`` names one of libtorch's libraries (its
    dependencies are among the strings of its dynamic section)."""
    with open(path, "rb") as f:
        data = f.read()
    return any(name in data for name in _LIBTORCH_NAMES)


# (is_that_library(path), define()): compiled libraries built on libtorch whose ops ptcore
# defines itself when a program loads them (ptcore._torchvision_ops adds torchvision's)
_BUILTIN_LIBRARIES = []


def add_builtin_library(is_that_library, define):
    """Have :meth:`_Ops.load_library` call ``define()`` instead of loading a library for
    which ``is_that_library(path)`` is true (a libtorch-linked library whose ops ptcore
    implements itself)."""
    _BUILTIN_LIBRARIES.append((is_that_library, define))


class _Ops:
    """``ptcore.ops``: one namespace object per op namespace (``torch.ops``)."""

    def __init__(self):
        self._namespaces = {}
        self.loaded_libraries = set()

    def load_library(self, path):
        """Load the shared library at ``path`` into the process (``torch.ops.load_library``:
        a library whose initialisers register ops, e.g. through ptcore's C API).

        Raises
        ------
        OSError
            If the file cannot be loaded, or if it was built against PyTorch's C++
            runtime (it needs ``libtorch``/``libc10``: its ops register with a dispatcher
            ptcore does not have).  Libraries that treat a failed load as "no compiled
            ops" (torchvision's) then take their Python paths.

        Libraries whose ops ptcore implements itself (:func:`add_builtin_library`:
        torchvision's ``torchvision/_C`` under the launcher) are not loaded: their ops are
        defined with ptcore's kernels instead.
        """
        path = os.fspath(path)
        if path in self.loaded_libraries:
            return
        for is_that_library, define in _BUILTIN_LIBRARIES:
            if is_that_library(path) and os.path.exists(path):
                # a library whose ops ptcore defines with built-in kernels
                define()
                self.loaded_libraries.add(path)
                return
        if _needs_libtorch(path):
            raise OSError(f"{path}: this library was built against PyTorch's C++ runtime "
                          "(libtorch/libc10), which ptcore does not provide; its compiled ops "
                          "are not available")
        ctypes.CDLL(path)
        self.loaded_libraries.add(path)

    def _namespace(self, name):
        ns = self._namespaces.get(name)
        if ns is None:
            ns = self._namespaces[name] = _OpNamespace(name)
        return ns

    def __getattr__(self, name):
        if name.startswith("__") and name not in overload_lines():
            raise AttributeError(name)      # (aten has __and__ ...; no namespace has __dict__)
        return self._namespace(name)

    def __repr__(self):
        return "<module 'ptcore.ops' from '_ops.py'>"


ops = _Ops()


# ---------------------------------------------------------------------------
# aten ops whose arguments or results differ from ptcore's public op
# ---------------------------------------------------------------------------

_REDUCTION = {0: "none", 1: "mean", 2: "sum"}


def _softmax(self, dim, half_to_float):
    return ptcore.softmax(self, dim, dtype=ptcore.float32 if half_to_float else None)


def _log_softmax(self, dim, half_to_float):
    return ptcore.log_softmax(self, dim, dtype=ptcore.float32 if half_to_float else None)


def _softmax_backward_data(grad_output, output, dim, input_dtype):
    g = output * (grad_output - (grad_output * output).sum(dim, keepdim=True))
    return g.to(input_dtype)


def _log_softmax_backward_data(grad_output, output, dim, input_dtype):
    return (grad_output - output.exp() * grad_output.sum(dim, keepdim=True)).to(input_dtype)


def _moments(x, dims, eps):
    """(mean, 1/sqrt(var + eps)) over ``dims``, kept."""
    mean = x.mean(dims, keepdim=True)
    return mean, (x.var(dims, unbiased=False, keepdim=True) + eps).rsqrt()


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    axis = input.dim() - len(normalized_shape)
    mean, rstd = _moments(input, list(range(axis, input.dim())), eps)
    return F.layer_norm(input, normalized_shape, weight, bias, eps), mean, rstd


def layer_norm(input, normalized_shape, weight, bias, eps, cudnn_enable):
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    # (the group's size spelled out: -1 is ambiguous for an empty batch)
    mean, rstd = _moments(input.reshape(N, group, (C // group) * HxW), [2], eps)
    return F.group_norm(input, group, weight, bias, eps), mean.reshape(N, group), \
        rstd.reshape(N, group)


def group_norm(input, num_groups, weight, bias, eps, cudnn_enabled):
    return F.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        empty = input.new_empty(0)
        return out, empty, empty.clone()
    dims = [0] + list(range(2, input.dim()))
    mean, invstd = _moments(input, dims, eps)
    return out, mean.flatten(), invstd.flatten()


def _native_batch_norm_legit(input, weight, bias, running_mean=None, running_var=None,
                             training=True, momentum=0.1, eps=1e-5):
    return native_batch_norm(input, weight, bias, running_mean, running_var, training,
                             momentum, eps)


def _native_batch_norm_legit_no_training(input, weight, bias, running_mean, running_var,
                                         momentum, eps):
    return native_batch_norm(input, weight, bias, running_mean, running_var, False, momentum,
                             eps)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    n = weight.dim() - 2
    if transposed:
        return getattr(F, f"conv_transpose{n}d")(input, weight, bias, stride, padding,
                                                 output_padding, groups, dilation)
    return getattr(F, f"conv{n}d")(input, weight, bias, stride, padding, dilation, groups)


def _to_copy(self, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
             memory_format=None):
    out = self.to(device=self.device if device is None else device,
                  dtype=self.dtype if dtype is None else dtype, non_blocking=non_blocking,
                  copy=True)
    if memory_format is not None and memory_format is not ptcore.preserve_format:
        out = out.contiguous(memory_format=memory_format)
    return out


def _pin_memory(self, device=None):
    return self.pin_memory(device) if device is not None else self.pin_memory()


def _unsafe_view(self, size):
    return self.reshape(size)


def expand(self, size, implicit):
    return self.expand(size)


def elu(self, alpha, scale, input_scale):
    if scale == 1 and input_scale == 1:
        return F.elu(self, alpha)
    return ptcore.where(self > 0, self * scale, (ptcore.exp(self * input_scale) - 1) * (alpha * scale))


def elu_(self, alpha, scale, input_scale):
    return self.copy_(elu(self, alpha, scale, input_scale))


def native_dropout(input, p, train):
    if train is False:
        return input.clone(), ptcore.ones_like(input, dtype=ptcore.bool)
    mask = ptcore.rand_like(input) >= p
    scale = 0.0 if p >= 1 else 1.0 / (1.0 - p)
    return input * mask * scale, mask


def native_dropout_backward(grad_output, mask, scale):
    return grad_output * mask * scale


def embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse):
    return F.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def threshold_backward(grad_output, self, threshold):
    return grad_output.masked_fill(self <= threshold, 0)


def gelu_backward(grad_output, self, approximate):
    x = self
    if approximate == "tanh":
        kappa, a = math.sqrt(2.0 / math.pi), 0.044715
        t = ptcore.tanh(kappa * (x + a * x * x * x))
        d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * kappa * (1 + 3 * a * x * x)
    else:
        cdf = 0.5 * (1 + ptcore.erf(x / math.sqrt(2.0)))
        d = cdf + x * ptcore.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    return grad_output * d


def silu_backward(grad_output, self):
    s = ptcore.sigmoid(self)
    return grad_output * s * (1 + self * (1 - s))


def sigmoid_backward(grad_output, output):
    return grad_output * output * (1 - output)


def tanh_backward(grad_output, output):
    return grad_output * (1 - output * output)


def lift_fresh(self):
    return self


def alias(self):
    return self.view(self.shape)


def _slice(self, dim, start, end, step):
    return self[(slice(None),) * (dim % self.dim()) + (slice(start, end, step),)]


def _index_tuple(indices):
    return tuple(slice(None) if i is None else i for i in indices)


def index(self, indices):
    return self[_index_tuple(indices)]


def index_put_(self, indices, values, accumulate):
    if any(i is None for i in indices):
        if accumulate:
            raise NotImplementedError("aten::index_put_: accumulate=True with None among the "
                                      "indices is not supported by ptcore")
        self[_index_tuple(indices)] = values
        return self
    return self.index_put_(tuple(indices), values, accumulate)


def index_put(self, indices, values, accumulate):
    return index_put_(self.clone(), indices, values, accumulate)


def split_with_sizes(self, split_sizes, dim):
    return self.split(list(split_sizes), dim)


def _local_scalar_dense(self):
    return self.item()


def sym_size(self, dim=None):
    return list(self.size()) if dim is None else self.size(dim)


def sym_stride(self, dim=None):
    return list(self.stride()) if dim is None else self.stride(dim)


def sym_numel(self):
    return self.numel()


def sym_storage_offset(self):
    return self.storage_offset()


def _copy(self, src, non_blocking):
    return self.clone().copy_(src, non_blocking)


def _pool(name, with_indices=False):
    def pool(self, kernel_size, stride, padding, dilation, ceil_mode):
        return getattr(F, name)(self, kernel_size, stride or None, padding, dilation, ceil_mode,
                                return_indices=with_indices)
    return pool


def _avg_pool(name):
    def pool(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
             divisor_override=None):
        kw = {} if divisor_override is None else {"divisor_override": divisor_override}
        return getattr(F, name)(self, kernel_size, stride or None, padding, ceil_mode,
                                count_include_pad, **kw)
    return pool


def _max_pool_backward(nd):
    """aten's ``max_pool{nd}d_with_indices_backward``: ``grad_output`` summed into a
    zero gradient of ``self`` at the flat spatial positions that ``indices`` holds.
    Differentiable as torch's: in ``grad_output`` (a gather), in ``self`` with a zero
    derivative (the zeros are ``where(False, self, 0)``: a gradient and a tangent of
    zeros for ``self``, whatever its values)."""
    def backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
        rows = math.prod(self.shape[:self.dim() - nd])
        never = ptcore.zeros((), dtype=ptcore.bool, device=self.device)
        gi = ptcore.where(never, self, 0).to(grad_output.dtype).reshape(rows, -1)
        gi = gi.scatter_add(1, indices.reshape(rows, -1), grad_output.reshape(rows, -1))
        return gi.reshape(self.shape)
    return backward


def _adaptive_max(name):
    def pool(self, output_size):
        return getattr(F, name)(self, output_size, return_indices=True)
    return pool


def _fractional_max(name):
    """aten's ``fractional_max_pool{n}d``: its fourth argument is ``random_samples``
    (nn.functional's is ``output_ratio``), and it returns the indices too."""
    def pool(self, kernel_size, output_size, random_samples):
        return getattr(F, name)(self, kernel_size, output_size, return_indices=True,
                                _random_samples=random_samples)
    return pool


def _adaptive_avg(name):
    def pool(self, output_size):
        return getattr(F, name)(self, output_size)
    return pool


def _loss(name):
    """An aten loss (``self``, integer ``reduction``) as nn.functional's."""
    def loss(**values):
        if "self" in values:
            values["input"] = values.pop("self")
        if "reduction" in values:
            values["reduction"] = _REDUCTION[values["reduction"]]
        return getattr(F, name)(**values)
    return loss


def nll_loss_forward(self, target, weight, reduction, ignore_index):
    out = F.nll_loss(self, target, weight, ignore_index=ignore_index,
                     reduction=_REDUCTION[reduction])
    if reduction == 0:
        return out, self.new_zeros(())
    w = ptcore.ones(target.shape, dtype=self.dtype) if weight is None else \
        weight[target.clamp(min=0)]
    return out, (w * (target != ignore_index)).sum().to(self.dtype)


def _upsample(mode, align=False):
    def up(input=None, output_size=None, align_corners=None, scale_factors=None, scales_h=None,
           scales_w=None, scales_d=None, scales=None, self=None):
        input = self if input is None else input
        kw = {"align_corners": align_corners} if align else {}
        if output_size is not None:
            return F.interpolate(input, size=list(output_size), mode=mode, **kw)
        return F.interpolate(input, scale_factor=list(scale_factors), mode=mode, **kw)
    return up


def _scaled_dot_product_flash_attention_for_cpu(query, key, value, dropout_p, is_causal,
                                                attn_mask=None, scale=None):
    out = F.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal,
                                         scale=scale)
    s = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query.float() @ key.float().transpose(-2, -1)) * s
    if is_causal:
        L, S = scores.shape[-2], scores.shape[-1]
        scores = scores.masked_fill(ptcore.ones(L, S, dtype=ptcore.bool).triu(1), -math.inf)
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask, -math.inf) if attn_mask.dtype == ptcore.bool \
            else scores + attn_mask
    return out, ptcore.logsumexp(scores, -1)


def _sparse_only(name):
    """aten's ``name`` of a sparse tensor (``_nnz``, ``_indices``, ``_values``): the
    sparse tensor's method; a strided tensor has no kernel (NotImplementedError, as torch)."""
    def op(self):
        if type(self) is not SparseTensor:
            raise NotImplementedError(f"aten::{name} takes a sparse tensor; it has no kernel "
                                      f"for a strided (dense) {type(self).__name__}")
        return getattr(self, name)()
    op.__name__ = name
    return op


def _to_dense(self, dtype=None, masked_grad=None):
    if type(self) is not SparseTensor:
        raise NotImplementedError("aten::_to_dense takes a sparse tensor; it has no kernel for "
                                  "a strided (dense) tensor")
    if dtype is not None:
        raise RuntimeError("dtype argument is not supported by sparse_to_dense")
    return self.to_dense(masked_grad=masked_grad)


_ADAPTERS = {
    "_nnz": _sparse_only("_nnz"), "_indices": _sparse_only("_indices"),
    "_values": _sparse_only("_values"), "_to_dense": _to_dense,
    "_sparse_mm": lambda sparse, dense: ptcore.mm(sparse, dense),
    "_softmax": _softmax, "_log_softmax": _log_softmax,
    "_softmax_backward_data": _softmax_backward_data,
    "_log_softmax_backward_data": _log_softmax_backward_data,
    "native_layer_norm": native_layer_norm, "layer_norm": layer_norm,
    "native_group_norm": native_group_norm, "group_norm": group_norm,
    "batch_norm": batch_norm, "instance_norm": instance_norm,
    "native_batch_norm": native_batch_norm, "_native_batch_norm_legit": _native_batch_norm_legit,
    "_native_batch_norm_legit_no_training": _native_batch_norm_legit_no_training,
    "convolution": convolution, "_to_copy": _to_copy, "_unsafe_view": _unsafe_view,
    "_pin_memory": _pin_memory,
    "expand": expand, "elu": elu, "elu_": elu_, "log_sigmoid": lambda self: F.logsigmoid(self),
    "native_dropout": native_dropout,
    "native_dropout_backward": native_dropout_backward, "embedding": embedding,
    "threshold_backward": threshold_backward, "gelu_backward": gelu_backward,
    "silu_backward": silu_backward, "sigmoid_backward": sigmoid_backward,
    "tanh_backward": tanh_backward, "lift_fresh": lift_fresh, "lift": lift_fresh,
    "lift_fresh_copy": lambda self: self.clone(), "alias": alias, "slice.Tensor": _slice,
    "index.Tensor": index, "_unsafe_index.Tensor": index, "index_put_": index_put_,
    "index_put": index_put, "_unsafe_index_put": index_put,
    "split_with_sizes": split_with_sizes, "_local_scalar_dense": _local_scalar_dense,
    "sym_size": sym_size, "sym_stride": sym_stride, "sym_numel": sym_numel,
    "sym_storage_offset": sym_storage_offset, "copy": _copy,
    "nll_loss_forward": nll_loss_forward, "nll_loss2d_forward": nll_loss_forward,
    "upsample_nearest2d": _upsample("nearest"), "upsample_nearest1d": _upsample("nearest"),
    "upsample_nearest3d": _upsample("nearest"),
    "upsample_bilinear2d": _upsample("bilinear", True),
    "upsample_linear1d": _upsample("linear", True),
    "upsample_trilinear3d": _upsample("trilinear", True),
    "upsample_bicubic2d": _upsample("bicubic", True),
    "_scaled_dot_product_flash_attention_for_cpu": _scaled_dot_product_flash_attention_for_cpu,
    # a list where ptcore's function takes the tensors as arguments; two dims lists
    # where it takes one pair
    "block_diag": lambda tensors: ptcore.block_diag(*tensors),
    "cartesian_prod": lambda tensors: ptcore.cartesian_prod(*tensors),
    "tensordot": lambda self, other, dims_self, dims_other, out=None:
        ptcore.tensordot(self, other, dims=(dims_self, dims_other), out=out),
}
for _n in (1, 2, 3):
    _ADAPTERS[f"max_pool{_n}d"] = _pool(f"max_pool{_n}d")
    _ADAPTERS[f"max_pool{_n}d_with_indices"] = _pool(f"max_pool{_n}d", True)
    if _n == 2:     # (ptcore's schema table has aten's 2-d one)
        _ADAPTERS[f"max_pool{_n}d_with_indices_backward"] = _max_pool_backward(_n)
    _ADAPTERS[f"avg_pool{_n}d"] = _avg_pool(f"avg_pool{_n}d")
    _ADAPTERS[f"adaptive_max_pool{_n}d"] = _adaptive_max(f"adaptive_max_pool{_n}d")
    _ADAPTERS[f"_adaptive_avg_pool{_n}d"] = _adaptive_avg(f"adaptive_avg_pool{_n}d")
    if _n > 1:
        _ADAPTERS[f"fractional_max_pool{_n}d"] = _fractional_max(f"fractional_max_pool{_n}d")
for _name, _fname in (("cross_entropy_loss", "cross_entropy"), ("nll_loss", "nll_loss"),
                      ("nll_loss2d", "nll_loss"), ("mse_loss", "mse_loss"),
                      ("l1_loss", "l1_loss"), ("smooth_l1_loss", "smooth_l1_loss"),
                      ("huber_loss", "huber_loss"), ("binary_cross_entropy",
                                                     "binary_cross_entropy"),
                      ("binary_cross_entropy_with_logits", "binary_cross_entropy_with_logits"),
                      ("kl_div", "kl_div"), ("soft_margin_loss", "soft_margin_loss"),
                      ("hinge_embedding_loss", "hinge_embedding_loss"),
                      ("margin_ranking_loss", "margin_ranking_loss"),
                      ("cosine_embedding_loss", "cosine_embedding_loss"),
                      ("multilabel_margin_loss", "multilabel_margin_loss"),
                      ("multi_margin_loss", "multi_margin_loss"),
                      ("triplet_margin_loss", "triplet_margin_loss"),
                      ("poisson_nll_loss", "poisson_nll_loss"), ("ctc_loss", "ctc_loss")):
    _ADAPTERS[_name] = _loss(_fname)
del _n, _name, _fname


# ---------------------------------------------------------------------------
# calling an aten overload
# ---------------------------------------------------------------------------

_SUBMODULES = (("linalg_", "ptcore.linalg"), ("special_", "ptcore.special"),
               ("fft_", "ptcore.fft"))


def _callable_op(f):
    return f if callable(f) and not isinstance(f, type) else None


def _method(name):
    """``Tensor.<name>`` looked up at each call (a core method is a Cython method
    or the dispatch point's entry, depending on whether a layer is on); the
    method of a sparse tensor's own class when ``self`` is one."""
    def call(*args, **kwargs):
        if args and type(args[0]) is SparseTensor:
            return getattr(args[0], name)(*args[1:], **kwargs)
        return getattr(Tensor, name)(*args, **kwargs)
    call.__name__ = name
    return call


def _public(name):
    """ptcore's public op named like aten's ``name``, or None."""
    for prefix, module in _SUBMODULES:
        if name.startswith(prefix):
            m = importlib.import_module(module)
            f = _callable_op(getattr(m, name[len(prefix):], None))
            if f is not None:
                return f
    if not name.startswith("__"):
        f = _callable_op(getattr(ptcore, name, None))
        if f is not None:
            return f
    if _callable_op(getattr(Tensor, name, None)) is not None or \
            _callable_op(getattr(SparseTensor, name, None)) is not None:
        return _method(name)
    return _callable_op(getattr(F, name, None))


def _resolve(overload):
    """The callable that runs aten ``overload`` (None: ptcore has no such op)."""
    if overload.namespace != "aten" or overload._line is None:
        return None
    name, ovname = overload._opname, overload._overloadname
    schema = overload._schema
    adapter = _ADAPTERS.get(f"{name}.{ovname}") or _ADAPTERS.get(name)
    if adapter is not None:
        def run_adapter(*args, **kwargs):
            return adapter(**_op_schema.bind(schema, args, kwargs)[0])
        return run_adapter
    public = _public(name)
    if public is None:
        return None
    positional = schema._positional
    first_tensor = bool(positional) and positional[0].type.base == "Tensor"

    def run_public(*args, **kwargs):
        try:
            values, given = _op_schema.bind(schema, args, kwargs)
        except _op_schema.SchemaMismatch:
            last = overload._last_kernel
            if last is None or not _takes(last[1], args, kwargs):
                raise
            # the arguments of the public op a dispatch mode saw as this overload
            return last[1](*args, **kwargs)
        last = max((k for k, a in enumerate(positional) if a.name in given), default=-1)
        pos = [values[a.name] for a in positional[:last + 1]]
        if first_tensor and pos and not _op_schema.is_tensor(pos[0]):
            pos[0] = ptcore.tensor(pos[0])      # a number for ``self``, as torch wraps it
        kw = {a.name: values[a.name] for a in schema.arguments
              if a.kwarg_only and a.name in given}
        if not kw.get("pin_memory", True) and not _takes(public, (), {"pin_memory": False}):
            del kw["pin_memory"]     # as a dispatch mode sees ``ones_like`` ...: torch's default
        return public(*pos, **kw)
    return run_public


def _takes(f, args, kwargs):
    """Whether Python function ``f`` takes these arguments (True when its
    signature is not known)."""
    while hasattr(f, "__wrapped__"):
        f = f.__wrapped__
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        return True
    params = sig.parameters.values()
    if not args:
        # keywords only: whether each is a parameter (or ``**kwargs`` takes it)
        return any(p.kind is p.VAR_KEYWORD for p in params) or \
            all(n in sig.parameters for n in kwargs)
    try:
        sig.bind(*args, **kwargs)
    except TypeError:
        return False
    return True


_ov.resolver[0] = _resolve
