"""torchinfo, thop (ultralytics-thop) and fvcore, run by tests/as_torch/test_model_stats.py with
the real torch and under ``python -m ptcore.as_torch``: model summaries (layer table, output
shapes, parameter counts, mult-adds, memory estimates) of a CNN, an LSTM and a transformer
encoder, and their FLOP/MAC counts.  Each case writes what it computed to ``<out>/<case>.json``.
"""
import sys
import warnings

import torch
from torch import nn

from case_results import fill_normal, main

warnings.filterwarnings("ignore")


def _cnn():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, groups=2), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))


class _Tagger(nn.Module):
    """An embedding, a 2-layer bidirectional LSTM and a per-token linear head."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(30, 12)
        self.lstm = nn.LSTM(12, 20, num_layers=2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(40, 5)

    def forward(self, tokens):
        out, _ = self.lstm(self.emb(tokens))
        return self.head(out)


def _transformer():
    layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
    return nn.Sequential(nn.TransformerEncoder(layer, 2, enable_nested_tensor=False),
                         nn.LayerNorm(16), nn.Linear(16, 4))


def _models():
    return {"cnn": (_cnn(), [(2, 3, 32, 32)], None),
            "lstm": (_Tagger(), [(3, 7)], [torch.long]),
            "transformer": (_transformer(), [(2, 7, 16)], None)}


def torchinfo_case():
    """torchinfo.summary of each model (its whole printed table and its statistics), at two
    depths and with every column; a summary from input_data and one of a model in eval mode."""
    from torchinfo import summary
    res = {}
    for name, (model, sizes, dtypes) in _models().items():
        fill_normal([p for _, p in sorted(model.state_dict().items())], 0)
        s = summary(model, input_size=sizes, dtypes=dtypes, verbose=0, depth=4,
                    col_names=("input_size", "output_size", "num_params", "params_percent",
                               "kernel_size", "mult_adds", "trainable"))
        shallow = summary(model, input_size=sizes, dtypes=dtypes, verbose=0, depth=1)
        res[name] = {"table": str(s).splitlines(), "shallow": str(shallow).splitlines(),
                     "total_params": s.total_params, "trainable": s.trainable_params,
                     "mult_adds": s.total_mult_adds, "output_bytes": s.total_output_bytes,
                     "param_bytes": s.total_param_bytes,
                     "layers": [[str(l.class_name), l.depth, l.output_size, l.num_params]
                                for l in s.summary_list]}
    model = _cnn().eval()
    s = summary(model, input_data=torch.zeros(1, 3, 16, 16), verbose=0, mode="eval")
    res["input_data"] = str(s).splitlines()
    return res


class _Shared(nn.Module):
    """A reused Linear, a ModuleDict, a bare parameter and buffer, an EmbeddingBag."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.d = nn.ModuleDict({"a": nn.Linear(4, 2), "b": nn.Conv1d(2, 3, 1)})
        self.p = nn.Parameter(torch.zeros(3))
        self.register_buffer("buf", torch.ones(2))
        self.emb = nn.EmbeddingBag(10, 4, mode="mean")

    def forward(self, x, idx):
        y = self.lin(self.lin(x)) + self.emb(idx)
        return self.d["b"](self.d["a"](y).unsqueeze(-1)).squeeze(-1) + self.p


def torchinfo_more_case():
    """torchinfo on a module with reused layers, a ModuleDict and several inputs (variable
    names, ASCII tree, train mode), a GRU, 3-D convolutions with upsampling, a
    MultiheadAttention and a partly frozen model."""
    from torchinfo import summary
    m = _Shared()
    frozen = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3).requires_grad_(False))
    tables = [
        summary(m, input_data=[torch.zeros(2, 4), torch.zeros(2, 3, dtype=torch.long)],
                verbose=0, depth=3, row_settings=("var_names", "ascii_only"),
                col_names=("input_size", "output_size", "num_params", "mult_adds")),
        summary(m, input_size=[(2, 4), (2, 3)], dtypes=[torch.float32, torch.long], verbose=0,
                mode="train", device="cpu"),
        summary(nn.GRU(3, 5, batch_first=True, num_layers=2), input_size=(2, 6, 3), verbose=0,
                col_names=("output_size", "num_params", "mult_adds")),
        summary(nn.Sequential(nn.Conv3d(1, 2, 3), nn.BatchNorm3d(2), nn.ConvTranspose3d(2, 1, 3),
                              nn.Upsample(scale_factor=2), nn.Dropout3d(0.1)),
                input_size=(1, 1, 6, 6, 6), verbose=0,
                col_names=("kernel_size", "output_size", "num_params", "mult_adds")),
        summary(nn.MultiheadAttention(8, 2, batch_first=True),
                input_data=[torch.zeros(2, 3, 8)] * 3, verbose=0),
        summary(frozen, (1, 3), verbose=0)]
    return {"tables": [str(t).splitlines() for t in tables],
            "frozen_layers": repr(tables[-1].summary_list)}


def thop_case():
    """thop.profile's MACs and parameter counts, and clever_format's strings."""
    from thop import clever_format, profile
    res = {}
    models = dict(_models(), activations=(_Activations(), [(2, 3, 8, 8)], None),
                  gru=(nn.GRU(3, 4, bidirectional=True), [(5, 2, 3)], None),
                  lstm_cell=(nn.LSTMCell(3, 4), [(2, 3)], None))
    for name, (model, sizes, dtypes) in models.items():
        x = tuple(torch.zeros(sz, dtype=(dtypes or [torch.float32])[0]) for sz in sizes)
        macs, params = profile(model, inputs=x, verbose=False)
        res[name] = {"macs": float(macs), "params": float(params),
                     "formatted": list(clever_format([macs, params], "%.3f"))}
    return res


class _Mixed(nn.Module):
    """Ops fvcore counts besides convolutions and linears: a transposed convolution, group and
    instance norms, upsampling, matmul/bmm/einsum/addmm, adaptive pooling, grid sampling."""

    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(3, 6, 3, stride=2, padding=1)
        self.gn = nn.GroupNorm(2, 6)
        self.up = nn.ConvTranspose2d(6, 4, 2, stride=2)
        self.inorm = nn.InstanceNorm2d(4, affine=True)
        self.proj = nn.Linear(16, 8)

    def forward(self, x):
        y = self.inorm(self.up(torch.relu(self.gn(self.down(x)))))
        y = nn.functional.interpolate(y, scale_factor=0.5, mode="bilinear", align_corners=False)
        y = nn.functional.interpolate(y, size=(8, 8))
        z = nn.functional.adaptive_avg_pool2d(y, 4).flatten(2)            # (b, 4, 16)
        z = self.proj(z)                                                 # (b, 4, 8)
        att = torch.bmm(z, z.transpose(1, 2)).softmax(-1)                # (b, 4, 4)
        z = torch.einsum("bij,bjk->bik", att, z) + att @ z
        grid = torch.zeros(x.shape[0], 2, 2, 2)
        g = nn.functional.grid_sample(y, grid, align_corners=False)
        return torch.addmm(z[0], att[0], z[0]).sum() + g.sum() + torch.mm(z[0], z[0].t()).sum()


class _Scale(torch.autograd.Function):
    """A custom autograd.Function (fvcore reports it as prim::PythonOp._Scale)."""
    forward = staticmethod(lambda x: x * 2)
    setup_context = staticmethod(lambda ctx, inputs, output: None)
    backward = staticmethod(lambda ctx, g: g * 2)


class _Activations(nn.Module):
    """Activations, pools, depthwise and 1-D transposed convolutions, a LayerNorm over three
    dims, a softmax and a custom autograd.Function (ops fvcore reports as unsupported, by
    their traced names)."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.AvgPool2d(2)
        self.up = nn.UpsamplingBilinear2d(scale_factor=2)
        self.dw = nn.Conv2d(8, 8, 3, groups=8, padding=1)
        self.ln = nn.LayerNorm([8, 8, 8])
        self.lin = nn.Linear(8, 4)
        self.prelu = nn.PReLU()
        self.ct = nn.ConvTranspose1d(8, 4, 3)

    def forward(self, x):
        y = self.up(self.pool(nn.functional.gelu(self.bn(self.c(x)))))
        y = self.ln(self.dw(y)).softmax(1)
        z = self.lin(_Scale.apply(y.mean((2, 3))))
        return self.prelu(z).sum() + nn.functional.leaky_relu(self.ct(y.flatten(2))).sum()


def fvcore_case():
    """fvcore's FlopCountAnalysis (jit-traced: totals, per module, per operator, per module
    and operator, unsupported ops, its table) and ActivationCountAnalysis, and
    parameter_count."""
    from fvcore.nn import (ActivationCountAnalysis, FlopCountAnalysis, flop_count_str,
                           flop_count_table, parameter_count)
    models = dict(_models())
    models["mixed"] = (_Mixed(), [(2, 3, 16, 16)], None)
    models["activations"] = (_Activations(), [(2, 3, 8, 8)], None)
    res = {}
    for name, (model, sizes, dtypes) in models.items():
        model.eval()
        x = tuple(torch.zeros(sz, dtype=(dtypes or [torch.float32])[0]) for sz in sizes)
        flops = FlopCountAnalysis(model, x).unsupported_ops_warnings(False) \
            .uncalled_modules_warnings(False)
        acts = ActivationCountAnalysis(model, x).unsupported_ops_warnings(False) \
            .uncalled_modules_warnings(False)
        res[name] = {"total": flops.total(), "by_module": dict(flops.by_module()),
                     "by_operator": dict(flops.by_operator()),
                     "by_module_and_operator": {k: dict(v) for k, v in
                                                flops.by_module_and_operator().items()},
                     "unsupported": dict(flops.unsupported_ops()),
                     "table": flop_count_table(flops, max_depth=3).splitlines(),
                     "str": flop_count_str(flops).splitlines(),
                     "activations": dict(acts.by_module()),
                     "params": dict(parameter_count(model))}
    return res


CASES = {"torchinfo": torchinfo_case, "torchinfo_more": torchinfo_more_case, "thop": thop_case,
         "fvcore": fvcore_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
