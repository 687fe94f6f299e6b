"""jaxtyping with beartype, run by tests/as_torch/test_jaxtyping.py with the real torch and
under ``python -m ptcore.as_torch``: shape- and dtype-annotated functions, dataclasses and
isinstance checks on tensors, what passes and what each check rejects.  Each case writes what
it computed to ``<out>/<case>.json``.
"""
import dataclasses
import sys
import warnings

import numpy as np
import torch
from torch import Tensor

from case_results import main

warnings.filterwarnings("ignore")


def _t(shape, dtype=torch.float32, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return torch.from_numpy(a).to(dtype)


def _outcome(fn, *args):
    """The function's result, or the name of the exception it raised."""
    try:
        return {"ok": fn(*args)}
    except Exception as exc:        # noqa: BLE001 - the exception's type is the result
        return {"raised": type(exc).__name__}


def annotations_case():
    """@jaxtyped(typechecker=beartype) functions: named, fixed, variadic (*batch), broadcast (*#)
    and symbolic-expression dims, dtype families, consistency of a dim across arguments and
    with the return value, and a checked dataclass."""
    from beartype import beartype
    from jaxtyping import Bool, Float, Float32, Int, Integer, Num, Shaped, jaxtyped

    @jaxtyped(typechecker=beartype)
    def matvec(m: Float[Tensor, "b n"], v: Float[Tensor, " n"]) -> Float[Tensor, " b"]:
        return m @ v

    @jaxtyped(typechecker=beartype)
    def batched(x: Float32[Tensor, "*batch 3"],
                w: Float[Tensor, "*#batch 3"]) -> Float[Tensor, "*batch"]:
        return (x * w).sum(-1)

    @jaxtyped(typechecker=beartype)
    def concat(a: Shaped[Tensor, "n"], b: Shaped[Tensor, "m"]) -> Shaped[Tensor, "n+m"]:
        return torch.cat([a, b])

    @jaxtyped(typechecker=beartype)
    def wrong_return(a: Float[Tensor, "n"]) -> Float[Tensor, "n"]:
        return a[:-1]

    @jaxtyped(typechecker=beartype)
    def counts(x: Integer[Tensor, "n"], mask: Bool[Tensor, "n"]) -> Int[Tensor, ""]:
        return x[mask].sum()

    @jaxtyped(typechecker=beartype)
    def numeric(x: Num[Tensor, "..."]) -> Num[Tensor, "..."]:
        return x * 2

    @jaxtyped(typechecker=beartype)
    @dataclasses.dataclass
    class Batch:
        images: Float[Tensor, "b c h w"]
        labels: Int[Tensor, " b"]

    f32, f64 = _t((4, 3)), _t((4, 3), torch.float64)
    i64 = torch.arange(5)
    res = {
        "matvec": _outcome(matvec, f32, _t(3, seed=1)),
        "matvec_dim": _outcome(matvec, f32, _t(4, seed=1)),
        "matvec_dtype": _outcome(matvec, f32.long(), _t(3, seed=1)),
        "matvec_rank": _outcome(matvec, _t(3), _t(3, seed=1)),
        "batched": _outcome(batched, _t((2, 4, 3)), _t((1, 4, 3), seed=2)),
        "batched_float64": _outcome(batched, _t((2, 4, 3), torch.float64), _t((1, 4, 3))),
        "batched_broadcast_bad": _outcome(batched, _t((2, 4, 3)), _t((3, 4, 3))),
        "concat": _outcome(concat, i64, torch.arange(3)),
        "wrong_return": _outcome(wrong_return, _t(5)),
        "counts": _outcome(counts, i64, i64 % 2 == 0),
        "counts_uint8": _outcome(counts, i64.to(torch.uint8), i64 % 2 == 0),
        "counts_float_mask": _outcome(counts, i64, (i64 % 2).float()),
        "numeric": _outcome(numeric, f64),
        "numeric_bool": _outcome(numeric, i64 > 2),
        "dataclass": _outcome(lambda: Batch(_t((2, 3, 4, 4)), torch.tensor([1, 0])).labels),
        "dataclass_bad": _outcome(lambda: Batch(_t((2, 3, 4, 4)), torch.tensor([1, 0, 1]))),
    }
    return res


def isinstance_case():
    """isinstance against jaxtyping types of every dtype family, and beartype's is_bearable /
    die_if_unbearable on tensors and containers of them, parameters, views, meta and float8
    tensors, sizes, dtypes and devices."""
    from beartype.door import die_if_unbearable, is_bearable
    from jaxtyping import (BFloat16, Bool, Complex, Float, Float16, Inexact, Int, Int8, Real,
                           Shaped, UInt8)
    values = {"f32": _t((2, 3)), "f16": _t((2, 3), torch.float16),
              "bf16": _t((2, 3), torch.bfloat16), "c64": _t((2, 3), torch.complex64),
              "i8": _t((2, 3), torch.int8), "u8": _t((2, 3), torch.uint8),
              "bool": _t((2, 3)) > 0, "i64": _t((2, 3), torch.int64), "scalar": torch.tensor(1.5)}
    types = {"Float": Float[Tensor, "2 3"], "Float16": Float16[Tensor, "2 3"],
             "BFloat16": BFloat16[Tensor, "2 3"], "Complex": Complex[Tensor, "2 3"],
             "Int": Int[Tensor, "2 3"], "Int8": Int8[Tensor, "2 3"],
             "UInt8": UInt8[Tensor, "2 3"], "Bool": Bool[Tensor, "2 3"],
             "Inexact": Inexact[Tensor, "..."], "Real": Real[Tensor, "_ 3"],
             "Shaped": Shaped[Tensor, "2 _"], "Scalar": Float[Tensor, ""],
             "Float_3_2": Float[Tensor, "3 2"]}
    res = {f"{v}:{t}": isinstance(x, ty) for v, x in values.items() for t, ty in types.items()}
    res["bearable"] = [is_bearable(values["f32"], Tensor),
                       is_bearable([values["f32"], values["i8"]], list[Tensor]),
                       is_bearable({"a": values["f32"]}, dict[str, Float[Tensor, "2 3"]]),
                       is_bearable(values["i8"], Float[Tensor, "2 3"]),
                       is_bearable(np.zeros(3), Tensor)]
    res["die"] = _outcome(die_if_unbearable, values["u8"], Float[Tensor, "..."])
    # parameters, views, results that require grad, meta and float8 tensors; torch's types
    p = torch.nn.Parameter(torch.zeros(2, 3))
    res["kinds"] = [isinstance(p, Float[Tensor, "2 3"]),
                    isinstance(p, Float[torch.nn.Parameter, "2 3"]),
                    isinstance(torch.zeros(4, 4)[:, 1], Float[Tensor, "4"]),
                    isinstance(torch.zeros(2, requires_grad=True) * 2, Float[Tensor, "2"]),
                    isinstance(torch.zeros(2, 2, device="meta"), Float[Tensor, "2 2"]),
                    isinstance(torch.zeros(2).to(torch.float8_e4m3fn), Float[Tensor, "2"]),
                    isinstance(torch.zeros(2, dtype=torch.uint16), Int[Tensor, "2"]),
                    is_bearable(torch.zeros(2).shape, tuple[int, ...]),
                    is_bearable(torch.float32, torch.dtype),
                    is_bearable(torch.device("cpu"), torch.device)]
    # sparse tensors are Tensors, of their shape and dtype
    coo = torch.zeros(2, 3).to_sparse()
    csr = torch.eye(3).to_sparse_csr()
    res["sparse"] = [isinstance(coo, Float[Tensor, "2 3"]), isinstance(coo, Int[Tensor, "2 3"]),
                     isinstance(csr, Float[Tensor, "3 3"]), isinstance(csr, Float[Tensor, "2 3"]),
                     is_bearable(coo, Tensor)]
    return res


CASES = {"annotations": annotations_case, "isinstance": isinstance_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
