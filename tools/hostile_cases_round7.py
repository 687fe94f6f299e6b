"""Hostile and odd inputs of hardening round 7, for tools/hostile_probe.py: the fast paths
added in stop 80 -- float32 add/sub/mul in vector lanes (lengths around the vector
widths, alpha, aliasing and overlapping outputs, expanded and strided operands, mixed
dtypes, signed zeros; part A); the float-lane transcendental functions on special
values, tails, strides, out= and in place (part B); the one-call 1-d pooling paths
(part C); lerp's fast path (part D); randperm's bucket scratch (part E); smooth L1 and
Huber losses (part F); reductions over dim lists (part G).  Run::

    PYTHONPATH=$PWD python tools/hostile_probe.py tools/hostile_cases_round7.py
"""
CASES = []


def add(c, code):
    CASES.append((c, code))


# --- part A: float32 add/sub/mul ---
AB = """
def ab(n):
    a = m.arange(n, dtype=m.float32) * 0.5 - 3
    b = m.arange(n, dtype=m.float32).flip(0) * 0.25 + 1
    return a, b
"""
for n in (0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 63, 65, 255):
    add(f"ew_lengths_{n}", AB + f"a, b = ab({n})\n"
        "[a + b, a - b, a * b, m.add(a, b, alpha=2.5), m.sub(a, b, alpha=-1.5), a + 2, 3 - a, a * -0.5]")
for n in (100003, 1 << 20):
    add(f"ew_big_{n}", AB + f"a, b = ab({n})\n"
        "[(a + b).sum().item(), (a - b)[-5:], (a * b)[:5], (a * b)[-3:], m.add(a, b, alpha=3)[-7:]]")
for op in ("add_", "sub_", "mul_"):
    add(f"ew_overlap_{op}", f"a = m.arange(10.)\na[1:].{op}(a[:-1])\na")
    add(f"ew_self_{op}", f"a = m.arange(10.)\na.{op}(a)\na")
    add(f"ew_overlap_rev_{op}", f"a = m.arange(10.)\na[:-1].{op}(a[1:])\na")
for op in ("add", "sub", "mul"):
    add(f"ew_out_overlap_{op}", f"a = m.arange(10.)\nm.{op}(a[:-1], 1.0, out=a[1:])\na")
    add(f"ew_out_is_input_{op}", f"a = m.arange(10.)\nb = m.ones(10)\nm.{op}(a, b, out=a)\na")
    add(f"ew_out_expanded_{op}", f"m.{op}(m.ones(3), m.ones(3), out=m.zeros(1).expand(3))")
    add(f"ew_out_wrong_dtype_{op}", f"m.{op}(m.ones(3), m.ones(3), out=m.zeros(3, dtype=m.int64))")
    add(f"ew_out_f64_{op}", f"o = m.zeros(3, dtype=m.float64)\nm.{op}(m.ones(3) / 3, m.ones(3) / 7, out=o)\no")
    add(f"ew_out_resize_{op}", f"o = m.zeros(5)\nm.{op}(m.ones(3), 2.0, out=o)\no")
    add(f"ew_out_noncontig_{op}", f"o = m.zeros(6)\nm.{op}(m.arange(3.), 2.0, out=o[::2])\no")
    add(f"ew_strided_{op}", f"a = m.arange(40.).view(8, 5)\nm.{op}(a[::2, 1:], a.t()[1:, ::2].t())")
    add(f"ew_expanded_{op}", f"m.{op}(m.ones(1).expand(9), m.arange(9.))")
    add(f"ew_bcast_{op}", f"m.{op}(m.arange(6.).view(2, 3), m.arange(3.))")
    add(f"ew_0d_{op}", f"m.{op}(m.arange(17.), m.tensor(2.5, dtype=m.float64))")
    add(f"ew_f64_{op}", f"m.{op}(m.arange(17.), m.arange(17., dtype=m.float64) / 3)")
    add(f"ew_int_{op}", f"m.{op}(m.arange(17.), m.arange(17))")
    add(f"ew_bool_{op}", f"m.{op}(m.arange(17.), m.arange(17) % 2 == 0)")
    add(f"ew_half_{op}", f"m.{op}(m.arange(17.), m.arange(17.).half())")
    add(f"ew_specials_{op}",
        f"x = m.tensor([0.0, -0.0, float('inf'), -float('inf'), float('nan'), 3.4e38, -3.4e38, 1e-45, -1e-45] * 2)\n"
        f"y = m.tensor([-0.0, -0.0, float('inf'), float('inf'), 1.0, 3.4e38, 3.4e38, 1e-45, 1e-45] * 2)\n"
        f"r = m.{op}(x, y)\n[r, m.signbit(r)]")
    add(f"ew_scalar_overflow_{op}", f"m.{op}(m.ones(9), 1e40)")
    add(f"ew_requires_grad_out_{op}", f"m.{op}(m.ones(3, requires_grad=True), 1.0, out=m.zeros(3))")
for alpha in ("True", "2.5", "1j", "None", "'x'"):
    add(f"ew_alpha_{alpha.strip(chr(39))}_float", f"m.add(m.ones(9), m.ones(9), alpha={alpha})")
    add(f"ew_alpha_{alpha.strip(chr(39))}_int", f"m.add(m.ones(9, dtype=m.int32), m.ones(9, dtype=m.int32), alpha={alpha})")
    add(f"ew_alpha_{alpha.strip(chr(39))}_sub_bool", f"m.sub(m.ones(9, dtype=m.bool), m.ones(9, dtype=m.bool), alpha={alpha})")
add("ew_sub_bool", "m.ones(3, dtype=m.bool) - m.ones(3, dtype=m.bool)")
add("ew_rsub_alpha", "m.rsub(m.arange(9.), 2.0, alpha=3)")
add("ew_inplace_promote", "a = m.ones(9)\na.add_(m.ones(9, dtype=m.float64) / 3)\na")
add("ew_inplace_int_by_float", "a = m.ones(9, dtype=m.int64)\na.add_(m.ones(9) / 3)\na")
add("ew_inplace_bcast_self", "a = m.ones(3)\na.add_(m.ones(2, 3))")
add("ew_inplace_expanded_self", "a = m.ones(1).expand(9)\na.add_(1)")
add("ew_add_lists", "m.ones(9) + [1.0] * 9")
add("ew_add_numpy", "import numpy\nm.ones(9) + numpy.ones(9, dtype=numpy.float32)")
add("ew_mul_none", "m.ones(9) * None")

# --- part B: float-lane transcendentals ---
SPEC = ("[0.0, -0.0, float('inf'), -float('inf'), float('nan'), 1e-45, -1e-45, 1e-40, 1.17e-38, "
        "3.4e38, -3.4e38, 88.72, 88.73, 89.0, -87.3, -103.9, -104.0, -150.0, 1e-8, -1e-8, 0.5, "
        "-0.5, 1.0, -1.0, 1.0000001, 0.9999999, -0.9999999, 0.49999997, 0.50000006, 9.0, -9.0, "
        "126.5, 127.9, 128.1, -149.5, 1e5, -1e5, 1.5707964, 3.1415927, 1e10, 20.0, -20.0, 0.125]")
FNS = ("exp", "exp2", "expm1", "tanh", "sigmoid", "erf", "atan", "asin", "acos", "tan", "sin",
       "cos", "log", "log2", "log10", "log1p", "atanh", "special.expit", "nn.functional.silu",
       "nn.functional.gelu", "special.erfc", "sinh", "cosh", "nn.functional.softplus",
       "nn.functional.mish", "nn.functional.elu", "nn.functional.logsigmoid")
for f in FNS:
    key = f.split(".")[-1]
    add(f"fm_specials_{key}", f"x = m.tensor({SPEC})\nr = m.{f}(x)\n[r, m.signbit(r)]")
    add(f"fm_tails_{key}", f"x = m.linspace(-3, 3, 37)\n[m.{f}(x[:k]) for k in (1, 7, 8, 9, 15, 16, 17, 33)]")
    add(f"fm_strided_{key}", f"x = m.linspace(-2, 2, 64).view(8, 8)\n[m.{f}(x[::2, 1::3]), m.{f}(x.t()), m.{f}(m.linspace(-1, 1, 5).expand(3, 5))]")
    add(f"fm_f64_{key}", f"m.{f}(m.tensor({SPEC}, dtype=m.float64))")
    add(f"fm_half_{key}", f"m.{f}(m.linspace(-4, 4, 19).half()).float()")
    add(f"fm_bf16_{key}", f"m.{f}(m.linspace(-4, 4, 19).bfloat16()).float()")
    add(f"fm_int_{key}", f"m.{f}(m.arange(-3, 4))")
    add(f"fm_empty_{key}", f"m.{f}(m.ones(0, 3))")
for f in ("exp", "exp2", "expm1", "tanh", "sigmoid", "erf", "atan", "asin", "acos", "tan", "log", "log1p"):
    add(f"fm_out_{f}", f"o = m.zeros(9)\nm.{f}(m.linspace(-0.9, 0.9, 9), out=o)\no")
    add(f"fm_out_alias_{f}", f"x = m.linspace(-0.9, 0.9, 9)\nm.{f}(x, out=x)\nx")
    add(f"fm_out_overlap_{f}", f"x = m.linspace(-0.9, 0.9, 10)\nm.{f}(x[:-1], out=x[1:])\nx")
    add(f"fm_inplace_{f}", f"x = m.linspace(-0.9, 0.9, 21)\nx.{f}_()\nx")
    add(f"fm_inplace_strided_{f}", f"x = m.linspace(-0.9, 0.9, 21)\nx[::3].{f}_()\nx")
    add(f"fm_out_int_{f}", f"m.{f}(m.linspace(-0.9, 0.9, 9), out=m.zeros(9, dtype=m.int64))")
    add(f"fm_grad_{f}", f"x = m.linspace(-0.9, 0.9, 9).requires_grad_()\nm.{f}(x).sum().backward()\nx.grad")

# --- part C: 1-d pooling ---
for L in (1, 2, 5, 7, 12):
    for k, s, p, d in ((1, None, 0, 1), (2, None, 0, 1), (3, 1, 1, 1), (3, 2, 1, 2), (2, 3, 1, 1),
                       (4, 1, 2, 1), (5, 2, 2, 1), (2, 1, 0, 3)):
        for ceil in (False, True):
            args = f"{k}, {s}, {p}, {d}, ceil_mode={ceil}"
            X = f"x = m.arange({2 * 3 * L}.).view(2, 3, {L}).sin()\n"
            add(f"pool_max_L{L}_k{k}s{s}p{p}d{d}_c{int(ceil)}",
                X + f"r = m.nn.functional.max_pool1d(x, {args}, return_indices=True)\nr")
            if d == 1:
                add(f"pool_avg_L{L}_k{k}s{s}p{p}_c{int(ceil)}",
                    X + f"[m.nn.functional.avg_pool1d(x, {k}, {s}, {p}, ceil_mode={ceil}, count_include_pad=cip) for cip in (True, False)]")
for c, code in [("max_nan", "x = m.tensor([[[1., float('nan'), 3., -float('inf'), 2.]]])\nm.nn.functional.max_pool1d(x, 2, 1, return_indices=True)"),
                ("max_all_ninf", "m.nn.functional.max_pool1d(m.full((1, 1, 4), -float('inf')), 2, return_indices=True)"),
                ("max_2d_input", "m.nn.functional.max_pool1d(m.arange(10.).view(2, 5), 2)"),
                ("max_1d_input", "m.nn.functional.max_pool1d(m.arange(10.), 2)"),
                ("max_4d_input", "m.nn.functional.max_pool1d(m.ones(1, 1, 1, 4), 2)"),
                ("max_pad_gt_half", "m.nn.functional.max_pool1d(m.ones(1, 1, 8), 2, padding=2)"),
                ("max_k0", "m.nn.functional.max_pool1d(m.ones(1, 1, 8), 0)"),
                ("max_s0", "m.nn.functional.max_pool1d(m.ones(1, 1, 8), 2, 0)"),
                ("max_d0", "m.nn.functional.max_pool1d(m.ones(1, 1, 8), 2, dilation=0)"),
                ("max_neg_pad", "m.nn.functional.max_pool1d(m.ones(1, 1, 8), 2, padding=-1)"),
                ("max_k_gt_L", "m.nn.functional.max_pool1d(m.ones(1, 1, 3), 5)"),
                ("max_L0", "m.nn.functional.max_pool1d(m.ones(1, 1, 0), 1)"),
                ("max_C0", "m.nn.functional.max_pool1d(m.ones(1, 0, 4), 2)"),
                ("max_N0", "m.nn.functional.max_pool1d(m.ones(0, 2, 4), 2)"),
                ("max_int", "m.nn.functional.max_pool1d(m.arange(8).view(1, 1, 8), 2)"),
                ("max_f64", "m.nn.functional.max_pool1d(m.arange(8., dtype=m.float64).view(1, 1, 8), 3, 2, 1)"),
                ("max_half", "m.nn.functional.max_pool1d(m.arange(8.).half().view(1, 1, 8), 3, 2, 1).float()"),
                ("max_noncontig", "x = m.arange(48.).view(2, 8, 3).transpose(1, 2)\nm.nn.functional.max_pool1d(x, 3, 2, 1, return_indices=True)"),
                ("max_expanded", "m.nn.functional.max_pool1d(m.arange(6.).expand(2, 3, 6), 2, return_indices=True)"),
                ("max_grad", "x = m.tensor([[[1., 3., 3., 2., 5., 5.]]], requires_grad=True)\nm.nn.functional.max_pool1d(x, 2, 1).sum().backward()\nx.grad"),
                ("max_kernel_tuple", "m.nn.functional.max_pool1d(m.ones(1, 1, 8), (2,), (2,), (0,), (1,))"),
                ("max_kernel_list2", "m.nn.functional.max_pool1d(m.ones(1, 1, 8), [2, 2])"),
                ("max_huge_stride", "m.nn.functional.max_pool1d(m.ones(1, 1, 8), 2, 2**40)"),
                ("max_huge_kernel", "m.nn.functional.max_pool1d(m.ones(1, 1, 8), 2**40)"),
                ("max_huge_dil", "m.nn.functional.max_pool1d(m.ones(1, 1, 8), 2, dilation=2**40)"),
                ("avg_pad_gt_half", "m.nn.functional.avg_pool1d(m.ones(1, 1, 8), 2, padding=2)"),
                ("avg_k0", "m.nn.functional.avg_pool1d(m.ones(1, 1, 8), 0)"),
                ("avg_int", "m.nn.functional.avg_pool1d(m.arange(8).view(1, 1, 8), 2)"),
                ("avg_f64", "m.nn.functional.avg_pool1d(m.arange(8., dtype=m.float64).view(1, 1, 8), 3, 2, 1)"),
                ("avg_half", "m.nn.functional.avg_pool1d(m.arange(8.).half().view(1, 1, 8), 3, 2, 1).float()"),
                ("avg_noncontig", "x = m.arange(48.).view(2, 8, 3).transpose(1, 2)\nm.nn.functional.avg_pool1d(x, 3, 2, 1)"),
                ("avg_grad", "x = m.arange(6.).view(1, 1, 6).requires_grad_()\nm.nn.functional.avg_pool1d(x, 3, 2, 1, ceil_mode=True).sum().backward()\nx.grad"),
                ("avg_huge_stride", "m.nn.functional.avg_pool1d(m.ones(1, 1, 8), 2, 2**40)"),
                ("avg_huge_kernel", "m.nn.functional.avg_pool1d(m.ones(1, 1, 8), 2**40)"),
                ("avg_nan", "m.nn.functional.avg_pool1d(m.tensor([[[1., float('nan'), 3., 4.]]]), 2)"),
                ("avg_L0", "m.nn.functional.avg_pool1d(m.ones(1, 1, 0), 1)"),
                ("module_max", "m.nn.MaxPool1d(3, 2, 1, ceil_mode=True)(m.arange(14.).view(2, 7).sin())"),
                ("module_avg", "m.nn.AvgPool1d(3, 2, 1, ceil_mode=True, count_include_pad=False)(m.arange(14.).view(2, 7).sin())")]:
    add(f"pool_{c}", code)

# --- part D: lerp ---
for c, code in [("scalar_w", "m.lerp(m.arange(17.), m.ones(17), 0.25)"),
                ("tensor_w", "m.lerp(m.arange(17.), m.ones(17), m.linspace(0, 1, 17))"),
                ("w_0d", "m.lerp(m.arange(17.), m.ones(17), m.tensor(0.75))"),
                ("w_bcast", "m.lerp(m.arange(6.).view(2, 3), m.ones(3), m.tensor([[0.5], [2.0]]))"),
                ("w_gt_half", "m.lerp(m.arange(17.), -m.arange(17.), 0.75)"),
                ("w_specials", "m.lerp(m.zeros(5), m.ones(5), m.tensor([float('nan'), float('inf'), -float('inf'), 0.5, -0.0]))"),
                ("end_inf", "m.lerp(m.zeros(3), m.tensor([float('inf'), -float('inf'), float('nan')]), 0.5)"),
                ("w_f64", "m.lerp(m.arange(5.), m.ones(5), m.full((5,), 0.5, dtype=m.float64))"),
                ("end_f64", "m.lerp(m.arange(5.), m.ones(5, dtype=m.float64), 0.5)"),
                ("int_inputs", "m.lerp(m.arange(5), m.ones(5, dtype=m.int64), 0.5)"),
                ("w_int_tensor", "m.lerp(m.arange(5.), m.ones(5), m.ones(5, dtype=m.int64))"),
                ("w_complex", "m.lerp(m.arange(5.), m.ones(5), 0.5j)"),
                ("complex", "m.lerp(m.arange(5.) * 1j, m.ones(5, dtype=m.complex64), 0.25)"),
                ("half", "m.lerp(m.arange(5.).half(), m.ones(5).half(), 0.3).float()"),
                ("bf16", "m.lerp(m.arange(5.).bfloat16(), m.ones(5).bfloat16(), 0.3).float()"),
                ("out", "o = m.zeros(5)\nm.lerp(m.arange(5.), m.ones(5), 0.5, out=o)\no"),
                ("out_alias", "x = m.arange(5.)\nm.lerp(x, m.ones(5), 0.5, out=x)\nx"),
                ("out_overlap", "x = m.arange(6.)\nm.lerp(x[:-1], m.ones(5), 0.5, out=x[1:])\nx"),
                ("inplace", "x = m.arange(17.)\nx.lerp_(m.ones(17), 0.25)\nx"),
                ("inplace_bcast_self", "x = m.arange(3.)\nx.lerp_(m.ones(2, 3), 0.5)"),
                ("inplace_strided", "x = m.arange(18.)\nx[::2].lerp_(m.ones(9), 0.5)\nx"),
                ("noncontig", "a = m.arange(40.).view(8, 5)\nm.lerp(a[::2], a[1::2], 0.3)"),
                ("expanded", "m.lerp(m.ones(1).expand(9), m.arange(9.), 0.5)"),
                ("grad", "a = m.arange(5.).requires_grad_()\nb = m.ones(5, requires_grad=True)\nw = m.full((5,), 0.3, requires_grad=True)\nm.lerp(a, b, w).sum().backward()\n[a.grad, b.grad, w.grad]"),
                ("shape_mismatch", "m.lerp(m.ones(3), m.ones(4), 0.5)"),
                ("w_none", "m.lerp(m.ones(3), m.ones(3), None)"),
                ("big", "x = m.lerp(m.zeros(100003), m.arange(100003.), 0.5)\n[x[:3], x[-3:], x.sum().item()]")]:
    add(f"lerp_{c}", code)

# --- part E: randperm ---
for c, code in [("zero", "m.randperm(0)"), ("one", "m.randperm(1)"),
                ("neg", "m.randperm(-1)"), ("float_n", "m.randperm(3.0)"), ("bool_n", "m.randperm(True)"),
                ("is_perm_small", "[m.randperm(n).sort().values.equal(m.arange(n)) for n in (2, 3, 15, 16, 17, 255, 256, 257)]"),
                ("is_perm_big", "[m.randperm(n).sort().values.equal(m.arange(n)) for n in (65535, 65536, 65537, 300001)]"),
                ("dtype_int16", "m.randperm(100, dtype=m.int16).sort().values.tolist() == list(range(100))"),
                ("dtype_int16_too_big", "m.randperm(40000, dtype=m.int16)"),
                ("dtype_uint8_256", "m.randperm(256, dtype=m.uint8).sort().values.tolist() == list(range(256))"),
                ("dtype_uint8_257", "m.randperm(257, dtype=m.uint8)"),
                ("dtype_half", "m.randperm(100, dtype=m.float16).sort().values.tolist() == [float(i) for i in range(100)]"),
                ("dtype_half_too_big", "m.randperm(5000, dtype=m.float16)"),
                ("dtype_bf16_too_big", "m.randperm(500, dtype=m.bfloat16)"),
                ("dtype_f32", "m.randperm(1000, dtype=m.float32).sort().values.equal(m.arange(1000.))"),
                ("dtype_bool", "m.randperm(2, dtype=m.bool)"),
                ("dtype_complex", "m.randperm(3, dtype=m.complex64)"),
                ("out", "o = m.empty(5, dtype=m.int64)\nm.randperm(5, out=o)\no.sort().values"),
                ("out_resize", "o = m.empty(2, dtype=m.int64)\nm.randperm(5, out=o)\no.shape"),
                ("out_noncontig", "o = m.zeros(10, dtype=m.int64)\nm.randperm(5, out=o[::2])\n[o[::2].sort().values, o[1::2]]"),
                ("out_dtype_mismatch", "m.randperm(5, out=m.empty(5, dtype=m.int32), dtype=m.int64)"),
                ("generator_repro", "g = m.Generator().manual_seed(3)\na = m.randperm(1000, generator=g)\ng.manual_seed(3)\na.equal(m.randperm(1000, generator=g))"),
                ("generator_bad", "m.randperm(5, generator=3)"),
                ("requires_grad", "m.randperm(5, dtype=m.float32, requires_grad=True).requires_grad"),
                ("requires_grad_int", "m.randperm(5, requires_grad=True)")]:
    add(f"randperm_{c}", code)

# --- part F: smooth L1 / Huber ---
L1 = "x = m.linspace(-3, 3, 13)\ny = m.linspace(2, -2, 13)\n"
for red in ("'mean'", "'sum'", "'none'"):
    for beta in ("0.0", "0.5", "1.0", "1e-30", "1e30", "-1.0", "float('nan')", "float('inf')"):
        add(f"sl1_{red.strip(chr(39))}_b{beta}", L1 + f"m.nn.functional.smooth_l1_loss(x, y, reduction={red}, beta={beta})")
        add(f"huber_{red.strip(chr(39))}_d{beta}", L1 + f"m.nn.functional.huber_loss(x, y, reduction={red}, delta={beta})")
for c, code in [("sl1_grad", L1 + "x.requires_grad_()\nm.nn.functional.smooth_l1_loss(x, y, beta=0.7).backward()\nx.grad"),
                ("huber_grad", L1 + "x.requires_grad_()\nm.nn.functional.huber_loss(x, y, delta=0.7).backward()\nx.grad"),
                ("sl1_grad_beta0", L1 + "x.requires_grad_()\nm.nn.functional.smooth_l1_loss(x, y, beta=0.0).backward()\nx.grad"),
                ("sl1_grad_target", L1 + "y.requires_grad_()\nm.nn.functional.smooth_l1_loss(x, y, beta=0.7, reduction='sum').backward()\ny.grad"),
                ("sl1_bcast", "m.nn.functional.smooth_l1_loss(m.ones(3, 1), m.zeros(3))"),
                ("huber_bcast", "m.nn.functional.huber_loss(m.ones(3, 1), m.zeros(3))"),
                ("sl1_int", "m.nn.functional.smooth_l1_loss(m.arange(3), m.arange(3))"),
                ("sl1_f64", "m.nn.functional.smooth_l1_loss(m.arange(3.) / 7, m.zeros(3, dtype=m.float64))"),
                ("sl1_half", "m.nn.functional.smooth_l1_loss(m.arange(9.).half() / 7, m.zeros(9).half()).float()"),
                ("sl1_empty_mean", "m.nn.functional.smooth_l1_loss(m.ones(0), m.ones(0))"),
                ("huber_empty_mean", "m.nn.functional.huber_loss(m.ones(0), m.ones(0))"),
                ("sl1_nan", "m.nn.functional.smooth_l1_loss(m.tensor([float('nan'), 1.]), m.zeros(2), reduction='none')"),
                ("huber_inf", "m.nn.functional.huber_loss(m.tensor([float('inf'), 1.]), m.zeros(2), reduction='none')"),
                ("sl1_bad_reduction", "m.nn.functional.smooth_l1_loss(m.ones(2), m.ones(2), reduction='avg')"),
                ("sl1_noncontig", "a = m.arange(40.).view(8, 5) / 9\nm.nn.functional.smooth_l1_loss(a[::2], a.t()[:, :4].t()[::2][:, :5] if False else a[1::2], reduction='none')"),
                ("sl1_big", "x = m.linspace(-5, 5, 100003)\n[m.nn.functional.smooth_l1_loss(x, x.flip(0)).item(), m.nn.functional.huber_loss(x, -x, delta=2.0).item()]"),
                ("sl1_module", "m.nn.SmoothL1Loss(beta=0.3)(m.linspace(-1, 1, 7), m.zeros(7))"),
                ("huber_module", "m.nn.HuberLoss(delta=0.3, reduction='sum')(m.linspace(-1, 1, 7), m.zeros(7))")]:
    add(c, code)

# --- part G: reductions over dim lists ---
X = "x = m.arange(60.).view(3, 4, 5).sin()\n"
for f in ("sum", "mean", "amax", "amin", "nansum", "nanmean", "std", "var", "logsumexp", "norm", "count_nonzero"):
    for dims in ("[]", "()", "[0, 2]", "(2, 0)", "[-1, 0]", "[0, 0]", "[0, -3]", "[3]", "[-4]", "[0, 1, 2]", "[1.0]", "[None]", "[True]"):
        if f == "logsumexp" and dims in ("[]", "()"):
            continue
        call = f"m.{f}(x, {dims})" if f != "norm" else f"m.norm(x, dim={dims})"
        add(f"red_{f}_{dims}", X + call)
    add(f"red_{f}_keepdim", X + (f"m.{f}(x, [0, 2], keepdim=True)" if f != "norm" else "m.norm(x, dim=[0, 2], keepdim=True)")
        if f != "count_nonzero" else X + "m.count_nonzero(x, [0, 2])")
    add(f"red_{f}_0d", (f"m.{f}(m.tensor(2.5), [0])" if f != "norm" else "m.norm(m.tensor(2.5), dim=[0])"))
    add(f"red_{f}_0d_neg", (f"m.{f}(m.tensor(2.5), [-1])" if f != "norm" else "m.norm(m.tensor(2.5), dim=[-1])"))
    add(f"red_{f}_empty_dim", (f"m.{f}(m.ones(2, 0, 3), [1])" if f != "norm" else "m.norm(m.ones(2, 0, 3), dim=[1])"))
    add(f"red_{f}_noncontig", X + (f"m.{f}(x.transpose(0, 2)[::2], [0, 1])" if f != "norm" else "m.norm(x.transpose(0, 2)[::2], dim=[0, 1])"))
    add(f"red_{f}_expanded", (f"m.{f}(m.arange(5.).expand(3, 4, 5), [0, 1])" if f != "norm" else "m.norm(m.arange(5.).expand(3, 4, 5), dim=[0, 1])"))
for c, code in [("sum_dtype", X + "m.sum(x, [0, 2], dtype=m.float64)"),
                ("sum_int_dims", "m.sum(m.arange(60).view(3, 4, 5), [0, 2])"),
                ("sum_bool_dims", "m.sum(m.arange(60).view(3, 4, 5) % 3 == 0, [0, 2])"),
                ("mean_int", "m.mean(m.arange(60).view(3, 4, 5), [0, 2])"),
                ("mean_half", "m.mean(m.arange(60.).half().view(3, 4, 5), [0, 2]).float()"),
                ("sum_out", X + "o = m.zeros(4)\nm.sum(x, [0, 2], out=o)\no"),
                ("sum_out_wrong_shape", X + "o = m.zeros(7)\nm.sum(x, [0, 2], out=o)\no"),
                ("mean_out_int", X + "m.mean(x, [0, 2], out=m.zeros(4, dtype=m.int64))"),
                ("sum_tensor_dim", X + "m.sum(x, m.tensor([0, 2]))"),
                ("sum_tensor_dim0d", X + "m.sum(x, m.tensor(1))"),
                ("sum_numpy_dims", X + "import numpy\nm.sum(x, numpy.array([0, 2]))"),
                ("sum_generator_dims", X + "m.sum(x, (d for d in (0, 2)))"),
                ("sum_huge_dim", X + "m.sum(x, [2**62])"),
                ("mean_grad", X + "x.requires_grad_()\nm.mean(x, [0, 2]).sum().backward()\nx.grad[0, :2]"),
                ("amax_grad_ties", "x = m.tensor([[1., 3., 3.], [3., 0., 3.]], requires_grad=True)\nm.amax(x, [0, 1]).backward()\nx.grad"),
                ("var_correction", X + "[m.var(x, [0, 2], correction=0), m.var(x, [0, 2], correction=7), m.std(x, [0, 2], unbiased=False)]"),
                ("var_too_few", "m.var(m.ones(1, 1, 3), [0, 1])"),
                ("sum_big", "x = m.linspace(-1, 1, 3 * 40000).view(3, 200, 200)\n[m.sum(x, [0, 2])[:3], m.mean(x, [1, 2]), m.amax(x, [0, 1])[-3:]]")]:
    add(f"red_{c}", code)
