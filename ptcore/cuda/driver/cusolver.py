"""cuSOLVER's dense legacy API (and cuBLAS ``trsm``) through ``ctypes`` on
the library ``cuda.pathfinder`` finds (``libcusolver.so.12`` of the
``nvidia-cusolver`` wheel for CUDA 13, or a copy PyTorch/CuPy loaded), for
:meth:`ptcore.cuda.driver.real.RealDriver.solver`.

Signatures are those of ``cusolverDn.h`` (CUDA 13; ``<t>`` is ``S``,
``D``, ``C`` or ``Z``, ``T`` float, double, cuComplex or cuDoubleComplex,
``R`` its real type; enums are C ``int``).  For ``C``/``Z`` the routines
``orgqr``, ``ormqr`` and ``syevd`` are ``ungqr``, ``unmqr`` and ``heevd``
(same arguments; ``heevd``'s ``W`` is ``R *``), ``gesvd``'s ``S`` and
``rwork`` are ``R *`` for every type, and ``trsm``'s ``alpha`` points to a
``T``::

    cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t *handle);
    cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t handle);
    cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t handle, cudaStream_t streamId);
    cusolverDn<t>getrf_bufferSize(h, int m, int n, T *A, int lda, int *Lwork);
    cusolverDn<t>getrf(h, int m, int n, T *A, int lda, T *Workspace, int *devIpiv, int *devInfo);
    cusolverDn<t>getrs(h, cublasOperation_t trans, int n, int nrhs, const T *A, int lda,
                       const int *devIpiv, T *B, int ldb, int *devInfo);
    cusolverDn<t>potrf_bufferSize(h, cublasFillMode_t uplo, int n, T *A, int lda, int *Lwork);
    cusolverDn<t>potrf(h, cublasFillMode_t uplo, int n, T *A, int lda, T *Workspace,
                       int Lwork, int *devInfo);
    cusolverDn<t>potrs(h, cublasFillMode_t uplo, int n, int nrhs, const T *A, int lda, T *B,
                       int ldb, int *devInfo);
    cusolverDn<t>geqrf_bufferSize(h, int m, int n, T *A, int lda, int *lwork);
    cusolverDn<t>geqrf(h, int m, int n, T *A, int lda, T *TAU, T *Workspace, int Lwork,
                       int *devInfo);
    cusolverDn<t>orgqr_bufferSize(h, int m, int n, int k, const T *A, int lda, const T *tau,
                                  int *lwork);
    cusolverDn<t>orgqr(h, int m, int n, int k, T *A, int lda, const T *tau, T *work,
                       int lwork, int *info);
    cusolverDn<t>ormqr_bufferSize(h, cublasSideMode_t side, cublasOperation_t trans, int m,
                                  int n, int k, const T *A, int lda, const T *tau,
                                  const T *C, int ldc, int *lwork);
    cusolverDn<t>ormqr(h, cublasSideMode_t side, cublasOperation_t trans, int m, int n, int k,
                       const T *A, int lda, const T *tau, T *C, int ldc, T *work, int lwork,
                       int *devInfo);
    cusolverDn<t>syevd_bufferSize(h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n,
                                  const T *A, int lda, const T *W, int *lwork);
    cusolverDn<t>syevd(h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, T *A, int lda,
                       T *W, T *work, int lwork, int *info);
    cusolverDn<t>gesvd_bufferSize(h, int m, int n, int *lwork);
    cusolverDn<t>gesvd(h, signed char jobu, signed char jobvt, int m, int n, T *A, int lda,
                       R *S, T *U, int ldu, T *VT, int ldvt, T *work, int lwork, R *rwork,
                       int *info);
    cusolverDn<t>sytrf_bufferSize(h, int n, T *A, int lda, int *lwork);
    cusolverDn<t>sytrf(h, cublasFillMode_t uplo, int n, T *A, int lda, int *ipiv, T *work,
                       int lwork, int *devInfo);
    cublasStatus_t cublas<t>trsm_v2(cublasHandle_t h, cublasSideMode_t side,
                       cublasFillMode_t uplo, cublasOperation_t trans, cublasDiagType_t diag,
                       int m, int n, const T *alpha, const T *A, int lda, T *B, int ldb);

The batched entry points, used for a batch of more than one matrix when the
layout allows (square ``getrf``; ``getrs``; ``potrf``; ``potrs`` with one
right-hand side; pivots and info back to back)::

    cublasStatus_t cublas<t>getrfBatched(cublasHandle_t h, int n, T *const A[], int lda,
                       int *P, int *info, int batchSize);
    cublasStatus_t cublas<t>getrsBatched(cublasHandle_t h, cublasOperation_t trans, int n,
                       int nrhs, const T *const Aarray[], int lda, const int *devIpiv,
                       T *const Barray[], int ldb, int *info, int batchSize);   (info: host)
    cusolverStatus_t cusolverDn<t>potrfBatched(h, cublasFillMode_t uplo, int n, T *Aarray[],
                       int lda, int *infoArray, int batchSize);
    cusolverStatus_t cusolverDn<t>potrsBatched(h, cublasFillMode_t uplo, int n, int nrhs,
                       T *A[], int lda, T *B[], int ldb, int *d_info, int batchSize);

``geev`` is only in the 64-bit generic API (cuSOLVER >= 11.7, CUDA >= 12.6;
``cudaDataType``: ``CUDA_R_32F`` 0, ``CUDA_R_64F`` 1, ``CUDA_C_32F`` 4,
``CUDA_C_64F`` 5; ``cusolverEigMode_t``: 0 no vectors, 1 vectors).  For a
real ``A`` (``S``/``D``) the eigenvalues ``W`` are of the complex type and
``VL``/``VR`` of the real type, in LAPACK's packed form (the documented "second option":
a complex ``W`` of ``n`` entries, computed in real arithmetic).  The
signature below agrees with NVIDIA's cuSOLVER documentation as the
header-generated bindings reproduce it (nvmath-python's
``cusolverDn.xgeev``/``xgeev_buffer_size``, a bindgen crate) and with
NVIDIA's CUDALibrarySamples ``cusolver/Xgeev``; ``cusolverDn.h`` itself was
not installed on the machine this was written on, and no GPU ran it::

    cusolverStatus_t cusolverDnCreateParams(cusolverDnParams_t *params);
    cusolverStatus_t cusolverDnDestroyParams(cusolverDnParams_t params);
    cusolverStatus_t cusolverDnXgeev_bufferSize(h, cusolverDnParams_t params,
                       cusolverEigMode_t jobvl, cusolverEigMode_t jobvr, int64_t n,
                       cudaDataType dataTypeA, const void *A, int64_t lda,
                       cudaDataType dataTypeW, const void *W,
                       cudaDataType dataTypeVL, const void *VL, int64_t ldvl,
                       cudaDataType dataTypeVR, const void *VR, int64_t ldvr,
                       cudaDataType computeType, size_t *workspaceInBytesOnDevice,
                       size_t *workspaceInBytesOnHost);
    cusolverStatus_t cusolverDnXgeev(h, cusolverDnParams_t params, cusolverEigMode_t jobvl,
                       cusolverEigMode_t jobvr, int64_t n, cudaDataType dataTypeA, void *A,
                       int64_t lda, cudaDataType dataTypeW, void *W,
                       cudaDataType dataTypeVL, void *VL, int64_t ldvl,
                       cudaDataType dataTypeVR, void *VR, int64_t ldvr,
                       cudaDataType computeType, void *bufferOnDevice,
                       size_t workspaceInBytesOnDevice, void *bufferOnHost,
                       size_t workspaceInBytesOnHost, int *info);

``sytrs`` is only in the 64-bit API (cuSOLVER >= 11.1.2, as PyTorch's
``ldl_solve`` calls it: no params object; ``ipiv`` the ``int64`` pivots of
``sytrf``; ``cudaDataType`` of A and B the matrices' type)::

    cusolverStatus_t cusolverDnXsytrs_bufferSize(h, cublasFillMode_t uplo, int64_t n,
                       int64_t nrhs, cudaDataType dataTypeA, const void *A, int64_t lda,
                       const int64_t *ipiv, cudaDataType dataTypeB, void *B, int64_t ldb,
                       size_t *workspaceInBytesOnDevice, size_t *workspaceInBytesOnHost);
    cusolverStatus_t cusolverDnXsytrs(h, cublasFillMode_t uplo, int64_t n, int64_t nrhs,
                       cudaDataType dataTypeA, const void *A, int64_t lda,
                       const int64_t *ipiv, cudaDataType dataTypeB, void *B, int64_t ldb,
                       void *bufferOnDevice, size_t workspaceInBytesOnDevice,
                       void *bufferOnHost, size_t workspaceInBytesOnHost, int *info);

``Lwork`` counts elements of ``T``.  One handle per (device, thread) (the
driver keeps them), ``cusolverDnSetStream`` (``cublasSetStream_v2`` for the
cuBLAS ones, by the driver) before every call; the workspace and the device
arrays of matrix pointers come from the caching allocator and go back to it
right after the calls are queued (stream-ordered reuse, as PyTorch).  Other
batches are loops of single calls.
"""
import collections
import ctypes

from ptcore.cuda.driver.interface import CudaError
from ptcore.cuda.emulated.solver import itemsize as _itemsize, lapack_name as _lapack_name

__all__ = ["Cusolver", "ROUTINES", "STATUS_NAMES"]

#: cusolverStatus_t names (cusolver_common.h)
STATUS_NAMES = {
    0: "CUSOLVER_STATUS_SUCCESS", 1: "CUSOLVER_STATUS_NOT_INITIALIZED",
    2: "CUSOLVER_STATUS_ALLOC_FAILED", 3: "CUSOLVER_STATUS_INVALID_VALUE",
    4: "CUSOLVER_STATUS_ARCH_MISMATCH", 5: "CUSOLVER_STATUS_MAPPING_ERROR",
    6: "CUSOLVER_STATUS_EXECUTION_FAILED", 7: "CUSOLVER_STATUS_INTERNAL_ERROR",
    8: "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED", 9: "CUSOLVER_STATUS_NOT_SUPPORTED",
    10: "CUSOLVER_STATUS_ZERO_PIVOT", 11: "CUSOLVER_STATUS_INVALID_LICENSE",
}

# routine -> (arguments of <t><routine>_bufferSize after the handle (None: no
# workspace), arguments of <t><routine> after the handle); "@work"/"@lwork"/
# "@rwork" are the workspace pointer, its size in elements and gesvd's rwork
ROUTINES = {
    "getrf": (("m", "n", "A", "lda"), ("m", "n", "A", "lda", "@work", "ipiv", "info")),
    "getrs": (None, ("trans", "n", "nrhs", "A", "lda", "ipiv", "B", "ldb", "info")),
    "potrf": (("uplo", "n", "A", "lda"), ("uplo", "n", "A", "lda", "@work", "@lwork", "info")),
    "potrs": (None, ("uplo", "n", "nrhs", "A", "lda", "B", "ldb", "info")),
    "geqrf": (("m", "n", "A", "lda"), ("m", "n", "A", "lda", "tau", "@work", "@lwork", "info")),
    "orgqr": (("m", "n", "k", "A", "lda", "tau"),
              ("m", "n", "k", "A", "lda", "tau", "@work", "@lwork", "info")),
    "ormqr": (("side", "trans", "m", "n", "k", "A", "lda", "tau", "C", "ldc"),
              ("side", "trans", "m", "n", "k", "A", "lda", "tau", "C", "ldc", "@work", "@lwork",
               "info")),
    "syevd": (("jobz", "uplo", "n", "A", "lda", "W"),
              ("jobz", "uplo", "n", "A", "lda", "W", "@work", "@lwork", "info")),
    "gesvd": (("m", "n"), ("jobu", "jobvt", "m", "n", "A", "lda", "S", "U", "ldu", "VT", "ldvt",
                           "@work", "@lwork", "@rwork", "info")),
    "sytrf": (("n", "A", "lda"), ("uplo", "n", "A", "lda", "ipiv", "@work", "@lwork", "info")),
}
#: cudaDataType of each solver type (library_types.h)
_CUDA_TYPE = {"S": 0, "D": 1, "C": 4, "Z": 5}
_POINTERS = frozenset({"A", "B", "C", "ipiv", "info", "tau", "W", "S", "U", "VT", "@work",
                       "@rwork"})
_CHARS = frozenset({"jobu", "jobvt"})
_TRSM = ("side", "uplo", "trans", "diag", "m", "n", "alpha", "A", "lda", "B", "ldb")


def _ctype(name):
    if name in _POINTERS:
        return ctypes.c_void_p
    if name in _CHARS:
        return ctypes.c_char
    return ctypes.c_int


def _value(name, v):
    if name in _CHARS:
        return v.encode() if isinstance(v, str) else bytes(v)
    if name in _POINTERS:
        return int(v) or None
    return int(v)


class Cusolver:
    """The cuSOLVER entry points ptcore uses (``lib``: a loaded libcusolver,
    ``blas_lib``: libcublas for ``trsm``; found with cuda.pathfinder when
    None).  Raises RuntimeError when the library cannot be found."""

    def __init__(self, lib=None, blas_lib=None):
        if lib is None or blas_lib is None:
            try:
                from cuda.pathfinder import load_nvidia_dynamic_lib
            except ImportError as e:
                raise RuntimeError("cuSOLVER needs cuda-pathfinder "
                                   "(pip install ptcore[cuda])") from e
        if lib is None:
            try:
                loaded = load_nvidia_dynamic_lib("cusolver")
            except Exception as e:
                raise RuntimeError(f"cuSOLVER is not installed (pip install nvidia-cusolver): "
                                   f"{type(e).__name__}: {e}") from e
            self.path = loaded.abs_path
            lib = ctypes.CDLL(loaded.abs_path)
        else:
            self.path = getattr(lib, "_name", None)
        if blas_lib is None:
            blas_lib = ctypes.CDLL(load_nvidia_dynamic_lib("cublas").abs_path)
        vp, i = ctypes.c_void_p, ctypes.c_int
        self.create = lib.cusolverDnCreate
        self.create.argtypes = [ctypes.POINTER(vp)]
        self.create.restype = i
        self.destroy = lib.cusolverDnDestroy
        self.destroy.argtypes = [vp]
        self.destroy.restype = i
        self.set_stream = lib.cusolverDnSetStream
        self.set_stream.argtypes = [vp, vp]
        self.set_stream.restype = i
        self.geev = self._bind_geev(lib)
        self.sytrs = self._bind_sytrs(lib)
        self._host_work = collections.deque(maxlen=64)
        self.fns = {}        # (dtype, routine) -> (bufferSize function or None, function)
        self.batched = {}    # symbol -> function (the pointer-array entry points)
        for t in ("S", "D", "C", "Z"):
            for routine, (bargs, cargs) in ROUTINES.items():
                sym = f"cusolverDn{t}{_lapack_name(routine, t)}"
                f = getattr(lib, sym)
                f.argtypes = [vp] + [_ctype(a) for a in cargs]
                f.restype = i
                bf = None
                if bargs is not None:
                    bf = getattr(lib, f"{sym}_bufferSize")
                    bf.argtypes = [vp] + [_ctype(a) for a in bargs] + [ctypes.POINTER(i)]
                    bf.restype = i
                self.fns[(t, routine)] = (bf, f)
            f = getattr(blas_lib, f"cublas{t}trsm_v2")
            f.argtypes = [vp, i, i, i, i, i, i, vp, vp, i, vp, i]
            f.restype = i
            self.fns[(t, "trsm")] = (None, f)
            for name, lib_, argtypes in (
                    (f"cublas{t}getrfBatched", blas_lib, [vp, i, vp, i, vp, vp, i]),
                    (f"cublas{t}getrsBatched", blas_lib, [vp, i, i, i, vp, i, vp, vp, i,
                                                          ctypes.POINTER(i), i]),
                    (f"cusolverDn{t}potrfBatched", lib, [vp, i, i, vp, i, vp, i]),
                    (f"cusolverDn{t}potrsBatched", lib, [vp, i, i, i, vp, i, vp, i, vp, i])):
                f = getattr(lib_, name)
                f.argtypes = argtypes
                f.restype = i
                self.batched[name] = f

    @staticmethod
    def _bind_geev(lib):
        """(CreateParams, DestroyParams, Xgeev_bufferSize, Xgeev), or None when
        the library predates the 64-bit geev (CUDA < 12.6)."""
        vp, i, i64, sz = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_size_t
        try:
            cp, dp = lib.cusolverDnCreateParams, lib.cusolverDnDestroyParams
            bf, f = lib.cusolverDnXgeev_bufferSize, lib.cusolverDnXgeev
        except AttributeError:
            return None
        cp.argtypes, cp.restype = [ctypes.POINTER(vp)], i
        dp.argtypes, dp.restype = [vp], i
        mats = [i, i, i64, i, vp, i64, i, vp, i, vp, i64, i, vp, i64, i]
        bf.argtypes = [vp, vp] + mats + [ctypes.POINTER(sz), ctypes.POINTER(sz)]
        bf.restype = i
        f.argtypes = [vp, vp] + mats + [vp, sz, vp, sz, vp]
        f.restype = i
        return cp, dp, bf, f

    @staticmethod
    def _bind_sytrs(lib):
        """(Xsytrs_bufferSize, Xsytrs), or None when the library lacks them."""
        vp, i, i64, sz = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_size_t
        try:
            bf, f = lib.cusolverDnXsytrs_bufferSize, lib.cusolverDnXsytrs
        except AttributeError:
            return None
        mats = [i, i64, i64, i, vp, i64, vp, i, vp, i64]
        bf.argtypes = [vp] + mats + [ctypes.POINTER(sz), ctypes.POINTER(sz)]
        bf.restype = i
        f.argtypes = [vp] + mats + [vp, sz, vp, sz, vp]
        f.restype = i
        return bf, f

    def _calls_64(self, name, fns, lead, mats, args, batch, strides, workspace):
        """The 64-bit routine ``name`` (``fns``: its _bufferSize and itself)
        for each call of the batch: ``lead`` the arguments before the
        matrices' (handle [, params]), ``mats(b)`` those of call ``b``; one
        workspace query, the device workspace from ``workspace``, the host
        one kept until it outlives the queued calls (the latest few are:
        cuSOLVER does not say whether these return before they are done
        with it)."""
        bf, f = fns
        dbytes, hbytes = ctypes.c_size_t(0), ctypes.c_size_t(0)
        self.check(f"{name}_bufferSize",
                   bf(*lead, *mats(0), ctypes.byref(dbytes), ctypes.byref(hbytes)))
        work, release = workspace(max(1, dbytes.value))
        host = ctypes.create_string_buffer(max(1, hbytes.value))
        self._host_work.append(host)
        try:
            for b in range(int(batch)):
                info = int(args["info"]) + b * int(strides.get("info", 0))
                self.check(name, f(*lead, *mats(b), work, dbytes.value, ctypes.addressof(host),
                                   hbytes.value, info))
        finally:
            release()

    def _sytrs(self, handle, dtype, args, batch, strides, workspace):
        """``cusolverDnXsytrs`` for each call of the batch."""
        if self.sytrs is None:
            raise CudaError("cusolverDnXsytrs", "CUSOLVER_STATUS_NOT_SUPPORTED",
                            f"cusolverDnXsytrs is not in {self.path}")
        t = _CUDA_TYPE[dtype]

        def mats(b):
            def at(name):
                return int(args[name]) + b * int(strides.get(name, 0))
            return [int(args["uplo"]), int(args["n"]), int(args["nrhs"]), t, at("A"),
                    int(args["lda"]), at("ipiv"), t, at("B"), int(args["ldb"])]
        self._calls_64("cusolverDnXsytrs", self.sytrs, (handle,), mats, args, batch, strides,
                       workspace)

    def _geev(self, handle, dtype, args, batch, strides, workspace):
        """``cusolverDnXgeev`` (right vectors only) for each call of the batch."""
        if self.geev is None:
            raise CudaError("cusolverDnXgeev", "CUSOLVER_STATUS_NOT_SUPPORTED",
                            f"cusolverDnXgeev is not in {self.path} (it needs CUDA >= 12.6)")
        cp, dp, bf, f = self.geev
        params = ctypes.c_void_p()
        self.check("cusolverDnCreateParams", cp(ctypes.byref(params)))
        # cudaDataType of A/VR/compute and of W: a real A has complex eigenvalues
        rt = _CUDA_TYPE[dtype]
        ct = {"S": 4, "D": 5, "C": 4, "Z": 5}[dtype]
        n, lda, ldvr = int(args["n"]), int(args["lda"]), int(args["ldvr"])
        jobvr = int(args["jobvr"])
        try:
            def mats(b):
                def at(name):
                    v = int(args[name] or 0)
                    return (v + b * int(strides.get(name, 0))) or None if v else None
                return [0, jobvr, n, rt, at("A"), lda, ct, at("W"), rt, None, 1, rt,
                        at("VR") if jobvr else None, ldvr, rt]
            self._calls_64("cusolverDnXgeev", (bf, f), (handle, params), mats, args, batch,
                           strides, workspace)
        finally:
            dp(params)

    def check(self, call, status):
        if status != 0:
            name = STATUS_NAMES.get(status, f"cusolverStatus {status}")
            raise CudaError(call, name, f"{call} failed: {name} ({status})")

    def new_handle(self):
        h = ctypes.c_void_p()
        self.check("cusolverDnCreate", self.create(ctypes.byref(h)))
        return h.value

    def execute(self, handle, blas_handle, stream, routine, dtype, args, batch, strides,
                workspace, upload=None):
        """Queue ``batch`` calls on ``stream`` (the caller has made the
        device current and bound ``stream`` to ``blas_handle``).
        ``workspace(nbytes)`` returns ``(device ptr, release)``;
        ``upload(host bytes)`` (optional: no batched entry points without it)
        copies them to new device memory in stream order and returns
        ``(device ptr, release)``."""
        strides = strides or {}
        if routine == "trsm":
            self._trsm(blas_handle, stream, dtype, args, batch, strides)
            return
        self.check("cusolverDnSetStream", self.set_stream(handle, stream or None))
        if routine == "geev":
            self._geev(handle, dtype, args, batch, strides, workspace)
            return
        if routine == "sytrs":
            self._sytrs(handle, dtype, args, batch, strides, workspace)
            return
        if upload is not None and int(batch) > 1 and self._batched(
                handle, blas_handle, routine, dtype, args, int(batch), strides, upload):
            return
        bf, f = self.fns[(dtype, routine)]
        bargs, cargs = ROUTINES[routine]
        sym = f"cusolverDn{dtype}{_lapack_name(routine, dtype)}"
        size = _itemsize("work", dtype)      # lwork counts elements of T
        lwork = 0
        if bf is not None:
            lw = ctypes.c_int(0)
            self.check(f"{sym}_bufferSize",
                       bf(handle, *[_value(a, args[a]) for a in bargs], ctypes.byref(lw)))
            lwork = max(1, lw.value)
        work, release = workspace(lwork * size) if bf is not None else (0, None)
        try:
            for b in range(int(batch)):
                vals = []
                for a in cargs:
                    if a == "@work":
                        vals.append(work or None)
                    elif a == "@lwork":
                        vals.append(lwork)
                    elif a == "@rwork":
                        vals.append(None)
                    else:
                        v = args[a]
                        if a in strides:
                            v = v + b * int(strides[a])
                        vals.append(_value(a, v))
                self.check(sym, f(handle, *vals))
        finally:
            if release is not None:
                release()

    def _pointers(self, base, stride, batch, upload):
        """A device array of ``batch`` matrix pointers ``base + b * stride``."""
        arr = (ctypes.c_uint64 * batch)(*[int(base) + b * int(stride) for b in range(batch)])
        return upload(bytes(arr))

    def _batched(self, handle, blas_handle, routine, dtype, args, batch, strides, upload):
        """Run the batch through a pointer-array entry point when one fits the
        call; returns False (nothing queued) otherwise."""
        st = strides.get
        n = args.get("n")
        if routine == "getrf":
            ok = (args["m"] == n and st("ipiv") == 4 * n and st("info") == 4 and "A" in strides)
        elif routine == "getrs":
            ok = st("ipiv") == 4 * n and "A" in strides and "B" in strides
        elif routine == "potrf":
            ok = st("info") == 4 and "A" in strides
        elif routine == "potrs":
            ok = args["nrhs"] == 1 and "A" in strides and "B" in strides
        else:
            ok = False
        if not ok or n == 0:
            return False
        held = []
        try:
            a_ptr, rel = self._pointers(args["A"], strides["A"], batch, upload)
            held.append(rel)
            if routine == "getrf":
                name = f"cublas{dtype}getrfBatched"
                st_ = self.batched[name](blas_handle, n, a_ptr, args["lda"], args["ipiv"],
                                         args["info"], batch)
                self._check_blas(name, st_)
            elif routine == "getrs":
                b_ptr, rel = self._pointers(args["B"], strides["B"], batch, upload)
                held.append(rel)
                name = f"cublas{dtype}getrsBatched"
                hinfo = ctypes.c_int(0)
                st_ = self.batched[name](blas_handle, args["trans"], n, args["nrhs"], a_ptr,
                                         args["lda"], args["ipiv"], b_ptr, args["ldb"],
                                         ctypes.byref(hinfo), batch)
                self._check_blas(name, st_)
                if hinfo.value != 0:
                    raise CudaError(name, "invalid argument",
                                    f"{name}: argument {-hinfo.value} is invalid")
            elif routine == "potrf":
                name = f"cusolverDn{dtype}potrfBatched"
                self.check(name, self.batched[name](handle, args["uplo"], n, a_ptr, args["lda"],
                                                    args["info"], batch))
            else:
                b_ptr, rel = self._pointers(args["B"], strides["B"], batch, upload)
                held.append(rel)
                name = f"cusolverDn{dtype}potrsBatched"
                self.check(name, self.batched[name](handle, args["uplo"], n, 1, a_ptr,
                                                    args["lda"], b_ptr, args["ldb"], args["info"],
                                                    batch))
        finally:
            for rel in held:
                rel()
        return True

    def _check_blas(self, name, status):
        if status != 0:
            raise CudaError(name, f"cublasStatus {status}",
                            f"{name} failed: cublasStatus {status}")

    def _trsm(self, blas_handle, stream, dtype, args, batch, strides):
        _, f = self.fns[(dtype, "trsm")]
        real = ctypes.c_double if dtype in ("D", "Z") else ctypes.c_float
        if dtype in ("C", "Z"):             # cuComplex / cuDoubleComplex: (re, im)
            a = complex(args["alpha"])
            alpha = (real * 2)(a.real, a.imag)
        else:
            alpha = real(float(args["alpha"]))
        for b in range(int(batch)):
            vals = []
            for a in _TRSM:
                if a == "alpha":
                    vals.append(ctypes.addressof(alpha))
                    continue
                v = args[a]
                if a in strides:
                    v = v + b * int(strides[a])
                vals.append(int(v) if a not in ("A", "B") else (int(v) or None))
            st = f(blas_handle, *vals)
            if st != 0:
                raise CudaError(f"cublas{dtype}trsm_v2", f"cublasStatus {st}",
                                f"cublas{dtype}trsm_v2 failed: cublasStatus {st}")
