"""The CUDA kernels and loops of the operator table (internal): launching the
kernels of :mod:`ptcore.cuda.kernels` on device tensors, one module per op
family, the C fast paths of the hottest calls, and :mod:`.register`, which
puts them all into the operator table at CUDA's first use."""
