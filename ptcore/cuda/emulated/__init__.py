"""The emulated CUDA device (internal, ``PTCORE_CUDA_EMULATE=N``): the driver
over host memory and ordered queues (:mod:`.driver`), the same kernel sources
compiled for the host (:mod:`.kernels`, with the compatibility header of
``host/``), and cuBLAS, cuFFT and cuSOLVER on the host libraries."""
