"""The CPU kernels of the ops: Cython extension modules (OpenMP where
available) over typed pointers, one module per kernel family (``_ew``
elementwise loops and ``_ewdrv`` their driver, ``_reduce`` reductions and
scans, ``_blas`` matrix products, ``_conv``, ``_index``, ``_sort``,
``_random`` ...), the ``.pxd`` files other Cython modules cimport
(``_types``, ``_parallel``, ``_copy``, ``_ew``, ``_random``) and, in
``include/``, the C headers the kernels #include.  The front-ends in
:mod:`ptcore._ops` validate arguments and call these."""
