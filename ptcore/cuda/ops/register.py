"""Installs the CUDA device into the tensor and dispatch layers, once the
runtime is up (``ptcore.cuda`` calls :func:`install` at CUDA's first use,
through :func:`ptcore.cuda.runtime.state.on_init`): the device side of
``Tensor`` (:mod:`.tensors`), the storages' resize, every op module's CUDA
kernels and loops in the operator table, and the C fast paths.

The op modules register in a fixed order: first the front-ends of the ops
declared ``device="frontend"`` (:func:`ptcore._dispatch.device.register_frontends`:
each runs the loops the modules below register), then the modules' own
kernels, which replace the front-end of the forms they cover (``addmm``'s
cuBLAS kernel, ``nn.functional.hardtanh``'s), the core elementwise and matmul
kernels first, complex last (it wraps the real-only kernels registered
before it so that complex arguments reach their front-ends).
"""
from ptcore import _tensor as _C
from ptcore._dispatch import device as _device_layer
from ptcore._dispatch.device import register_frontends, register_loop
from ptcore.cuda.ops import clip_fast
from ptcore.cuda.ops import complex as _complex
from ptcore.cuda.ops import ctc
from ptcore.cuda.ops import dense_fast
from ptcore.cuda.ops import fft
from ptcore.cuda.ops import gemm_search_loops
from ptcore.cuda.ops import index
from ptcore.cuda.ops import launch
from ptcore.cuda.ops import linalg
from ptcore.cuda.ops import matmul_fast
from ptcore.cuda.ops import nn
from ptcore.cuda.ops import optim_fast
from ptcore.cuda.ops import pointwise
from ptcore.cuda.ops import random as _random
from ptcore.cuda.ops import reduce
from ptcore.cuda.ops import special
from ptcore.cuda.ops import tensors
from ptcore.cuda.runtime import device_storage
from ptcore.cuda.runtime import state as _runtime

__all__ = ["install"]

_registered = [False]


def _register_kernels():
    """Every op module's kernels and loops into the operator table (once)."""
    if _registered[0]:
        return
    register_frontends("cuda")     # the ops declared device="frontend"
    launch.register()              # elementwise, matmul
    fft.register()                 # ptcore.fft on cuFFT
    index.register()               # pointwise front-ends, indexing, masking, sorting
    reduce.register()              # reductions and scans over any dims
    _random.register()             # the random samplers
    nn.register()                  # softmax, losses, conv, pooling, norms
    register_loop("adam_step", "cuda", optim_fast.adam_step)      # the optimizer steps in C
    register_loop("sgd_step", "cuda", optim_fast.sgd_step)
    register_loop("stacked_norm2", "cuda", clip_fast.stacked_norm2)  # clip_grad_norm_'s norms
    register_loop("arange_int64", "cuda", tensors.arange_int64)     # arange(n, device=...) by a kernel
    gemm_search_loops.register()   # matmul family, search, histograms
    ctc.register()                 # ctc_loss
    special.register()             # ptcore.special
    pointwise.register()           # gcd, lcm, sinc
    linalg.register()              # linalg on cuSOLVER
    _complex.register()            # last: complex64/complex128 around the kernels above
    _registered[0] = True


def install():
    """Put the CUDA device into the tensor and dispatch layers."""
    _C._set_device_ops(tensors.DEVICE_OPS)
    _C.DEVICE_REALLOC[1] = device_storage.realloc       # resize_ of cuda storages (type code 1)
    _register_kernels()
    dense_fast.install()
    matmul_fast.install()
    nn.install_fast_forms()
    _device_layer.enable(True)


def _uninstall():
    _C._set_device_ops(None)
    _device_layer.enable(False)


_runtime.on_reset(_uninstall)
