"""cuSOLVER (and cuBLAS ``trsm``) for the emulated device, on the host
(``scipy.linalg.lapack`` / ``scipy.linalg.blas``), and the argument rules
both drivers share.

:meth:`ptcore.cuda.driver.interface.Driver.solver` queues one dense routine (or a
strided batch of them) on a stream.  Its arguments are those of the legacy
cuSOLVER ``cusolverDn<t><routine>`` call after the handle, without the
workspace and its size (the driver finds and allocates those), by name:

==========  ==================================================================
routine     arguments (cuSOLVER's order)
==========  ==================================================================
``getrf``   m, n, A, lda, ipiv, info
``getrs``   trans, n, nrhs, A, lda, ipiv, B, ldb, info
``potrf``   uplo, n, A, lda, info
``potrs``   uplo, n, nrhs, A, lda, B, ldb, info
``geqrf``   m, n, A, lda, tau, info
``orgqr``   m, n, k, A, lda, tau, info
``ormqr``   side, trans, m, n, k, A, lda, tau, C, ldc, info
``syevd``   jobz, uplo, n, A, lda, W, info
``gesvd``   jobu, jobvt, m, n, A, lda, S, U, ldu, VT, ldvt, info   (m >= n)
``trsm``    side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb   (cuBLAS)
``geev``    jobvr, n, A, lda, W, VR, ldvr, info   (64-bit ``cusolverDnXgeev``)
``sytrf``   uplo, n, A, lda, ipiv, info
``sytrs``   uplo, n, nrhs, A, lda, ipiv, B, ldb, info   (64-bit ``cusolverDnXsytrs``:
            ``ipiv`` int64)
==========  ==================================================================

``geev`` (right eigenvectors only) takes a real ``A`` and writes its ``n``
complex eigenvalues into ``W`` (``n`` interleaved (re, im) pairs: the
complex type of ``dtype``) and, with ``jobvr`` 1, the eigenvectors into the
real ``VR`` in LAPACK's packed form (a complex pair ``w[j], w[j+1] =
conj(w[j])`` has vectors ``VR[:, j] +- i VR[:, j+1]``); ``A`` is overwritten.
For a complex ``A``, ``A``, ``W`` and ``VR`` are all complex.

Every routine takes the complex dtypes ``"C"`` (complex64) and ``"Z"``
(complex128) as well: ``orgqr``, ``ormqr`` and ``syevd`` are then
cuSOLVER's (and LAPACK's) ``ungqr``, ``unmqr`` and ``heevd`` (see
:data:`LAPACK_NAMES`); ``syevd``'s ``W`` and ``gesvd``'s ``S`` are real
(float32 for ``"C"``, float64 for ``"Z"``); ``trans`` 2 is the conjugate
transpose (``CUBLAS_OP_C``: ``ormqr`` takes 0 or 1 for a real and 0 or 2 for
a complex type, as LAPACK's ``?ormqr``/``?unmqr``); ``trsm``'s ``alpha`` may
be a complex number.

Matrices are column-major at device addresses (here: host addresses),
``ld*`` in elements; ``ipiv`` and ``info`` are ``int32`` device pointers
(``ipiv`` 1-based, ``info`` LAPACK's: 0, ``i > 0`` for a zero pivot / a
leading minor that is not positive-definite / no convergence).  Enum values
are cuBLAS/cuSOLVER's: ``trans`` 0 N / 1 T / 2 C, ``uplo`` 0 lower / 1 upper
(``CUBLAS_FILL_MODE_*``), ``side`` 0 left / 1 right, ``diag`` 0 non-unit /
1 unit, ``jobz`` 0 values only / 1 vectors; ``jobu``/``jobvt`` are the
characters ``'A'``, ``'S'`` or ``'N'``.  ``dtype`` is ``"S"`` (float32),
``"D"`` (float64), ``"C"`` (complex64) or ``"Z"`` (complex128).  ``batch``
calls run one after the other, the pointer argument ``X`` of call ``b`` at
``X + b * strides[X]`` (bytes).
"""
import ctypes

import numpy as np

__all__ = ["SIGNATURES", "POINTERS", "LAPACK_NAMES", "REAL_OF", "check", "execute", "itemsize",
           "lapack_name"]

SIGNATURES = {
    "getrf": ("m", "n", "A", "lda", "ipiv", "info"),
    "getrs": ("trans", "n", "nrhs", "A", "lda", "ipiv", "B", "ldb", "info"),
    "potrf": ("uplo", "n", "A", "lda", "info"),
    "potrs": ("uplo", "n", "nrhs", "A", "lda", "B", "ldb", "info"),
    "geqrf": ("m", "n", "A", "lda", "tau", "info"),
    "orgqr": ("m", "n", "k", "A", "lda", "tau", "info"),
    "ormqr": ("side", "trans", "m", "n", "k", "A", "lda", "tau", "C", "ldc", "info"),
    "syevd": ("jobz", "uplo", "n", "A", "lda", "W", "info"),
    "gesvd": ("jobu", "jobvt", "m", "n", "A", "lda", "S", "U", "ldu", "VT", "ldvt", "info"),
    "trsm": ("side", "uplo", "trans", "diag", "m", "n", "alpha", "A", "lda", "B", "ldb"),
    "geev": ("jobvr", "n", "A", "lda", "W", "VR", "ldvr", "info"),
    "sytrf": ("uplo", "n", "A", "lda", "ipiv", "info"),
    "sytrs": ("uplo", "n", "nrhs", "A", "lda", "ipiv", "B", "ldb", "info"),
}
#: the device-pointer arguments
POINTERS = frozenset({"A", "B", "C", "ipiv", "info", "tau", "W", "S", "U", "VT", "VR"})
_INT_PTRS = ("ipiv", "info")
_NP = {"S": np.float32, "D": np.float64}
_CNP = {"C": np.complex64, "Z": np.complex128}
#: the real type of each solver type (``syevd``'s W and ``gesvd``'s S)
REAL_OF = {"S": "S", "D": "D", "C": "S", "Z": "D"}
#: routine -> the name cuSOLVER and LAPACK give it for a complex type, where it differs
LAPACK_NAMES = {"orgqr": "ungqr", "ormqr": "unmqr", "syevd": "heevd"}
#: (routine, pointer) of the arguments of the real type whatever ``dtype``
_REAL_ARGS = frozenset({("syevd", "W"), ("gesvd", "S")})


def lapack_name(routine, dtype):
    """``routine``'s name in cuSOLVER and LAPACK for ``dtype`` (``ormqr`` of
    a complex type is ``unmqr`` ...)."""
    return LAPACK_NAMES.get(routine, routine) if dtype in _CNP else routine


def itemsize(name, dtype, routine=None):
    """Bytes per element of pointer argument ``name`` (of ``routine``: the
    real ``W`` of ``syevd`` and ``S`` of ``gesvd``)."""
    if name in _INT_PTRS:
        return 8 if (routine, name) == ("sytrs", "ipiv") else 4
    if (routine, name) in _REAL_ARGS:
        dtype = REAL_OF[dtype]
    return {"S": 4, "D": 8, "C": 8, "Z": 16}[dtype]


def _err(routine, msg):
    return ValueError(f"cusolverDn{routine}: {msg} (CUSOLVER_STATUS_INVALID_VALUE)")


def _extents(routine, a, dtype="S"):
    """{pointer name: (rows, cols, ld)} of the matrices/vectors a call reads
    or writes (column-major), for the range checks."""
    g = a.get
    if routine == "getrf":
        return {"A": (g("m"), g("n"), g("lda")), "ipiv": (min(g("m"), g("n")), 1, 1),
                "info": (1, 1, 1)}
    if routine == "getrs":
        return {"A": (g("n"), g("n"), g("lda")), "ipiv": (g("n"), 1, 1),
                "B": (g("n"), g("nrhs"), g("ldb")), "info": (1, 1, 1)}
    if routine == "potrf":
        return {"A": (g("n"), g("n"), g("lda")), "info": (1, 1, 1)}
    if routine == "potrs":
        return {"A": (g("n"), g("n"), g("lda")), "B": (g("n"), g("nrhs"), g("ldb")),
                "info": (1, 1, 1)}
    if routine == "geqrf":
        return {"A": (g("m"), g("n"), g("lda")), "tau": (min(g("m"), g("n")), 1, 1),
                "info": (1, 1, 1)}
    if routine == "orgqr":
        return {"A": (g("m"), g("n"), g("lda")), "tau": (g("k"), 1, 1), "info": (1, 1, 1)}
    if routine == "ormqr":
        r = g("m") if g("side") == 0 else g("n")
        return {"A": (r, g("k"), g("lda")), "tau": (g("k"), 1, 1),
                "C": (g("m"), g("n"), g("ldc")), "info": (1, 1, 1)}
    if routine == "syevd":
        return {"A": (g("n"), g("n"), g("lda")), "W": (g("n"), 1, 1), "info": (1, 1, 1)}
    if routine == "gesvd":
        m, n = g("m"), g("n")
        e = {"A": (m, n, g("lda")), "S": (min(m, n), 1, 1), "info": (1, 1, 1)}
        if g("jobu") != "N":
            e["U"] = (m, m if g("jobu") == "A" else min(m, n), g("ldu"))
        if g("jobvt") != "N":
            e["VT"] = (n if g("jobvt") == "A" else min(m, n), n, g("ldvt"))
        return e
    if routine == "trsm":
        k = g("m") if g("side") == 0 else g("n")
        return {"A": (k, k, g("lda")), "B": (g("m"), g("n"), g("ldb"))}
    if routine == "geev":
        n = g("n")
        # a real A's eigenvalues are complex: 2 n reals
        e = {"A": (n, n, g("lda")), "W": (n if dtype in _CNP else 2 * n, 1, 1),
             "info": (1, 1, 1)}
        if g("jobvr"):
            e["VR"] = (n, n, g("ldvr"))
        return e
    if routine == "sytrf":
        return {"A": (g("n"), g("n"), g("lda")), "ipiv": (g("n"), 1, 1), "info": (1, 1, 1)}
    if routine == "sytrs":
        return {"A": (g("n"), g("n"), g("lda")), "ipiv": (g("n"), 1, 1),
                "B": (g("n"), g("nrhs"), g("ldb")), "info": (1, 1, 1)}
    raise _err(routine, "unknown routine")


def check(routine, dtype, args, batch=1, strides=None):
    """Validate a call as cuSOLVER would (ValueError naming the bad argument)
    and return ``{pointer: (first byte offset 0, bytes touched by one call)}``.
    Both drivers call it before queueing anything."""
    if routine not in SIGNATURES:
        raise ValueError(f"cuSOLVER: unknown routine {routine!r} (one of {', '.join(SIGNATURES)})")
    if dtype not in _NP and dtype not in _CNP:
        raise ValueError(f"cusolverDn{routine}: dtype must be 'S' (float32), 'D' (float64), "
                         f"'C' (complex64) or 'Z' (complex128), got {dtype!r}")
    routine_name = dtype + lapack_name(routine, dtype)
    want = SIGNATURES[routine]
    missing = [n for n in want if n not in args]
    extra = [n for n in args if n not in want]
    if missing or extra:
        raise ValueError(f"cusolverDn{dtype}{routine}: arguments {list(want)}; missing {missing}, "
                         f"unexpected {extra}")
    if int(batch) < 0:
        raise _err(routine, f"batch {batch} is negative")
    for name in ("m", "n", "k", "nrhs"):
        if name in args and int(args[name]) < 0:
            raise _err(routine_name, f"{name} = {args[name]} is negative")
    # ?ormqr takes N/T, ?unmqr N/C; the other routines' trans any of N/T/C
    trans = ((0, 2) if dtype in _CNP else (0, 1)) if routine == "ormqr" else (0, 1, 2)
    for name, allowed in (("trans", trans), ("uplo", (0, 1)), ("side", (0, 1)), ("diag", (0, 1)),
                          ("jobz", (0, 1)), ("jobvr", (0, 1)), ("jobu", ("A", "S", "N")),
                          ("jobvt", ("A", "S", "N"))):
        if name in args and args[name] not in allowed:
            raise _err(routine_name, f"{name} = {args[name]!r} is not one of {allowed}")
    if routine == "gesvd" and args["m"] < args["n"]:
        raise _err(routine_name, f"m = {args['m']} < n = {args['n']} (cuSOLVER's gesvd needs "
                                 f"m >= n; factor the transpose)")
    if routine in ("orgqr",) and not (args["m"] >= args["n"] >= args["k"]):
        raise _err(routine_name, f"needs m >= n >= k, got m={args['m']}, n={args['n']}, "
                                 f"k={args['k']}")
    if routine == "ormqr":
        r = args["m"] if args["side"] == 0 else args["n"]
        if args["k"] > r:
            raise _err(routine_name, f"k = {args['k']} exceeds {r}")
    ext = _extents(routine, args, dtype)
    sizes = {}
    for name, (rows, cols, ld) in ext.items():
        if name in ("A", "B", "C", "U", "VT", "VR") and int(ld) < max(1, rows):
            raise _err(routine_name, f"ld of {name} = {ld} is smaller than its {rows} rows")
        isz = itemsize(name, dtype, routine)
        sizes[name] = 0 if rows == 0 or cols == 0 else ((cols - 1) * ld + rows) * isz
    for name in strides or {}:
        if name not in POINTERS or name not in want:
            raise _err(routine_name, f"stride for {name!r}, which is not a pointer argument")
    return sizes


def _mat(ptr, dtype, rows, cols, ld):
    """A writable (rows, cols) NumPy view of a column-major matrix at ``ptr``."""
    st = np.dtype(dtype)
    if rows == 0 or cols == 0:
        return np.zeros((rows, cols), st)
    extent = (cols - 1) * ld + rows
    buf = (ctypes.c_char * (extent * st.itemsize)).from_address(ptr)
    flat = np.frombuffer(buf, dtype=st, count=extent)
    return np.lib.stride_tricks.as_strided(flat, shape=(rows, cols),
                                           strides=(st.itemsize, ld * st.itemsize), writeable=True)


def _vec(ptr, dtype, n):
    return _mat(ptr, dtype, n, 1, max(n, 1))[:, 0]


def _set_info(a, value):
    _vec(a["info"], np.int32, 1)[0] = value


def _square_in(a, T):
    """The n x n matrix ``A`` of a call, info preset to 0; None when n is 0
    (nothing to compute)."""
    _set_info(a, 0)
    n = a["n"]
    return _mat(a["A"], T, n, n, a["lda"]) if n else None


def _solve_rhs(a, T, solve):
    """A solve with the factors of the n x n ``A`` for the ``nrhs`` columns of
    ``B`` (getrs, potrs, sytrs): ``solve(A, B)`` on Fortran-ordered copies
    returns ``(X, info)``; ``X`` overwrites ``B``, info is 0 (LAPACK's only
    reports bad arguments, which :func:`check` refused)."""
    n, nrhs = a["n"], a["nrhs"]
    _set_info(a, 0)
    if n == 0 or nrhs == 0:
        return
    A = _mat(a["A"], T, n, n, a["lda"])
    B = _mat(a["B"], T, n, nrhs, a["ldb"])
    x, _info = solve(np.array(A, order="F"), np.array(B, order="F"))
    B[...] = x


def _one(routine, dt, a):
    """Run one call on host memory (``a``: the argument dict)."""
    from scipy.linalg import lapack, blas
    T = _NP.get(dt) or _CNP[dt]
    R = _NP[REAL_OF[dt]]                 # syevd's W, gesvd's S
    p = dt.lower()
    lapack_fn = getattr(lapack, p + lapack_name(routine, dt), None)
    if routine == "getrf":
        m, n = a["m"], a["n"]
        A = _mat(a["A"], T, m, n, a["lda"])
        k = min(m, n)
        if k == 0:
            _set_info(a, 0)
            return
        lu, piv, info = lapack_fn(np.array(A, order="F"))
        A[...] = lu
        _vec(a["ipiv"], np.int32, k)[...] = piv[:k] + 1
        _set_info(a, info)
    elif routine == "getrs":
        _solve_rhs(a, T, lambda A, B: lapack_fn(A, _vec(a["ipiv"], np.int32, a["n"]) - 1, B,
                                                trans=a["trans"]))
    elif routine == "potrf":
        A = _square_in(a, T)
        if A is None:
            return
        c, info = lapack_fn(np.array(A, order="F"), lower=a["uplo"] == 0, clean=0)
        A[...] = c
        _set_info(a, info)
    elif routine == "potrs":
        _solve_rhs(a, T, lambda A, B: lapack_fn(A, B, lower=a["uplo"] == 0))
    elif routine == "geqrf":
        m, n = a["m"], a["n"]
        _set_info(a, 0)
        if min(m, n) == 0:
            return
        A = _mat(a["A"], T, m, n, a["lda"])
        qr, tau, _w, info = lapack_fn(np.array(A, order="F"))
        A[...] = qr
        _vec(a["tau"], T, min(m, n))[...] = tau
    elif routine == "orgqr":
        m, n, k = a["m"], a["n"], a["k"]
        _set_info(a, 0)
        if n == 0:
            return
        A = _mat(a["A"], T, m, n, a["lda"])
        tau = np.array(_vec(a["tau"], T, k)) if k else np.zeros(1, T)
        if k == 0:                       # the product of no reflectors: identity columns
            A[...] = np.eye(m, n, dtype=T)
            return
        q, _w, info = lapack_fn(np.array(A, order="F"), tau)
        A[...] = q
    elif routine == "ormqr":
        m, n, k = a["m"], a["n"], a["k"]
        _set_info(a, 0)
        if m == 0 or n == 0 or k == 0:
            return
        r = m if a["side"] == 0 else n
        A = _mat(a["A"], T, r, k, a["lda"])
        C = _mat(a["C"], T, m, n, a["ldc"])
        tau = np.array(_vec(a["tau"], T, k))
        cq, _w, info = lapack_fn("L" if a["side"] == 0 else "R", "NTC"[a["trans"]],
                                 np.array(A, order="F"), tau, np.array(C, order="F"),
                                 max(1, m, n) * 64)
        C[...] = cq
    elif routine == "syevd":
        n = a["n"]
        A = _square_in(a, T)
        if A is None:
            return
        w, v, info = lapack_fn(np.array(A, order="F"), compute_v=int(a["jobz"]),
                               lower=a["uplo"] == 0)
        _vec(a["W"], R, n)[...] = w
        if a["jobz"]:
            A[...] = v
        _set_info(a, info)
    elif routine == "gesvd":
        m, n = a["m"], a["n"]
        k = min(m, n)
        _set_info(a, 0)
        if k == 0:
            return
        A = _mat(a["A"], T, m, n, a["lda"])
        want = a["jobu"] != "N" or a["jobvt"] != "N"
        full = a["jobu"] == "A" or a["jobvt"] == "A"
        u, s, vt, info = lapack_fn(np.array(A, order="F"), compute_uv=int(want),
                                   full_matrices=int(full))
        _vec(a["S"], R, k)[...] = s
        if a["jobu"] != "N":
            uc = m if a["jobu"] == "A" else k
            _mat(a["U"], T, m, uc, a["ldu"])[...] = u[:, :uc]
        if a["jobvt"] != "N":
            vr = n if a["jobvt"] == "A" else k
            _mat(a["VT"], T, vr, n, a["ldvt"])[...] = vt[:vr, :]
        _set_info(a, info)
    elif routine == "trsm":
        m, n = a["m"], a["n"]
        if m == 0 or n == 0:
            return
        kk = m if a["side"] == 0 else n
        A = _mat(a["A"], T, kk, kk, a["lda"])
        B = _mat(a["B"], T, m, n, a["ldb"])
        alpha = complex(a["alpha"]) if dt in _CNP else float(a["alpha"])
        x = getattr(blas, p + "trsm")(alpha, np.array(A, order="F"),
                                      np.array(B, order="F"), side=a["side"],
                                      lower=int(a["uplo"] == 0), trans_a=a["trans"],
                                      diag=a["diag"])
        B[...] = x
    elif routine == "geev":
        n = a["n"]
        A = _square_in(a, T)
        if A is None:
            return
        want = int(a["jobvr"])
        if dt in _CNP:
            w, _vl, vr, info = lapack_fn(np.array(A, order="F"), compute_vl=0, compute_vr=want)
            _vec(a["W"], T, n)[...] = w
        else:
            wr, wi, _vl, vr, info = lapack_fn(np.array(A, order="F"), compute_vl=0,
                                              compute_vr=want)
            w = _vec(a["W"], T, 2 * n)
            w[0::2] = wr
            w[1::2] = wi
        if want:
            _mat(a["VR"], T, n, n, a["ldvr"])[...] = vr
        _set_info(a, info)
    elif routine == "sytrf":
        n = a["n"]
        A = _square_in(a, T)
        if A is None:
            return
        ldu, ipiv, info = lapack_fn(np.array(A, order="F"), lower=int(a["uplo"] == 0))
        A[...] = ldu
        _vec(a["ipiv"], np.int32, n)[...] = ipiv
        _set_info(a, info)
    elif routine == "sytrs":
        _solve_rhs(a, T, lambda A, B: lapack_fn(
            A, np.array(_vec(a["ipiv"], np.int64, a["n"]), dtype=np.int32), B,
            lower=int(a["uplo"] == 0)))


def execute(routine, dtype, args, batch=1, strides=None):
    """Run ``batch`` calls on the host (see the module docstring)."""
    strides = strides or {}
    for b in range(int(batch)):
        a = dict(args)
        for name, st in strides.items():
            a[name] = args[name] + b * int(st)
        _one(routine, dtype, a)
