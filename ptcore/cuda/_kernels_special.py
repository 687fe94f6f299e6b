"""CUDA kernel sources of the ``ptcore.special`` functions (generated,
header-free; part of the library of :mod:`ptcore.cuda._kernels`, which lists
them through :func:`generate`).

Family **special** (family prelude :data:`POLY_PRELUDE`), float32 and float64:

* ``ptc_special_zeta_<tag>_<c|s>``: the binary ABI, Hurwitz ``zeta(x, q)``
  (Cephes' summation, in double).
* ``ptc_special_<op>_f32_<c|s>`` (``op`` in :data:`UNARY_F32`): the unary
  elementwise ABI in float32, the scalar functions of
  ``ptcore/_ops/ptc_special.h`` (the CPU's float32 kernels), from the
  device translation of that header made by :func:`_f32_device_source`.
* ``ptc_special_<op>_<tag>_<c|s>`` for the orthogonal polynomials
  (``op`` = ``chebyshev_polynomial_t/u/v/w``, ``shifted_chebyshev_polynomial_t/u/v/w``,
  ``hermite_polynomial_h/he``, ``laguerre_polynomial_l``, ``legendre_polynomial_p``):
  the binary elementwise ABI, ``(n, T* out, const T* x, const T* deg,
  ptc_params p[, ptc_strided<3> ix])``.  The degree is truncated to an
  integer as a C cast; nan, +-inf and out-of-range degrees count as negative
  (result 0), as ``ptcore.special._functions._poly``.

The values follow the CPU kernels (:mod:`ptcore.special._polynomials`, which
follow PyTorch's ``Math.h``): the three-term recurrence in the input's
precision, the closed forms at ``|x| == 1``, and (Chebyshev, large degree,
``|x| < 1``) the trigonometric forms, whose products ``n * acos(x)`` are
formed in double as NumPy's promotion does on the CPU.  Once the recurrence
reaches NaN it stays NaN, so the loop stops there (same value, bounded work
after an overflow).
"""
import os
import re

from ptcore.cuda._kernels import kernel_name, _ew_kernel

__all__ = ["generate", "FAMILY_PRELUDE", "POLYNOMIALS"]

POLY_PRELUDE = r"""
__device__ __forceinline__ float ptc_sp_acos(float x) { return acosf(x); }
__device__ __forceinline__ double ptc_sp_acos(double x) { return acos(x); }
__device__ __forceinline__ float ptc_sp_sin(float x) { return sinf(x); }
__device__ __forceinline__ double ptc_sp_sin(double x) { return sin(x); }
__device__ __forceinline__ float ptc_sp_cos(float x) { return cosf(x); }
__device__ __forceinline__ double ptc_sp_cos(double x) { return cos(x); }
template <class T> __device__ __forceinline__ T ptc_sp_abs(T x) { return x < (T)0 ? -x : x; }
/* the degree as torch's C cast would have it; nan/inf/out of range -> -1 */
template <class T> __device__ __forceinline__ long long ptc_poly_deg(T n) {
    const double d = (double)n;
    return (d == d && d < 9223372036854775808.0 && d > -9223372036854775808.0) ? (long long)d : -1LL;
}
/* P_n from P_0 = 1, P_1 = q and the step; stops once NaN (it stays NaN) */
#define PTC_POLY_LOOP(STEP) \
    T p = (T)1; \
    for (long long k = 2; k <= n && q == q; ++k) { const T r = (STEP); p = q; q = r; } \
    return q;

template <class T> __device__ T ptc_poly_cheb_t(T x, long long n) {
    if (n < 0) return (T)0;
    const T ax = ptc_sp_abs(x);
    if (ax == (T)1) return (x > (T)0 || n % 2 == 0) ? (T)1 : (T)-1;
    if (n > 6 && ax < (T)1) return (T)cos((double)n * (double)ptc_sp_acos(x));
    if (n == 0) return (T)1;
    const T x2 = x + x;
    T q = x;
    PTC_POLY_LOOP(x2 * q - p)
}
template <class T> __device__ T ptc_poly_cheb_u(T x, long long n) {
    if (n < 0) return (T)0;
    const T ax = ptc_sp_abs(x);
    if (ax == (T)1) return (x > (T)0 || n % 2 == 0) ? (T)(n + 1) : (T)(-(n + 1));
    if (n > 8 && ax < (T)1) {
        const T t = ptc_sp_acos(x);
        const T s = ptc_sp_sin(t);
        const double m = (double)(n + 1);
        if (s != (T)0) return (T)(sin(m * (double)t) / (double)s);
        return (T)(m * cos(m * (double)t) / (double)x);
    }
    if (n == 0) return (T)1;
    const T x2 = x + x;
    T q = x + x;
    PTC_POLY_LOOP(x2 * q - p)
}
template <class T> __device__ T ptc_poly_cheb_v(T x, long long n) {
    if (n < 0) return (T)0;
    const T ax = ptc_sp_abs(x);
    const T odd = (n % 2 == 0) ? (T)(n + n + 1) : (T)(-(n + n + 1));
    if (ax == (T)1) return x > (T)0 ? (T)1 : odd;
    if (n > 8 && ax < (T)1) {
        const T t = ptc_sp_acos(x);
        const T h = t / (T)2;
        if (ptc_sp_sin(h) != (T)1)
            return (T)(cos(((double)n + 0.5) * (double)t) / (double)ptc_sp_cos(h));
        return odd;
    }
    if (n == 0) return (T)1;
    const T x2 = x + x;
    T q = x + x - (T)1;
    PTC_POLY_LOOP(x2 * q - p)
}
template <class T> __device__ T ptc_poly_cheb_w(T x, long long n) {
    if (n < 0) return (T)0;
    const T ax = ptc_sp_abs(x);
    const T edge = x > (T)0 ? (T)(n + n + 1) : ((n % 2 == 0) ? (T)1 : (T)-1);
    if (ax == (T)1) return edge;
    if (n > 8 && ax < (T)1) {
        const T t = ptc_sp_acos(x);
        const T h = t / (T)2;
        if (ptc_sp_cos(h) != (T)1)
            return (T)(sin(((double)n + 0.5) * (double)t) / (double)ptc_sp_sin(h));
        return edge;
    }
    if (n == 0) return (T)1;
    const T x2 = x + x;
    T q = x + x + (T)1;
    PTC_POLY_LOOP(x2 * q - p)
}
template <class T> __device__ T ptc_poly_hermite_h(T x, long long n) {
    if (n < 0) return (T)0;
    if (n == 0) return (T)1;
    const T x2 = x + x;
    T q = x2;
    PTC_POLY_LOOP(x2 * q - (T)(2 * (k - 1)) * p)
}
template <class T> __device__ T ptc_poly_hermite_he(T x, long long n) {
    if (n < 0) return (T)0;
    if (n == 0) return (T)1;
    T q = x;
    PTC_POLY_LOOP(x * q - (T)(k - 1) * p)
}
template <class T> __device__ T ptc_poly_laguerre_l(T x, long long n) {
    if (n < 0) return (T)0;
    if (n == 0 || x == (T)0) return (T)1;
    const T omx = (T)1 - x;
    T q = omx;
    PTC_POLY_LOOP((((T)(2 * (k - 1)) + omx) * q - (T)(k - 1) * p) / (T)k)
}
template <class T> __device__ T ptc_poly_legendre_p(T x, long long n) {
    if (n < 0) return (T)0;
    if (ptc_sp_abs(x) == (T)1) return (x > (T)0 || n % 2 == 0) ? (T)1 : (T)-1;
    if (n == 0) return (T)1;
    T q = x;
    PTC_POLY_LOOP(((T)(2 * (k - 1) + 1) * x * q - (T)(k - 1) * p) / (T)k)
}
"""

ZETA_PRELUDE = r"""
/* Hurwitz zeta(x, q) = sum_k (k + q)^-x: Cephes' Euler-Maclaurin summation
 * (as PyTorch's and SciPy's kernels), in double for both float dtypes; nan at
 * q = +inf after the x == 1 test (PyTorch's value; no SciPy asymptotic branch
 * for q > 1e8, so zeta(inf, 1e9) is nan as PyTorch's, where SciPy has 0) */
__device__ double ptc_zeta_d(double x, double q) {
    const double A[12] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
                          7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
                          -4.5979787224074726105e15, 1.8152105401943546773e17,
                          -7.1661652561756670113e18};
    const double MACHEP = 1.11022302462515654042e-16;
    const double inf = __longlong_as_double(0x7ff0000000000000LL);
    const double nan = __longlong_as_double(0x7ff8000000000000LL);
    if (x == 1.0) return inf;
    if (x < 1.0) return nan;
    if (q == inf) return nan;
    if (q <= 0.0) {
        if (q == floor(q)) return inf;
        if (x != floor(x)) return nan;
    }
    double s = pow(q, -x), a = q, b = 0.0;
    int i = 0;
    while (i < 9 || a <= 9.0) {
        i += 1;
        a += 1.0;
        b = pow(a, -x);
        s += b;
        if (fabs(b / s) < MACHEP) return s;
    }
    const double w = a;
    s += b * w / (x - 1.0);
    s -= 0.5 * b;
    a = 1.0;
    double k = 0.0;
    for (i = 0; i < 12; i++) {
        a *= x + k;
        b /= w;
        double t = a * b / A[i];
        s = s + t;
        t = fabs(t / s);
        if (t < MACHEP) return s;
        k += 1.0;
        a *= x + k;
        b /= w;
        k += 1.0;
    }
    return s;
}
"""

NDTRI_PRELUDE = r"""
/* ndtri in double: Cephes' rational approximations (as PyTorch's and SciPy's) */
__device__ double ptc_polevl_d(double x, const double* c, int n) {
    double a = c[0];
    for (int i = 1; i <= n; ++i) a = a * x + c[i];
    return a;
}
__device__ double ptc_p1evl_d(double x, const double* c, int n) {
    double a = x + c[0];
    for (int i = 1; i < n; ++i) a = a * x + c[i];
    return a;
}
__device__ double ptc_ndtri_d(double y0) {
    const double P0[5] = {-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
                          1.39312609387279679503E1, -1.23916583867381258016E0};
    const double Q0[8] = {1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
                          -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
                          1.59056225126211695515E1, -1.18331621121330003142E0};
    const double P1[9] = {4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
                          4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
                          -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4};
    const double Q1[8] = {1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
                          1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
                          -3.80806407691578277194E-2, -9.33259480895457427372E-4};
    const double P2[9] = {3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
                          1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
                          3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9};
    const double Q2[8] = {6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
                          2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
                          2.89247864745380683936E-6, 6.79019408009981274425E-9};
    const double inf = __longlong_as_double(0x7ff0000000000000LL);
    const double nan = __longlong_as_double(0x7ff8000000000000LL);
    const double expm2 = 0.13533528323661269189;
    if (y0 != y0) return y0;
    if (y0 <= 0.0) return y0 == 0.0 ? -inf : nan;
    if (y0 >= 1.0) return y0 == 1.0 ? inf : nan;
    int code = 1;
    double y = y0;
    if (y > 1.0 - expm2) { y = 1.0 - y; code = 0; }
    if (y > expm2) {
        y = y - 0.5;
        const double y2 = y * y;
        const double x = y + y * (y2 * ptc_polevl_d(y2, P0, 4) / ptc_p1evl_d(y2, Q0, 8));
        return x * 2.50662827463100050242E0;
    }
    const double x = sqrt(-2.0 * log(y));
    const double x0 = x - log(x) / x;
    const double z = 1.0 / x;
    const double x1 = x < 8.0 ? z * ptc_polevl_d(z, P1, 8) / ptc_p1evl_d(z, Q1, 8)
                              : z * ptc_polevl_d(z, P2, 8) / ptc_p1evl_d(z, Q2, 8);
    const double r = x0 - x1;
    return code != 0 ? -r : r;
}
"""

CEPHES_PRELUDE = r"""
/* The Cephes functions of torch.special in double (the algorithms and
 * coefficients of Cephes' i0.c, i1.c, k0.c, k1.c, j0.c, j1.c and airy.c, as
 * SciPy's and PyTorch's kernels); erfcx and log_ndtr as noted below. */
__constant__ double PTC_J0_PP[7] = {
    +7.96936729297347051624e-04, +8.28352392107440799803e-02, +1.23953371646414299388e+00, +5.44725003058768775090e+00,
    +8.74716500199817011941e+00, +5.30324038235394892183e+00, +9.99999999999999997821e-01};
__constant__ double PTC_J0_PQ[7] = {
    +9.24408810558863637013e-04, +8.56288474354474431428e-02, +1.25352743901058953537e+00, +5.47097740330417105182e+00,
    +8.76190883237069594232e+00, +5.30605288235394617618e+00, +1.00000000000000000218e+00};
__constant__ double PTC_J0_QP[8] = {
    -1.13663838898469149931e-02, -1.28252718670509318512e+00, -1.95539544257735972385e+01, -9.32060152123768231369e+01,
    -1.77681167980488050595e+02, -1.47077505154951170175e+02, -5.14105326766599330220e+01, -6.05014350600728481186e+00};
__constant__ double PTC_J0_QQ[7] = {
    +6.43178256118178023184e+01, +8.56430025976980587198e+02, +3.88240183605401609683e+03, +7.24046774195652478189e+03,
    +5.93072701187316984827e+03, +2.06209331660327847417e+03, +2.42005740240291393179e+02};
__constant__ double PTC_J0_RP[4] = {
    -4.79443220978201773821e+09, +1.95617491946556577543e+12, -2.49248344360967716204e+14, +9.70862251047306323952e+15};
__constant__ double PTC_J0_RQ[8] = {
    +4.99563147152651017219e+02, +1.73785401676374683123e+05, +4.84409658339962045305e+07, +1.11855537045356834862e+10,
    +2.11277520115489217587e+12, +3.10518229857422583814e+14, +3.18121955943204943306e+16, +1.71086294081043136091e+18};
__constant__ double PTC_Y0_YP[8] = {
    +1.55924367855235737965e+04, -1.46639295903971606143e+07, +5.43526477051876500413e+09, -9.82136065717911466409e+11,
    +8.75906394395366999549e+13, -3.46628303384729719441e+15, +4.42733268572569800351e+16, -1.84950800436986690637e+16};
__constant__ double PTC_Y0_YQ[7] = {
    +1.04128353664259848412e+03, +6.26107330137134956842e+05, +2.68919633393814121987e+08, +8.64002487103935000337e+10,
    +2.02979612750105546709e+13, +3.17157752842975028269e+15, +2.50596256172653059228e+17};
__constant__ double PTC_J1_PP[7] = {
    +7.62125616208173112003e-04, +7.31397056940917570436e-02, +1.12719608129684925192e+00, +5.11207951146807644818e+00,
    +8.42404590141772420927e+00, +5.21451598682361504063e+00, +1.00000000000000000254e+00};
__constant__ double PTC_J1_PQ[7] = {
    +5.71323128072548699714e-04, +6.88455908754495404082e-02, +1.10514232634061696926e+00, +5.07386386128601488557e+00,
    +8.39985554327604159757e+00, +5.20982848682361821619e+00, +9.99999999999999997461e-01};
__constant__ double PTC_J1_QP[8] = {
    +5.10862594750176621635e-02, +4.98213872951233449420e+00, +7.58238284132545283818e+01, +3.66779609360150777800e+02,
    +7.10856304998926107277e+02, +5.97489612400613639965e+02, +2.11688757100572135698e+02, +2.52070205858023719784e+01};
__constant__ double PTC_J1_QQ[7] = {
    +7.42373277035675149943e+01, +1.05644886038262816351e+03, +4.98641058337653607651e+03, +9.56231892404756170795e+03,
    +7.99704160447350683650e+03, +2.82619278517639096600e+03, +3.36093607810698293419e+02};
__constant__ double PTC_J1_RP[4] = {
    -8.99971225705559398224e+08, +4.52228297998194034323e+11, -7.27494245221818276015e+13, +3.68295732863852883286e+15};
__constant__ double PTC_J1_RQ[8] = {
    +6.20836478118054335476e+02, +2.56987256757748830383e+05, +8.35146791431949253037e+07, +2.21511595479792499675e+10,
    +4.74914122079991414898e+12, +7.84369607876235854894e+14, +8.95222336184627338078e+16, +5.32278620332680085395e+18};
__constant__ double PTC_Y1_YP[6] = {
    +1.26320474790178026440e+09, -6.47355876379160291031e+11, +1.14509511541823727583e+14, -8.12770255501325109621e+15,
    +2.02439475713594898196e+17, -7.78877196265950026825e+17};
__constant__ double PTC_Y1_YQ[8] = {
    +5.94301592346128195359e+02, +2.35564092943068577943e+05, +7.34811944459721705660e+07, +1.87601316108706159478e+10,
    +3.88231277496238566008e+12, +6.20557727146953693363e+14, +6.87141087355300489866e+16, +3.97270608116560655612e+18};
__constant__ double PTC_I0_A[30] = {
    -4.41534164647933937950e-18, +3.33079451882223809783e-17, -2.43127984654795469359e-16, +1.71539128555513303061e-15,
    -1.16853328779934516808e-14, +7.67618549860493561688e-14, -4.85644678311192946090e-13, +2.95505266312963983461e-12,
    -1.72682629144155570723e-11, +9.67580903537323691224e-11, -5.18979560163526290666e-10, +2.65982372468238665035e-09,
    -1.30002500998624804212e-08, +6.04699502254191894932e-08, -2.67079385394061173391e-07, +1.11738753912010371815e-06,
    -4.41673835845875056359e-06, +1.64484480707288970893e-05, -5.75419501008210370398e-05, +1.88502885095841655729e-04,
    -5.76375574538582365885e-04, +1.63947561694133579842e-03, -4.32430999505057594430e-03, +1.05464603945949983183e-02,
    -2.37374148058994688156e-02, +4.93052842396707084878e-02, -9.49010970480476444210e-02, +1.71620901522208775349e-01,
    -3.04682672343198398683e-01, +6.76795274409476084995e-01};
__constant__ double PTC_I0_B[25] = {
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, +4.46562142029675999901e-17, +3.46122286769746109310e-17,
    -2.82762398051658348494e-16, -3.42548561967721913462e-16, +1.77256013305652638360e-15, +3.81168066935262242075e-15,
    -9.55484669882830764870e-15, -4.15056934728722208663e-14, +1.54008621752140982691e-14, +3.85277838274214270114e-13,
    +7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11, -3.14991652796324136454e-11,
    +1.18891471078464383424e-11, +4.94060238822496958910e-10, +3.39623202570838634515e-09, +2.26666899049817806459e-08,
    +2.04891858946906374183e-07, +2.89137052083475648297e-06, +6.88975834691682398426e-05, +3.36911647825569408990e-03,
    +8.04490411014108831608e-01};
__constant__ double PTC_I1_A[29] = {
    +2.77791411276104639959e-18, -2.11142121435816608115e-17, +1.55363195773620046921e-16, -1.10559694773538630805e-15,
    +7.60068429473540693410e-15, -5.04218550472791168711e-14, +3.22379336594557470981e-13, -1.98397439776494371520e-12,
    +1.17361862988909016308e-11, -6.66348972350202774223e-11, +3.62559028155211703701e-10, -1.88724975172282928790e-09,
    +9.38153738649577178388e-09, -4.44505912879632808065e-08, +2.00329475355213526229e-07, -8.56872026469545474066e-07,
    +3.47025130813767847674e-06, -1.32731636560394358279e-05, +4.78156510755005422638e-05, -1.61760815825896745588e-04,
    +5.12285956168575772895e-04, -1.51357245063125314899e-03, +4.15642294431288815669e-03, -1.05640848946261981558e-02,
    +2.47264490306265168283e-02, -5.29459812080949914269e-02, +1.02643658689847095384e-01, -1.76416518357834055153e-01,
    +2.52587186443633654823e-01};
__constant__ double PTC_I1_B[25] = {
    +7.51729631084210481353e-18, +4.41434832307170791151e-18, -4.65030536848935832153e-17, -3.20952592199342395980e-17,
    +2.96262899764595013876e-16, +3.30820231092092828324e-16, -1.88035477551078244854e-15, -3.81440307243700780478e-15,
    +1.04202769841288027642e-14, +4.27244001671195135429e-14, -2.10154184277266431302e-14, -4.08355111109219731823e-13,
    -7.19855177624590851209e-13, +2.03562854414708950722e-12, +1.41258074366137813316e-11, +3.25260358301548823856e-11,
    -1.89749581235054123450e-11, -5.58974346219658380687e-10, -3.83538038596423702205e-09, -2.63146884688951950684e-08,
    -2.51223623787020892529e-07, -3.88256480887769039346e-06, -1.10588938762623716291e-04, -9.76109749136146840777e-03,
    +7.78576235018280120474e-01};
__constant__ double PTC_K0_A[10] = {
    +1.37446543561352307156e-16, +4.25981614279661018399e-14, +1.03496952576338420167e-11, +1.90451637722020886025e-09,
    +2.53479107902614945675e-07, +2.28621210311945178607e-05, +1.26461541144692592338e-03, +3.59799365153615016266e-02,
    +3.44289899924628486886e-01, -5.35327393233902768720e-01};
__constant__ double PTC_K0_B[25] = {
    +5.30043377268626276149e-18, -1.64758043015242134646e-17, +5.21039150503902756861e-17, -1.67823109680541210385e-16,
    +5.51205597852431940784e-16, -1.84859337734377901440e-15, +6.34007647740507060557e-15, -2.22751332699166985548e-14,
    +8.03289077536357521100e-14, -2.98009692317273043925e-13, +1.14034058820847496303e-12, -4.51459788337394416547e-12,
    +1.85594911495471785253e-11, -7.95748924447710747776e-11, +3.57739728140030116597e-10, -1.69753450938905987466e-09,
    +8.57403401741422608519e-09, -4.66048989768794782956e-08, +2.76681363944501510342e-07, -1.83175552271911948767e-06,
    +1.39498137188764993662e-05, -1.28495495816278026384e-04, +1.56988388573005337491e-03, -3.14481013119645005427e-02,
    +2.44030308206595545468e+00};
__constant__ double PTC_K1_A[11] = {
    -7.02386347938628759343e-18, -2.42744985051936593393e-15, -6.66690169419932900609e-13, -1.41148839263352776110e-10,
    -2.21338763073472585583e-08, -2.43340614156596823496e-06, -1.73028895751305206302e-04, -6.97572385963986435018e-03,
    -1.22611180822657148235e-01, -3.53155960776544875667e-01, +1.52530022733894777053e+00};
__constant__ double PTC_K1_B[25] = {
    -5.75674448366501715755e-18, +1.79405087314755922667e-17, -5.68946255844285935196e-17, +1.83809354436663880070e-16,
    -6.05704724837331885336e-16, +2.03870316562433424052e-15, -7.01983709041831346144e-15, +2.47715442448130437068e-14,
    -8.97670518232499435011e-14, +3.34841966607842919884e-13, -1.28917396095102890680e-12, +5.13963967348173025100e-12,
    -2.12996783842756842877e-11, +9.21831518760500529508e-11, -4.19035475934189648750e-10, +2.01504975519703286596e-09,
    -1.03457624656780970260e-08, +5.74108412545004946722e-08, -3.50196060308781257119e-07, +2.40648494783721712015e-06,
    -1.93619797416608296024e-05, +1.95215518471351631108e-04, -2.85781685962277938680e-03, +1.03923736576817238437e-01,
    +2.72062619048444266945e+00};
__constant__ double PTC_AI_AN[8] = {
    +3.46538101525629032477e-01, +1.20075952739645805542e+01, +7.62796053615234516538e+01, +1.68089224934630576269e+02,
    +1.59756391350164413639e+02, +7.05360906840444183113e+01, +1.40264691163389668864e+01, +9.99999999999999995305e-01};
__constant__ double PTC_AI_AD[8] = {
    +5.67594532638770212846e-01, +1.47562562584847203173e+01, +8.45138970141474626562e+01, +1.77318088145400459522e+02,
    +1.64234692871529701831e+02, +7.14778400825575695274e+01, +1.40959135607834029598e+01, +1.00000000000000000470e+00};
__constant__ double PTC_AI_AFN[9] = {
    -1.31696323418331795333e-01, -6.26456544431912369773e-01, -6.93158036036933542233e-01, -2.79779981545119124951e-01,
    -4.91900132609500318020e-02, -4.06265923594885404393e-03, -1.59276496239262096340e-04, -2.77649108155232920844e-06,
    -1.67787698489114633780e-08};
__constant__ double PTC_AI_AFD[9] = {
    +1.33560420706553243746e+01, +3.26825032795224613948e+01, +2.67367040941499554804e+01, +9.18707402907259625840e+00,
    +1.47529146771666414581e+00, +1.15687173795188044134e-01, +4.40291641615211203805e-03, +7.54720348287414296618e-05,
    +4.51850092970580378464e-07};
__constant__ double PTC_AI_AGN[11] = {
    +1.97339932091685679179e-02, +3.91103029615688277255e-01, +1.06579897599595591108e+00, +9.39169229816650230044e-01,
    +3.51465656105547619242e-01, +6.33888919628925490927e-02, +5.85804113048388458567e-03, +2.82851600836737019778e-04,
    +6.98793669997260967291e-06, +8.11789239554389293311e-08, +3.41551784765923618484e-10};
__constant__ double PTC_AI_AGD[10] = {
    +9.30892908077441974853e+00, +1.98352928718312140417e+01, +1.55646628932864612953e+01, +5.47686069422975497931e+00,
    +9.54293611618961883998e-01, +8.64580826352392193095e-02, +4.12656523824222607191e-03, +1.01259085116509135510e-04,
    +1.17166733214413521882e-06, +4.91834570062930015649e-09};
/* Cephes evaluation helpers (double) */
__device__ __forceinline__ double ptc_chbevl_d(double x, const double* c, int n) {
    double b0 = c[0], b1 = 0.0, b2 = 0.0;
    for (int i = 1; i < n; ++i) { b2 = b1; b1 = b0; b0 = x * b1 - b2 + c[i]; }
    return 0.5 * (b0 - b2);
}
#define PTC_INF_D __longlong_as_double(0x7ff0000000000000LL)
#define PTC_NAN_D __longlong_as_double(0x7ff8000000000000LL)

/* exp(-|x|) I0(x), I0(x) (nan at +-inf, as PyTorch), exp(-|x|) I1(x), I1(x) */
__device__ double ptc_i0e_d(double x) {
    const double z = fabs(x);
    if (z <= 8.0) return ptc_chbevl_d(0.5 * z - 2.0, PTC_I0_A, 30);
    return ptc_chbevl_d(32.0 / z - 2.0, PTC_I0_B, 25) / sqrt(z);
}
__device__ double ptc_i0_d(double x) {
    if (isinf(x)) return PTC_NAN_D;
    return exp(fabs(x)) * ptc_i0e_d(x);
}
__device__ double ptc_i1e_d(double x) {
    const double z = fabs(x);
    double r = z <= 8.0 ? ptc_chbevl_d(0.5 * z - 2.0, PTC_I1_A, 29) * z
                        : ptc_chbevl_d(32.0 / z - 2.0, PTC_I1_B, 25) / sqrt(z);
    return x < 0.0 ? -r : r;
}
__device__ double ptc_i1_d(double x) {
    if (isinf(x)) return PTC_NAN_D;
    const double z = fabs(x);
    double r = z <= 8.0 ? ptc_chbevl_d(0.5 * z - 2.0, PTC_I1_A, 29) * z * exp(z)
                        : exp(z) * ptc_chbevl_d(32.0 / z - 2.0, PTC_I1_B, 25) / sqrt(z);
    return x < 0.0 ? -r : r;
}

/* K0, K1 and exp(x) K0, exp(x) K1: inf at 0, nan below */
__device__ double ptc_k0_d(double x, bool scaled) {
    if (x == 0.0) return PTC_INF_D;
    if (x < 0.0) return PTC_NAN_D;
    if (x <= 2.0) {
        const double r = ptc_chbevl_d(x * x - 2.0, PTC_K0_A, 10) - log(0.5 * x) * ptc_i0_d(x);
        return scaled ? r * exp(x) : r;
    }
    const double r = ptc_chbevl_d(8.0 / x - 2.0, PTC_K0_B, 25) / sqrt(x);
    return scaled ? r : exp(-x) * r;
}
__device__ double ptc_k1_d(double x, bool scaled) {
    if (x == 0.0) return PTC_INF_D;
    if (x < 0.0) return PTC_NAN_D;
    if (x <= 2.0) {
        const double r = log(0.5 * x) * ptc_i1_d(x) + ptc_chbevl_d(x * x - 2.0, PTC_K1_A, 11) / x;
        return scaled ? r * exp(x) : r;
    }
    const double r = ptc_chbevl_d(8.0 / x - 2.0, PTC_K1_B, 25) / sqrt(x);
    return scaled ? r : exp(-x) * r;
}

/* Bessel functions of the first and second kind, orders 0 and 1 (Cephes
 * j0.c/j1.c: rational approximations up to 5, the Hankel asymptotic form
 * above; nan at +-inf as PyTorch) */
__device__ double ptc_bessel_big_d(double x, bool order1, bool second) {
    const double w = 5.0 / x;
    const double z = w * w;
    const double* PP = order1 ? PTC_J1_PP : PTC_J0_PP;
    const double* PQ = order1 ? PTC_J1_PQ : PTC_J0_PQ;
    const double* QP = order1 ? PTC_J1_QP : PTC_J0_QP;
    const double* QQ = order1 ? PTC_J1_QQ : PTC_J0_QQ;
    const double p = ptc_polevl_d(z, PP, 6) / ptc_polevl_d(z, PQ, 6);
    const double q = ptc_polevl_d(z, QP, 7) / ptc_p1evl_d(z, QQ, 7);
    const double xn = x - (order1 ? 2.35619449019234492885 : 0.78539816339744830962);
    const double r = second ? p * sin(xn) + w * q * cos(xn) : p * cos(xn) - w * q * sin(xn);
    return r * 7.9788456080286535587989E-1 / sqrt(x);
}
__device__ double ptc_j0_d(double x) {
    if (x < 0.0) x = -x;
    if (x <= 5.0) {
        const double z = x * x;
        if (x < 1.0e-5) return 1.0 - z / 4.0;
        const double p = (z - 5.78318596294678452118E0) * (z - 3.04712623436620863991E1);
        return p * ptc_polevl_d(z, PTC_J0_RP, 3) / ptc_p1evl_d(z, PTC_J0_RQ, 8);
    }
    return ptc_bessel_big_d(x, false, false);
}
__device__ double ptc_j1_d(double x) {
    if (x < 0.0) return -ptc_j1_d(-x);
    if (x <= 5.0) {
        const double z = x * x;
        const double w = ptc_polevl_d(z, PTC_J1_RP, 3) / ptc_p1evl_d(z, PTC_J1_RQ, 8);
        return w * x * (z - 1.46819706421238932572E1) * (z - 4.92184563216946036703E1);
    }
    return ptc_bessel_big_d(x, true, false);
}
__device__ double ptc_y0_d(double x) {
    if (x <= 5.0) {
        if (x == 0.0) return -PTC_INF_D;
        if (x < 0.0) return PTC_NAN_D;
        const double z = x * x;
        const double w = ptc_polevl_d(z, PTC_Y0_YP, 7) / ptc_p1evl_d(z, PTC_Y0_YQ, 7);
        return w + 0.636619772367581343075535 * log(x) * ptc_j0_d(x);
    }
    return ptc_bessel_big_d(x, false, true);
}
__device__ double ptc_y1_d(double x) {
    if (x <= 5.0) {
        if (x == 0.0) return -PTC_INF_D;
        if (x < 0.0) return PTC_NAN_D;
        const double z = x * x;
        const double w = x * (ptc_polevl_d(z, PTC_Y1_YP, 5) / ptc_p1evl_d(z, PTC_Y1_YQ, 8));
        return w + 0.636619772367581343075535 * (ptc_j1_d(x) * log(x) - 1.0 / x);
    }
    return ptc_bessel_big_d(x, true, true);
}

/* Airy Ai (Cephes airy.c): the asymptotic forms beyond +-2.09, the power
 * series between; nan at +-inf, 0 far right (as PyTorch) */
__device__ double ptc_airy_ai_d(double x) {
    const double sqpii = 5.64189583547756286948E-1;
    if (isinf(x)) return PTC_NAN_D;
    if (x > 103.892) return 0.0;
    if (x < -2.09) {
        double t = sqrt(-x);
        const double zeta = -2.0 * x * t / 3.0;
        t = sqrt(t);
        const double z = 1.0 / zeta;
        const double zz = z * z;
        const double uf = 1.0 + zz * ptc_polevl_d(zz, PTC_AI_AFN, 8) / ptc_p1evl_d(zz, PTC_AI_AFD, 9);
        const double ug = z * ptc_polevl_d(zz, PTC_AI_AGN, 10) / ptc_p1evl_d(zz, PTC_AI_AGD, 10);
        const double theta = zeta + 0.25 * 3.14159265358979323846;
        return sqpii / t * (sin(theta) * uf - cos(theta) * ug);
    }
    if (x >= 2.09) {
        double t = sqrt(x);
        const double zeta = 2.0 * x * t / 3.0;
        const double g = exp(zeta);
        t = sqrt(t);
        const double z = 1.0 / zeta;
        return sqpii * (ptc_polevl_d(z, PTC_AI_AN, 7) / ptc_polevl_d(z, PTC_AI_AD, 7)) / (2.0 * t * g);
    }
    double f = 1.0, g = x, t = 1.0, uf = 1.0, ug = x, k = 1.0;
    const double z = x * x * x;
    while (t > 1.11022302462515654042E-16) {
        uf *= z; k += 1.0; uf /= k;
        ug *= z; k += 1.0; ug /= k;
        uf /= k; f += uf;
        k += 1.0; ug /= k; g += ug;
        t = fabs(uf / f);
    }
    return 0.355028053887817239260 * f - 0.258819403792806798405 * g;
}

/* erfcx(x) = exp(x^2) erfc(x): exp(x^2) with x^2 split exactly (x^2 = h + l)
 * times erfc below 25, the asymptotic series 1/(x sqrt(pi)) sum (-1)^k
 * (2k-1)!! / (2x^2)^k above (its terms fall by 1/1250 or faster there) */
__device__ double ptc_erfcx_d(double x) {
    if (x != x) return x;
    if (x < 25.0) {
        if (x < -26.7) return PTC_INF_D;
        const double h = x * x;
        const double l = fma(x, x, -h);
        return exp(h) * (1.0 + l) * erfc(x);
    }
    if (x > 1e8) return 0.56418958354775628695 / x;
    const double u = 1.0 / (2.0 * x * x);
    double s = 1.0, t = 1.0;
    for (int k = 1; k < 12; ++k) { t *= -(2.0 * k - 1.0) * u; s += t; }
    return 0.56418958354775628695 / x * s;
}
/* log(ndtr(x)) (PyTorch's formula): through erfcx below -1 */
__device__ double ptc_log_ndtr_d(double x) {
    const double t = x * 0.70710678118654752440;
    if (x < -1.0) return log(ptc_erfcx_d(-t) / 2.0) - t * t;
    return log1p(-erfc(t) / 2.0);
}
"""

# op -> (device function, shifted: evaluated at 2x - 1)
POLYNOMIALS = {
    "chebyshev_polynomial_t": ("ptc_poly_cheb_t", False),
    "chebyshev_polynomial_u": ("ptc_poly_cheb_u", False),
    "chebyshev_polynomial_v": ("ptc_poly_cheb_v", False),
    "chebyshev_polynomial_w": ("ptc_poly_cheb_w", False),
    "shifted_chebyshev_polynomial_t": ("ptc_poly_cheb_t", True),
    "shifted_chebyshev_polynomial_u": ("ptc_poly_cheb_u", True),
    "shifted_chebyshev_polynomial_v": ("ptc_poly_cheb_v", True),
    "shifted_chebyshev_polynomial_w": ("ptc_poly_cheb_w", True),
    "hermite_polynomial_h": ("ptc_poly_hermite_h", False),
    "hermite_polynomial_he": ("ptc_poly_hermite_he", False),
    "laguerre_polynomial_l": ("ptc_poly_laguerre_l", False),
    "legendre_polynomial_p": ("ptc_poly_legendre_p", False),
}

# unary float32 functions: op -> the device function of ptc_special.h (translated copy)
UNARY_F32 = {
    "erfcx": "ptc_erfcx_s",
    "log_ndtr": "ptc_log_ndtr_s",
    "ndtri": "ptc_ndtri_s",
    "i0e": "ptc_i0e_s",
    "i1": "ptc_i1_s",
    "i1e": "ptc_i1e_s",
    "modified_bessel_i0": "ptc_i0_s",
    "modified_bessel_i1": "ptc_i1_s",
}
# nan at +-inf (PyTorch's kernels), where the float32 functions give the limit
_INF_NAN = ("modified_bessel_i0", "modified_bessel_i1")

# unary float64 functions: op -> the expression of double ``x`` (Cephes ports,
# CEPHES_PRELUDE); the ones missing from UNARY_F32 run them for float32 too
# (computed in double, rounded once)
UNARY_F64 = {
    "ndtri": "ptc_ndtri_d(x)",
    "erfcx": "ptc_erfcx_d(x)",
    "log_ndtr": "ptc_log_ndtr_d(x)",
    "i0e": "ptc_i0e_d(x)",
    "i1": "ptc_i1_d(x)",
    "i1e": "ptc_i1e_d(x)",
    "modified_bessel_i0": "ptc_i0_d(x)",
    "modified_bessel_i1": "ptc_i1_d(x)",
    "modified_bessel_k0": "ptc_k0_d(x, false)",
    "modified_bessel_k1": "ptc_k1_d(x, false)",
    "scaled_modified_bessel_k0": "ptc_k0_d(x, true)",
    "scaled_modified_bessel_k1": "ptc_k1_d(x, true)",
    "bessel_j0": "ptc_j0_d(x)",
    "bessel_j1": "ptc_j1_d(x)",
    "bessel_y0": "ptc_y0_d(x)",
    "bessel_y1": "ptc_y1_d(x)",
    "airy_ai": "ptc_airy_ai_d(x)",
}


def _unary_exprs():
    """op -> {dtype tag: the kernel's expression of ``x``}."""
    out = {}
    for op, fn in UNARY_F32.items():
        e = f"{fn}(x)"
        if op in _INF_NAN:
            e = f"(isinf(x) ? __int_as_float(0x7fc00000) : {e})"
        out.setdefault(op, {})["f32"] = e
    for op, e in UNARY_F64.items():
        out.setdefault(op, {})["f64"] = e
        if op not in UNARY_F32:
            out[op]["f32"] = "(float)" + e.replace("(x", "((double)x", 1)
    return out


UNARY = _unary_exprs()
# binary functions, float32 and float64: op -> the expression of ``x``, ``y``
BINARY = {op: f"{fn}<T>({'x + x - (T)1' if shifted else 'x'}, ptc_poly_deg<T>(y))"
          for op, (fn, shifted) in POLYNOMIALS.items()}
BINARY["zeta"] = "(T)ptc_zeta_d((double)x, (double)y)"
# the ops with a kernel here (each op's element loop on CUDA)
KERNEL_OPS = tuple(UNARY) + tuple(BINARY)


def has_kernel(op, tag):
    """Whether op ``op`` has a kernel for dtype tag ``tag``."""
    if op in BINARY:
        return tag in ("f32", "f64")
    return tag in UNARY.get(op, ())


def _function(text, head):
    i = text.index(head)
    j = text.index("\n}\n", i)
    return text[i:j + 3]


def _f32_device_source():
    """The float32 scalar special functions of ptcore/_ops/ptc_special.h (and
    ptc_expf of ptc_math.h), installed with the package, as CUDA device
    functions: the same operations as the CPU kernels, translated when the
    kernel library is built (no second copy to keep in sync)."""
    ops = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_ops")
    with open(os.path.join(ops, "ptc_math.h")) as f:
        math_h = f.read()
    with open(os.path.join(ops, "ptc_special.h")) as f:
        special = f.read()
    start = special.index("static inline __attribute__((always_inline)) uint32_t ptc_f2u")
    stop = special.index("/* contiguous loops")
    body = special[start:stop]
    body = re.sub(r"static inline __attribute__\(\(always_inline\)\) uint32_t ptc_f2u\(float x\)\n"
                  r"\{[^}]*\}",
                  "__device__ __forceinline__ unsigned int ptc_f2u(float x) { return __float_as_uint(x); }",
                  body)
    body = re.sub(r"static inline __attribute__\(\(always_inline\)\) float ptc_u2f\(uint32_t u\)\n"
                  r"\{[^}]*\}",
                  "__device__ __forceinline__ float ptc_u2f(unsigned int u) { return __uint_as_float(u); }",
                  body)
    src = (_function(math_h, "static inline float ptc_expf(float x)")
           + "#define PTC_SF __device__ __forceinline__ float\n" + body + "#undef PTC_SF\n")
    src = src.replace("static inline float", "__device__ __forceinline__ float")
    src = src.replace("static inline __attribute__((always_inline)) float", "__device__ __forceinline__ float")
    src = src.replace("__builtin_sqrtf", "sqrtf")
    src = re.sub(r"\buint32_t\b", "unsigned int", src)
    src = re.sub(r"\bint32_t\b", "int", src)
    src = re.sub(r"\bINFINITY\b", "__int_as_float(0x7f800000)", src)
    src = re.sub(r"\bNAN\b", "__int_as_float(0x7fc00000)", src)
    if "static " in src or "memcpy" in src:
        raise RuntimeError("ptc_special.h changed shape: update ptcore/cuda/_kernels_special._f32_device_source")
    return src


def _family_prelude():
    return POLY_PRELUDE + ZETA_PRELUDE + NDTRI_PRELUDE + CEPHES_PRELUDE + _f32_device_source()


FAMILY_PRELUDE = {"special": _family_prelude()}
_FLOAT_TAGS = (("float32", "f32"), ("float64", "f64"))


def generate():
    """``(name, family, source)`` of every kernel of this module."""
    for op, expr in BINARY.items():
        for dt, tag in _FLOAT_TAGS:
            for v in ("c", "s"):
                kn = kernel_name("special", op, tag, v)
                yield kn, "special", _ew_kernel(kn, dt, [dt, dt], ["x", "y"], dt, expr, v)
    for op, exprs in UNARY.items():
        for dt, tag in _FLOAT_TAGS:
            if tag in exprs:
                for v in ("c", "s"):
                    kn = kernel_name("special", op, tag, v)
                    yield kn, "special", _ew_kernel(kn, dt, [dt], ["x"], dt, exprs[tag], v)
