"""CUDA kernels of ``ctc_loss`` (family ``nnloss``): the alpha (forward) and
beta (backward) recursions in log space, as PyTorch's LossCTC.cu: one block
per batch element (blocks loop over the batch), the threads over the
extended label positions ``s`` (0 .. 2 * max target length), the time loop
inside the kernel with a ``__syncthreads`` per step.  ``A`` is float or
double (float16/bfloat16 inputs are computed in float32 by the caller).

* ``ptc_nnloss_ctcalpha_<tag>(T, N, C, S2, const A* lp, const long long* tg,
  long long tg_stride, long long blank, const long long* in_lens,
  const long long* tgt_lens, A* la, A* nll)``: ``lp`` the contiguous
  (T, N, C) log-probabilities, ``tg`` the padded targets (row n at
  ``tg + n * tg_stride``); writes the contiguous (T, N, S2) ``la`` (-inf at
  positions past ``2 * tgt_len + 1`` and steps past ``in_len``) and the (N,)
  negative log-likelihoods ``nll`` (0 / inf for an empty input).
* ``ptc_nnloss_ctcbeta_<tag>(T, N, C, S2, lp, tg, tg_stride, blank, in_lens,
  tgt_lens, A* lb)``: the (T, N, S2) log beta, including the emission at
  step t (as the CPU loop's), -inf past the lengths.

* ``ptc_nnloss_ctcgrad_<tag>(T, N, C, S2, lp, tg, tg_stride, blank, in_lens,
  tgt_lens, const A* la, const A* lb, const A* nll, A* grad, long long
  zero_inf)``: d nll_n / d lp (PyTorch's formula) into the (T, N, C)
  ``grad``: ``exp(lp[c])`` minus the posteriors ``exp(la + lb + nll - lp[c])``
  of the positions s labelled c (each in [0, 1], summed directly, in
  ascending s); 0 past ``in_len``; NaN (0 with ``zero_inf``) for an infinite
  loss.

The log-sum-exp of three terms adds in the CPU loop's order (max shift, then
``((0 + e0) + e1) + e2``).
"""
from ptcore.cuda.kernels import source as K

__all__ = ["generate", "DTYPES", "KERNEL_PRELUDE"]

DTYPES = ("float32", "float64")

_HELPERS = r"""
template <typename A> __device__ __forceinline__ A ptc_ctc_lse3(A a, A b, A c, A ninf) {
    A m = a < b ? b : a;
    m = m < c ? c : m;
    const A ms = m == ninf ? (A)0 : m;
    A s = (A)0;
    s += exp(a - ms);
    s += exp(b - ms);
    s += exp(c - ms);
    return ms + log(s);
}
"""


def _head(name, A, extra):
    return (f'extern "C" __global__ void {name}(long long T, long long N, long long C, long long S2, '
            f"const {A}* lp, const long long* tg, long long tg_stride, long long blank, "
            f"const long long* in_lens, const long long* tgt_lens, {extra}) {{\n"
            f"    typedef {A} A;\n"
            f"    const A ninf = -{'PTC_INFF' if A == 'float' else 'PTC_INF'};\n"
            f"    for (long long n = blockIdx.x; n < N; n += gridDim.x) {{\n"
            f"        const long long il = in_lens[n], tl = tgt_lens[n], L = 2 * tl + 1;\n"
            f"        const long long* tgn = tg + n * tg_stride;\n")


def _steps(out, loop, side, first, init, b, c):
    """The time loop over row ``out`` (T, N, S2): ``v = lp[t, lab] +
    lse3(nb[s], b, c)`` where ``nb`` is the neighbouring step's row
    (``side``: "-" the previous one, "+" the next one), ``lp[t, lab]`` alone
    (where ``init``) at the ``first`` step, -inf outside the lengths."""
    return (f"        for ({loop}) {{\n"
            f"            A* cur = {out} + (t * N + n) * S2;\n"
            f"            const A* nb = cur {side} N * S2;\n"
            "            const A* lpt = lp + (t * N + n) * C;\n"
            "            for (long long s = threadIdx.x; s < S2; s += blockDim.x) {\n"
            "                A v = ninf;\n"
            "                if (s < L && t < il) {\n"
            "                    const long long lab = (s & 1) ? tgn[s >> 1] : blank;\n"
            f"                    if ({first}) {{\n"
            f"                        if ({init}) v = lpt[lab];\n"
            "                    } else {\n"
            f"                        const A b = {b};\n"
            f"                        const A c = {c};\n"
            "                        v = lpt[lab] + ptc_ctc_lse3<A>(nb[s], b, c, ninf);\n"
            "                    }\n"
            "                }\n"
            "                cur[s] = v;\n"
            "            }\n"
            "            __syncthreads();\n"
            "        }\n")


_NLL = (
    "        if (threadIdx.x == 0) {\n"
    "            A r;\n"
    "            if (il == 0) {\n"
    "                r = tl == 0 ? (A)0 : -ninf;\n"
    "            } else {\n"
    "                const A* last = la + ((il - 1) * N + n) * S2;\n"
    "                r = tl == 0 ? -last[0] : -ptc_ctc_lse3<A>(last[2 * tl], last[2 * tl - 1], ninf, ninf);\n"
    "            }\n"
    "            nll[n] = r;\n"
    "        }\n"
    "        __syncthreads();\n")

# kind -> (outputs, _steps arguments after the row, code after the time loop)
_KINDS = {
    # alpha: s comes from s, s - 1, and s - 2 when s is a label other than the one before it
    "alpha": ("A* la, A* nll",
              ("long long t = 0; t < T; ++t", "-", "t == 0", "s < 2", "s >= 1 ? nb[s - 1] : ninf",
               "((s & 1) && s >= 2 && lab != tgn[(s >> 1) - 1]) ? nb[s - 2] : ninf"), _NLL),
    # beta: s goes on to s, s + 1, and s + 2 when s + 2 is a label other than s's; the
    # last step (t = in_len - 1) starts at the last label or the final blank
    "beta": ("A* lb",
             ("long long t = T - 1; t >= 0; --t", "+", "t == il - 1", "s >= 2 * tl - 1",
              "s + 1 < L ? nb[s + 1] : ninf",
              "((s & 1) && s + 2 < L && tgn[(s >> 1) + 1] != lab) ? nb[s + 2] : ninf"), ""),
}


def _recursion(kind, dt):
    A = "float" if dt == "float32" else "double"
    name = f"ptc_nnloss_ctc{kind}_{K.TAGS[dt]}"
    outs, steps, tail = _KINDS[kind]
    row = outs.split(",")[0].split("*")[1].strip()
    return name, (_head(name, A, outs.replace("A*", f"{A}*")) + _steps(row, *steps) + tail
                  + "    }\n}\n")


def _grad(dt):
    A = "float" if dt == "float32" else "double"
    name = f"ptc_nnloss_ctcgrad_{K.TAGS[dt]}"
    nan = "__int_as_float(0x7fc00000)" if A == "float" else "__longlong_as_double(0x7ff8000000000000LL)"
    return name, _head(name, A, f"const {A}* la, const {A}* lb, const {A}* nll, {A}* grad, "
                                "long long zero_inf") + (
        "        const A nl = nll[n];\n"
        "        const bool impossible = nl == -ninf;\n"
        "        for (long long t = 0; t < T; ++t) {\n"
        "            const A* lpt = lp + (t * N + n) * C;\n"
        "            const A* at = la + (t * N + n) * S2;\n"
        "            const A* bt = lb + (t * N + n) * S2;\n"
        "            A* g = grad + (t * N + n) * C;\n"
        "            for (long long c = threadIdx.x; c < C; c += blockDim.x)\n"
        f"                g[c] = t >= il ? (A)0 : (impossible ? (zero_inf ? (A)0 : {nan}) : exp(lpt[c]));\n"
        "            __syncthreads();\n"
        "            if (t < il && !impossible) {\n"
        "                /* one thread per label: the blank (j = -1), each other label at its first\n"
        "                   occurrence j; it subtracts the posteriors of the positions s holding it */\n"
        "                for (long long j = (long long)threadIdx.x - 1; j < tl; j += blockDim.x) {\n"
        "                    const long long c = j < 0 ? blank : tgn[j];\n"
        "                    bool first = j < 0 || c != blank;\n"
        "                    for (long long k = 0; first && k < j; ++k) first = tgn[k] != c;\n"
        "                    if (!first) continue;\n"
        "                    const A lc = lpt[c];\n"
        "                    A sum = (A)0;\n"
        "                    for (long long s = 0; s < L; ++s) {\n"
        "                        const long long lab = (s & 1) ? tgn[s >> 1] : blank;\n"
        "                        if (lab == c) sum += exp(at[s] + bt[s] + nl - lc);\n"
        "                    }\n"
        "                    g[c] -= sum;\n"
        "                }\n"
        "            }\n"
        "            __syncthreads();\n"
        "        }\n"
        "    }\n}\n")


def generate():
    """``(name, family, source)`` of every kernel of this module."""
    for dt in DTYPES:
        for kind in _KINDS:
            name, src = _recursion(kind, dt)
            yield name, "nnloss", src
        name, src = _grad(dt)
        yield name, "nnloss", src


#: kernel name -> the extra prelude of that kernel alone
KERNEL_PRELUDE = {name: _HELPERS for name, _, _ in generate()}
