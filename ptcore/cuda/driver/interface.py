"""The one narrow interface between ptcore's CUDA runtime and a device.

Everything in ``ptcore.cuda`` above this module (devices, streams, events,
the caching allocator, device storages, copies, kernel launches, cuBLAS)
talks to a device only through a :class:`Driver`.  Two implementations
exist:

* :mod:`ptcore.cuda.driver.real` -- the CUDA driver API through
  ``cuda.bindings.driver`` (primary contexts, ``cuMemAlloc``,
  ``cuMemcpy*Async``, streams, events, ``cuModuleLoadData`` of NVRTC cubins,
  ``cuLaunchKernel``) and cuBLAS resolved with ``dlsym``;
* :mod:`ptcore.cuda.emulated.driver` -- an emulated device for machines
  without a GPU: device memory is host memory, streams are ordered queues,
  events record queue positions, kernels are the same CUDA sources compiled
  for the host by the C++ compiler through a compatibility header, and
  cuBLAS runs on the CPU BLAS with the same column-major arguments (cuFFT
  on ``scipy.fft``, cuSOLVER on scipy's LAPACK).

The emulated device is chosen only by the environment variable
``PTCORE_CUDA_EMULATE`` (``1``, or ``N`` for N devices), read once at the
first CUDA call (:func:`ptcore.cuda.runtime.state.get_driver`).

Conventions shared by both implementations
------------------------------------------
* Handles (device pointers, streams, events, modules, functions) are plain
  Python ints; ``0`` is the legacy default stream.  A device pointer is
  never dereferenced on the host by code above this interface.
* Every method that takes ``device`` takes the ordinal (``int``).  Methods
  that act on a stream make that stream's device current first.
* Copies and memsets are asynchronous with respect to the host and ordered
  on ``stream``; ``memcpy_dtoh``/``memcpy_htod`` with pageable host memory
  behave as the CUDA driver does (they return once the host buffer may be
  reused / has been written, i.e. synchronously for pageable memory).
* ``launcher`` (C, the path every ptcore launch takes) and ``launch``
  (Python) take the kernel arguments; ``launch`` as a sequence of ``ctypes``
  instances (``c_longlong``, ``c_void_p``, ``c_double``, ``c_float``,
  ``c_int`` or ``ctypes.Structure`` values laid out as the kernel's C
  parameters -- see :mod:`ptcore.cuda.kernels.library` for the ABI); both drivers
  build the ``void**`` array from their addresses.
* Errors: out of memory raises
  :class:`ptcore.cuda.allocator.device_allocators.BackendOutOfMemory`; every other failure
  raises :class:`CudaError` (a RuntimeError) naming the call and the
  driver's error name.
"""

__all__ = ["Driver", "AcceleratorError", "CudaError"]


class AcceleratorError(RuntimeError):
    """An accelerator's runtime reported an error (``ptcore.AcceleratorError``, as
    ``torch.AcceleratorError``): the base of :class:`CudaError`."""


class CudaError(AcceleratorError):
    """A CUDA driver call failed: ``call`` and ``code`` name it."""

    def __init__(self, call, code=None, message=None):
        if code is None and isinstance(call, int) and not isinstance(call, bool):
            # torch.cuda.CudaError(code): a CUDA runtime error number
            call, code = "cuda", call
            message = message or f"CUDA error ({code})"
        self.call = call
        self.code = code
        text = message or f"{call} failed: {code}"
        super().__init__(text)


class Driver:
    """Abstract device driver (see the module docstring for conventions).

    Attributes
    ----------
    is_emulated : bool
    name : str
        ``"cuda"`` or ``"emulated"``.
    """

    is_emulated = False
    name = "abstract"

    # --- devices ---------------------------------------------------------
    def device_count(self):
        """Number of devices (int)."""
        raise NotImplementedError

    def device_properties(self, device):
        """dict with keys: ``name`` (str), ``major``, ``minor`` (compute
        capability), ``total_memory`` (bytes), ``multi_processor_count``,
        ``max_threads_per_block``, ``max_shared_memory_per_block``,
        ``warp_size``, ``L2_cache_size``, ``uuid`` (str), ``pci_bus_id``
        (int)."""
        raise NotImplementedError

    def can_access_peer(self, device, peer):
        """Whether ``device`` can map ``peer``'s memory (False for itself, as
        cuDeviceCanAccessPeer)."""
        raise NotImplementedError

    def set_current(self, device):
        """Make ``device``'s primary context current on this thread."""
        raise NotImplementedError

    def device_synchronize(self, device):
        """Wait until every stream of ``device`` is idle."""
        raise NotImplementedError

    # --- memory ----------------------------------------------------------
    def mem_alloc(self, device, nbytes):
        """Allocate ``nbytes`` (> 0) of device memory; returns the pointer.
        Raises BackendOutOfMemory when the device is full."""
        raise NotImplementedError

    def mem_free(self, device, ptr):
        raise NotImplementedError

    def mem_get_info(self, device):
        """(free, total) bytes."""
        raise NotImplementedError

    def host_alloc_pinned(self, nbytes):
        """Page-locked host memory (``cuMemHostAlloc``); returns a host
        pointer readable and writable by the host."""
        raise NotImplementedError

    def host_free_pinned(self, ptr):
        raise NotImplementedError

    def memcpy_htod(self, dst, src_host, nbytes, stream):
        raise NotImplementedError

    def memcpy_dtoh(self, dst_host, src, nbytes, stream):
        raise NotImplementedError

    def memcpy_dtod(self, dst, src, nbytes, stream):
        """Device to device (also across devices: peer copy)."""
        raise NotImplementedError

    def memset_d8(self, dst, value, nbytes, stream):
        raise NotImplementedError

    # --- streams and events ------------------------------------------------
    def stream_create(self, device, priority=0):
        """A non-blocking stream on ``device``; returns its handle."""
        raise NotImplementedError

    def stream_destroy(self, stream):
        raise NotImplementedError

    def stream_synchronize(self, stream):
        raise NotImplementedError

    def stream_query(self, stream):
        """True when all work queued on ``stream`` has completed."""
        raise NotImplementedError

    def stream_wait_event(self, stream, event):
        """Work queued on ``stream`` after this call waits for ``event``."""
        raise NotImplementedError

    def event_create(self, device, timing=False, blocking=False, interprocess=False):
        raise NotImplementedError

    def event_destroy(self, event):
        raise NotImplementedError

    def event_record(self, event, stream):
        raise NotImplementedError

    def event_query(self, event):
        """True when the work recorded before ``event`` has completed (True for
        an event never recorded, as CUDA)."""
        raise NotImplementedError

    def event_synchronize(self, event):
        raise NotImplementedError

    def event_elapsed_ms(self, start, end):
        """Milliseconds between two completed timing events (float)."""
        raise NotImplementedError

    # --- stream capture (CUDA graphs) -----------------------------------------
    def stream_begin_capture(self, stream, mode="global"):
        """``cuStreamBeginCapture``: work queued on ``stream`` (not the legacy
        default stream) is recorded instead of run until
        :meth:`stream_end_capture`.  ``mode`` is ``"global"``,
        ``"thread_local"`` or ``"relaxed"`` (``CUstreamCaptureMode``)."""
        raise NotImplementedError

    def stream_end_capture(self, stream):
        """``cuStreamEndCapture``: the captured graph's handle.  Raises
        :class:`CudaError` (``CUDA_ERROR_STREAM_CAPTURE_INVALIDATED`` ...) when
        the capture failed."""
        raise NotImplementedError

    def stream_capture_info(self, stream):
        """``(status, capture_id)``: status 0 none, 1 active, 2 invalidated
        (``CUstreamCaptureStatus``); the id is 0 when not capturing."""
        raise NotImplementedError

    def exchange_capture_mode(self, mode):
        """``cuThreadExchangeStreamCaptureMode``: set this thread's capture
        interaction mode, return the previous one."""
        raise NotImplementedError

    def graph_instantiate(self, graph):
        """``cuGraphInstantiate``: an executable graph's handle."""
        raise NotImplementedError

    def graph_launch(self, graph_exec, stream):
        """``cuGraphLaunch``: queue the executable graph on ``stream``."""
        raise NotImplementedError

    def graph_exec_destroy(self, graph_exec):
        raise NotImplementedError

    def graph_destroy(self, graph):
        raise NotImplementedError

    def graph_debug_dot_print(self, graph, path):
        """``cuGraphDebugDotPrint``: write the graph as a Graphviz file."""
        raise NotImplementedError

    # --- external profilers --------------------------------------------------
    def profiler_start(self):
        """``cuProfilerStart`` in the current context."""
        raise NotImplementedError

    def profiler_stop(self):
        """``cuProfilerStop`` in the current context."""
        raise NotImplementedError

    # --- kernels -----------------------------------------------------------
    def module_load(self, device, source, kernel_names):
        """Compile (cached) and load CUDA C++ ``source`` holding the
        ``extern "C"`` kernels ``kernel_names`` on ``device``; returns a
        dict ``{name: function handle}``."""
        raise NotImplementedError

    def kernel_name(self, function):
        """The name (str) of the kernel behind a function handle from
        :meth:`module_load`; raises :class:`CudaError` (``CUDA_ERROR_INVALID_HANDLE``)
        for any other handle."""
        raise NotImplementedError

    def launch(self, function, grid, block, args, shared_mem=0, stream=0):
        """Queue ``function`` on ``stream`` with ``grid``/``block`` 3-tuples
        and ``args`` (a sequence of ctypes instances, see the module
        docstring)."""
        raise NotImplementedError

    #: The C-level launcher (:class:`ptcore.cuda.driver.fast_launch.KernelLauncher`)
    #: every ptcore launch goes through (``_launch.launch_function``): the
    #: driver's ``cuLaunchKernel``, called with the ``void*[]`` of the
    #: arguments (ints, bytes of structs, ctypes values) built in C.  None:
    #: :meth:`launch` is used.
    launcher = None

    def launch_failed(self, code, function):
        """Raise the error of a :attr:`launcher` launch that returned ``code``."""
        raise CudaError("cuLaunchKernel", f"CUresult {int(code)}",
                        f"cuLaunchKernel failed: CUresult {int(code)}")

    # --- cuBLAS ------------------------------------------------------------
    def gemm(self, device, stream, transa, transb, m, n, k, alpha, a, a_type, lda,
             b, b_type, ldb, beta, c, c_type, ldc, compute_type, batch=1,
             stride_a=0, stride_b=0, stride_c=0):
        """``cublasGemmStridedBatchedEx`` semantics (column-major; ``trans*``
        0 = N, 1 = T, 2 = C; types are cudaDataType values: 0 R_32F, 1 R_64F,
        2 R_16F, 14 R_16BF, 4 C_32F, 5 C_64F; ``compute_type`` a cublasComputeType value:
        68 COMPUTE_32F, 77 COMPUTE_32F_FAST_TF32, 70 COMPUTE_64F;
        ``alpha``/``beta`` Python floats, complex for C_32F/C_64F).  ``batch == 1`` is a plain GEMM."""
        raise NotImplementedError

    # --- cuFFT -------------------------------------------------------------
    def fft(self, device, stream, kind, shape, batch, idata, odata, direction=-1, stride=1):
        """Queue one batched FFT on ``stream``: ``cufftPlanMany`` with the
        basic (contiguous) layout, then ``cufftExec<kind>``.  ``stride > 1``
        (C2C/Z2Z only) selects the interleaved advanced layout instead:
        element ``j`` (row-major over ``shape``) of signal ``b`` lies at
        ``b + j * stride`` in input and output, ``batch <= stride`` -- the
        transform of a contiguous array over dims followed by ``stride``
        elements of other dims, without moving them.

        ``kind`` is ``"C2C"``, ``"R2C"``, ``"C2R"`` (float32) or ``"Z2Z"``,
        ``"D2Z"``, ``"Z2D"`` (float64); ``shape`` the 1 to 3 logical sizes
        ``n``; ``batch`` signals lie back to back (``prod(n)`` complex or
        real elements each, a half spectrum ``prod(n[:-1]) * (n[-1]//2+1)``
        complex elements); ``direction`` -1 forward / +1 inverse for
        C2C/Z2Z.  Unnormalised, as cuFFT; C2R/Z2D may overwrite their input,
        and only C2C/Z2Z may run in place.  Plans are cached."""
        raise NotImplementedError

    # --- cuSOLVER (dense) and cuBLAS trsm --------------------------------------
    def solver(self, device, stream, routine, dtype, batch=1, strides=None, **args):
        """Queue ``batch`` calls of the dense routine ``routine`` (``getrf``,
        ``getrs``, ``potrf``, ``potrs``, ``geqrf``, ``orgqr``, ``ormqr``,
        ``syevd``, ``gesvd``, ``sytrf`` of cuSOLVER's legacy API, ``sytrs`` of
        its 64-bit API, ``trsm`` of cuBLAS) in ``dtype`` ``"S"`` (float32),
        ``"D"`` (float64), ``"C"`` (complex64) or ``"Z"`` (complex128) on
        ``stream`` (for C/Z, orgqr/ormqr/syevd are cuSOLVER's ungqr/unmqr/heevd).
        ``args`` are the routine's arguments after the handle, by name,
        without the workspace (the driver sizes it with the routine's
        ``_bufferSize`` and takes it from the caching allocator); call ``b``
        of the batch uses ``ptr + b * strides[name]`` (bytes) for each
        pointer argument named in ``strides``.  ``info`` (int32, device)
        receives LAPACK's info per call; nothing is synchronised.  See
        :mod:`ptcore.cuda.emulated.solver` for the argument table."""
        raise NotImplementedError
