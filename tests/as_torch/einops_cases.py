"""einops beyond rearrange, run by tests/as_torch/test_einops.py with the real torch and under
``python -m ptcore.as_torch``: ``pack``/``unpack``, ``EinMix`` layers (with and without
pre/post reshapes, with bias), the ``Rearrange``/``Reduce`` layers in a model trained a few
steps, ``einsum``, ``repeat``, ``reduce`` with each reduction, ``parse_shape`` and scripting of
the layers; weights and data from NumPy.  Each case writes what it computed to
``<out>/<case>.json``."""
import sys
import warnings

import torch

from case_results import fill_normal, main, normal_tensor, optimizer_steps

warnings.filterwarnings("ignore")


_x = normal_tensor


def functions_case():
    """pack/unpack, einsum, repeat, reduce, parse_shape and rearrange's ellipsis forms."""
    from einops import einsum, pack, parse_shape, rearrange, reduce, repeat, unpack
    a, b, c = _x(0, (2, 3, 5)), _x(1, (2, 5)), _x(2, (2, 4, 4, 5))
    packed, ps = pack([a, b, c], "batch * feat")
    parts = unpack(packed * 2, ps, "batch * feat")
    res = {"packed": packed, "ps": [list(p) for p in ps], "unpacked": parts}
    x = _x(3, (2, 6, 4, 4)).requires_grad_()
    y = _x(4, (6, 3))
    out = einsum(x, y, "b c h w, c d -> b d h w")
    reds = {r: reduce(x, "b c (h h2) (w w2) -> b c h w", r, h2=2, w2=2)
            for r in ("mean", "max", "min", "sum", "prod")}
    total = out.square().sum() + sum(v.sum() for v in reds.values())
    total.backward()
    res.update({"einsum": out, "reduce": reds, "grad": x.grad,
                "repeat": repeat(b, "b f -> b r f k", r=2, k=3),
                "shape": parse_shape(c, "b _ h w"),
                "rearrange": rearrange(c, "b ... f -> b f ..."),
                "callable": reduce(x.detach(), "b c h w -> b c", torch.logsumexp),
                "list_input": rearrange([a, a], "n b s f -> b (n s) f")})
    return res


def layers_case():
    """EinMix (mixing over channels with a reshaped axis, and a per-head mixing with bias),
    Rearrange and Reduce inside a model trained with Adam, state_dict reload, and the layers
    scripted with torch.jit.script."""
    from einops.layers.torch import EinMix, Rearrange, Reduce

    def make():
        return torch.nn.Sequential(
            Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2),
            EinMix("b t c -> b t hid", weight_shape="c hid", bias_shape="hid", c=12, hid=16),
            torch.nn.GELU(),
            EinMix("b (t) (h d) -> b t h e", weight_shape="h d e", bias_shape="h e",
                   h=2, d=8, e=4),
            Rearrange("b t h e -> b t (h e)"),
            EinMix("b t c -> b c", weight_shape="t c", t=16, c=8),
            Reduce("b (c two) -> b c", "max", two=2))
    model = make()
    fill_normal([p for _, p in sorted(model.named_parameters())], 5, 0.2)
    x = _x(6, (3, 3, 8, 8))
    y = _x(7, (3, 4))
    res = {"out": model(x), "losses": optimizer_steps(
        torch.optim.Adam(model.parameters(), lr=1e-2), model, torch.nn.functional.mse_loss,
        x, y)}
    other = make()
    other.load_state_dict(model.state_dict())
    with torch.no_grad():
        res["reload"] = other(x)
    res["keys"] = sorted(model.state_dict())
    scripted = torch.jit.script(torch.nn.Sequential(
        Rearrange("b c h w -> b (h w) c"), Reduce("b t c -> b c", "mean")))
    res["scripted"] = scripted(x)
    mix = EinMix("b c h -> b h c2", weight_shape="c c2", c=3, c2=5)
    fill_normal(list(mix.parameters()), 8)
    res["einmix_repr"] = repr(mix)
    res["einmix"] = mix(_x(9, (2, 3, 4)))
    return res


def compiled_case():
    """einops under torch.compile after ``allow_ops_in_compiled_graph``: a Rearrange/EinMix
    model with pack, unpack, reduce and einsum, compiled, at two inputs."""
    from einops import einsum, pack, reduce, unpack
    from einops._torch_specific import allow_ops_in_compiled_graph
    from einops.layers.torch import EinMix, Rearrange
    allow_ops_in_compiled_graph()
    model = torch.nn.Sequential(Rearrange("b c h w -> b (h w) c"),
                                EinMix("b t c -> b t d", weight_shape="c d", c=3, d=4))
    fill_normal(list(model.parameters()), 10, 0.3)

    def f(x):
        y = model(x)
        packed, ps = pack([y, x.mean((2, 3))[:, None, :1].expand(-1, 1, 4)], "b * d")
        a, b = unpack(packed, ps, "b * d")
        return reduce(a, "b t d -> b d", "max") + einsum(b, a, "b i d, b t d -> b d")
    x = _x(11, (2, 3, 4, 4))
    compiled = torch.compile(f, backend="eager")     # (graph capture; inductor is slow)
    return {"eager": f(x), "compiled": compiled(x), "compiled_again": compiled(x * 2)}


if __name__ == "__main__":
    main({"functions": functions_case, "layers": layers_case, "compiled": compiled_case},
         sys.argv)
