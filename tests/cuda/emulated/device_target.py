"""Which device the tests of this directory run on (see conftest.py), and the
differences of a real GPU that some comparisons allow for.

By default they run on the emulated device, whose kernels are the CUDA sources
compiled for the host without contraction (``-ffp-contract=off``) and whose
cuBLAS/cuSOLVER calls run the CPU's BLAS/LAPACK: where the algorithm is the
CPU's, results equal the CPU's bit for bit, and the tests check that.  With
``PTCORE_TEST_REAL_CUDA=1`` they run on a real GPU, where NVRTC contracts
``a * b + c`` into FMAs (``-fmad=true``, as nvcc and PyTorch's CUDA builds),
a NaN made by an operation is the GPU's canonical ``0x7fffffff`` (the CPU's
x86 default NaN is ``0xffc00000``), and cuBLAS/cuSOLVER sum and normalise in
their own order.
"""
import os

import pytest

import ptcore

#: the tests run on a real GPU (else on the emulated device)
REAL = os.environ.get("PTCORE_TEST_REAL_CUDA") == "1"


def need_devices(n):
    """Skip the calling test unless the machine has ``n`` CUDA devices."""
    have = ptcore.cuda.device_count()
    if have < n:
        pytest.skip(f"needs {n} CUDA devices; this machine has {have}")
