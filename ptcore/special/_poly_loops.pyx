# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The three-term recurrences of :mod:`ptcore.special._polynomials`, one element at
a time in C: each element steps only to its own degree, in its own precision, with
the same operations in the same order as the NumPy formulation (so the same bits;
this module is compiled without floating-point contraction).  A degree in the
millions costs microseconds per element instead of millions of NumPy calls."""

ctypedef fused real:
    float
    double

# the recurrences P_k = step(k, P_{k-1}, P_{k-2}), k >= 2
cdef enum:
    CHEBYSHEV = 0     # 2x q - p
    HERMITE_H = 1     # 2x q - 2(k-1) p
    HERMITE_HE = 2    # x q - (k-1) p
    LAGUERRE = 3      # ((2(k-1) + (1-x)) q - (k-1) p) / k
    LEGENDRE = 4      # ((2(k-1)+1) x q - (k-1) p) / k

KINDS = {"chebyshev": CHEBYSHEV, "hermite_h": HERMITE_H, "hermite_he": HERMITE_HE,
         "laguerre": LAGUERRE, "legendre": LEGENDRE}


def recurrence(int kind, const real[::1] x, const real[::1] p0, const real[::1] p1,
               const long long[::1] n, real[::1] out):
    """``out[i] = P_{n[i]}(x[i])`` from ``P_0 = p0[i]``, ``P_1 = p1[i]`` (0 for a
    negative degree)."""
    cdef Py_ssize_t i, m = x.shape[0]
    cdef long long k, top
    cdef real p, q, nq, xi, x2, omx
    if not (p0.shape[0] == p1.shape[0] == n.shape[0] == out.shape[0] == m):
        raise ValueError("recurrence: operands of different lengths")
    if kind < CHEBYSHEV or kind > LEGENDRE:
        raise ValueError(f"recurrence: unknown kind {kind}")
    with nogil:
        for i in range(m):
            top = n[i]
            if top < 0:
                out[i] = 0
                continue
            if top == 0:
                out[i] = p0[i]
                continue
            p = p0[i]
            q = p1[i]
            xi = x[i]
            x2 = xi + xi
            omx = 1 - xi
            k = 2
            while k <= top:
                if kind == CHEBYSHEV:
                    nq = x2 * q - p
                elif kind == HERMITE_H:
                    nq = x2 * q - (<real>(2 * (k - 1))) * p
                elif kind == HERMITE_HE:
                    nq = xi * q - (<real>(k - 1)) * p
                elif kind == LAGUERRE:
                    nq = ((<real>(2 * (k - 1)) + omx) * q - (<real>(k - 1)) * p) / (<real>k)
                else:
                    nq = ((<real>(2 * (k - 1) + 1)) * xi * q - (<real>(k - 1)) * p) / (<real>k)
                p = q
                q = nq
                k += 1
            out[i] = q
