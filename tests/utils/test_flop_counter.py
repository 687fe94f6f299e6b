"""``utils.flop_counter.FlopCounterMode`` against torch's: the same counts
(per aten op and per module, forward and backward) for the programs torch
lowers to matrix products and convolutions, and torch's table."""
import pytest

import ptcore
from ptcore.utils import flop_counter as pfc
from ptcore.utils.module_tracker import ModuleTracker

torch = pytest.importorskip("torch")
from torch.utils import flop_counter as tfc  # noqa: E402


def _programs(T):
    F, nn = T.nn.functional, T.nn
    x3 = T.randn(2, 5, 8, requires_grad=True)
    W = T.randn(6, 8, requires_grad=True)
    b = T.randn(6, requires_grad=True)
    m = T.randn(3, 4, requires_grad=True)
    n = T.randn(4, 5, requires_grad=True)
    a = T.randn(2, 3, 4, requires_grad=True)
    c = T.randn(2, 4, 5, requires_grad=True)
    xi = T.randn(2, 3, 9, 9, requires_grad=True)
    q = T.randn(2, 5, 8)
    seq = nn.Sequential(nn.Linear(8, 16), nn.ReLU(),
                        nn.Sequential(nn.Linear(16, 4), nn.Linear(4, 2)))
    cnn = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 7 * 7, 10))
    return {
        "linear 3d": lambda: F.linear(x3, W, b),
        "linear no bias": lambda: F.linear(x3, W),
        "linear non-contiguous": lambda: F.linear(x3.transpose(0, 1), W, b),
        "matmul 2d": lambda: m @ n, "matmul 3d": lambda: a @ c, "matmul 3d@2d": lambda: a @ n,
        "matmul 4d": lambda: T.randn(2, 3, 4, 5, requires_grad=True) @ T.randn(2, 3, 5, 6),
        "matmul 1d@2d": lambda: T.randn(4, requires_grad=True) @ n,
        "mm": lambda: T.mm(m, n), "bmm": lambda: T.bmm(a, c),
        "addmm": lambda: T.addmm(T.randn(3, 5), m, n),
        "baddbmm": lambda: T.baddbmm(T.randn(2, 3, 5), a, c),
        "einsum bmm": lambda: T.einsum("bij,bjk->bik", a, c),
        "einsum heads": lambda: T.einsum("bhqd,bhkd->bhqk", T.randn(2, 3, 4, 5, requires_grad=True),
                                         T.randn(2, 3, 6, 5)),
        "conv2d": lambda: F.conv2d(xi, T.randn(4, 3, 3, 3, requires_grad=True), T.randn(4),
                                   stride=2, padding=1),
        "conv2d input grad": lambda: F.conv2d(xi, T.randn(4, 3, 3, 3)),
        "conv1d groups": lambda: F.conv1d(T.randn(2, 4, 9), T.randn(4, 2, 3, requires_grad=True),
                                          groups=2),
        "conv_transpose2d": lambda: F.conv_transpose2d(
            xi, T.randn(3, 5, 3, 3, requires_grad=True), stride=2),
        "mha": lambda: nn.MultiheadAttention(8, 2, batch_first=True)(
            T.randn(2, 5, 8), T.randn(2, 5, 8), T.randn(2, 5, 8))[0],
        "mha self": lambda: nn.MultiheadAttention(8, 2)(q, q, q)[0],
        "mha no weights": lambda: nn.MultiheadAttention(8, 2)(q, q, q, need_weights=False)[0],
        "mha mask": lambda: nn.MultiheadAttention(8, 2)(q, q, q, attn_mask=T.zeros(2, 2))[0],
        "sdpa cpu": lambda: F.scaled_dot_product_attention(
            T.randn(1, 2, 3, 4, requires_grad=True), T.randn(1, 2, 3, 4), T.randn(1, 2, 3, 4)),
        "sequential": lambda: seq(T.randn(3, 8)),
        "sequential input grad": lambda: seq(T.randn(3, 8, requires_grad=True)),
        "cnn": lambda: cnn(T.randn(2, 3, 9, 9)),
        "transformer layer": lambda: nn.TransformerEncoderLayer(
            8, 2, 16, dropout=0.0, batch_first=True)(T.randn(2, 5, 8)),
    }


def _counts(T, mod, name):
    T.manual_seed(0)
    with mod.FlopCounterMode(display=False) as fc:
        fc_out = _programs(T)[name]()
        fc_out.sum().backward()
    return fc.get_total_flops(), {
        k: {str(op).replace("torch", "ptcore"): v for op, v in d.items()}
        for k, d in fc.get_flop_counts().items()}


@pytest.mark.parametrize("name", list(_programs(torch)))
def test_counts_forward_and_backward_per_module_as_torch(name):
    assert _counts(ptcore, pfc, name) == _counts(torch, tfc, name)


def test_counts_are_keyed_by_the_aten_packets():
    m = ptcore.nn.Linear(8, 4)
    with pfc.FlopCounterMode(display=False) as fc:
        m(ptcore.randn(2, 8, requires_grad=True)).sum().backward()
    counts = fc.get_flop_counts()
    assert counts["Global"][ptcore.ops.aten.addmm] == 2 * 2 * 8 * 4
    assert counts["Linear"][ptcore.ops.aten.mm] == 2 * (2 * 2 * 8 * 4)
    assert fc.get_total_flops() == 384


def test_custom_mapping_and_register_flop_formula():
    def double_mm(a_shape, b_shape, *args, out_shape=None, **kwargs):
        return 2 * pfc.mm_flop(a_shape, b_shape)
    with pfc.FlopCounterMode(display=False,
                             custom_mapping={ptcore.ops.aten.mm: double_mm}) as fc:
        ptcore.mm(ptcore.ones(3, 4), ptcore.ones(4, 5))
    assert fc.get_total_flops() == 2 * 120
    with pytest.raises(RuntimeError, match="duplicate"):
        pfc.register_flop_formula(ptcore.ops.aten.mm)(double_mm)


def test_mods_argument_warns_as_torch():
    with pytest.warns(UserWarning, match="mods argument is not needed"):
        pfc.FlopCounterMode(ptcore.nn.Linear(2, 2), display=False)


# torch 2.13's printed tables (its tabulate layout) for these programs
TABLE_DEPTH2 = """\
Module          FLOP    % Total
------------  ------  ---------
Sequential      2832    100.00%
- aten.addmm    1200     42.37%
- aten.mm       1632     57.63%
Sequential.0    1536     54.24%
- aten.addmm     768     27.12%
- aten.mm        768     27.12%
Sequential.2    1296     45.76%
- aten.addmm     432     15.25%
- aten.mm        864     30.51%"""
TABLE_GLOBAL = """\
Module          FLOP    % Total
------------  ------  ---------
Global          1320    100.00%
- aten.mm        120      9.09%
- aten.addmm    1200     90.91%
Sequential      1200     90.91%
- aten.addmm    1200     90.91%"""
TABLE_SUFFIX = """\
Module         FLOP    % Total
---------  --------  ---------
Global     120.000M    100.00%
- aten.mm  120.000M    100.00%"""


def test_table_as_torchs(capsys):
    nn = ptcore.nn
    mod = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Sequential(nn.Linear(16, 4),
                                                                  nn.Linear(4, 2)))
    with pfc.FlopCounterMode(depth=2):
        mod(ptcore.randn(3, 8)).sum().backward()
    assert capsys.readouterr().out == TABLE_DEPTH2 + "\n"
    with pfc.FlopCounterMode(depth=1) as fc:
        ptcore.randn(3, 4) @ ptcore.randn(4, 5)
        mod(ptcore.randn(3, 8))
    assert capsys.readouterr().out == TABLE_GLOBAL + "\n"
    assert fc.get_table(1) == TABLE_GLOBAL
    with pfc.FlopCounterMode(display=False) as fc:
        ptcore.randn(300, 400) @ ptcore.randn(400, 500)
    assert fc.get_table() == TABLE_SUFFIX
    with pfc.FlopCounterMode(display=False) as fc:
        pass
    assert fc.get_table().splitlines()[-1].split() == ["Global", "0", "0%"]


def test_module_tracker_names_and_backward_as_torch():
    def trace(T, Tracker):
        nn = T.nn
        seen = []
        mod = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.Linear(3, 1)))
        with Tracker() as tr:
            hooks = [m.register_forward_hook(lambda *a: seen.append(("fw", sorted(tr.parents))))
                     for m in (mod[0], mod[1][0])]
            out = mod(T.ones(4, 2, requires_grad=True))
            out.register_hook(lambda g: seen.append(("bw", sorted(tr.parents), tr.is_bw)))
            mod[0].weight.register_hook(lambda g: seen.append(("bw0", sorted(tr.parents))))
            out.sum().backward()
            seen.append(("after", sorted(tr.parents), tr.is_bw))
            for h in hooks:
                h.remove()
        return seen
    from torch.utils.module_tracker import ModuleTracker as TModuleTracker
    assert trace(ptcore, ModuleTracker) == trace(torch, TModuleTracker)


@pytest.mark.parametrize("layer", ["RNN", "GRU"])
def test_recurrent_layers_count_as_torch(layer):
    def run(T, mod):
        T.manual_seed(0)
        with mod.FlopCounterMode(display=False) as fc:
            rnn = getattr(T.nn, layer)(3, 4, num_layers=2, bidirectional=True)
            rnn(T.randn(5, 2, 3, requires_grad=True))[0].sum().backward()
        return {k: {str(op).replace("torch", "ptcore"): v for op, v in d.items()}
                for k, d in fc.get_flop_counts().items()}
    assert run(ptcore, pfc) == run(torch, tfc)
