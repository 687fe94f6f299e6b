"""The cuSOLVER (and cuBLAS trsm) calls of the real driver, without a GPU.

A fake library whose functions are C callbacks built from the prototypes of
``cusolverDn.h`` (cuSOLVER 12.4, CUDA 13) and ``cublas_api.h`` below, copied
from the headers: every call :class:`ptcore.cuda.driver.cusolver.Cusolver` makes
goes through ctypes' conversion with the argtypes it declares, then through
the C ABI into a callback that decodes the arguments with the header's
types; the values it receives must be the ones meant.  A mismatch (an
``int`` where the header has ``signed char``, a pointer where it has an
``int``, a missing argument) shows up as a wrong value or a wrong count.
"""
import ctypes
import re
import threading
import types

import pytest

from ptcore.cuda.driver import cusolver as _cusolver
from ptcore.cuda.driver import interface as _driver
from ptcore.cuda.emulated import solver as _host_solver

# the prototypes, as in the headers (T = float, double, cuComplex, cuDoubleComplex for S, D,
# C, Z; R its real type; for C and Z orgqr/ormqr/syevd are ungqr/unmqr/heevd)
HEADER = """
cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t *handle);
cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t handle);
cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t handle, cudaStream_t streamId);
cusolverStatus_t cusolverDn{t}getrf_bufferSize(cusolverDnHandle_t handle, int m, int n, T *A, int lda, int *Lwork);
cusolverStatus_t cusolverDn{t}getrf(cusolverDnHandle_t handle, int m, int n, T *A, int lda, T *Workspace, int *devIpiv, int *devInfo);
cusolverStatus_t cusolverDn{t}getrs(cusolverDnHandle_t handle, cublasOperation_t trans, int n, int nrhs, const T *A, int lda, const int *devIpiv, T *B, int ldb, int *devInfo);
cusolverStatus_t cusolverDn{t}potrf_bufferSize(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, T *A, int lda, int *Lwork);
cusolverStatus_t cusolverDn{t}potrf(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, T *A, int lda, T *Workspace, int Lwork, int *devInfo);
cusolverStatus_t cusolverDn{t}potrs(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, int nrhs, const T *A, int lda, T *B, int ldb, int *devInfo);
cusolverStatus_t cusolverDn{t}geqrf_bufferSize(cusolverDnHandle_t handle, int m, int n, T *A, int lda, int *lwork);
cusolverStatus_t cusolverDn{t}geqrf(cusolverDnHandle_t handle, int m, int n, T *A, int lda, T *TAU, T *Workspace, int Lwork, int *devInfo);
cusolverStatus_t cusolverDn{t}orgqr_bufferSize(cusolverDnHandle_t handle, int m, int n, int k, const T *A, int lda, const T *tau, int *lwork);
cusolverStatus_t cusolverDn{t}orgqr(cusolverDnHandle_t handle, int m, int n, int k, T *A, int lda, const T *tau, T *work, int lwork, int *info);
cusolverStatus_t cusolverDn{t}ormqr_bufferSize(cusolverDnHandle_t handle, cublasSideMode_t side, cublasOperation_t trans, int m, int n, int k, const T *A, int lda, const T *tau, const T *C, int ldc, int *lwork);
cusolverStatus_t cusolverDn{t}ormqr(cusolverDnHandle_t handle, cublasSideMode_t side, cublasOperation_t trans, int m, int n, int k, const T *A, int lda, const T *tau, T *C, int ldc, T *work, int lwork, int *devInfo);
cusolverStatus_t cusolverDn{t}syevd_bufferSize(cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, const T *A, int lda, const R *W, int *lwork);
cusolverStatus_t cusolverDn{t}syevd(cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, T *A, int lda, R *W, T *work, int lwork, int *info);
cusolverStatus_t cusolverDn{t}gesvd_bufferSize(cusolverDnHandle_t handle, int m, int n, int *lwork);
cusolverStatus_t cusolverDn{t}gesvd(cusolverDnHandle_t handle, signed char jobu, signed char jobvt, int m, int n, T *A, int lda, R *S, T *U, int ldu, T *VT, int ldvt, T *work, int lwork, R *rwork, int *info);
cublasStatus_t cublas{t}trsm_v2(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo, cublasOperation_t trans, cublasDiagType_t diag, int m, int n, const T *alpha, const T *A, int lda, T *B, int ldb);
cublasStatus_t cublas{t}getrfBatched(cublasHandle_t handle, int n, T *const A[], int lda, int *P, int *info, int batchSize);
cublasStatus_t cublas{t}getrsBatched(cublasHandle_t handle, cublasOperation_t trans, int n, int nrhs, const T *const Aarray[], int lda, const int *devIpiv, T *const Barray[], int ldb, int *info, int batchSize);
cusolverStatus_t cusolverDn{t}potrfBatched(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, T *Aarray[], int lda, int *infoArray, int batchSize);
cusolverStatus_t cusolverDn{t}potrsBatched(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, int nrhs, T *A[], int lda, T *B[], int ldb, int *d_info, int batchSize);
cusolverStatus_t cusolverDnCreateParams(cusolverDnParams_t *params);
cusolverStatus_t cusolverDnDestroyParams(cusolverDnParams_t params);
cusolverStatus_t cusolverDnXgeev_bufferSize(cusolverDnHandle_t handle, cusolverDnParams_t params, cusolverEigMode_t jobvl, cusolverEigMode_t jobvr, int64_t n, cudaDataType dataTypeA, const void *A, int64_t lda, cudaDataType dataTypeW, const void *W, cudaDataType dataTypeVL, const void *VL, int64_t ldvl, cudaDataType dataTypeVR, const void *VR, int64_t ldvr, cudaDataType computeType, size_t *workspaceInBytesOnDevice, size_t *workspaceInBytesOnHost);
cusolverStatus_t cusolverDnXgeev(cusolverDnHandle_t handle, cusolverDnParams_t params, cusolverEigMode_t jobvl, cusolverEigMode_t jobvr, int64_t n, cudaDataType dataTypeA, void *A, int64_t lda, cudaDataType dataTypeW, void *W, cudaDataType dataTypeVL, void *VL, int64_t ldvl, cudaDataType dataTypeVR, void *VR, int64_t ldvr, cudaDataType computeType, void *bufferOnDevice, size_t workspaceInBytesOnDevice, void *bufferOnHost, size_t workspaceInBytesOnHost, int *info);
cusolverStatus_t cusolverDn{t}sytrf_bufferSize(cusolverDnHandle_t handle, int n, T *A, int lda, int *lwork);
cusolverStatus_t cusolverDn{t}sytrf(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, T *A, int lda, int *ipiv, T *work, int lwork, int *info);
cusolverStatus_t cusolverDnXsytrs_bufferSize(cusolverDnHandle_t handle, cublasFillMode_t uplo, int64_t n, int64_t nrhs, cudaDataType dataTypeA, const void *A, int64_t lda, const int64_t *ipiv, cudaDataType dataTypeB, void *B, int64_t ldb, size_t *workspaceInBytesOnDevice, size_t *workspaceInBytesOnHost);
cusolverStatus_t cusolverDnXsytrs(cusolverDnHandle_t handle, cublasFillMode_t uplo, int64_t n, int64_t nrhs, cudaDataType dataTypeA, const void *A, int64_t lda, const int64_t *ipiv, cudaDataType dataTypeB, void *B, int64_t ldb, void *bufferOnDevice, size_t workspaceInBytesOnDevice, void *bufferOnHost, size_t workspaceInBytesOnHost, int *info);
"""
# (the Xgeev prototypes are NVIDIA's documentation's, as nvmath-python's
# generated cusolverDn bindings give them, and CUDALibrarySamples'
# cusolver/Xgeev; cusolverDn.h was not at hand to copy them from)
_ENUMS = ("cublasOperation_t", "cublasFillMode_t", "cublasSideMode_t", "cusolverEigMode_t",
          "cublasDiagType_t", "cudaDataType")


def _prototypes():
    """{symbol: [(parameter name, ctypes type, header type)]} for S, D, C and Z."""
    out = {}
    for line in HEADER.strip().splitlines():
        for t in ("S", "D", "C", "Z"):
            if "{t}" not in line and t != "S":
                continue
            if t in ("C", "Z"):
                for real, cplx in (("orgqr", "ungqr"), ("ormqr", "unmqr"), ("syevd", "heevd")):
                    line = line.replace("{t}" + real, "{t}" + cplx)
            m = re.match(r"\w+ (\w+)\((.*)\);", line.replace("{t}", t))
            name, params = m.group(1), m.group(2)
            ps = []
            for p in params.split(","):
                p = p.strip()
                ptr = "*" in p
                pname = p.replace("*", " ").split()[-1]
                htype = " ".join(p.replace("*", " ").split()[:-1])
                if ptr and pname.lower() == "lwork":
                    ct = ctypes.POINTER(ctypes.c_int)
                elif ptr and htype == "size_t":
                    ct = ctypes.POINTER(ctypes.c_size_t)
                elif ptr or htype in ("cusolverDnHandle_t", "cublasHandle_t", "cudaStream_t",
                                      "cusolverDnParams_t"):
                    ct = ctypes.c_void_p
                elif htype == "signed char":
                    ct = ctypes.c_byte
                elif htype == "int" or htype in _ENUMS:
                    ct = ctypes.c_int
                elif htype == "int64_t":
                    ct = ctypes.c_int64
                elif htype == "size_t":
                    ct = ctypes.c_size_t
                else:
                    raise AssertionError(f"unmapped header type {htype!r}")
                ps.append((pname, ct, htype + (" *" if ptr else "")))
            out[name] = ps
    return out


PROTOS = _prototypes()


class FakeLib:
    """Function pointers to callbacks with the header's prototypes; each call
    is recorded as (symbol, [decoded values])."""

    def __init__(self, lwork=7, status=None):
        self.calls = []
        self._keep = []
        status = status or {}
        for name, ps in PROTOS.items():
            proto = ctypes.CFUNCTYPE(ctypes.c_int, *[ct for _, ct, _ in ps])

            def cb(*args, _name=name, _ps=ps):
                vals = []
                for (pname, ct, htype), a in zip(_ps, args):
                    if ct is ctypes.POINTER(ctypes.c_int):
                        a[0] = lwork               # bufferSize's output
                        vals.append("lwork*")
                    elif ct is ctypes.POINTER(ctypes.c_size_t):
                        a[0] = lwork * (3 if pname.endswith("Device") else 5)   # Xgeev's bytes
                        vals.append(pname + "*")
                    elif _name == "cusolverDnCreateParams":
                        ctypes.cast(a, ctypes.POINTER(ctypes.c_void_p))[0] = 0xBEEF
                        vals.append("params*")
                    elif _name.endswith("trsm_v2") and pname == "alpha":
                        t = _name[len("cublas")]
                        real = ctypes.c_float if t in "SC" else ctypes.c_double
                        p = ctypes.cast(a, ctypes.POINTER(real))
                        vals.append(complex(p[0], p[1]) if t in "CZ" else p[0])
                    elif _name == "cusolverDnCreate":
                        ctypes.cast(a, ctypes.POINTER(ctypes.c_void_p))[0] = 0xC0FFEE
                        vals.append("handle*")
                    else:
                        vals.append(a)
                self.calls.append((_name, vals))
                return status.get(_name, 0)
            c = proto(cb)
            self._keep.append(c)
            # a foreign function pointer whose argtypes the code under test sets
            setattr(self, name, ctypes.cast(c, ctypes.CFUNCTYPE(ctypes.c_int)))
        self._name = "fake-libcusolver"


def _cs(**kw):
    lib = FakeLib(**kw)
    return _cusolver.Cusolver(lib=lib, blas_lib=lib), lib


def test_argtypes_match_the_header():
    cs, lib = _cs()
    kinds = {ctypes.c_void_p: "ptr", ctypes.POINTER(ctypes.c_int): "ptr",
             ctypes.POINTER(ctypes.c_void_p): "ptr", ctypes.c_int: "int",
             ctypes.c_char: "char", ctypes.c_byte: "char",
             ctypes.POINTER(ctypes.c_size_t): "ptr", ctypes.c_int64: "int64",
             ctypes.c_size_t: "size"}
    n = 0
    for name, ps in PROTOS.items():
        f = getattr(lib, name)
        assert f.argtypes is not None, f"{name}: argtypes never declared"
        assert len(f.argtypes) == len(ps), name
        for (pname, ct, htype), at in zip(ps, f.argtypes):
            assert kinds[at] == kinds[ct], (name, pname, htype, at)
        assert f.restype is ctypes.c_int, name
        n += 1
    # create/destroy/stream + 4 dtypes x 23 entry points + the 4 of Xgeev + the 2 of Xsytrs
    assert n == 3 + 4 * (2 * 8 + 2 + 1 + 4) + 4 + 2


def _args(routine, dtype):
    """Distinct values for every argument of ``routine`` (a valid call)."""
    vals = {"m": 6, "n": 4, "k": 3, "nrhs": 2, "lda": 9, "ldb": 10, "ldc": 11, "ldu": 12,
            "ldvt": 13, "trans": 1, "uplo": 1, "side": 0, "diag": 1, "jobz": 1, "jobu": "S",
            "jobvt": "A", "alpha": 1.5, "jobvr": 1, "ldvr": 14}
    a = {}
    for i, name in enumerate(_host_solver.SIGNATURES[routine]):
        a[name] = 0x10000 * (i + 1) if name in _host_solver.POINTERS else vals[name]
    if routine in ("getrs", "potrs", "syevd", "potrf", "geev"):
        a["n"] = 4
    if dtype in ("C", "Z"):
        if routine == "ormqr":
            a["trans"] = 2              # unmqr: N or C
        if routine == "trsm":
            a["alpha"] = 1.5 - 0.25j
    return a


@pytest.mark.parametrize("dtype", ["S", "D", "C", "Z"])
@pytest.mark.parametrize("routine", sorted(_host_solver.SIGNATURES))
def test_calls_pass_every_argument_through_the_abi(routine, dtype):
    cs, lib = _cs(lwork=7)
    args = _args(routine, dtype)
    ws = []

    def workspace(nbytes):
        ws.append(nbytes)
        return 0xABC000, lambda: ws.append("released")
    strides = {p: 0x100 for p in args if p in _host_solver.POINTERS}
    _host_solver.check(routine, dtype, args, 2, strides)
    cs.execute(0x1111, 0x2222, 0x3333, routine, dtype, args, 2, strides, workspace)
    isz = {"S": 4, "D": 8, "C": 8, "Z": 16}[dtype]        # lwork counts elements of T
    sym = f"cusolverDn{dtype}{_host_solver.lapack_name(routine, dtype)}"
    calls = lib.calls
    if routine == "trsm":
        assert [c[0] for c in calls] == [f"cublas{dtype}trsm_v2"] * 2
        for b, (_, vals) in enumerate(calls):
            want = [0x2222] + [args[a] + (b * 0x100 if a in strides else 0)
                               for a in _cusolver._TRSM]
            assert vals == want
        assert ws == []
        return
    if routine == "geev":
        _check_geev_calls(calls, args, dtype, strides, ws)
        return
    if routine == "sytrs":
        _check_sytrs_calls(calls, args, dtype, strides, ws)
        return
    bargs, cargs = _cusolver.ROUTINES[routine]
    assert calls[0] == ("cusolverDnSetStream", [0x1111, 0x3333])
    i = 1
    if bargs is not None:
        name, vals = calls[1]
        assert name == f"{sym}_bufferSize"
        assert vals == [0x1111] + [_expect(a, args[a]) for a in bargs] + ["lwork*"]
        assert ws[0] == 7 * isz and ws[-1] == "released"
        i = 2
    else:
        assert ws == []
    assert [c[0] for c in calls[i:]] == [sym] * 2
    for b, (_, vals) in enumerate(calls[i:]):
        want = [0x1111]
        for a in cargs:
            if a == "@work":
                want.append(0xABC000)
            elif a == "@lwork":
                want.append(7)
            elif a == "@rwork":
                want.append(None)
            else:
                v = args[a] + b * 0x100 if a in strides else args[a]
                want.append(_expect(a, v))
        assert vals == want


@pytest.mark.parametrize("dtype", ["C", "Z"])
def test_complex_geev_through_the_abi(dtype):
    """geev also takes complex matrices: every data type is then the complex one."""
    cs, lib = _cs(lwork=7)
    args = _args("geev", "D")
    ws = []

    def workspace(nbytes):
        ws.append(nbytes)
        return 0xABC000, lambda: ws.append("released")
    strides = {p: 0x100 for p in args if p in _host_solver.POINTERS}
    _host_solver.check("geev", dtype, args, 2, strides)
    cs.execute(0x1111, 0x2222, 0x3333, "geev", dtype, args, 2, strides, workspace)
    _check_geev_calls(lib.calls, args, dtype, strides, ws)


def test_check_refuses_bad_types_and_operations():
    """Only S/D/C/Z; ormqr's trans N/T for a real, N/C (unmqr) for a complex type."""
    with pytest.raises(ValueError, match="dtype must be"):
        _host_solver.check("getrf", "H", _args("getrf", "D"))
    with pytest.raises(ValueError, match=r"cusolverDnZunmqr: trans = 1 is not one of \(0, 2\)"):
        _host_solver.check("ormqr", "Z", {**_args("ormqr", "Z"), "trans": 1})
    with pytest.raises(ValueError, match=r"cusolverDnDormqr: trans = 2"):
        _host_solver.check("ormqr", "D", {**_args("ormqr", "D"), "trans": 2})
    # syevd's W and gesvd's S are real: half the bytes of a complex element
    assert _host_solver.check("syevd", "Z", _args("syevd", "Z"))["W"] == 4 * 8
    assert _host_solver.check("gesvd", "C", _args("gesvd", "C"))["S"] == 4 * 4


def _check_sytrs_calls(calls, args, dtype, strides, ws):
    """cusolverDnXsytrs: one workspace query (no params object), one call per
    batch element, A's and B's data type the matrices' type."""
    t = {"S": 0, "D": 1, "C": 4, "Z": 5}[dtype]
    assert [c[0] for c in calls] == ["cusolverDnSetStream", "cusolverDnXsytrs_bufferSize",
                                     "cusolverDnXsytrs", "cusolverDnXsytrs"]

    def mats(b):
        at = {k: args[k] + b * strides[k] for k in ("A", "ipiv", "B")}
        return [0x1111, args["uplo"], args["n"], args["nrhs"], t, at["A"], args["lda"],
                at["ipiv"], t, at["B"], args["ldb"]]
    assert calls[1][1] == mats(0) + ["workspaceInBytesOnDevice*", "workspaceInBytesOnHost*"]
    assert ws == [21, "released"]
    for b in range(2):
        vals = calls[2 + b][1]
        assert vals[:11] == mats(b)
        assert vals[11] == 0xABC000 and vals[12] == 21 and vals[13] and vals[14] == 35
        assert vals[15] == args["info"] + b * strides["info"]


def _check_geev_calls(calls, args, dtype, strides, ws):
    """cusolverDnXgeev: the params object made and destroyed, one workspace
    query (device bytes from the allocator, host bytes on the host), one call
    per batch element with its matrices, the data types of a real input
    (complex W), no left vectors."""
    rt = {"S": 0, "D": 1, "C": 4, "Z": 5}[dtype]
    ct = {"S": 4, "D": 5, "C": 4, "Z": 5}[dtype]
    names = [c[0] for c in calls]
    assert names == ["cusolverDnSetStream", "cusolverDnCreateParams",
                     "cusolverDnXgeev_bufferSize", "cusolverDnXgeev", "cusolverDnXgeev",
                     "cusolverDnDestroyParams"]
    assert calls[1][1] == ["params*"]

    def mats(b):
        at = {k: args[k] + b * strides[k] for k in ("A", "W", "VR")}
        return [0x1111, 0xBEEF, 0, args["jobvr"], args["n"], rt, at["A"], args["lda"], ct,
                at["W"], rt, None, 1, rt, at["VR"], args["ldvr"], rt]
    assert calls[2][1] == mats(0) + ["workspaceInBytesOnDevice*", "workspaceInBytesOnHost*"]
    assert ws == [21, "released"]
    for b in range(2):
        vals = calls[3 + b][1]
        assert vals[:17] == mats(b)
        assert vals[17] == 0xABC000 and vals[18] == 21 and vals[20] == 35
        assert vals[19]                                   # the host workspace
        assert vals[21] == args["info"] + b * strides["info"]
    assert calls[5][1] == [0xBEEF]


def _expect(name, v):
    return ord(v) if name in ("jobu", "jobvt") else v


def test_status_errors_name_the_call():
    cs, lib = _cs(status={"cusolverDnDgetrf": 3})
    args = _args("getrf", "D")
    released = []
    with pytest.raises(_driver.CudaError, match="cusolverDnDgetrf failed: "
                                                "CUSOLVER_STATUS_INVALID_VALUE"):
        cs.execute(1, 2, 0, "getrf", "D", args, 1, None,
                   lambda n: (0x5000, lambda: released.append(n)))
    assert released == [7 * 8]          # the workspace goes back even on failure
    cs, lib = _cs(status={"cublasStrsm_v2": 7})
    with pytest.raises(_driver.CudaError, match="cublasStrsm_v2"):
        cs.execute(1, 2, 0, "trsm", "S", _args("trsm", "S"), 1, None, None)
    assert cs.new_handle() == 0xC0FFEE


def test_real_driver_solver_handles_streams_and_workspace(monkeypatch):
    """RealDriver.solver: one cuSOLVER handle per (device, thread), the cuBLAS
    stream set for trsm, the workspace from the device's caching allocator
    freed once the calls are queued."""
    from ptcore.cuda.driver import real as _real_driver
    from ptcore.cuda.driver.real import RealDriver
    cs, lib = _cs(lwork=5)
    drv = object.__new__(RealDriver)
    drv._n = 2
    drv._lock = threading.RLock()
    drv._cublas_tls = threading.local()
    drv._cusolver = cs
    current = []
    drv._make_current = current.append
    drv._blas_handle = lambda device: 0xB0 + device
    blas_streams = []
    drv._cublas = types.SimpleNamespace(
        path=None, set_stream=lambda h, s: blas_streams.append((h, s)) or 0,
        check=lambda call, st: None)
    events = []

    class Alloc:
        def malloc(self, n, stream):
            events.append(("malloc", n, stream))
            return types.SimpleNamespace(ptr=0xD000)

        def free(self, block):
            events.append(("free", block.ptr))
    monkeypatch.setattr(_real_driver, "_device_allocator", lambda idx: Alloc())
    created = []
    monkeypatch.setattr(cs, "new_handle", lambda: created.append(1) or 0x900 + len(created))
    args = _args("potrf", "D")
    drv.solver(1, 0x77, "potrf", "D", **args)
    drv.solver(1, 0x78, "potrf", "D", **args)
    assert created == [1] and current[-1] == 1
    assert events == [("malloc", 40, 0x77), ("free", 0xD000), ("malloc", 40, 0x78), ("free", 0xD000)]
    assert [c for c in lib.calls if c[0] == "cusolverDnSetStream"] == [
        ("cusolverDnSetStream", [0x901, 0x77]), ("cusolverDnSetStream", [0x901, 0x78])]
    t = threading.Thread(target=lambda: drv.solver(1, 0, "potrf", "D", **args))
    t.start()
    t.join()
    assert created == [1, 1]                          # another thread: its own handle
    drv.solver(0, 0x79, "trsm", "D", **_args("trsm", "D"))
    assert blas_streams[-1] == (0xB0, 0x79) and blas_streams[0] == (0xB1, 0x77)
    with pytest.raises(ValueError, match="ld of A"):
        drv.solver(0, 0, "potrf", "D", **{**args, "lda": 1})
    with pytest.raises(_driver.CudaError, match="invalid device ordinal"):
        drv.solver(2, 0, "potrf", "D", **args)


def test_real_libcusolver_symbols():
    """With libcusolver installed: every symbol ptcore binds resolves, with
    its ctypes signature set. No call is made without a GPU: cuSOLVER does
    not check its handle, and nvidia-cusolver 12.4.1 dereferences a NULL one
    in cusolverDnDgesvd_bufferSize (SIGSEGV; the real calls are exercised on
    the GPU machine by benchmarks/cuda_check.py and PTCORE_TEST_REAL_CUDA)."""
    pytest.importorskip("cuda.pathfinder")
    from cuda.pathfinder import load_nvidia_dynamic_lib
    try:
        load_nvidia_dynamic_lib("cusolver")
    except Exception as e:      # noqa: BLE001
        pytest.skip(f"cusolver is not installed: {e}")
    cs = _cusolver.Cusolver()
    assert set(k[1] for k in cs.fns) == set(_host_solver.SIGNATURES) - {"geev", "sytrs"}
    assert cs.geev is not None          # cusolverDnXgeev (CUDA >= 12.6)
    assert cs.sytrs is not None         # cusolverDnXsytrs (CUDA >= 11.3.1)
    for key, fns in cs.fns.items():
        for fn in fns:
            if fn is not None:
                assert fn.argtypes, key
                assert fn.restype is not None, key


@pytest.mark.parametrize("routine,symbol", [("getrf", "cublas{t}getrfBatched"),
                                            ("getrs", "cublas{t}getrsBatched"),
                                            ("potrf", "cusolverDn{t}potrfBatched"),
                                            ("potrs", "cusolverDn{t}potrsBatched")])
@pytest.mark.parametrize("dtype", ["D", "Z"])
def test_batches_use_the_pointer_array_entry_points(routine, symbol, dtype):
    """A batch of more than one matrix with a fitting layout goes through the
    batched entry point: one call, device arrays of the matrix pointers
    (uploaded, then released), the pivots/info arrays as they are."""
    cs, lib = _cs()
    args = _args(routine, dtype)
    args["n"] = 4
    if routine == "getrf":
        args["m"] = 4
    if routine == "potrs":
        args["nrhs"] = 1
    strides = {"A": 0x200, "B": 0x300, "ipiv": 16, "info": 4}
    strides = {k: v for k, v in strides.items() if k in args}
    keep, events = [], []

    def upload(data):
        buf = ctypes.create_string_buffer(data, len(data))
        keep.append(buf)
        events.append(("upload", len(data)))
        return ctypes.addressof(buf), lambda: events.append("release")
    cs.execute(0x1111, 0x2222, 0x3333, routine, dtype, args, 3, strides,
               lambda n: pytest.fail("no workspace for the batched entry points"), upload)
    name = symbol.format(t=dtype)
    calls = [c for c in lib.calls if c[0] != "cusolverDnSetStream"]
    assert [c[0] for c in calls] == [name]
    vals = calls[0][1]
    arrays = [ctypes.addressof(b) for b in keep]
    for buf, key in zip(keep, ("A", "B")):
        ptrs = list((ctypes.c_uint64 * 3).from_buffer_copy(buf.raw))
        assert ptrs == [args[key] + b * strides[key] for b in range(3)]
    a = args
    if routine == "getrf":
        want = [0x2222, 4, arrays[0], a["lda"], a["ipiv"], a["info"], 3]
    elif routine == "getrs":
        want = [0x2222, a["trans"], 4, a["nrhs"], arrays[0], a["lda"], a["ipiv"], arrays[1],
                a["ldb"], vals[9], 3]
    elif routine == "potrf":
        want = [0x1111, a["uplo"], 4, arrays[0], a["lda"], a["info"], 3]
    else:
        want = [0x1111, a["uplo"], 4, 1, arrays[0], a["lda"], arrays[1], a["ldb"], a["info"], 3]
    assert vals == want
    assert events.count("release") == len(keep) == (2 if routine in ("getrs", "potrs") else 1)
    # a layout the batched entry points cannot take (strided info / wide matrix): the loop
    lib.calls.clear()
    if routine == "getrf":
        cs.execute(1, 2, 0, "getrf", dtype, {**args, "m": 5}, 3, strides,
                   lambda n: (0x5000, lambda: None), upload)
        assert [c[0] for c in lib.calls].count(f"cusolverDn{dtype}getrf") == 3
