/* The fused evaluator for one element type, included by ptc_fused_body.h
 * with PF_T (the type), PF_EVAL (the function name) and the math macros
 * defined.  No include guard: included once per (instruction set, type). */

/* d = (a OP1 b) OP2 c (see PF_PAIR0 in ptc_fused.h); s* say which operands
 * are scalars (values *v) */
#define PF_PAIR_IN(P2)                                                         \
    if (sa && sb) { for (i = 0; i < m; i++) { const PF_T x = av, y = bv; P2 } } \
    else if (sb) { for (i = 0; i < m; i++) { const PF_T x = a[i], y = bv; P2 } } \
    else if (sa) { for (i = 0; i < m; i++) { const PF_T x = av, y = b[i]; P2 } } \
    else { for (i = 0; i < m; i++) { const PF_T x = a[i], y = b[i]; P2 } }
#define PF_PAIR_1(E1)                                                          \
    switch (op2) {                                                            \
    case 0: if (sc) { PF_PAIR_IN(const PF_T r_ = (E1); d[i] = r_ + cv;) }      \
            else { PF_PAIR_IN(const PF_T r_ = (E1); d[i] = r_ + c[i];) } break; \
    case 1: if (sc) { PF_PAIR_IN(const PF_T r_ = (E1); d[i] = r_ - cv;) }      \
            else { PF_PAIR_IN(const PF_T r_ = (E1); d[i] = r_ - c[i];) } break; \
    case 2: if (sc) { PF_PAIR_IN(const PF_T r_ = (E1); d[i] = r_ * cv;) }      \
            else { PF_PAIR_IN(const PF_T r_ = (E1); d[i] = r_ * c[i];) } break; \
    case 3: if (sc) { PF_PAIR_IN(const PF_T r_ = (E1); d[i] = r_ / cv;) }      \
            else { PF_PAIR_IN(const PF_T r_ = (E1); d[i] = r_ / c[i];) } break; \
    default: PF_PAIR_IN(const PF_T r_ = (E1); d[i] = r_ * r_;) break;          \
    }
PF_TGT static void PF_N(PF_CAT(pf_pair_, PF_T))(int op1, int op2, PF_T *restrict d,
                                              const PF_T *restrict a, const PF_T *restrict b,
                                              const PF_T *restrict c, int sa, int sb, int sc,
                                              PF_T av, PF_T bv, PF_T cv, Py_ssize_t m)
{
    Py_ssize_t i;
    switch (op1) {
    case 0: PF_PAIR_1(x + y) break;
    case 1: PF_PAIR_1(x - y) break;
    case 2: PF_PAIR_1(x * y) break;
    default: PF_PAIR_1(x / y) break;
    }
}
#undef PF_PAIR_IN
#undef PF_PAIR_1

PF_TGT static void PF_EVAL(const int32_t *prog, int ninstr, PF_T **reg, const PF_T *sval,
                    const unsigned char *is_s, Py_ssize_t m)
{
    for (int k = 0; k < ninstr; k++) {
        const int32_t *ins = prog + 5 * k;
        PF_T *restrict d = reg[ins[1]];
        const PF_T *restrict a = reg[ins[2]];
        const PF_T *restrict b = reg[ins[3]];
        const PF_T *restrict c = reg[ins[4]];
        const int sa = is_s[ins[2]], sb = is_s[ins[3]];
        const PF_T av = sval[ins[2]], bv = sval[ins[3]];
        Py_ssize_t i;
#define PF_BIN(E)                                                              \
        if (sb && sa) { const PF_T x = av, y = bv; const PF_T r_ = (E);       \
                        for (i = 0; i < m; i++) d[i] = r_; }                  \
        else if (sb) { const PF_T y = bv;                                     \
                       for (i = 0; i < m; i++) { const PF_T x = a[i]; d[i] = (E); } } \
        else if (sa) { const PF_T x = av;                                     \
                       for (i = 0; i < m; i++) { const PF_T y = b[i]; d[i] = (E); } } \
        else { for (i = 0; i < m; i++) { const PF_T x = a[i], y = b[i]; d[i] = (E); } } \
        break;
#define PF_UN(E) for (i = 0; i < m; i++) { const PF_T x = a[i]; d[i] = (E); } break;
        switch (ins[0]) {
        case PF_ADD: PF_BIN(x + y)
        case PF_SUB: PF_BIN(x - y)
        case PF_MUL: PF_BIN(x * y)
        case PF_DIV: PF_BIN(x / y)
        case PF_MAX: PF_BIN((x >= y || x != x) ? x : y)
        case PF_MIN: PF_BIN((x <= y || x != x) ? x : y)
        case PF_POW: PF_BIN(PF_POW(x, y))
        case PF_EQ: PF_BIN(x == y ? (PF_T)1 : (PF_T)0)
        case PF_NE: PF_BIN(x != y ? (PF_T)1 : (PF_T)0)
        case PF_LT: PF_BIN(x < y ? (PF_T)1 : (PF_T)0)
        case PF_LE: PF_BIN(x <= y ? (PF_T)1 : (PF_T)0)
        case PF_GT: PF_BIN(x > y ? (PF_T)1 : (PF_T)0)
        case PF_GE: PF_BIN(x >= y ? (PF_T)1 : (PF_T)0)
        case PF_NEG: PF_UN(-x)
        case PF_RELU: PF_UN(x < 0 ? (PF_T)0 : x)
        case PF_SQRT_: PF_UN(PF_SQRT(x))
        case PF_RSQRT: PF_UN((PF_T)1 / PF_SQRT(x))
        case PF_ABS: PF_UN(PF_FABS(x))
        case PF_SIN_: PF_UN(PF_SIN(x))
        case PF_COS_: PF_UN(PF_COS(x))
        case PF_SQUARE: PF_UN(x * x)
        case PF_RECIP: PF_UN((PF_T)1 / x)
        case PF_ERF_: PF_UN(PF_ERF(x))
        case PF_LOG1P_: PF_UN(PF_LOG1P(x))
        case PF_EXPM1_: PF_UN(PF_EXPM1(x))
#ifdef PF_VEC_MAPS
        case PF_EXP_: PF_N(pf_map_exp)(d, a, m); break;
        case PF_LOG_: PF_N(pf_map_log)(d, a, m); break;
        case PF_TANH_: PF_N(pf_map_tanh)(d, a, m); break;
        case PF_SIGMOID: PF_N(pf_map_sigmoid)(d, a, m); break;
        case PF_GELU_: PF_N(pf_map_gelu)(d, a, m); break;
        case PF_GELU_TANH: PF_N(pf_map_gelu_tanh)(d, a, m); break;
        case PF_SILU: PF_N(pf_map_silu)(d, a, m); break;
#else
        case PF_EXP_: PF_UN(PF_EXP(x))
        case PF_LOG_: PF_UN(PF_LOG(x))
        case PF_TANH_: PF_UN(PF_TANH(x))
        case PF_SIGMOID: PF_UN(PF_SIGMOID(x))
        case PF_GELU_: PF_UN(PF_GELU(x))
        case PF_GELU_TANH:
            PF_UN((PF_T)0.5 * x * ((PF_T)1 + PF_TANH((PF_T)0.79788456080286535588 *
                                                     (x + (PF_T)0.044715 * x * x * x))))
        case PF_SILU: PF_UN(x * PF_SIGMOID(x))
#endif
        case PF_WHERE:
            for (i = 0; i < m; i++) d[i] = c[i] != 0 ? a[i] : b[i];
            break;
        default:
            if (ins[0] >= PF_PAIR0 && ins[0] < PF_PAIR0 + 20) {
                const int op1 = (ins[0] - PF_PAIR0) / 5, op2 = (ins[0] - PF_PAIR0) % 5;
                PF_N(PF_CAT(pf_pair_, PF_T))(op1, op2, d, a, b, c, sa, sb, is_s[ins[4]], av, bv, sval[ins[4]], m);
            }
            break;
        }
#undef PF_BIN
#undef PF_UN
    }
}
