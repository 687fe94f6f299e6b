"""The driver layer of ptcore.cuda (internal): the one narrow interface to a
device (:mod:`.interface`), the real device over cuda-python (:mod:`.real`)
and the libraries it loads (NVRTC compiler and kernel cache, cuFFT, cuSOLVER,
NVML), and the C launch and GEMM calls through function pointers."""
