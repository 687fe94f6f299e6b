"""The ``scalar`` kernel family (ptcore/cuda/kernels/library.py ``SCALAR``): add,
sub, mul, div, rsub and rdiv of a CUDA tensor and a Python number, the number
passed in the kernel's params instead of a filled 0-d device tensor.

Compared with PyTorch on the CPU, the number given there as a 0-d tensor of
the result dtype (as the fill kernel converts it); for float16/bfloat16 with
the Python number itself (PyTorch's mul/div read it unrounded, add/sub
rounded to the dtype)."""
import pytest

import ptcore

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int16", "int32", "int64", "bool"]

OPS = {
    "x+v": lambda x, v: x + v,
    "v+x": lambda x, v: v + x,
    "x-v": lambda x, v: x - v,
    "v-x": lambda x, v: v - x,
    "x*v": lambda x, v: x * v,
    "v*x": lambda x, v: v * x,
    "x/v": lambda x, v: x / v,
    "v/x": lambda x, v: v / x,
}


VALUES = [2, -3, True, 2.7, -0.1]


def _ref_number(v, dtype):
    """The number as the fill kernel stores it in ``dtype``."""
    if dtype.is_floating_point:
        t = torch.tensor(float(v), dtype=torch.float64)
        return t if dtype == torch.float64 else t.to(torch.float32).to(dtype)
    return torch.tensor(int(v), dtype=torch.int64).to(dtype)


def _input(dtype):
    base = torch.tensor([-3.5, -1.0, -0.25, 0.0, 0.5, 1.0, 2.75, 7.0, 100.0, -100.0], dtype=torch.float64)
    return base.to(getattr(torch, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_scalar_operand_matches_torch(dtype, launches):
    tx = _input(dtype)
    x = ptcore.tensor(tx.numpy() if dtype != "bfloat16" else tx.float().numpy()).to(
        getattr(ptcore, dtype)).to("cuda")
    for name, f in OPS.items():
        if dtype == "bool" and "-" in name:
            continue            # PyTorch refuses bool subtraction
        for v in VALUES:
            if v is True and "-" in name:
                continue        # nor subtraction of a Python bool
            del launches[:]
            got = f(x, v)
            rdt = getattr(torch, str(got.dtype).rsplit(".", 1)[-1])
            assert rdt == f(tx, v).dtype, (name, v)
            if rdt in (torch.float16, torch.bfloat16) or name == "v/x":
                # torch's own scalar path (``v / x`` is ``x.reciprocal() * v``: two roundings)
                want = f(tx.to(rdt), v)
            else:
                want = f(tx.to(rdt), _ref_number(v, rdt))
            g = got.cpu()
            g = torch.from_numpy(g.float().numpy() if dtype == "bfloat16" or rdt == torch.bfloat16
                                 else g.numpy()).to(rdt)
            assert torch.equal(g, want), (name, v, g, want)
            assert any(n.startswith("ptc_scalar_") for n in launches), (name, v)
            assert not any(n.startswith("ptc_fill_") for n in launches), (name, v)


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_scalar_strided_and_inplace(dtype, launches):
    tx = torch.arange(24, dtype=torch.float64).reshape(4, 6).to(getattr(torch, dtype)) - 5
    x = ptcore.tensor(tx.numpy()).to("cuda")
    xt = x.t()                                   # the strided variant
    del launches[:]
    got = (xt * 3).cpu()
    assert torch.equal(torch.from_numpy(got.numpy()), tx.t() * 3)
    assert "ptc_scalar_mul_" + ("f32" if dtype == "float32" else "i64") + "_s" in launches
    got = (7 - xt).cpu()
    assert torch.equal(torch.from_numpy(got.numpy()), 7 - tx.t())
    # in place: self is written directly
    y, ty = x.clone(), tx.clone()
    y.mul_(2).sub_(3).add_(1)
    ty.mul_(2).sub_(3).add_(1)
    assert torch.equal(torch.from_numpy(y.cpu().numpy()), ty)
    # alpha != 1 and complex numbers keep the tensor-operand path
    assert torch.equal(torch.from_numpy(x.add(2, alpha=3).cpu().numpy()), tx.add(2, alpha=3))


def test_scalar_kernel_source_rounds_like_fill():
    from ptcore.cuda.kernels import library as K
    src = K.kernel("ptc_scalar_mul_f16_c")[1]
    assert "const T y = (T)(p.d0);" in src
    assert "const T y = ptc_h2f(ptc_f2h((float)(p.d0)));" in K.kernel("ptc_scalar_add_f16_c")[1]
    src = K.kernel("ptc_scalar_rsub_i8_s")[1]
    assert "(T)(y - x)" in src and "ptc_strided<2> ix" in src
    assert "ptc_scalar_div_i32_c" not in K.all_kernels()
    assert "ptc_scalar_sub_b_c" not in K.all_kernels()
