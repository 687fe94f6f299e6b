"""ptcore: tensors with PyTorch semantics and tape-based autograd, for the
SciPy world.  ``torch.X`` -> ``ptcore.X``.

>>> import ptcore
>>> x = ptcore.arange(6, dtype=ptcore.float32).view(2, 3)
>>> x.T.shape
ptcore.Size([3, 2])
"""
import os as _os
import sys as _sys

from ptcore import _config
from ptcore._ops.kernels import _parallel as _parallel
from ptcore import _tensor as _C
from ptcore._tensor import (
    Size, Storage, dtype, device, _TensorBase,
    bool_ as bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
    complex32, complex64, complex128, uint16, uint32, uint64,
    float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz,
    qint8, quint8, qint32, quint4x2, quint2x4,
    get_default_dtype, set_default_dtype,
    empty, zeros, ones, full, empty_strided, from_numpy,
    strided, contiguous_format, preserve_format, channels_last, channels_last_3d,
    sparse_bsr, sparse_bsc,
)
from ptcore.tensor import Tensor
from ptcore._dtype_utils import promote_types, result_type, can_cast, finfo, iinfo
from ptcore._dispatch import generate as _gen
from ptcore._dispatch.declarations import DECLARED as _DECLARED
# the tensor core's factories, as entries of the dispatch point in this namespace
_gen.bind_functions(globals(), ("empty", "zeros", "ones", "full", "empty_strided"), "creation")
from ptcore._ops.creation import (
    tensor, as_tensor, asarray, arange, linspace, logspace, eye,
    empty_like, zeros_like, ones_like, full_like,
)
from ptcore._ops import indexing as _indexing  # registers advanced indexing with the core
from ptcore._dlpack import from_dlpack
from ptcore._ops.random import (
    Generator, default_generator, manual_seed, seed, initial_seed, get_rng_state, set_rng_state,
    rand, randn, randint, randperm, normal, bernoulli, multinomial, rand_like, randn_like,
    randint_like,
)
from ptcore._tensor_str import set_printoptions, get_printoptions, printoptions
from ptcore import cuda, testing
from ptcore.testing import FileCheck  # torch.FileCheck is torch.testing.FileCheck
from ptcore import _meta  # noqa: E402,F401  (the meta device: its runtime registers itself)

# The operator library (ptcore._ops, one module per op family): each module
# exports its public functions through __all__; its Tensor methods come from
# the declarations (generate.bind_module, generate.methods_of).
from ptcore._ops import pointwise as _elementwise
from ptcore._ops import reduction as _reductions
from ptcore._ops import linalg as _linalg_ops
from ptcore._ops import shape as _shape_ops
from ptcore._ops import sorting as _sorting
from ptcore._ops import (
    calculus, creation_composite, indexing_composite, linalg_composite, pointwise_composite,
    reduction_composite, shape_composite, tensor_info,
)
from ptcore._ops.pointwise import *  # noqa: F401,F403
from ptcore._ops.reduction import *  # noqa: F401,F403
from ptcore._ops.linalg import *  # noqa: F401,F403
from ptcore._ops.shape import *  # noqa: F401,F403
from ptcore._ops.sorting import *  # noqa: F401,F403
from ptcore._ops.pointwise_composite import *  # noqa: F401,F403
from ptcore._ops.reduction_composite import *  # noqa: F401,F403
from ptcore._ops.calculus import *  # noqa: F401,F403
from ptcore._ops.linalg_composite import *  # noqa: F401,F403
from ptcore._ops.shape_composite import *  # noqa: F401,F403
from ptcore._ops.indexing_composite import *  # noqa: F401,F403
from ptcore._ops.creation_composite import *  # noqa: F401,F403
from ptcore._ops.tensor_info import *  # noqa: F401,F403
_COMPOSITES = (pointwise_composite, reduction_composite, calculus, linalg_composite,
               shape_composite, indexing_composite, creation_composite, tensor_info)
del (calculus, creation_composite, indexing_composite, linalg_composite, pointwise_composite,
     reduction_composite, shape_composite, tensor_info)
from ptcore._return_types import return_types  # torch.return_types (named tuples of max, sort ...)
_sys.modules.setdefault("ptcore.return_types", return_types)
from ptcore import linalg
from ptcore.linalg._extra import geqrf, orgqr, ormqr  # noqa: E402,F401
Tensor.geqrf, Tensor.orgqr, Tensor.ormqr = geqrf, orgqr, ormqr

# The op modules made their functions and methods entries of the dispatch
# point (each ends with generate.bind_module); their methods go on Tensor here,
# the operator methods' implementations are collected for bind_operators below.
_OPERATOR_IMPLS = {}
for _mod in (_elementwise, _reductions, _linalg_ops, _shape_ops, _sorting, *_COMPOSITES):
    _gen.attach_methods(Tensor, _gen.methods_of(_mod), _OPERATOR_IMPLS)

# Autograd: the table's recording bodies, the core's hooks, the Tensor methods it makes.
from ptcore import autograd
from ptcore.autograd.grad_mode import (  # noqa: F401
    no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled,
    is_inference_mode_enabled,
)
from ptcore.autograd import _op_bodies as _ag_bodies
_ag_methods, _ag_functions = _ag_bodies.install()
_gen.attach_methods(Tensor, _ag_methods)
globals().update(_ag_functions)
from ptcore.autograd import _tensor_methods as _ag_tensor_methods
_gen.attach_methods(Tensor, _ag_tensor_methods.methods(Tensor))
_OPERATOR_IMPLS.update(_ag_bodies.operator_methods(Tensor))
from ptcore.autograd.variable import Variable as _Variable
autograd.Variable = _Variable
del _Variable, _ag_bodies, _ag_methods, _ag_functions, _ag_tensor_methods

# the __torch_function__ layer must be there before any op call; autocast (ptcore.amp)
from ptcore._dispatch import torch_function as _torch_function  # noqa: F401
from ptcore._dispatch import default_device as _default_device  # noqa: F401
from ptcore._dispatch import tracing as _tracing
from ptcore._dispatch import python_dispatch as _python_dispatch  # noqa: E402
from ptcore import amp
from ptcore.amp import autocast
from ptcore.amp.autocast_mode import (  # noqa: F401
    is_autocast_enabled, set_autocast_enabled, get_autocast_dtype, set_autocast_dtype,
    is_autocast_cpu_enabled, set_autocast_cpu_enabled, get_autocast_cpu_dtype,
    set_autocast_cpu_dtype, get_autocast_gpu_dtype, set_autocast_gpu_dtype,
    is_autocast_cache_enabled, set_autocast_cache_enabled, clear_autocast_cache,
    autocast_increment_nesting, autocast_decrement_nesting,
)

# Top-level functional ops, settings and extra random sampling (composites of the above).
from ptcore import _settings
from ptcore import _nn_functions as _functional_aliases
from ptcore._ops import random as _random_api
from ptcore._ops import random_samplers as _random_extra
from ptcore._nn_functions import *  # noqa: F401,F403
from ptcore._checks import *  # noqa: F401,F403
from ptcore._settings import *  # noqa: F401,F403
from ptcore._ops.random_samplers import *  # noqa: F401,F403
for _mod in (_functional_aliases, _random_api, _random_extra):
    _gen.attach_methods(Tensor, _gen.methods_of(_mod), _OPERATOR_IMPLS)
del _mod

# Legacy tensor types (FloatTensor ...), layout / memory_format, constants, removed functions.
from ptcore import _legacy_types
from ptcore._ops import removed as _removed_ops
from ptcore._legacy_types import *  # noqa: F401,F403
from ptcore._ops.removed import *  # noqa: F401,F403
_gen.attach_methods(Tensor, _gen.methods_of(_removed_ops))

# TypedStorage / FloatStorage ..., Tensor.storage, set_, resize, resize_as.
from ptcore import storage
from ptcore.storage import *  # noqa: F401,F403
_gen.attach_methods(Tensor, _gen.methods_of(storage))


from ptcore.torch_version import __version__  # noqa: E402  (a TorchVersion, as torch's)

UntypedStorage = Storage
# the base of the untyped storages (torch._C.StorageBase; tensordict's MemoryMappedTensor
# tests sources with it): a TypedStorage is none, as torch's
StorageBase = Storage

# dtype aliases, as torch
half = float16
float = float32
double = float64
chalf = complex32
cfloat = complex64
cdouble = complex128
short = int16
int = int32
long = int64
uint8 = uint8

# constants, as torch (and the array API standard)
from math import e, pi, inf, nan  # noqa: E402
newaxis = None


def is_tensor(obj):
    """True if ``obj`` is a ptcore tensor: dense, sparse (:mod:`ptcore.sparse`, a Tensor
    subclass) or nested (:mod:`ptcore.nested`)."""
    if isinstance(obj, _TensorBase):
        return True
    nested = _sys.modules.get("ptcore.nested._tensor")
    return nested is not None and isinstance(obj, nested.NestedTensor)


def is_storage(obj):
    """True if ``obj`` is a ptcore storage."""
    return isinstance(obj, (Storage, TypedStorage))


def _tensor_arg(input, fname):
    """torch's TypeError for a non-tensor first argument (PyTorch's argument parser)."""
    if not isinstance(input, _C._TensorBase):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input


def is_floating_point(input):
    return _tensor_arg(input, "is_floating_point").is_floating_point()


def is_complex(input):
    return _tensor_arg(input, "is_complex").is_complex()


def numel(input):
    return _tensor_arg(input, "numel").numel()


def set_num_threads(n):
    """Threads used by ptcore's parallel CPU kernels (and its BLAS)."""
    import builtins
    if isinstance(n, builtins.bool) or not isinstance(n, builtins.int):
        raise TypeError(f"set_num_threads expects an int, got {type(n).__name__}")
    _parallel._set_num_threads(n)
    _linalg_ops._set_blas_threads(n)


def get_num_threads():
    """Threads used by ptcore's parallel CPU kernels."""
    return _parallel._get_num_threads()


def _default_threads():
    import builtins
    if _config.NUM_THREADS > 0:
        return _config.NUM_THREADS
    try:
        n = builtins.max(builtins.len(_os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        n = _os.cpu_count() or 1
    if _config.OMP_THREADS > 0:
        # as torch: OMP_NUM_THREADS / MKL_NUM_THREADS set the default, at most the CPUs
        # there are (an MPI rank under ptcore.distributed.run or torchrun gets 1; ranks x
        # all cores oversubscribed the node: ddp_digits.py, 2 ranks on 2 cores, 60 s, not 2)
        return builtins.min(_config.OMP_THREADS, n)
    if _config.MPI_LOCAL_RANKS > 1:
        # ranks started by mpiexec share the node's CPUs (each sees all of them): split
        # them instead of running ranks x CPUs threads
        return builtins.max(n // _config.MPI_LOCAL_RANKS, 1)
    # every CPU the process may run on, as torch; each kernel decides by its
    # problem size how many of them it uses (ptcore._ops.kernels._parallel's grain,
    # the GEMM tiles), so small ops stay on one thread
    return n


_parallel._set_num_threads(_default_threads())
_C._set_host_cache_limit(_config.CPU_ALLOCATOR_CACHE_MB << 20)


# Function forms of the view and copy methods: ptcore.transpose(x, 0, 1) ...
def _method_as_function(name):
    if name == "split":
        # torch.split(tensor, split_size_or_sections, dim=0): its first parameter's name
        def fn(tensor, *args, **kwargs):
            return tensor.split(*args, **kwargs)
        fn.__name__ = fn.__qualname__ = name
        fn.__doc__ = "``ptcore.split(tensor, ...)`` is ``tensor.split(...)``."
        fn._calls_entry = True
        return fn

    def fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = f"``ptcore.{name}(input, ...)`` is ``input.{name}(...)``."
    fn._calls_entry = True      # (the method records and dispatches)
    return fn


# (the ops declared method_fn=True)
_method_functions = tuple(_d.name for (_g, _), _d in _DECLARED.items()
                          if _g == "ptcore" and _d.method_fn)
for _name in _method_functions:
    globals()[_name] = _method_as_function(_name)
del _name, _DECLARED


def adjoint(input):
    return input.adjoint()


adjoint._calls_entry = True


_cdist_impl = []


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Batched ``p``-norm distances between the rows of ``x1`` and ``x2`` (as ``torch.cdist``)."""
    if not _cdist_impl:
        # (kept after the first call: an import statement per call costs a microsecond)
        # lazy: ptcore.nn loads on first use, not with ptcore (_LAZY_MODULES)
        from ptcore.nn.functional._distance import cdist as _cdist
        _cdist_impl.append(_cdist)
    return _cdist_impl[0](x1, x2, p, compute_mode)


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """Short-time Fourier transform (``torch.stft``); see :func:`ptcore.fft._stft.stft`."""
    # lazy: ptcore.fft loads on first use (_LAZY_MODULES)
    from ptcore.fft._stft import stft as _stft
    return _stft(input, n_fft, hop_length, win_length, window, center, pad_mode, normalized,
                 onesided, return_complex, align_to_window)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """Inverse short-time Fourier transform (``torch.istft``); see :func:`ptcore.fft._stft.istft`."""
    # lazy: ptcore.fft loads on first use (_LAZY_MODULES)
    from ptcore.fft._stft import istft as _istft
    return _istft(input, n_fft, hop_length, win_length, window, center, normalized, onesided,
                  length, return_complex)


Tensor.stft, Tensor.istft = stft, istft


def _to_sparse(self, layout=None, *, sparse_dim=None, blocksize=None, dense_dim=None):
    """A sparse copy of this dense tensor (``Tensor.to_sparse``, or
    ``to_sparse(sparse_dim)`` for a hybrid COO tensor); see :mod:`ptcore.sparse`."""
    import builtins
    # lazy: ptcore.sparse loads on first use (_LAZY_MODULES)
    from ptcore.sparse import to_sparse
    if isinstance(layout, builtins.int):      # torch's to_sparse(sparseDims) overload
        layout, sparse_dim = None, layout
    return to_sparse(self, layout, sparse_dim)


def _to_sparse_coo(self):
    # lazy: ptcore.sparse loads on first use (_LAZY_MODULES)
    from ptcore.sparse import to_sparse
    return to_sparse(self)


def _to_sparse_csr(self, dense_dim=None):
    # lazy: ptcore.sparse loads on first use (_LAZY_MODULES)
    from ptcore.sparse import to_sparse, sparse_csr
    return to_sparse(self, sparse_csr)


def _to_sparse_csc(self, dense_dim=None):
    # lazy: ptcore.sparse loads on first use (_LAZY_MODULES)
    from ptcore.sparse import to_sparse, sparse_csc
    return to_sparse(self, sparse_csc)


def _is_all_true(input):
    """A 0-d bool tensor: whether every element of the bool tensor ``input`` is
    True (``torch._is_all_true``, what distributions validate with); under
    vmap it reduces over the batch as well, so validation works there."""
    # lazy: ptcore.func loads on first use (_LAZY_MODULES)
    from ptcore.func._batched import BatchedTensor
    while type(input) is BatchedTensor:
        input = input._bt_phys
    return input.all()


def _is_any_true(input):
    """``torch._is_any_true``: whether any element (over every vmap batch) is True."""
    # lazy: ptcore.func loads on first use (_LAZY_MODULES)
    from ptcore.func._batched import BatchedTensor
    while type(input) is BatchedTensor:
        input = input._bt_phys
    return input.any()


def _sparse_mask(self, mask):
    """This dense tensor's values at the stored positions of the sparse
    ``mask`` (``Tensor.sparse_mask``): a sparse tensor in ``mask``'s layout."""
    # lazy: ptcore.sparse loads on first use (_LAZY_MODULES)
    from ptcore.sparse._ops import sparse_mask
    return sparse_mask(self, mask)


Tensor.to_sparse, Tensor.to_sparse_csr, Tensor.to_sparse_csc, Tensor.sparse_mask = \
    _to_sparse, _to_sparse_csr, _to_sparse_csc, _sparse_mask
Tensor.to_sparse_coo = _to_sparse_coo


def _dequantize(self):
    """``Tensor.dequantize``: a float tensor is its own dequantization (quantized
    tensors, :mod:`ptcore._quantized`, override it)."""
    if self.is_floating_point():
        return self
    raise NotImplementedError("Could not run 'aten::dequantize.self' with arguments from the "
                              "'CPU' backend.")


def _quantized_only(name):
    def method(self, *args, **kwargs):
        raise NotImplementedError(f"Could not run 'aten::{name}' with arguments from the "
                                  f"'CPU' backend: the tensor is not quantized.")
    method.__name__ = name
    return method


Tensor.dequantize = _dequantize
for _n in ("int_repr", "q_scale", "q_zero_point", "q_per_channel_scales",
           "q_per_channel_zero_points", "q_per_channel_axis", "qscheme"):
    setattr(Tensor, _n, _quantized_only(_n))


# the rest of the public functions here become entries of the dispatch point;
# the operator methods are made; the tensor core's own methods (views,
# conversions, metadata) are declared in the table
_gen.bind_functions(globals(), _method_functions + (
    "adjoint", "cdist", "geqrf", "orgqr", "ormqr", "from_numpy", "from_dlpack", "numel",
    "is_complex", "is_floating_point", "stft", "istft"), "shape")
_gen.bind_operators(Tensor, _OPERATOR_IMPLS)
_gen.declare_core(Tensor)
del _os, _gen, _OPERATOR_IMPLS, _method_functions


# torch._C's Python-level names that scripts and libraries use (torchvision's
# tv_tensors: ``from torch._C import DisableTorchFunctionSubclass``).  ptcore._C
# is the tensor core, below the layers these come from, so the root attaches them.
def _set_grad_enabled(enabled):
    """``torch._C._set_grad_enabled``: switch grad mode (returns None)."""
    import builtins
    if not isinstance(enabled, builtins.bool):
        raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, "
                        f"not {type(enabled).__name__}")
    set_grad_enabled(enabled)


def _is_alias_of(tensor, other):
    """``torch._C._is_alias_of``: whether the two tensors view the same storage (tensordict's
    ``to_module`` asks before swapping a parameter); False when either is no tensor, as
    torch's."""
    if not (isinstance(tensor, _TensorBase) and isinstance(other, _TensorBase)):
        return False
    return tensor.untyped_storage() is other.untyped_storage()


def _log_api_usage_once(event):
    """``torch._C._log_api_usage_once``: ptcore logs no API usage."""
    if not isinstance(event, str):
        raise TypeError(f"_log_api_usage_once(): event must be a str, not {type(event).__name__}")


from ptcore import _c_nn  # noqa: E402  (torch._C._nn: the nn ops under ATen's signatures)
from ptcore._dispatch import dispatch_keys as _dispatch_keys  # noqa: E402
from ptcore.func._levels import transforms_active as _transforms_active  # noqa: E402
from ptcore.func import _c_functorch  # noqa: E402  (torch._C._functorch)


def _install_c_names():
    tf, tracing = _torch_function, _tracing
    for name, value in {
            "DisableTorchFunction": tf.DisableTorchFunction,
            "DisableTorchFunctionSubclass": tf.DisableTorchFunctionSubclass,
            "_disabled_torch_function_impl": tf._disabled_torch_function_impl,
            "_disabled_torch_dispatch_impl": _python_dispatch._disabled_torch_dispatch_impl,
            # the default device's name (torch._C._get_default_device: PyG's EdgeIndex repr)
            "_get_default_device": lambda: str(_settings.get_default_device()),
            "_is_torch_function_enabled": tf.is_torch_function_enabled,
            "_is_torch_function_mode_enabled": tf.is_torch_function_mode_enabled,
            "_has_torch_function": tf.has_torch_function,
            "_has_torch_function_unary": tf.has_torch_function_unary,
            "_has_torch_function_variadic": tf.has_torch_function_variadic,
            # the active tracer (truthy) while ptcore.jit.trace records, else None
            "_get_tracing_state": tracing.active_tracer,
            # whether ptcore.jit.trace records on this thread (asteroid's is_tracing)
            "_is_tracing": lambda: tracing.active_tracer() is not None,
            "_set_grad_enabled": _set_grad_enabled,
            "_log_api_usage_once": _log_api_usage_once,
            "_is_alias_of": _is_alias_of,
            "_get_deterministic_fill_uninitialized_memory":
                _settings._get_deterministic_fill_uninitialized_memory,
            "_set_deterministic_fill_uninitialized_memory":
                _settings._set_deterministic_fill_uninitialized_memory,
            "Generator": Generator,
            "TensorBase": _TensorBase,
            "StorageBase": Storage,
            # the metaclass of Tensor (lightning annotates with it; torch's is a type subclass)
            "_TensorMeta": type(Tensor),
            # dispatch keys (torchvision combines the autocast keys at import)
            "DispatchKey": _dispatch_keys.DispatchKey,
            "DispatchKeySet": _dispatch_keys.DispatchKeySet,
            "_ExcludeDispatchKeyGuard": _dispatch_keys.ExcludeDispatchKeyGuard,
            "_nn": _c_nn,
            "_functorch": _c_functorch,
            # a ptcore.func transform (vmap, grad, jvp ...) running on this thread
            "_are_functorch_transforms_active": _transforms_active}.items():
        setattr(_C, name, value)
    _C.__getattr__ = _c_lazy_name
    _sys.modules.setdefault("ptcore._C", _C)     # ``from ptcore._C import ...``
    # ``from torch._C._functorch import ...``: torch registers its _C submodules by name
    for sub in ("_nn", "_functorch"):
        _sys.modules.setdefault("ptcore._C." + sub, getattr(_C, sub))


# torch._C's names that live in a subpackage imported on first use: name -> (module, name)
_C_LAZY = {"Graph": ("ptcore.jit._ts_graph", "TracedGraph"),
           "Node": ("ptcore.jit._ts_graph", "Node"),
           "Value": ("ptcore.jit._ts_graph", "Value"),
           "TensorType": ("ptcore.jit._ts_graph", "TensorType"),
           "DeviceObjType": ("ptcore.jit._ts_graph", "DeviceObjType")}


def _c_lazy_name(name):
    """``torch._C.Graph`` and the other graph classes (fvcore annotates with them): the
    classes of the graphs ``ptcore.jit._get_trace_graph`` returns."""
    hit = _C_LAZY.get(name)
    if hit is None:
        raise AttributeError(f"module 'ptcore._C' has no attribute '{name}'")
    import importlib
    # lazy: ptcore.jit is imported on first use (``import ptcore`` stays fast)
    value = getattr(importlib.import_module(hit[0]), hit[1])
    setattr(_C, name, value)
    return value


_install_c_names()
del _tracing
del _install_c_names


# --- subpackages: imported on first use (``import ptcore`` stays fast) ---
_LAZY_MODULES = {
    "nn": "ptcore.nn",
    "optim": "ptcore.optim",
    "utils": "ptcore.utils",
    "multiprocessing": "ptcore.multiprocessing",
    "serialization": "ptcore.serialization",
    "func": "ptcore.func",
    "overrides": "ptcore.overrides",
    "profiler": "ptcore.profiler",
    "cpu": "ptcore.cpu",
    "jit": "ptcore.jit",
    "onnx": "ptcore.onnx",
    "distributed": "ptcore.distributed",
    "accelerator": "ptcore.accelerator",
    "backends": "ptcore.backends",
    "random": "ptcore.random",
    "hub": "ptcore.hub",
    "fft": "ptcore.fft",
    "special": "ptcore.special",
    "sparse": "ptcore.sparse",
    "array_api": "ptcore.array_api",
    "distributions": "ptcore.distributions",
}
_LAZY_MODULES["quasirandom"] = "ptcore.quasirandom"
_LAZY_MODULES["signal"] = "ptcore.signal"
_LAZY_MODULES["windows"] = "ptcore.signal.windows"  # torch.windows is torch.signal.windows
_LAZY_MODULES["functional"] = "ptcore.functional"
_LAZY_MODULES["version"] = "ptcore.version"
_LAZY_MODULES["library"] = "ptcore.library"
for _n in ("fx", "nested", "masked", "__future__", "export", "ao", "quantization", "_functorch"):
    _LAZY_MODULES[_n] = "ptcore." + _n
for _n in ("compiler", "_dynamo", "_inductor", "mps", "xpu", "mtia", "futures", "types", "torch_version",
           "__config__"):
    _LAZY_MODULES[_n] = "ptcore." + _n
# torch's top-level names for functions that live in subpackages here (imported on first use)
_LAZY_ATTRS = {"grid_sampler": "ptcore.nn.functional._grid_sample",
               "affine_grid_generator": "ptcore.nn.functional._grid_sample",
               "conv_tbc": "ptcore.nn.functional._conv_tbc",
               "OutOfMemoryError": "ptcore.cuda",
               "svd_lowrank": "ptcore._ops.lowrank", "pca_lowrank": "ptcore._ops.lowrank",
               "from_file": "ptcore._ops.from_file", "to_dlpack": "ptcore.utils.dlpack",
               "GradScaler": "ptcore.amp",
               "DisableTorchFunction": "ptcore._dispatch.torch_function",
               "DisableTorchFunctionSubclass": "ptcore._dispatch.torch_function",
               "ops": "ptcore.library",
               "get_include": "ptcore.utils.cython_extension",
               "get_device_module": "ptcore.accelerator",
               "jagged": "ptcore.nested"}
for _n in ("sparse_coo_tensor", "sparse_csr_tensor", "sparse_csc_tensor", "sparse_coo",
           "sparse_csr", "sparse_csc", "spmm", "sparse_compressed_tensor"):
    _LAZY_ATTRS[_n] = "ptcore.sparse"
_LAZY_ATTRS.update({"Stream": "ptcore._streams", "Event": "ptcore._streams",
                    "cond": "ptcore._control_flow", "while_loop": "ptcore._control_flow",
                    "fork": "ptcore.jit", "wait": "ptcore.jit",
                    # torch.Future (torch._C's; torch.futures.Future subclasses it)
                    "Future": "ptcore.futures",
                    "AcceleratorError": "ptcore.cuda.driver.interface"})
_LAZY_ATTRS["lobpcg"] = "ptcore._lobpcg"
for _n in ("quantize_per_tensor", "quantize_per_channel", "dequantize",
           "quantize_per_tensor_dynamic", "fake_quantize_per_tensor_affine",
           "fake_quantize_per_channel_affine", "_choose_qparams_per_tensor", "qscheme",
           "per_tensor_affine", "per_channel_affine", "per_tensor_symmetric",
           "per_channel_symmetric", "per_channel_affine_float_qparams", "int_repr", "q_scale",
           "q_zero_point", "q_per_channel_scales", "q_per_channel_zero_points",
           "q_per_channel_axis"):
    _LAZY_ATTRS[_n] = "ptcore._quantized"
_LAZY_ATTRS["Tag"] = "ptcore.library"          # torch.Tag, the operator tags enum
for _n in ("smm", "dsmm", "hspmm", "native_norm", "_convert_indices_from_coo_to_csr",
           "_convert_indices_from_csr_to_coo"):
    _LAZY_ATTRS[_n] = "ptcore.sparse._root_ops"
for _n in ("rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell", "embedding_bag", "lstm",
           "gru", "rnn_tanh", "rnn_relu"):
    _LAZY_ATTRS[_n] = "ptcore.nn.functional._aten_forms"
for _n in ("SymInt", "SymFloat", "SymBool", "sym_int", "sym_float", "sym_max", "sym_min",
           "sym_not", "sym_sqrt", "sym_ite", "sym_sum"):
    _LAZY_ATTRS[_n] = "ptcore._sym"
for _n in ("has_openmp", "has_mkl", "has_lapack", "has_spectral", "init_num_threads",
           "is_vulkan_available", "is_distributed"):
    _LAZY_ATTRS[_n] = "ptcore._build_info"
# torch exposes jit's classes at the root (``from torch import TensorType``: open_clip)
for _n in ("ScriptModule", "ScriptFunction"):
    _LAZY_ATTRS[_n] = "ptcore.jit"
for _n in ("TensorType", "DeviceObjType"):
    _LAZY_ATTRS[_n] = "ptcore.jit._ts_graph"
for _n in ("PyTorchFileReader", "PyTorchFileWriter"):
    _LAZY_ATTRS[_n] = "ptcore._file_records"
del _n


def _array_namespace():
    """``Tensor.__array_namespace__``'s namespace, ``ptcore.array_api`` (the
    tensor type sits below it, so the root wires the two; imported on first use)."""
    return __getattr__("array_api")


_sys.modules["ptcore.tensor"]._array_namespace_loader = _array_namespace


def __getattr__(name):
    import importlib
    if name in _LAZY_MODULES:
        mod = importlib.import_module(_LAZY_MODULES[name])
        globals()[name] = mod
        return mod
    if name in _LAZY_ATTRS:
        value = getattr(importlib.import_module(_LAZY_ATTRS[name]), name)
        globals()[name] = value
        return value
    if name == "torch":
        # torch's package imports itself at top level, so ``torch.torch is torch``; code
        # written against it (kornia's ``torch.torch.Tensor`` annotations) finds the same
        return _sys.modules[__name__]
    if name == "vmap":
        fn = importlib.import_module("ptcore.func").vmap
        globals()[name] = fn
        return fn
    if name == "compile":
        fn = importlib.import_module("ptcore._compile").compile
        globals()[name] = fn
        return fn
    if name in ("save", "load"):
        fn = getattr(importlib.import_module("ptcore.serialization"), name)
        globals()[name] = fn
        return fn
    if name.startswith("_foreach_"):
        # torch's multi-tensor ops (torch._foreach_add_ ...), loaded on first use
        foreach = importlib.import_module("ptcore._ops.foreach")
        if name in foreach.__all__:
            fn = getattr(foreach, name)
            globals()[name] = fn
            return fn
    raise AttributeError(f"module 'ptcore' has no attribute '{name}'")
